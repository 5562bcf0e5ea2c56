"""Read the model's own parameters out of its ONNX file, for analyses that need weights, and run the
model's own final LayerNorm + LM head on any residual vectors (the logit lens).

optimum names initializers after the PyTorch parameters (`transformer.wte.weight`); parameters with
identical values may be stored once and re-exposed by `Identity` nodes, which are followed here.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import numpy as np
from onnx import numpy_helper

from gpt2viz.core.engine.device import open_session
from gpt2viz.core.graph.cuts import lens_graph
from gpt2viz.core.graph.onnx_file import WeightFiles, quiet_options, read_skeleton, row_lengths, session_options_for
from gpt2viz.core.numeric import lens_top, token_probabilities

# Rows of residual vectors per call of the lens graph. Each row's logits and their softmax are [V] temporaries
# (~1 MB a row with GPT-2's 50,257 tokens), and onnxruntime's arena keeps the largest call's for good: a lens grid's
# 32 columns of GPT-2 small (416 rows) in one call would leave it 431 MB larger; in calls of 48-52 rows 90-96 MB, for
# 5 % more time (246 against 233 ms, the same floats; EPYC machine). Handing the arena back after a large call would
# cost ~230 ms of fresh pages at that call and ~10 ms at the next small one.
LENS_ROWS = 48


class Weights:
    """Named parameters of an exported GPT-2, read on first use.

    Only the parameters an analysis asks for are read from ``model.onnx`` (or its external data), once
    each, read-only; the file is never parsed whole into Python.

    Parameters
    ----------
    model_file : path
        The folder's ``model.onnx`` (external data next to it is read too).
    eps : float
        LayerNorm epsilon from the manifest.
    layout : tuple, optional
        ``Model.layout`` (the skeleton and where each weight lies), so the file is not scanned again.
    device : {"cpu", "cuda"}
        Where the logit lens runs (:mod:`gpt2viz.core.engine.device`).
    """

    def __init__(self, model_file: str | Path, eps: float = 1e-5, layout=None, device: str = "cpu"):
        self.model_file = Path(model_file)
        self.device = device
        self.eps = float(eps)
        self._layout = layout
        self._norms: dict[str, np.ndarray] = {}  # W_out_norms, by parameter name

    @classmethod
    def of(cls, model) -> "Weights":
        """The parameters of an opened :class:`~gpt2viz.core.engine.model.Model` (its scan of the file shared)."""
        return cls(model.folder / "model.onnx", model.manifest["config"].get("layer_norm_epsilon", 1e-5),
                   layout=model.layout, device=model.device)

    @cached_property
    def _table(self) -> dict[str, object]:
        skeleton, stored = self._layout or read_skeleton(self.model_file)
        self._files = WeightFiles(self.model_file.parent, stored)
        # Small initializers are in the skeleton itself; large ones are named here and mapped when read.
        table: dict[str, object] = {t.name: numpy_helper.to_array(t) for t in skeleton.graph.initializer
                                    if t.name not in stored}
        table.update({name: name for name in stored})
        for node in skeleton.graph.node:  # deduplicated parameters: out = Identity(stored)
            if node.op_type == "Identity" and node.input[0] in table and node.output[0] not in table:
                table[node.output[0]] = table[node.input[0]]
        self._lens_session = self._open_lens(skeleton)
        return table

    def _open_lens(self, m):
        try:
            blob = lens_graph(m)
        except (KeyError, ValueError):  # a graph whose head is not LayerNorm -> MatMul: numpy does it
            return None
        return open_session(blob, session_options_for(self.model_file.parent, quiet_options()), self.device)

    def get(self, name: str) -> np.ndarray:
        """A parameter by its PyTorch name, e.g. ``transformer.ln_f.weight`` (read-only)."""
        try:
            entry = self._table[name]
        except KeyError:
            raise KeyError(f"parameter {name!r} not found in {self.model_file}") from None
        return self._files.array(entry) if isinstance(entry, str) else entry

    @property
    def W_U(self) -> np.ndarray:
        """Unembedding [V, E] (GPT-2 ties it to the token embedding), read from the file on each use: at
        154 MB (GPT-2 small) it is not kept. Views use :meth:`unembed`, :meth:`embedding_rows` and
        :attr:`embedding_norms`, which the lens session answers from its own copy."""
        return self.get("transformer.wte.weight")

    def embedding_rows(self, ids) -> np.ndarray:
        """Token embeddings [N, E] of ``ids`` (rows of :attr:`W_U`, read alone)."""
        self._table  # noqa: B018 - opens the weight files
        ids = ids if isinstance(ids, range) else [int(i) for i in ids]
        if "transformer.wte.weight" not in self._files.stored:  # a small model: parsed with the graph
            return np.asarray(self.get("transformer.wte.weight"))[list(ids)]
        return self._files.rows("transformer.wte.weight", ids)

    def W_out(self, layer: int) -> np.ndarray:
        """MLP output weights [M, E] of a block: row n is what neuron n writes into the residual."""
        return self.get(_w_out(layer))

    def W_out_row(self, layer: int, neuron: int) -> np.ndarray:
        """[E] what one neuron of a block writes into the residual per unit of activation (its row alone is read)."""
        entry = self._table[_w_out(layer)]
        if not isinstance(entry, str):  # a small model: parsed with the graph
            return entry[int(neuron)]
        return self._files.rows(entry, range(int(neuron), int(neuron) + 1))[0]

    def W_out_norms(self, layer: int) -> np.ndarray:
        """[M] lengths of a block's MLP output rows, ``‖W_out[n]‖``, made once per block and kept (12 KB on GPT-2
        small): the MLP view ranks its neurons by them at every show."""
        name = _w_out(layer)
        norms = self._norms.get(name)
        if norms is None:
            entry = self._table[name]
            if isinstance(entry, str):
                norms = self._files.row_norms(entry)
            else:
                norms = row_lengths(entry)
            norms.flags.writeable = False
            self._norms[name] = norms
        return norms

    @property
    def lens_is_the_models_head(self) -> bool:
        """Whether the lens runs the model's own final LayerNorm and LM head nodes in onnxruntime (the lens graph),
        so that its last row over a position is the model's logits there bit for bit; False when a graph of
        another shape leaves the lens to numpy."""
        self._table  # noqa: B018 - opens the lens session with the parameters
        return self._lens_session is not None

    @cached_property
    def embedding_norms(self) -> np.ndarray:
        """[V] lengths of the token embeddings, for cosine-similarity searches (a unit-length copy of
        the matrix would hold it twice: 154 MB for GPT-2 small)."""
        self._table  # noqa: B018 - opens the lens session with the parameters
        if self._lens_session is not None:  # a constant of the lens graph (ReduceL2, folded when loaded)
            n = self._lens_session.run(["embedding_norms"], _lens_feed(np.zeros((1, self._width()), np.float32)))[0]
            return np.maximum(n, 1e-12).astype(np.float32)
        W = self.W_U
        # einsum sums the squares row by row without a [V, E] temporary (np.linalg.norm makes one)
        return np.maximum(np.sqrt(np.einsum("ve,ve->v", W, W, dtype=np.float64)), 1e-12).astype(np.float32)

    def _width(self) -> int:
        return int(self._files.stored["transformer.wte.weight"].shape[1]) if "transformer.wte.weight" in \
            self._files.stored else int(self.get("transformer.wte.weight").shape[1])

    def ln_final(self, x: np.ndarray) -> np.ndarray:
        """The final LayerNorm applied to residual vectors [..., E]."""
        x = np.asarray(x, dtype=np.float64)
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        g, b = self.get("transformer.ln_f.weight"), self.get("transformer.ln_f.bias")
        return (x - mu) / np.sqrt(var + self.eps) * g + b

    def unembed(self, x: np.ndarray) -> np.ndarray:
        """The LM head's product [..., V] with vectors [..., E] (what each promotes; no LayerNorm).

        Run by onnxruntime on the model's own ``lm_head`` MatMul in the lens graph, float32."""
        x = np.asarray(x, dtype=np.float32)
        self._table  # noqa: B018 - opens the lens session with the parameters
        if self._lens_session is None:
            return x @ self.W_U.T
        flat = x.reshape(-1, x.shape[-1])
        out = self._run_lens(["lens"], flat, normalize=False)[0]
        return out.reshape(*x.shape[:-1], out.shape[-1])

    def lens(self, resid: np.ndarray) -> np.ndarray:
        """Logits [..., V] the model would give residual vectors [..., E]: its final LayerNorm and LM head.

        Run by onnxruntime on the graph's own nodes (:func:`gpt2viz.core.engine.ondemand.lens_graph`),
        :data:`LENS_ROWS` rows a call; float32 like the model's logits.
        """
        x = np.asarray(resid, dtype=np.float32)
        self._table  # noqa: B018 - opens the lens session with the parameters
        if self._lens_session is None:
            return self.unembed(self.ln_final(x))
        flat = np.ascontiguousarray(x.reshape(-1, x.shape[-1]))
        out = self._run_lens(["lens"], flat)[0]
        return out.reshape(*x.shape[:-1], out.shape[-1])

    def lens_tops(self, resid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Top token and its lens probability for residual vectors [N, E]: ``lens_top(lens(resid))``.

        Made inside the lens graph, so the [N, V] logits stay in onnxruntime (a lens grid's columns).
        """
        return self.lens_tops_with_rows(resid, ())[0]

    def lens_tops_with_rows(self, resid: np.ndarray, rows) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
        """:meth:`lens_tops` of residual vectors [N, E] and the whole lens [len(rows), V] of ``rows`` of them, from
        the same onnxruntime calls (the unembedding read once per :data:`LENS_ROWS` rows)."""
        x = np.asarray(resid, dtype=np.float32)
        self._table  # noqa: B018 - opens the lens session with the parameters
        if self._lens_session is None:
            lens = self.lens(x)
            return lens_top(lens), lens[np.asarray(rows, np.int64).reshape(-1)]
        top, p, logits = self._run_lens(["top", "p_top", "final_logits"], x, rows=rows)
        return (top, p), logits

    def lens_path(self, resid: np.ndarray, target: int) -> tuple[np.ndarray, np.ndarray]:
        """Rank (0 = top) and lens probability of token ``target`` for residual vectors [N, E], by
        ``analysis.lens.token_rank_and_prob``'s rule, made inside the lens graph (the [N, V]
        logits stay in onnxruntime)."""
        x = np.asarray(resid, dtype=np.float32)
        self._table  # noqa: B018 - opens the lens session with the parameters
        if self._lens_session is None:
            lens, t = np.atleast_2d(self.lens(x)), int(target)
            return (lens > lens[:, [t]]).sum(axis=1), token_probabilities(lens, np.full(len(lens), t))
        rank, p = self._run_lens(["rank_target", "p_target"], x, target=int(target))
        return rank, p

    def lens_with_tops(self, resid: np.ndarray, run_options=None) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """``lens(resid)`` for residual vectors [N, E] and its :meth:`lens_tops`, from the same onnxruntime calls
        (``run_options``: onnxruntime's, whose ``terminate`` ends it: work done ahead)."""
        x = np.asarray(resid, dtype=np.float32)
        self._table  # noqa: B018 - opens the lens session with the parameters
        if self._lens_session is None:
            lens = self.lens(x)
            return lens, lens_top(lens)
        lens, top, p = self._run_lens(["lens", "top", "p_top"], x, run_options)
        return lens, (top, p)

    def _run_lens(self, outputs: list[str], x: np.ndarray, run_options=None, normalize: bool = True, target=None,
                  rows=()) -> list[np.ndarray]:
        """The lens graph's ``outputs`` for residual vectors ``x`` [N, E], :data:`LENS_ROWS` rows a call, joined as
        one call would give them (``final_logits`` in the order of ``rows``; see :func:`_lens_feed`)."""
        x = np.ascontiguousarray(x, dtype=np.float32)
        if len(x) <= LENS_ROWS:
            return self._lens_session.run(outputs, _lens_feed(x, normalize, target, rows), run_options)
        rows = np.asarray(rows, np.int64).reshape(-1)
        parts: list[list[np.ndarray]] = []
        placed: list[np.ndarray] = []  # where each call's final_logits go among ``rows``
        for s in range(0, len(x), LENS_ROWS):
            e = min(s + LENS_ROWS, len(x))
            mine = np.flatnonzero((rows >= s) & (rows < e))
            parts.append(self._lens_session.run(outputs, _lens_feed(x[s:e], normalize, target, rows[mine] - s),
                                                run_options))
            placed.append(mine)
        joined = []
        for i, name in enumerate(outputs):
            if name != "final_logits":
                joined.append(np.concatenate([p[i] for p in parts]))
                continue
            out = np.empty((len(rows), parts[0][i].shape[-1]), parts[0][i].dtype)
            for p, mine in zip(parts, placed):
                out[mine] = p[i]
            joined.append(out)
        return joined


def _lens_feed(x: np.ndarray, normalize: bool = True, target=None, rows=()) -> dict[str, np.ndarray]:
    """Inputs of the lens graph for rows [N, E]: through the final LayerNorm, or (``normalize`` False) not; one
    target token per row, whose rank and probability the graph makes only when one is given (``path``); the
    indices of the ``rows`` whose whole logits come back as ``final_logits``."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    t = np.zeros(len(x), np.int64) if target is None else np.broadcast_to(np.asarray(target, np.int64), (len(x),))
    return {"resid": x, "normalize": np.array(normalize), "target": np.ascontiguousarray(t),
            "path": np.array(target is not None), "final_rows": np.asarray(rows, np.int64).reshape(-1)}


def _w_out(layer: int) -> str:
    """The initializer name of block ``layer``'s MLP output weight [M, E] (transformers' Conv1D ``c_proj``)."""
    return f"transformer.h.{layer}.mlp.c_proj.weight"
