"""Render every detail view of the app for one prompt to PNGs (offscreen), for the docs.

    QT_QPA_PLATFORM=offscreen python scripts/view_screenshots.py --out docs/views \
        [--prompt "The capital of France is"] [--layer 1] [--head 2]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from shots import open_window


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--prompt", default="The capital of France is")
    ap.add_argument("--model", default=None)
    ap.add_argument("--layer", type=int, default=1)
    ap.add_argument("--head", type=int, default=2)
    a = ap.parse_args()
    app, state, win, _wait = open_window(a.prompt, a.model, size=(1500, 940))
    state.select_block(a.layer, a.head)
    a.out.mkdir(parents=True, exist_ok=True)
    for name, view in win.detail.views.items():
        if name == "Features":
            continue  # features_screenshots.py draws it with a feature's page open
        win.detail.setCurrentWidget(view)
        app.processEvents()
        path = a.out / f"{name.lower().replace(' ', '_')}.png"
        view.grab().save(str(path))
        print(path)
    win.grab().save(str(a.out / "window.png"))
    win.close()


if __name__ == "__main__":
    main()
