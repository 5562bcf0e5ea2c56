"""One tiny export for the feature tests (the session's `checkpoints`, exported once here: the full `exported`
fixture exports every tiny config)."""

from __future__ import annotations

import pytest

TINY = "l3h4e32"


@pytest.fixture(scope="session")
def tiny_folder(checkpoints, tmp_path_factory):
    """Model folder of the l3h4e32 checkpoint (3 layers, 4 heads, width 32, MLP 48)."""
    from gpt2viz.core.export.exporter import export_model

    return export_model(str(checkpoints[TINY]), tmp_path_factory.mktemp("features") / TINY, progress=lambda m: None)


@pytest.fixture(scope="session")
def tiny_model(tiny_folder):
    from gpt2viz.core.engine.model import Model

    return Model(tiny_folder)
