"""Features: sparse autoencoders (SAEs) over a hook's activation, in SAELens' folder format.

- :mod:`.sae` - the SAE itself (config, weights) and SAELens' encode / decode formulas, in numpy;
  whether an SAE fits a model.
- :mod:`.saelens_folder` - reading and writing the folder (``cfg.json`` + ``sae_weights.safetensors`` +
  optional ``sparsity.safetensors``).
- :mod:`.activations` - hook values from the engine: an SAE's input at a prompt, and training data from a text.
- :mod:`.training` - training an SAE with torch (the ``[export]`` extra), seeded, with progress and cancel.
- :mod:`.steering` - feature steering, ablation and clamping, turned into the graph's ``Steer`` interventions.
- :mod:`.shipped` - the SAEs stored inside a model folder (``saes/<hook name>/``).
"""
