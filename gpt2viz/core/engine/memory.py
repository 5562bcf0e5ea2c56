"""Giving memory back to the system after a long call (glibc keeps freed heap otherwise)."""

from __future__ import annotations

import ctypes
import gc


def release_memory() -> None:
    """Collect garbage, then give freed heap memory back to the system (see :func:`trim_heap`)."""
    gc.collect()
    trim_heap()


def trim_heap() -> None:
    """Give freed heap memory back to the system (glibc keeps it otherwise; a no-op elsewhere)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
