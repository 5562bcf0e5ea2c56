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

import functools
import mmap
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

# Initializers of at least this many bytes are left in the file; smaller ones (scalars, shapes, the
# intervention inputs' no-op defaults) are parsed as usual.
STUB_FROM = 1 << 16

# Parameters read for analyses are kept up to this many bytes (newest first); bigger ones are read on
# each use. Room for what the Path tab reads at every show on GPT-2 small, every block's attention output
# projection (12 x 2.4 MB), and one MLP output matrix (9.4 MB) beside them. At 24 MB the Path tab's twelve evicted
# each other in turn: each show read all of them from the file again (~7 ms of its 46-67 ms on a 2-core EPYC).
KEEP_BYTES = 40 << 20
# WeightFiles.row_norms reads a matrix this many bytes at a time into one buffer: it stays in the CPU's cache
# and its pages are touched once, not once per row block.
NORM_CHUNK_BYTES = 1 << 20

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


def row_lengths(a: np.ndarray) -> np.ndarray:
    """[rows] Euclidean lengths of the first-axis rows of ``a``, summed in float64 without a temporary of squares,
    as float32 (what :meth:`WeightFiles.row_norms` gives for a stored initializer)."""
    flat = a.reshape(len(a), -1)
    return np.sqrt(np.einsum("ij,ij->i", flat, flat, dtype=np.float64)).astype(np.float32)


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
        self._arrays: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def array(self, name: str) -> np.ndarray:
        """The initializer ``name`` as a read-only array (read from disk unless among the newest kept)."""
        with self._lock:
            a = self._arrays.get(name)
            if a is not None:
                self._arrays.move_to_end(name)
                return a
        s = self.stored[name]
        a = np.empty(s.shape, dtype=s.dtype)
        if a.nbytes != s.length:
            raise OnnxFileError(f"{name}: {s.length} bytes stored for a {s.dtype} tensor of shape {s.shape}")
        self._read(name, memoryview(a).cast("B"), s.offset)
        a.flags.writeable = False
        with self._lock:
            # The analyses read a few blocks' matrices at a time; every block's kept for good would be
            # the model's weights again (0.4 GB of MLP output matrices alone for gpt2-medium).
            if a.nbytes <= KEEP_BYTES:
                self._arrays[name] = a
                while sum(x.nbytes for x in self._arrays.values()) > KEEP_BYTES:
                    self._arrays.popitem(last=False)
        return a

    def rows(self, name: str, index) -> np.ndarray:
        """Rows ``index`` (first axis) of the initializer ``name``, read alone: [len(index), ...]."""
        s = self.stored[name]
        row = int(np.prod(s.shape[1:], dtype=np.int64)) * np.dtype(s.dtype).itemsize
        out = np.empty((len(index), *s.shape[1:]), dtype=s.dtype)
        if isinstance(index, range) and index.step == 1 and len(index):  # one read for a run of rows
            if not (0 <= index.start and index.stop <= s.shape[0]):
                raise IndexError(f"rows {index.start}..{index.stop - 1} of {name} (it has {s.shape[0]})")
            self._read(name, memoryview(out).cast("B"), s.offset + index.start * row)
            out.flags.writeable = False
            return out
        for k, i in enumerate(index):
            if not 0 <= i < s.shape[0]:
                raise IndexError(f"row {i} of {name} (it has {s.shape[0]})")
            self._read(name, memoryview(out[k]).cast("B"), s.offset + i * row)
        out.flags.writeable = False
        return out

    def row_norms(self, name: str) -> np.ndarray:
        """[rows] Euclidean lengths of the first-axis rows of the initializer ``name`` (float32, summed in float64).

        Read through one small buffer, reused, and not kept: a block's MLP output matrix (9.4 MB on GPT-2 small)
        read whole into fresh memory and normed cost ~17 ms of an MLP view show on a 2-core EPYC (page faults, a
        [M, E] temporary of squares), and kept it pushed the Path view's W_O matrices out of the KEEP_BYTES kept.
        """
        with self._lock:
            kept = self._arrays.get(name)
        if kept is not None:
            return row_lengths(kept)
        s = self.stored[name]
        width = int(np.prod(s.shape[1:], dtype=np.int64))
        step = max(1, NORM_CHUNK_BYTES // (width * np.dtype(s.dtype).itemsize))
        buf = np.empty((min(step, s.shape[0]), width), dtype=s.dtype)
        out = np.empty(s.shape[0], dtype=np.float64)
        for first in range(0, s.shape[0], step):
            part = buf[: min(step, s.shape[0] - first)]
            self._read(name, memoryview(part).cast("B"), s.offset + first * width * part.itemsize)
            out[first: first + len(part)] = np.einsum("ij,ij->i", part, part, dtype=np.float64)
        return np.sqrt(out).astype(np.float32)

    def _read(self, name: str, view: memoryview, offset: int) -> None:
        """Fill ``view`` from the file of ``name`` at ``offset`` (preadv: no temporary, any thread)."""
        s, done = self.stored[name], 0
        fd = self._files[s.file].fileno()
        while done < len(view):
            n = os.preadv(fd, [view[done:]], offset + done)
            if n <= 0:
                raise OnnxFileError(f"{self.folder / s.file} ends before {name}'s data (was it cut short?)")
            done += n

    def close(self) -> None:
        """Close the files (arrays already read stay valid)."""
        for f in self._files.values():
            f.close()


@functools.cache
def physical_cores() -> int:
    """The physical cores this process may run on: onnxruntime's default count of intra-op threads, counted
    here so it can be set explicitly (see :func:`quiet_options`).

    Logical CPUs that are hyper-threads of one core count once (Linux's ``topology`` files); where those
    cannot be read, every CPU the process may use counts. Counted once per process: on-demand sub-graph
    sessions open often."""
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    cores = set()
    for cpu in allowed:
        try:
            topo = Path(f"/sys/devices/system/cpu/cpu{cpu}/topology")
            cores.add((topo / "physical_package_id").read_text().strip() + ":" + (topo / "core_id").read_text().strip())
        except OSError:
            cores.add(f"cpu{cpu}")
    return max(1, len(cores))


def quiet_options(threads: int | None = None):
    """onnxruntime session options every gpt2viz session starts from: warnings only, ``threads`` intra-op
    threads (when None: one per physical core, onnxruntime's own default count, but without its pinning), and
    pool threads that go to sleep when a run ends.

    The count is always set explicitly because onnxruntime pins its pool threads to cores when it is left
    at 0, but not the calling thread. In the app the caller is the worker thread, woken by the GUI thread
    and often placed on the core a pool thread is pinned to: the two then shared that core for a scheduler
    tick while the other sat idle. Measured at 200 tokens of a GPT-2-small-sized model in the shown window
    (``/proc/thread-self/schedstat`` around each step's run): 4-8 ms of waiting to run in most steps, a
    step 28-33 ms against 21 ms headless, where the calling thread keeps its core. Unpinned: no waiting.

    By default onnxruntime's pool threads spin for a while after each run; in the app that burned a core
    the GUI thread needs to redraw between steps (measured then: 3x fewer tokens/s). Turning
    spinning off altogether made the threads sleep and wake between the nodes of a run too, which cost
    11% of a 1000-token prefill of a GPT-2-small-sized model (1.27 -> 1.12 s) and 8% of a 32-token one.
    So they spin during a run and are stopped when it returns (``session.force_spinning_stop``): a
    process that has just run a step uses no CPU (measured: 0 ms of CPU in the 0.5 s after a step).

    Nodes run in the graph's own order (``PRIORITY_BASED``), not onnxruntime's default topological sort:
    the default ran the hook copies late, so each block's activations lived on through the later blocks.
    One 128-position chunk grew the arena to 127 MB by default and to 31 MB in this order (its verbose log).
    A 1000-token prefill of a GPT-2-small-sized model went from 116,000 page faults to 14,000 and from 1.24
    to 0.98 s (side by side, the same floats)."""
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    opts.execution_order = ort.ExecutionOrder.PRIORITY_BASED
    opts.intra_op_num_threads = threads or physical_cores()
    opts.add_session_config_entry("session.intra_op.allow_spinning", "1")
    opts.add_session_config_entry("session.force_spinning_stop", "1")
    return opts


def session_options_for(folder: str | Path, opts=None):
    """onnxruntime session options that let a skeleton loaded from bytes read its weights in ``folder``."""
    opts = opts or ort.SessionOptions()
    opts.add_session_config_entry("session.model_external_initializers_file_folder_path", str(folder))
    return opts
