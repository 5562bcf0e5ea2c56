"""A settings file that is damaged or cannot be written never stops the app (issue 17, item 3).

Root ignores file permissions, so a read-only file or folder is made with ``chattr +i`` (immutable) when the
tests run as root, and with ``chmod`` otherwise; without either the read-only cases are skipped (and say so).
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from PySide6.QtCore import QByteArray

from gpt2viz.app.settings import Settings
from gpt2viz.core.generation.sampling import SamplingSettings

GARBAGE = bytes(range(256)) * 3 + b"\x00\xff\xfe[sampling\ntemperature=\x89PNG"


def _read_only(path, request) -> None:
    """Make ``path`` unwritable for this process, undone when the test ends."""
    if os.geteuid() == 0:
        if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)],
                                                            capture_output=True).returncode != 0:
            pytest.skip("running as root and chattr +i is not available: cannot make a file read-only")
        request.addfinalizer(lambda: subprocess.run(["chattr", "-i", str(path)], capture_output=True))
    else:
        mode = path.stat().st_mode
        path.chmod(0o555 if path.is_dir() else 0o444)
        request.addfinalizer(lambda: path.chmod(mode))


def test_a_sound_file_has_no_problem(tmp_path):
    s = Settings(str(tmp_path / "s.ini"))
    s.set_sampling(SamplingSettings(0.7, 5, 0.9, 3))
    s.set("prompt/last", "你好 🙂")
    assert s.sync()
    again = Settings(str(tmp_path / "s.ini"))
    assert again.problem() is None
    assert again.sampling() == SamplingSettings(0.7, 5, 0.9, 3)
    assert again.text("prompt/last") == "你好 🙂"


@pytest.mark.parametrize("raw", [GARBAGE, b"[sampling]\ntemperature=0.5\n[wind", b"\x00" * 64,
                                 "[General]\nprompt%2Flast=caf\xe9\n".encode("latin-1")])
def test_a_damaged_file_is_kept_aside_and_the_defaults_apply(tmp_path, raw):
    ini = tmp_path / "s.ini"
    ini.write_bytes(raw)
    s = Settings(str(ini))
    assert s.sampling() == SamplingSettings()
    assert s.text("prompt/last", "default") == "default"
    assert s.kept == tmp_path / "s.ini.corrupt" and s.kept.read_bytes() == raw  # nothing the user had is lost
    msg = s.problem()
    assert msg and "damaged" in msg and str(s.kept) in msg
    s.set("prompt/last", "fresh")
    assert s.sync()
    assert Settings(str(ini)).problem() is None  # the new file is sound
    assert Settings(str(ini)).text("prompt/last") == "fresh"


def test_values_of_the_wrong_kind_are_dropped_one_by_one(tmp_path):
    ini = tmp_path / "s.ini"
    ini.write_text("[General]\nprompt%2Flast=kept\n\n[sampling]\ntemperature=hot\ntop_k=-3\ntop_p=0.5\nseed=1\n\n"
                   "[window]\ngeometry=not bytes\nsplitter=@ByteArray(ok)\n\n[export]\ndark=maybe\nfolder=/x, /y\n"
                   "\n[ui]\nlanguage=@Variant(\\0\\0\\0\\x7f\\0\\0\\0\\0)\n")
    s = Settings(str(ini))
    assert s.kept is None
    assert s.sampling() == SamplingSettings()  # one bad sampling value resets all four: they go together
    assert s.bytes("window/geometry") is None and s.bytes("window/splitter") == QByteArray(b"ok")
    assert s.text("export/dark", "0") == "0" and s.text("export/folder", "home") == "home"
    assert s.text("prompt/last") == "kept"
    msg = s.problem()
    for key in ("sampling/temperature", "window/geometry", "export/dark", "export/folder"):
        assert key in msg
    assert "prompt/last" not in msg
    assert s.sync()
    assert Settings(str(ini)).problem() is None  # the bad values were removed from the file


def test_a_read_only_file_is_read_and_never_written(tmp_path, request):
    ini = tmp_path / "s.ini"
    ini.write_text("[General]\nprompt%2Flast=remembered\n")
    _read_only(ini, request)
    s = Settings(str(ini))
    assert s.read_only
    assert s.text("prompt/last") == "remembered"
    s.set("prompt/last", "new")
    assert not s.sync()
    assert "cannot be written" in s.problem()
    assert ini.read_text() == "[General]\nprompt%2Flast=remembered\n"


def test_a_read_only_folder(tmp_path, request):
    folder = tmp_path / "config"
    folder.mkdir()
    _read_only(folder, request)
    s = Settings(str(folder / "gpt2viz" / "s.ini"))
    assert s.read_only and "cannot be written" in s.problem()
    s.set("prompt/last", "x")
    assert not s.sync()
    assert not (folder / "gpt2viz").exists()


def test_a_folder_where_the_file_should_be_or_a_file_where_the_folder_should_be(tmp_path):
    (tmp_path / "s.ini").mkdir()
    s = Settings(str(tmp_path / "s.ini"))
    assert s.read_only and s.sampling() == SamplingSettings() and s.problem()
    (tmp_path / "afile").write_text("x")
    s = Settings(str(tmp_path / "afile" / "s.ini"))
    assert s.read_only and s.problem()
