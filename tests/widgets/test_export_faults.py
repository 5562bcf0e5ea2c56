"""Exports that fail half way, through the real window's Export actions (issue 17, item 3).

Two real faults, at the lowest level a write goes through:

- **disk full**: ``os.write`` on a file in the export folder writes what still fits of a fixed budget of free
  bytes, then fails with ENOSPC, as a full disk does (the first write that does not fit is cut short, the
  next raises). No other file of the process is affected.
- **file size limit**: ``RLIMIT_FSIZE`` set on this process (``resource.setrlimit``): the kernel itself cuts a
  write at the limit and fails the next with EFBIG (Python ignores SIGXFSZ, so the process survives). Qt's own
  writes are under the same limit.

Each export is first done once into a sound folder (to know its sizes and that it works), then into a folder
whose disk fills half way: no file of that export may be left there (no ``.part`` file, no staging folder),
a file that was there before is unchanged, the window shows the message, and the app goes on (a step runs
and the next export succeeds).
"""

from __future__ import annotations

import errno
import os
import resource
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from gpt2viz.app.settings import Settings
from gpt2viz.app.state import AppState
from gpt2viz.widgets.main_window import MainWindow

KINDS = ["view-png", "view-svg", "all-layers", "data", "report-pdf", "report-html"]


@pytest.fixture
def win(qtbot, tmp_path, exported):
    state = AppState(Settings(str(tmp_path / "settings.ini")))
    w = MainWindow(state)
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    state.load_model(str(exported["l3h4e32"]))
    qtbot.waitUntil(lambda: not state.busy and state.history is not None, timeout=20000)
    yield w
    w.close()


@contextmanager
def disk_full(folder: Path, free: int):
    """Writes to files under ``folder`` get ``free`` bytes in all, then ENOSPC."""
    real = os.write
    left = [free]
    folder = str(folder.resolve())

    def write(fd, data):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if not target.startswith(folder + os.sep):
            return real(fd, data)
        if left[0] <= 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        n = real(fd, bytes(memoryview(data)[:left[0]]))
        left[0] -= n
        return n

    os.write = write
    try:
        yield
    finally:
        os.write = real


@contextmanager
def size_limit(nbytes: int):
    """RLIMIT_FSIZE = ``nbytes`` for this process: the kernel fails writes past it with EFBIG."""
    assert signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN  # Python's default: the write fails, no signal
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def _export(w: MainWindow, kind: str, folder: Path, monkeypatch) -> None:
    """Run the window's own Export action for ``kind`` into ``folder`` (the file dialog answered)."""
    ext = {"view-png": ".png", "view-svg": ".svg", "data": ".npz", "report-pdf": ".pdf", "report-html": ".html"}
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        staticmethod(lambda *a, **k: (str(folder / f"out{ext.get(kind, '')}"), "")))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(lambda *a, **k: str(folder)))
    monkeypatch.setattr(QMessageBox, "question", staticmethod(lambda *a, **k: QMessageBox.Yes))
    w.detail.setCurrentWidget(w.detail.views["attention"] if "attention" in w.detail.views
                              else w.detail.widget(0))
    if kind.startswith("view"):
        w.actions_by_name["export_view"].trigger()
    elif kind == "all-layers":
        w.actions_by_name["export_layers"].trigger()
    elif kind == "data":
        w.actions_by_name["export_data"].trigger()
    else:
        report = next(a for a in w.menus["export"].actions() if a.text().startswith("&Report"))
        report.trigger()


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} | \
        {p.name + "/": b"" for p in folder.iterdir() if p.is_dir()}


@pytest.mark.parametrize("fault", ["disk-full", "size-limit"])
@pytest.mark.parametrize("kind", KINDS)
def test_an_export_failing_half_way_leaves_nothing_and_the_app_goes_on(qtbot, win, tmp_path, monkeypatch,
                                                                        kind, fault):
    sound = tmp_path / "sound"
    sound.mkdir()
    win.last_error = None
    _export(win, kind, sound, monkeypatch)
    assert win.last_error is None
    made = _listing(sound)
    sizes = sorted(len(b) for b in made.values())
    assert made and sizes[-1] > 0

    full = tmp_path / "full"
    full.mkdir()
    before = {"notes.txt": b"the user's own file"}
    if kind == "all-layers":  # a file the export would replace: it must survive a failed export
        before[next(n for n in made if n.endswith(".png"))] = b"an older export"
    for name, data in before.items():
        (full / name).write_bytes(data)
    if fault == "disk-full":
        fault_cm = disk_full(full, sum(sizes) // 2)  # the disk fills half way through the export
    else:
        fault_cm = size_limit(max(sizes[-1] // 2, 1))  # the largest file cannot be written whole
    with fault_cm:
        _export(win, kind, full, monkeypatch)
    assert _listing(full) == before, "a failed export left files behind or changed the user's"
    msg = win.last_error or ""
    print(f"{kind}, {fault}: {msg!r}")  # what the user reads (the README's reliability notes quote these)
    assert "did not finish" in msg, msg
    assert str(full) in msg and ".gpt2viz-partial" not in msg and ".part" not in msg, msg  # names what they chose
    assert ("No space left on device" if fault == "disk-full" else "File too large") in msg, msg
    assert win.statusBar().currentMessage() == msg

    # the app goes on: a step runs, and the same export now succeeds
    n = len(win.state.history.tokens)
    win.state.step()
    qtbot.waitUntil(lambda: not win.state.busy and len(win.state.history.tokens) == n + 1, timeout=20000)
    win.last_error = None
    again = tmp_path / "again"
    again.mkdir()
    _export(win, kind, again, monkeypatch)
    assert win.last_error is None
    assert len(_listing(again)) == len(made)


def test_the_report_menu_action_asks_where(qtbot, win, tmp_path, monkeypatch):
    """Regression (found by this file): the action's triggered(bool) reached export_report as path=False."""
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: asked.append(a) or ("", "")))
    caught = []
    monkeypatch.setattr("sys.excepthook", lambda *exc: caught.append(exc))
    report = next(a for a in win.menus["export"].actions() if a.text().startswith("&Report"))
    report.trigger()
    qtbot.wait(10)
    assert asked and not caught


def test_exporting_a_view_with_nothing_to_draw_says_so(qtbot, win, tmp_path, monkeypatch):
    # Found by the GUI fuzz: Export of the patching view before any table was computed raised out of the menu.
    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(lambda *a, **k: (str(tmp_path / "p.png"), "")))
    win.last_error = None
    win.export_view("patching")
    assert "Nothing to export yet" in win.last_error and "no patching table" in win.last_error
    assert not (tmp_path / "p.png").exists()
