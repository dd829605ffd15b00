"""Checkpoints named on the command line: files, shipped agents, W&B artifacts."""

import pytest
from conftest import ROOT

from atari_a3c.checkpoint_sources import locate
from atari_a3c.cli import check_command_line
from atari_a3c.errors import BadInput, CheckpointError


def evaluate_check(cfg, overrides):
    from atari_a3c.evaluate_task import check_request

    check_request(cfg)


def test_an_unknown_shipped_agent_lists_the_shipped_ones():
    with pytest.raises(CheckpointError, match="no shipped agent pretrained/tetris; shipped: "):
        locate("pretrained/tetris")


def test_a_wandb_artifact_without_a_server_is_one_line(monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    ref = "ckpt=wandb:someone/atari-a3c/model-abc123:best"
    with pytest.raises(BadInput, match="W&B artifact 'someone/atari-a3c/model-abc123:best' not"):
        check_command_line(ROOT / "conf" / "evaluate", "evaluate", evaluate_check, [ref])
