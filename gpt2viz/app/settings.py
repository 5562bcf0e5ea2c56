"""The one QSettings wrapper: window geometry, splitters, last model, prompt and sampling settings."""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QSettings

from gpt2viz.core.sampling import SamplingSettings


class Settings:
    """Typed access to persistent settings.

    Parameters
    ----------
    path : str, optional
        An INI file to use instead of the platform's store (tests pass a temporary file).
    """

    def __init__(self, path: str | None = None):
        self._s = QSettings(path, QSettings.IniFormat) if path else QSettings("gpt2viz", "gpt2viz")

    def bytes(self, key: str) -> QByteArray | None:
        v = self._s.value(key)
        return v if isinstance(v, QByteArray) else None

    def set(self, key: str, value) -> None:
        self._s.setValue(key, value)

    def text(self, key: str, default: str = "") -> str:
        v = self._s.value(key, default)
        return v if isinstance(v, str) else default

    def sampling(self) -> SamplingSettings:
        """Last sampling settings, or the defaults when missing or invalid."""
        try:
            return SamplingSettings(float(self._s.value("sampling/temperature", 1.0)),
                                    int(self._s.value("sampling/top_k", 0)),
                                    float(self._s.value("sampling/top_p", 1.0)),
                                    int(self._s.value("sampling/seed", 0)))
        except (TypeError, ValueError):
            return SamplingSettings()

    def set_sampling(self, s: SamplingSettings) -> None:
        for k in ("temperature", "top_k", "top_p", "seed"):
            self._s.setValue(f"sampling/{k}", getattr(s, k))

    def sync(self) -> None:
        self._s.sync()
