"""`gpt2viz patch`: the activation patching table on the command line."""

from __future__ import annotations

import json

from gpt2viz.core.analysis.patching import format_table, patching_table, table_json
from gpt2viz.core.interventions import InterventionError


def run_patch(a, model) -> int:
    """Print the table (text, or one JSON object with --json); InterventionError for bad input."""
    tok = model.tokenizer
    clean, corrupt = tok.encode(a.clean), tok.encode(a.corrupt)
    if len(clean) != len(corrupt):
        show = lambda ids: "|".join(tok.token_display(t) for t in ids)  # noqa: E731
        raise InterventionError(f"the prompts must have the same number of tokens: clean {len(clean)} "
                                f"[{show(clean)}], corrupt {len(corrupt)} [{show(corrupt)}]")
    target = tok.encode(a.target)
    if len(target) != 1:
        raise InterventionError(f"--target must be one token; {a.target!r} is {len(target)}: "
                                + "|".join(tok.token_display(t) for t in target))
    table = patching_table(model, clean, corrupt, target[0], a.site)
    if a.json:
        print(json.dumps(table_json(table, tok, clean, corrupt), ensure_ascii=False))
    else:
        print(format_table(table, tok, clean, corrupt))
    return 0
