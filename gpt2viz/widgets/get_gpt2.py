"""Model → Get GPT-2…: export real GPT-2 in a separate process, with progress and cancel.

The export (download, ONNX export, validation) runs as ``python -m gpt2viz export gpt2`` in a child
process, so the window stays responsive and a cancel kills it cleanly. Texts are in the main window's
translation context (it is that window's dialog).
"""

from __future__ import annotations

import html
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QProcess
from PySide6.QtWidgets import QProgressDialog, QWidget

from gpt2viz.core.model_folder.locations import user_models_dir

# lupdate finds calls spelled translate("Context", "text"): keep that spelling at every call.
translate = QCoreApplication.translate


def get_gpt2(parent: QWidget, on_ready: Callable[[Path], None], on_error: Callable[[str], None],
             out: Path | None = None) -> QProcess:
    """Start exporting GPT-2 (124M) into ``out`` (default: the user models folder) and show its progress.

    ``on_ready(folder)`` runs when the folder is written, ``on_error(message)`` when the export failed
    (not when the user cancelled). Returns the running process (kill it to stop the export).
    """
    out = out or user_models_dir() / "gpt2"
    proc = QProcess(parent)
    proc.setProgram(sys.executable)
    proc.setArguments(["-m", "gpt2viz", "export", "gpt2", "--out", str(out)])
    dlg = QProgressDialog(translate("MainWindow", "Exporting GPT-2 (124M): download, ONNX export, validation…"),
                          translate("MainWindow", "Cancel"), 0, 0, parent)
    dlg.setWindowTitle(translate("MainWindow", "Get GPT-2"))
    dlg.setMinimumWidth(520)
    log: list[str] = []

    def on_output() -> None:
        text = bytes(proc.readAllStandardError()).decode(errors="replace")
        log.extend(line for line in text.splitlines() if line.strip())
        if log:
            dlg.setLabelText(html.escape(log[-1])[:200])

    def on_done(code, _status) -> None:
        dlg.reset()
        if code == 0:
            on_ready(out)
        elif not dlg.wasCanceled():
            last = log[-1] if log else translate("MainWindow", "the export failed")
            on_error(translate("MainWindow", "Could not get GPT-2: {error}\n\nWithout network: download "
                               "'openai-community/gpt2' (config.json, model.safetensors, tokenizer.json) on "
                               "another machine, then run `gpt2viz export <that folder> --out {out}`. The "
                               "export needs `pip install 'gpt2viz[export]'`.").format(error=last, out=out))

    proc.readyReadStandardError.connect(on_output)
    proc.finished.connect(on_done)
    dlg.canceled.connect(proc.kill)
    proc.start()
    dlg.show()
    return proc
