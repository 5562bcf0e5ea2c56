"""Pictures of the Features tab (block 4 at " capital", feature 217's page) and the journey's circuit page after
the graph is built, in English and Chinese (offscreen), for the docs.

    QT_QPA_PLATFORM=offscreen python scripts/features_screenshots.py --out docs
"""

from __future__ import annotations

import argparse
from pathlib import Path

from shots import open_window, settle


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="the docs folder (writes views/ and zh/)")
    ap.add_argument("--prompt", default="The capital of France is")
    a = ap.parse_args()
    from gpt2viz.app import i18n
    from gpt2viz.core.viewmodels.journey import PAGES

    for lang, folder in (("en", a.out / "views"), ("zh", a.out / "zh")):
        app, state, win, wait = open_window(a.prompt, size=(1500, 1000))
        i18n.install(lang, app)
        folder.mkdir(parents=True, exist_ok=True)
        state.select_block(4)
        state.select_position(1)
        view = win.detail.views["Features"]
        win.detail.setCurrentWidget(view)
        view.open_feature(4, 217)
        settle(app)
        win.grab().save(str(folder / "features.png"))
        win.open_journey(PAGES.index("circuit"))
        win.journey.graph_btn.click()
        wait(lambda: state.session("A").analyses.get("graph") is not None and not state.jobs)
        settle(app)
        win.grab().save(str(folder / "journey-circuit.png"))
        print(folder / "features.png", folder / "journey-circuit.png")
        win.close()
        state.shutdown()
    i18n.install("en", app)


if __name__ == "__main__":
    main()
