"""The one QSettings wrapper: window geometry, splitters, last model, prompt and sampling settings.

A settings file can be damaged (garbage bytes, a value of the wrong type written by hand or by another
version) or unwritable (a read-only file or folder, a full disk). Neither may stop the app: a damaged
file is kept aside as ``<file>.corrupt`` (nothing the user had is lost) and the app starts with the
defaults; values of the wrong type are dropped one by one; an unwritable file is read but not written.
:meth:`Settings.problem` is the one message the window shows about it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from PySide6.QtCore import QByteArray, QCoreApplication, QSettings

from gpt2viz.core.generation.sampling import SamplingSettings


def _is_text(v) -> bool:
    return isinstance(v, str)


def _is_flag(v) -> bool:
    return v in ("0", "1")


def _is_bytes(v) -> bool:
    return isinstance(v, QByteArray)


def _number(kind):
    def check(v) -> bool:
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            return False
        try:
            kind(v)
        except (TypeError, ValueError, OverflowError):
            return False
        return True
    return check


# Every key the app reads, with the test its stored value must pass (else it is dropped: the default applies).
KNOWN = {
    "window/geometry": _is_bytes, "window/splitter": _is_bytes,
    "prompt/last": _is_text, "model/last": _is_text, "export/folder": _is_text, "export/dark": _is_flag,
    "ui/language": _is_text,
    "sampling/temperature": _number(float), "sampling/top_k": _number(int), "sampling/top_p": _number(float),
    "sampling/seed": _number(int),
}


def _looks_damaged(raw: bytes) -> bool:
    """A settings file Qt wrote is UTF-8 text without NUL or other control bytes (tabs and newlines aside)."""
    if b"\x00" in raw:
        return True
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return any(ord(c) < 32 and c not in "\t\r\n" for c in text)


def _folder_writable(folder: Path) -> bool:
    """Can a file be created in ``folder`` (or in the folders Qt would create down to it)? Tried, not guessed:
    ``os.access`` says yes to root even on an immutable folder."""
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            return False
        probe = probe.parent
    if not probe.is_dir():
        return False
    try:
        fd, tmp = tempfile.mkstemp(prefix=".gpt2viz-probe-", dir=probe)
    except OSError:
        return False
    os.close(fd)
    os.unlink(tmp)
    return True


class Settings:
    """Typed access to persistent settings.

    Parameters
    ----------
    path : str, optional
        An INI file to use instead of the platform's store (tests pass a temporary file).
    """

    def __init__(self, path: str | None = None):
        self._path = path
        self._s = self._open()
        self.file = Path(self._s.fileName())
        self.kept: Path | None = None  # where a damaged file was moved
        self.dropped: list[str] = []  # keys whose values were of the wrong type
        self.read_only = False
        self._check()

    def _open(self) -> QSettings:
        return QSettings(self._path, QSettings.IniFormat) if self._path else QSettings("gpt2viz", "gpt2viz")

    def _check(self) -> None:
        try:
            raw = self.file.read_bytes() if self.file.is_file() else b""
        except OSError:
            raw = b""
        self._s.allKeys()  # reads the file: status() tells a format error only after a read
        if raw and (self._s.status() == QSettings.FormatError or _looks_damaged(raw)):
            self._set_aside()
        if self.file.is_dir():
            self.read_only = True
        elif self.file.is_file():
            self.read_only = not self._s.isWritable()
        else:
            self.read_only = not _folder_writable(self.file.parent)
        for key, ok in KNOWN.items():
            v = self._s.value(key)
            if v is not None and not ok(v):
                self.dropped.append(key)
                if not self.read_only:
                    self._s.remove(key)
        if not self.sampling_valid():
            self.dropped.extend(k for k in ("sampling/temperature", "sampling/top_k", "sampling/top_p",
                                            "sampling/seed") if k not in self.dropped and self._s.contains(k))
            if not self.read_only:
                self._s.remove("sampling")

    def _set_aside(self) -> None:
        """Move the damaged file to ``<file>.corrupt`` (kept for the user) and start from an empty store."""
        del self._s
        target = self.file.with_name(self.file.name + ".corrupt")
        try:
            os.replace(self.file, target)
            self.kept = target
        except OSError:
            self.kept = None
        self._s = self._open()
        if self.kept is None:  # could not move it: read nothing from it, and never overwrite it
            self._s.clear()
            self.read_only = True

    def problem(self) -> str | None:
        """One sentence for the user when the file was damaged, had bad values or cannot be written; else None.

        Called once the translators are installed (the Settings exist before the language is known).
        """
        parts = []
        if self.kept is not None:
            parts.append(QCoreApplication.translate("Settings", "The settings file {file} was damaged and could not be read; it was kept "
                                        "as {kept} and the app started with the default settings.").format(
                file=self.file, kept=self.kept))
        elif self.dropped:
            parts.append(QCoreApplication.translate("Settings", "Some settings in {file} had values of the wrong kind and were reset to "
                                        "their defaults: {keys}.").format(file=self.file,
                                                                          keys=", ".join(self.dropped)))
        if self.read_only:
            parts.append(QCoreApplication.translate("Settings", "The settings file {file} cannot be written (read-only file or folder): "
                                        "the app works, but your choices will not be remembered.").format(
                file=self.file))
        return "\n\n".join(parts) or None

    def bytes(self, key: str) -> QByteArray | None:
        v = self._s.value(key)
        return v if isinstance(v, QByteArray) else None

    def set(self, key: str, value) -> None:
        if not self.read_only:
            self._s.setValue(key, value)

    def text(self, key: str, default: str = "") -> str:
        v = self._s.value(key, default)
        return v if isinstance(v, str) else default

    def sampling_valid(self) -> bool:
        try:
            self._stored_sampling()
        except (TypeError, ValueError, OverflowError):
            return False
        return True

    def _stored_sampling(self) -> SamplingSettings:
        return SamplingSettings(float(self._s.value("sampling/temperature", 1.0)),
                                int(self._s.value("sampling/top_k", 0)),
                                float(self._s.value("sampling/top_p", 1.0)),
                                int(self._s.value("sampling/seed", 0)))

    def sampling(self) -> SamplingSettings:
        """Last sampling settings, or the defaults when missing or invalid."""
        try:
            return self._stored_sampling()
        except (TypeError, ValueError, OverflowError):
            return SamplingSettings()

    def set_sampling(self, s: SamplingSettings) -> None:
        for k in ("temperature", "top_k", "top_p", "seed"):
            self.set(f"sampling/{k}", getattr(s, k))

    def sync(self) -> bool:
        """Write pending changes; False when the file could not be written (the app goes on)."""
        if self.read_only:
            return False
        self._s.sync()
        return self._s.status() == QSettings.NoError
