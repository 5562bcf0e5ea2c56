"""Open an ONNX file's graph without its weights, and its weights without a copy.

``onnx.load`` parses a model into one protobuf message, weights and all (500 MB for GPT-2 small, and as
much again for every serialized copy handed to onnxruntime). Here the file is scanned instead: the
protobuf wire format is walked field by field, every large initializer's ``raw_data`` is skipped and
recorded as (offset, length) in the file, and the rest - nodes, inputs, outputs, small tensors - is
parsed by onnx as usual. The result is a *skeleton*: the same graph whose large initializers are
external-data entries pointing into ``model.onnx`` itself, which onnxruntime reads straight from the
file (so any number of graphs cut from it cost no weight copies in Python), and where each weight lies,
so that an analysis reads only the parameters it uses (:class:`WeightFiles`).

onnx offers no lazy loading of embedded weights (``load_external_data=False`` applies only to weights
already stored in a separate file), hence this small reader of the format. Files whose weights are
external already (``model.onnx.data``, past 2 GB) keep their own external entries.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

# Initializers of at least this many bytes are left in the file; smaller ones (scalars, shapes, the
# intervention inputs' no-op defaults) are parsed as usual.
STUB_FROM = 1 << 16

# Field numbers of onnx.proto (ModelProto.graph, GraphProto.initializer, TensorProto.raw_data ...).
_MODEL_GRAPH, _GRAPH_INITIALIZER, _TENSOR_RAW_DATA = 7, 5, 9


class OnnxFileError(ValueError):
    """The file is not a well-formed ONNX protobuf."""


@dataclass(frozen=True)
class Stored:
    """Where one initializer's data lies: ``length`` bytes at ``offset`` of ``file`` (a folder-relative name)."""

    file: str
    offset: int
    length: int
    dtype: np.dtype
    shape: tuple[int, ...]


def _varint(buf, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise OnnxFileError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise OnnxFileError("varint too long")


def _fields(buf, start: int, end: int):
    """(field number, wire type, start of the field's bytes, start of its payload, end) of a message."""
    pos = start
    while pos < end:
        key_at = pos
        key, pos = _varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, nxt = _varint(buf, pos)
        elif wire == 1:
            nxt = pos + 8
        elif wire == 2:
            n, pos = _varint(buf, pos)
            nxt = pos + n
        elif wire == 5:
            nxt = pos + 4
        else:
            raise OnnxFileError(f"unsupported wire type {wire} at byte {key_at}")
        if nxt > end:
            raise OnnxFileError(f"field {field} at byte {key_at} runs past the end of its message")
        yield field, wire, key_at, pos, nxt
        pos = nxt


def _length_delimited(field: int, payload: bytes) -> bytes:
    return onnx_varint((field << 3) | 2) + onnx_varint(len(payload)) + payload


def onnx_varint(n: int) -> bytes:
    """``n`` as a protobuf varint."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _stub(header: bytes, location: str, offset: int, length: int) -> bytes:
    """A TensorProto (name, type, dims from ``header``) whose data is ``length`` bytes at ``offset``."""
    t = TensorProto.FromString(header)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)), ("length", str(length))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t.SerializeToString()


def _stored_of(t: TensorProto) -> Stored:
    info = {e.key: e.value for e in t.external_data}
    return Stored(info["location"], int(info.get("offset", 0)), int(info["length"]),
                  np.dtype(helper.tensor_dtype_to_np_dtype(t.data_type)), tuple(int(d) for d in t.dims))


def read_skeleton(path: str | Path) -> tuple[onnx.ModelProto, dict[str, Stored]]:
    """The model at ``path`` with its large initializers as external entries, and where each one lies.

    Every external entry (made here, or already in the file) names a file of the model's folder.
    """
    path = Path(path)
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        model_parts, graph_found = [], False
        for field, wire, at, body, end in _fields(buf, 0, len(buf)):
            if field != _MODEL_GRAPH or wire != 2:
                model_parts.append(buf[at:end])
                continue
            graph_found = True
            graph_parts = []
            for gfield, gwire, gat, gbody, gend in _fields(buf, body, end):
                if gfield != _GRAPH_INITIALIZER or gwire != 2:
                    graph_parts.append(buf[gat:gend])
                    continue
                header, raw = bytearray(), None
                for tfield, twire, tat, tbody, tend in _fields(buf, gbody, gend):
                    if tfield == _TENSOR_RAW_DATA and twire == 2:
                        raw = (tbody, tend - tbody)
                    else:
                        header += buf[tat:tend]
                if raw is not None and raw[1] >= STUB_FROM:
                    graph_parts.append(_length_delimited(_GRAPH_INITIALIZER, _stub(bytes(header), path.name, *raw)))
                else:
                    graph_parts.append(buf[gat:gend])
            model_parts.append(_length_delimited(_MODEL_GRAPH, b"".join(graph_parts)))
    if not graph_found:
        raise OnnxFileError(f"{path} holds no graph")
    try:
        model = onnx.load_from_string(b"".join(model_parts))
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and friends
        raise OnnxFileError(f"{path} is not an ONNX model ({e})") from None
    stored = {t.name: _stored_of(t) for t in model.graph.initializer
              if t.data_location == TensorProto.EXTERNAL}
    return model, stored


class WeightFiles:
    """Stored initializers read into numpy arrays on first use, from the files as they were scanned.

    The files are opened here and kept open, so a folder deleted or replaced later (a new export over it)
    still yields the bytes the skeleton describes; a file truncated in place gives a clear error. (A
    memory map would fault the whole process - SIGBUS - in that case.) Each array is read once, with
    ``preadv`` straight into its buffer: no temporary copy, safe from any thread.
    """

    def __init__(self, folder: str | Path, stored: dict[str, Stored]):
        self.folder = Path(folder)
        self.stored = stored
        self._files = {name: open(self.folder / name, "rb") for name in sorted({s.file for s in stored.values()})}
        self._arrays: dict[str, np.ndarray] = {}

    def array(self, name: str) -> np.ndarray:
        """The initializer ``name`` as a read-only array (read from disk the first time)."""
        a = self._arrays.get(name)
        if a is not None:
            return a
        s = self.stored[name]
        a = np.empty(s.shape, dtype=s.dtype)
        view, done = memoryview(a).cast("B"), 0
        if len(view) != s.length:
            raise OnnxFileError(f"{name}: {s.length} bytes stored for a {s.dtype} tensor of shape {s.shape}")
        fd = self._files[s.file].fileno()
        while done < s.length:
            n = os.preadv(fd, [view[done:]], s.offset + done)
            if n <= 0:
                raise OnnxFileError(f"{self.folder / s.file} ends before {name}'s data (was it cut short?)")
            done += n
        a.flags.writeable = False
        return self._arrays.setdefault(name, a)

    def close(self) -> None:
        """Close the files (arrays already read stay valid)."""
        for f in self._files.values():
            f.close()


def session_options_for(folder: str | Path, opts=None):
    """onnxruntime session options that let a skeleton loaded from bytes read its weights in ``folder``."""
    import onnxruntime as ort

    opts = opts or ort.SessionOptions()
    opts.add_session_config_entry("session.model_external_initializers_file_folder_path", str(folder))
    return opts
