"""The engine's exceptions: one Cancelled for every long call, and the context limit."""


class ContextLimitError(ValueError):
    """The text would not fit in the model's context (n_positions)."""


class Cancelled(RuntimeError):
    """A long run was cancelled between two chunks (its ``cancel`` callback returned True)."""
