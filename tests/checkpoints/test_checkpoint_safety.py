"""A checkpoint cannot run code: its stored overrides are plain values of known keys only."""

import contextlib
import resource
import signal

import pytest
import torch
from helpers.runs import compose, run_script

from atari_a3c.checkpoints.files import KEY, save_atomically, stored_overrides
from atari_a3c.errors import CheckpointError
from atari_a3c.training.task import AtomicCheckpointIO


def crafted(*overrides: str) -> dict:
    return {KEY: {"overrides": list(overrides)}}


def test_plain_overrides_are_kept_and_checkpoint_paths_dropped():
    checkpoint = crafted("env=breakout", "optim.lr=0.001", "seed=3", "init_from=/a/last.ckpt")
    kept = stored_overrides(checkpoint, compose())
    assert kept == ["env=breakout", "optim.lr=0.001", "seed=3"]


@pytest.mark.parametrize(
    "override",
    [
        "optim._target_=os.system",
        "+optim.command=rm",
        "logger._target_=builtins.exec",
        "optim=../../evil",
        "algo.gamma=${oc.env:HOME}",
        "nonexistent.key=1",
        "optim.lr={_target_:os.system}",
        "~optim.lr",
        "optim.betas=[0.9,${oc.env:HOME}]",
    ],
)
def test_anything_else_is_refused(override):
    with pytest.raises(CheckpointError, match="not allowed"):
        stored_overrides(crafted("seed=1", override), compose())


def test_resuming_a_crafted_checkpoint_exits_2_and_changes_nothing(tmp_path):
    path = tmp_path / "last.ckpt"
    torch.save(crafted("optim._target_=os.system", "optim._partial_=false"), path)
    before = path.read_bytes()
    result = run_script("train.py", f"ckpt_path={path}", timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: checkpoint holds an override that is not allowed: 'optim._target_=os.system'"
    ]
    assert path.read_bytes() == before


def test_a_save_removes_the_temp_file_a_killed_writer_left(tmp_path):
    path = tmp_path / "last.ckpt"
    stale = tmp_path / ".last.ckpt.12345.tmp"
    stale.write_bytes(b"half a checkpoint")
    save_atomically({"frames": 3}, path)
    assert not stale.exists() and torch.load(path, weights_only=True) == {"frames": 3}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.ckpt"]


@contextlib.contextmanager
def disk_full_after(size: int):
    """Writes past `size` bytes fail with an OSError, as on a full disk (RLIMIT_FSIZE)."""
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, limits[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)


def test_a_full_disk_keeps_the_previous_checkpoint_and_leaves_no_temp_file(tmp_path, caplog):
    path = tmp_path / "last.ckpt"
    save_atomically({"frames": 3}, path)
    before = path.read_bytes()
    big = {"weights": torch.zeros(1 << 20)}  # 4 MiB
    with disk_full_after(1 << 20), pytest.raises(OSError):
        save_atomically(big, path)
    assert path.read_bytes() == before
    with disk_full_after(1 << 20):
        AtomicCheckpointIO().save_checkpoint(big, path)  # training warns and goes on
    assert "could not write" in caplog.text and path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["last.ckpt"]
