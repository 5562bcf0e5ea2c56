"""Pictures of an edit in force (offscreen), for the docs: the causal trace of the edited model above the trace
before the edit, and the Path view with the unedited attribution as ghosts, in English and Chinese.

    QT_QPA_PLATFORM=offscreen python scripts/edit_screenshots.py --out docs/views
"""

from __future__ import annotations

import argparse
from pathlib import Path

from shots import open_window


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--prompt", default="The capital of France is")
    ap.add_argument("--subject", default=" France")
    ap.add_argument("--target", default=" Rome")
    ap.add_argument("--model", default=None)
    a = ap.parse_args()
    from gpt2viz.app import i18n
    from gpt2viz.core.interventions import RankOneEdit

    app, state, win, wait = open_window(a.prompt, a.model, size=(1500, 1100))
    state.edit_fact(a.prompt, a.subject, a.target)
    wait(lambda: any(isinstance(iv, RankOneEdit) for iv in state.session("A").interventions) and not state.busy
         and not state.jobs)
    win.open_analysis(1)
    panel = win.analysis.causal
    panel.subject.setText(a.subject)
    panel.run()
    wait(lambda: not state.jobs and "causal" in state.session("A").analyses)
    a.out.mkdir(parents=True, exist_ok=True)
    dock = win.analysis_dock
    dock.setFloating(True)
    dock.resize(1500, 900)
    for lang, suffix in (("en", ""), ("zh", "-zh")):
        i18n.install(lang, app)
        app.processEvents()
        panel.draw()
        app.processEvents()
        path = a.out / f"causal-trace-edited{suffix}.png"
        dock.grab().save(str(path))
        print(path)
        view = win.detail.views["Path"]
        win.detail.setCurrentWidget(view)
        view.refresh()
        app.processEvents()
        path = a.out / f"path-edited{suffix}.png"
        view.grab().save(str(path))
        print(path)
    i18n.install("en", app)
    state.shutdown()


if __name__ == "__main__":
    main()
