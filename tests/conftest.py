"""Fixtures shared by every test; the helpers they use are in `helpers/`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True, scope="session")
def wandb_data_dir(tmp_path_factory) -> None:
    """W&B stages logged checkpoint artifacts in its data dir: the tests' go to a temp dir."""
    os.environ["WANDB_DATA_DIR"] = str(tmp_path_factory.mktemp("wandb-data"))


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return tmp_path / "run"
