"""One tiny export for the circuit tests (3 layers, 4 heads, width 32) and atlas."""

from __future__ import annotations

import pytest

from tests.conftest import REPO

TINY = "l3h4e32"


@pytest.fixture(scope="session")
def circuit_model(checkpoints, tmp_path_factory):
    from gpt2viz.core.engine.model import Model
    from gpt2viz.core.export.exporter import export_model

    return Model(export_model(str(checkpoints[TINY]), tmp_path_factory.mktemp("circuits") / TINY,
                              progress=lambda m: None))


@pytest.fixture(scope="session")
def atlas():
    from gpt2viz.core.engine.model import Model

    return Model(REPO / "models" / "atlas")
