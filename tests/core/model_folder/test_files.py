import pytest

from gpt2viz.core.model_folder.files import WriteError, atomic_write


def test_atomic_write_replaces_only_with_force(tmp_path):
    p = tmp_path / "a.bin"
    atomic_write(p, b"one")
    with pytest.raises(WriteError, match="--force"):
        atomic_write(p, b"two")
    assert p.read_bytes() == b"one"
    atomic_write(p, b"two", force=True)
    assert p.read_bytes() == b"two"


def test_failed_writer_leaves_nothing(tmp_path):
    def broken(tmp):
        tmp.write_bytes(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(WriteError, match="No space left"):
        atomic_write(tmp_path / "b.bin", broken)
    assert list(tmp_path.iterdir()) == []


def test_missing_folder_and_folder_target(tmp_path):
    with pytest.raises(WriteError, match="does not exist"):
        atomic_write(tmp_path / "no" / "c.bin", b"x")
    (tmp_path / "d").mkdir()
    with pytest.raises(WriteError, match="is a folder"):
        atomic_write(tmp_path / "d", b"x", force=True)


def test_written_files_get_the_usual_mode(tmp_path):
    import os

    p = atomic_write(tmp_path / "m.bin", b"x")
    old = os.umask(0o022)
    os.umask(old)
    assert p.stat().st_mode & 0o777 == 0o666 & ~old
