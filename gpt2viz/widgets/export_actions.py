"""The Export menu's four flows in one place: a view (PNG / SVG), every layer, the data (.npz), the report.

Each flow asks where (starting in the folder of the last export), writes through the snapshot, trace
export or report code, says what it saved, and remembers the folder it wrote to. A failed write leaves
nothing behind and becomes one message; the app goes on.

Texts are in the main window's translation context: they are the window's menus and dialogs.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication, QObject
from PySide6.QtWidgets import QApplication, QFileDialog, QMessageBox, QProgressDialog

from gpt2viz.core.model_folder.files import WriteError, describe_os_error
from gpt2viz.widgets.snapshot import view_title

# lupdate finds calls spelled translate("Context", "text"): keep that spelling at every call.
translate = QCoreApplication.translate
FOLDER_KEY = "export/folder"  # the folder every export flow starts in and remembers


class ExportActions(QObject):
    """The export flows of ``window`` (a MainWindow: its state, status bar, focused view and dark setting).

    Attributes
    ----------
    scale : float
        PNG resolution factor (2: sharp on slides and in papers).
    """

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.scale = 2.0
        window.state.sigJobDone.connect(self._on_job_done)

    # ---- shared steps -------------------------------------------------------------------------------
    @property
    def folder(self) -> Path:
        """Where the next export dialog starts: the folder of the last export, else home."""
        return Path(self.window.state.settings.text(FOLDER_KEY, str(Path.home())))

    def _remember(self, folder: Path | str) -> None:
        self.window.state.settings.set(FOLDER_KEY, str(folder))

    def _ready(self) -> bool:
        if self.window.state.history is None:
            self.window.show_error(translate("MainWindow", "Run a prompt first: there is nothing to export yet."))
            return False
        return True

    def _failed(self, e: OSError) -> None:
        reason = str(e) if isinstance(e, WriteError) else describe_os_error(e)
        self.window.show_error(translate("MainWindow", "The export did not finish: {reason}\n\nNo partial file was "
                                         "left behind; files that were there before are unchanged.").format(
            reason=reason))

    def _saved(self, message: str, ms: int = 8000) -> None:
        self.window.statusBar().showMessage(message, ms)

    def _progress(self, label: str, total: int) -> tuple[QProgressDialog, callable]:
        dlg = QProgressDialog(label, translate("MainWindow", "Cancel"), 0, total, self.window)
        dlg.setMinimumDuration(0)

        def progress(done: int, total: int) -> bool:
            dlg.setMaximum(total)
            dlg.setValue(done)
            QApplication.processEvents()
            return not dlg.wasCanceled() and not self.window.closing  # closing the window stops the export
        return dlg, progress

    # ---- the four flows -----------------------------------------------------------------------------
    def export_view(self, view: str | None = None) -> None:
        """Ask where, then write the focused view (PNG at 2x, or SVG). The dialog asks before overwriting."""
        from gpt2viz.widgets.snapshot import default_name, export_view, facts

        if not self._ready():
            return
        w = self.window
        view = view or w.focused_view()
        start = str(self.folder / default_name(facts(w.state, view), "png"))
        path, _ = QFileDialog.getSaveFileName(w, translate("MainWindow", "Export {view}").format(view=view_title(view)),
                                              start, translate("MainWindow", "PNG image (*.png);;SVG drawing (*.svg)"))
        if not path:
            return
        try:
            out = export_view(w, view, Path(path), self.scale, force=True)  # the dialog asked already
        except (WriteError, OSError) as e:
            self._failed(e)
            return
        except ValueError as e:  # the view has nothing to draw yet (e.g. no patching table computed)
            w.show_error(translate("MainWindow", "Nothing to export yet: {why}.").format(why=e))
            return
        self._remember(Path(path).parent)
        self._saved(translate("MainWindow", "saved {path}").format(path=out))

    def export_all_layers(self) -> None:
        """One image per layer of the attention or MLP view, a contact sheet and index.json, with progress."""
        from gpt2viz.widgets.snapshot import export_all_layers

        if not self._ready():
            return
        w = self.window
        view = w.focused_view()
        view = view if view in ("attention", "mlp") else "attention"
        folder = QFileDialog.getExistingDirectory(w, translate("MainWindow", "Export every layer of {view} into…").format(
            view=view_title(view)), str(self.folder))
        if not folder:
            return
        existing = [*Path(folder).glob("*.png"), *Path(folder).glob("index.json")]
        force = False
        if existing:
            ans = QMessageBox.question(w, translate("MainWindow", "Replace files?"), translate(
                "MainWindow", "{folder} already holds {n} exported files; replace those with the same names?").format(
                folder=folder, n=len(existing)))
            if ans != QMessageBox.Yes:
                return
            force = True
        n = w.state.model.config.n_layer
        dlg, progress = self._progress(translate("MainWindow", "Exporting {n} layers of {view}…").format(
            n=n, view=view_title(view)), n)
        try:
            index = export_all_layers(w, view, Path(folder), "png", self.scale, force, progress)
        except (WriteError, OSError) as e:
            self._failed(e)
            return
        finally:
            dlg.reset()
        self._remember(folder)
        self._saved(translate("MainWindow", "saved {n} images, a contact sheet and index.json in {folder}").format(
            n=len(index['files']), folder=folder), 10000)

    def export_data(self) -> None:
        """Every hook of the current text as .npz, with tokens, settings and the model's hash in .json."""
        from gpt2viz.core.io.trace_export import export_trace
        from gpt2viz.widgets.snapshot import default_name, facts

        if not self._ready():
            return
        w, st = self.window, self.window.state
        start = str(self.folder / default_name(facts(st, "data"), "npz"))
        path, _ = QFileDialog.getSaveFileName(w, translate("MainWindow", "Export data"), start,
                                              translate("MainWindow", "NumPy archive (*.npz)"))
        if not path:
            return
        try:
            npz, js = export_trace(st.history, st.model, st.sampling, Path(path).with_suffix(".npz"), force=True,
                                   weights=st.weights)
        except (WriteError, OSError) as e:
            self._failed(e)
            return
        self._remember(Path(path).parent)
        self._saved(translate("MainWindow", "saved {npz} and {json}").format(npz=npz, json=js.name))

    def save_edited_model(self, path: str | None = None) -> None:
        """Ask for a new folder's name (unless ``path`` is given), then write the model with A's ROME edits
        applied to its weights there, on the worker; the saved folder is checked against the edit in force."""
        w, st = self.window, self.window.state
        if path is None:
            start = str(self.folder / f"{st.model.name}-edited") if st.model is not None else str(self.folder)
            path, _ = QFileDialog.getSaveFileName(w, translate("MainWindow", "Save the edited model as a new folder"),
                                                  start, "", options=QFileDialog.DontConfirmOverwrite)
            if not path:
                return
        if st.save_edited_model(path):
            self._remember(Path(path).parent)
            self._saved(translate("MainWindow", "saving the edited model to {path}…").format(path=path), 0)

    def _on_job_done(self, job: str, result) -> None:
        if job == "save-edit" and result is not None:
            self._saved(translate("MainWindow", "saved the edited model to {path} (open it from Model → Open model "
                                  "folder)").format(path=result))

    def export_report(self, path: str | None = None) -> None:
        """Ask where (unless ``path`` is given), then write the journey report of the current text."""
        from gpt2viz.widgets.report import write_report

        if not self._ready():
            return
        w = self.window
        if path is None:
            path, _ = QFileDialog.getSaveFileName(w, translate("MainWindow", "Export the journey report"),
                                                  str(self.folder / "gpt2viz-report.pdf"),
                                                  translate("MainWindow", "PDF document (*.pdf);;HTML page (*.html)"))
            if not path:
                return
        dlg, progress = self._progress(translate("MainWindow", "Writing the report…"), 12)
        try:
            out = write_report(w.state, Path(path), force=True, dark=w.export_dark, progress=progress)
        except InterruptedError:
            return
        except (WriteError, OSError) as e:
            self._failed(e)
            return
        finally:
            dlg.reset()
        self._remember(Path(path).parent)
        self._saved(translate("MainWindow", "saved {0}").format(out))
