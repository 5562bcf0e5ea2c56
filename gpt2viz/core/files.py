"""Safe file writes: whole or nothing, with messages a person can act on."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def _umask() -> int:
    old = os.umask(0o022)
    os.umask(old)
    return old


# mkstemp creates files readable by the owner only; an exported image should get the usual mode.
_FILE_MODE = 0o666 & ~_umask()


class WriteError(OSError):
    """A file could not be written; the message says why and what to do."""


def check_writable(path: Path, force: bool = False) -> Path:
    """Raise WriteError unless ``path`` can be created (or replaced, with ``force``)."""
    path = Path(path).expanduser()
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise WriteError(f"cannot write {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise WriteError(f"cannot write {path}: no permission to write in {folder}")
    if path.exists() and not force:
        raise WriteError(f"{path} exists; use --force to replace it")
    if path.is_dir():
        raise WriteError(f"{path} is a folder")
    return path


def atomic_write(path: str | Path, data: bytes | Callable[[Path], None], force: bool = False) -> Path:
    """Write ``data`` (bytes, or a function that writes a given temporary path) to ``path`` atomically.

    The file appears complete or not at all: it is written next to its destination under a temporary
    name, flushed, then renamed over it.
    """
    path = check_writable(Path(path), force)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as e:
        raise WriteError(f"cannot write {path}: {e.strerror or e}") from None
    tmp_path = Path(tmp)
    try:
        if isinstance(data, (bytes, bytearray)):
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
        else:
            os.close(fd)
            data(tmp_path)
        os.chmod(tmp_path, _FILE_MODE)
        os.replace(tmp_path, path)
    except OSError as e:
        tmp_path.unlink(missing_ok=True)
        raise WriteError(f"cannot write {path}: {e.strerror or e}") from None
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return path
