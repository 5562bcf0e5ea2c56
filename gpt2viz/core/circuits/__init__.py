"""Circuits: attribution graphs through transcoders (circuit-tracer's definitions, numbers from the ONNX run).

- :mod:`.graph` - the full graph: nodes (embeddings, active transcoder features, errors, target logits) and every
  direct linear edge with attention patterns and LayerNorm scales frozen.
- :mod:`.prune` - pruning by influence on the logits; the replacement and completeness scores.
- :mod:`.graph_json` - circuit-tracer's graph JSON (metadata, qParams, nodes, links).
"""
