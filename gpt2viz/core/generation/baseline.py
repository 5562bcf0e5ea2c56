"""The text run without interventions, beside a run with them: what the views compare an intervened run to (the
chart's ghost, the logit lens's deltas, the Path view's "before")."""

from __future__ import annotations

from gpt2viz.core.engine.kv_cache import KVCache
from gpt2viz.core.engine.model import Model
from gpt2viz.core.generation.stepper import Frame, History, shared_frames


class Baseline:
    """A generation's text run without interventions, kept frame by frame as the text moves.

    It keeps the frames and KV cache of the longest text it ran. A history whose frames hold the same contexts
    (the same text again, Back, Reset) takes its frames as they are; a step after them runs one cached position.
    A run without interventions made elsewhere (the generator's run from before an ablation was added, see
    :meth:`Generator.kept`) is taken over when it holds more of the text, so adding the first ablation to a text
    runs the model once, not twice.

    Parameters
    ----------
    model : Model
        The opened model.
    hooks : sequence of str, optional
        Hooks the runs made here keep (None: every hook). A run taken over keeps the hooks it was made with.
    """

    def __init__(self, model: Model, hooks=None):
        self.model = model
        self.hooks = hooks
        self.frames: tuple[Frame, ...] = ()
        self._cache: KVCache | None = None  # after the newest of self.frames
        self.frames_run = 0  # frames the last history() ran (0: it took every frame as it was)

    def history(self, h: History, kept: tuple[tuple[Frame, ...], KVCache] | None = None) -> History:
        """The frames of ``h``, run without interventions, as a History with ``h``'s prompt length.

        ``kept``: (frames, cache) of a run without interventions, taken over when it shares more frames with
        ``h`` than this baseline's own."""
        if kept is not None and _same(kept[0], h) > _same(self.frames, h):
            self.frames, self._cache = kept
        same = _same(self.frames, h)
        self.frames_run = len(h.frames) - same
        if not self.frames_run:
            return History(self.frames[:same], h.prompt_len)
        frames = list(self.frames[:same])
        past = None
        if same:
            n = len(frames[-1].tokens)
            past = self._cache if self._cache.length == n else self._cache.truncated(n)
        for f in h.frames[same:]:
            new = f.tokens if past is None else [f.tokens[-1]]
            trace, past = self.model.run(list(new), past, hooks=self.hooks)
            frames.append(Frame(f.tokens, trace, 0.0, f.forced))
            od = frames[0].trace.ondemand
            if od is not None:  # the prompt's on-demand hooks read its keys from the newest cache (as a Generator's)
                od.follow(past)
        self.frames, self._cache = tuple(frames), past
        return History(self.frames, h.prompt_len)


def _same(frames, h: History) -> int:
    """How many leading ``frames`` hold the contexts of ``h``'s (forced or sampled alike: the numbers are the same)."""
    return shared_frames(frames, h.frames, forced=False)
