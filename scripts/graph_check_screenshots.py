"""Pictures of the circuit graph panel with a pinned last-block feature ablated (the scatter of predicted vs real
change of each target logit) and a supernode, in English and Chinese (offscreen), for the docs.

    QT_QPA_PLATFORM=offscreen python scripts/graph_check_screenshots.py --out docs/views
"""

from __future__ import annotations

import argparse
from pathlib import Path

from shots import open_window


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--prompt", default="The capital of France is")
    a = ap.parse_args()
    from gpt2viz.app import i18n

    app, state, win, wait = open_window(a.prompt, size=(1500, 1000))
    win.open_analysis(2)
    panel = win.analysis.graph
    panel.run()
    wait(lambda: state.session("A").analyses.get("graph") is not None and not state.jobs)
    nodes = panel.layout_.nodes
    n_layer, last = state.model.config.n_layer, len(state.prompt_ids()) - 1
    # the largest-influence last-block feature at the last position: ablated; block-0 features at " France": grouped
    pick = [i for i, n in enumerate(nodes) if n.kind == "feature" and n.node_id.startswith(f"{n_layer - 1}_")
            and n.node_id.endswith(f"_{last}")][:1]
    group = [i for i, n in enumerate(nodes) if n.kind == "feature" and n.node_id.startswith("0_")
             and n.node_id.endswith("_3")][:3]
    if group:
        panel.draw(frozenset(group))
        panel.group_pinned("France")
    panel.draw(frozenset(pick))
    panel.check_pinned(0.0)
    wait(lambda: state.session("A").analyses.get("graph-ablation") is not None and not state.jobs)
    dock = win.analysis_dock
    dock.setFloating(True)
    dock.resize(1500, 820)
    split = panel.scatter.parentWidget()
    split.setSizes([1050, 450])
    a.out.mkdir(parents=True, exist_ok=True)
    for lang, suffix in (("en", ""), ("zh", "-zh")):
        i18n.install(lang, app)
        app.processEvents()
        panel.draw(panel.canvas.pinned)
        panel.draw_check()
        app.processEvents()
        path = a.out / f"graph-ablation{suffix}.png"
        dock.grab().save(str(path))
        print(path)
    c = state.session("A").analyses["graph-ablation"]
    print("nodes", c.nodes, "r", c.pearson, "pred", c.predicted.round(3), "real", c.real.round(3))
    i18n.install("en", app)
    state.shutdown()


if __name__ == "__main__":
    main()
