"""Where the model runs: a device name ("cpu" | "cuda") turned into onnxruntime execution providers.

Every onnxruntime session gpt2viz opens takes its providers from :func:`providers_for`, so one
``--device`` choice holds for the main graph, the intervention graph, the on-demand sub-graphs and the
logit lens alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import onnxruntime as ort

DEVICES = ("cpu", "cuda")
CPU, CUDA = "CPUExecutionProvider", "CUDAExecutionProvider"
# TF32 rounds a float32 MatMul's inputs to 10 bits of mantissa on Ampere and newer GPUs (onnxruntime's CUDA
# provider turns it on by default): the hooks would no longer be the float32 numbers the export validated
# against transformers, and the app's claim is to show the model's real numbers.
CUDA_OPTIONS = {"use_tf32": "0"}


class DeviceError(ValueError):
    """The device asked for cannot run here: one line for the user saying why and what to do."""


def cuda_missing_message() -> str:
    """Why ``--device cuda`` cannot run with the onnxruntime installed here, and what to do (one line)."""
    return (f"--device cuda: onnxruntime {ort.__version__} has no CUDA execution provider here; install the "
            "`gpu` extra (pip install 'gpt2viz[gpu]', onnxruntime-gpu in place of onnxruntime) on a machine "
            "with an NVIDIA GPU, or use --device cpu")


def providers_for(device: str = "cpu", available: Sequence[str] | None = None) -> list:
    """The ``providers`` argument of ``onnxruntime.InferenceSession`` for ``device``.

    Parameters
    ----------
    device : {"cpu", "cuda"}
        ``"cuda"`` puts onnxruntime's CUDA provider first, with float32 kept exact (no TF32), and the CPU
        provider after it for any node CUDA does not implement.
    available : sequence of str, optional
        The providers this onnxruntime offers; default ``onnxruntime.get_available_providers()``.

    Raises
    ------
    DeviceError
        For an unknown name, or "cuda" when onnxruntime has no CUDA provider (the CPU-only package).
    """
    if device == "cpu":
        return [CPU]
    if device != "cuda":
        raise DeviceError(f"unknown device {device!r}: choose one of {', '.join(DEVICES)}")
    if CUDA not in (ort.get_available_providers() if available is None else available):
        raise DeviceError(cuda_missing_message())
    return [(CUDA, dict(CUDA_OPTIONS)), CPU]


def check_session(session, device: str) -> None:
    """Refuse a session that silently fell back to the CPU when CUDA was asked for.

    onnxruntime-gpu lists the CUDA provider even when the CUDA or cuDNN libraries it loads are missing; it then
    logs an error and runs on the CPU, which a user who asked for the GPU must be told.
    """
    if device == "cuda" and CUDA not in session.get_providers():
        raise DeviceError("--device cuda: onnxruntime's CUDA execution provider could not be loaded (the CUDA or "
                          "cuDNN libraries it needs are missing, or no NVIDIA GPU is visible); use --device cpu")


def open_session(graph, options=None, device: str = "cpu"):
    """An ``onnxruntime.InferenceSession`` of ``graph`` (a path or serialized bytes) on ``device``.

    Raises :class:`DeviceError` when ``device`` cannot run here (see :func:`providers_for`, :func:`check_session`).
    """
    session = ort.InferenceSession(graph, options, providers=providers_for(device))
    check_session(session, device)
    return session
