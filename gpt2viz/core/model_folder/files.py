"""Safe file writes: whole or nothing, with messages a person can act on."""

from __future__ import annotations

import errno
import os
import shutil
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


# What a person can do about the errors a long write runs into; the OS's own words come first.
_ADVICE = {
    errno.ENOSPC: "the disk is full: free some space or choose another folder, then export again",
    errno.EDQUOT: "the disk quota is used up: free some space or choose another folder, then export again",
    errno.EFBIG: "the file would pass this system's file size limit (ulimit -f): choose a smaller export",
    errno.EROFS: "the disk is read-only: choose another folder",
    errno.EACCES: "no permission: choose another folder",
}


def describe_os_error(e: OSError) -> str:
    """The OS's reason for ``e`` plus what to do about it, e.g. "No space left on device (the disk is full: …)"."""
    reason = e.strerror or str(e) or type(e).__name__
    advice = _ADVICE.get(e.errno)
    return f"{reason} ({advice})" if advice else reason


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


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte is out: a write may take only part (a signal, a pipe, a nearly full disk)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view[:1 << 20])
        if n <= 0:  # a regular file never takes 0 bytes of a non-empty write unless the disk is full
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        view = view[n:]


def atomic_write(path: str | Path, data: bytes | Callable[[Path], None], force: bool = False,
                 shown_as: str | Path | None = None) -> Path:
    """Write ``data`` (bytes, or a function that writes a given temporary path) to ``path`` atomically.

    The file appears complete or not at all: it is written next to its destination under a temporary
    name, flushed, then renamed over it.
    """
    path = check_writable(Path(path), force)
    shown = shown_as or path  # the name the user chose (a staged file is written elsewhere first)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as e:
        raise WriteError(f"cannot write {shown}: {describe_os_error(e)}") from None
    tmp_path = Path(tmp)
    try:
        if isinstance(data, (bytes, bytearray)):
            try:
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        else:
            os.close(fd)
            data(tmp_path)
        os.chmod(tmp_path, _FILE_MODE)
        os.replace(tmp_path, path)
    except WriteError:
        tmp_path.unlink(missing_ok=True)
        raise
    except OSError as e:
        tmp_path.unlink(missing_ok=True)
        raise WriteError(f"cannot write {shown}: {describe_os_error(e)}") from None
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return path


class StagedFiles:
    """Several files that appear in ``folder`` together, or not at all.

    Each file is written under a hidden staging folder inside ``folder`` (same disk, so the final
    renames are cheap and cannot run out of space); ``commit`` renames them into place and removes the
    staging folder; an exception inside the ``with`` block, or ``discard``, removes everything staged.
    Files that existed before are replaced only at commit (and only with ``force``), so a failed
    export never leaves a mix of old and new files. Used by the "all layers" and data exports.

    Parameters
    ----------
    folder : path
        The destination folder; it must exist and be writable.
    force : bool
        Allow replacing files that already exist there.
    """

    def __init__(self, folder: str | Path, force: bool = False):
        self.folder = Path(folder).expanduser()
        self.force = force
        if not self.folder.is_dir():
            raise WriteError(f"cannot write into {self.folder}: the folder does not exist")
        if not os.access(self.folder, os.W_OK | os.X_OK):
            raise WriteError(f"cannot write into {self.folder}: no permission to write in it")
        try:
            self.staging = Path(tempfile.mkdtemp(prefix=".gpt2viz-partial-", dir=self.folder))
        except OSError as e:
            raise WriteError(f"cannot write into {self.folder}: {describe_os_error(e)}") from None
        self._names: list[str] = []

    def path(self, name: str) -> Path:
        """Where to write the file that will become ``folder / name`` (checked for --force first)."""
        check_writable(self.folder / name, self.force)
        if name not in self._names:
            self._names.append(name)
        return self.staging / name

    def write(self, name: str, data: bytes) -> Path:
        """Stage ``data`` as the file that will become ``folder / name`` (errors name that final path)."""
        return atomic_write(self.path(name), data, shown_as=self.folder / name)

    def commit(self) -> list[Path]:
        """Move every staged file that was written into ``folder``; return their final paths."""
        done = []
        try:
            for name in self._names:
                if (self.staging / name).is_file():
                    os.replace(self.staging / name, self.folder / name)
                    done.append(self.folder / name)
        except OSError as e:
            raise WriteError(f"cannot finish writing into {self.folder}: {describe_os_error(e)}") from None
        finally:
            self.discard()
        return done

    def discard(self) -> None:
        """Remove the staging folder and whatever is still in it."""
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> "StagedFiles":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()
