"""Resuming never loses work: only from the run's newest checkpoint; a finished run says so."""

import shutil

import pytest
import torch
from helpers.runs import ROOT, run_script, train

from atari_a3c.config.cli import check_command_line
from atari_a3c.config.job import check
from atari_a3c.errors import BadInput

CARTPOLE = ("experiment=cartpole", "frames=3000", "logger=csv", "callbacks.eval.at_end=false")
CARTPOLE += ("callbacks.eval.every_frames=2000", "callbacks.eval.episodes=1")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A run whose best.ckpt (an evaluation at ~2,000 frames) is older than its last.ckpt."""
    run_dir = tmp_path_factory.mktemp("cartpole") / "run"
    train(run_dir, *CARTPOLE)
    return run_dir


def snapshot(run_dir) -> dict:
    """Every file of the run with its bytes and modification time."""
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in run_dir.rglob("*") if p.is_file()}


def frames(path) -> int:
    return torch.load(path, weights_only=True)["atari_a3c"]["frames"]


def test_resuming_from_best_ckpt_is_refused_and_last_ckpt_is_untouched(finished_run):
    best, last = (
        finished_run / "checkpoints" / "best.ckpt",
        finished_run / "checkpoints" / "last.ckpt",
    )
    assert frames(best) < frames(last)
    before = snapshot(finished_run)
    result = run_script("train.py", f"ckpt_path={best}", "frames=8000", timeout=120)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert f"is not this run's newest checkpoint; resume with ckpt_path={last}" in line
    assert f"init_from={best}" in line
    assert snapshot(finished_run) == before


def test_a_last_ckpt_older_than_another_checkpoint_is_refused(finished_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(finished_run, run)
    checkpoints = run / "checkpoints"
    (checkpoints / "last.ckpt").replace(checkpoints / "newer.ckpt")
    shutil.copy(checkpoints / "best.ckpt", checkpoints / "last.ckpt")  # an old copy put back
    argv = [f"ckpt_path={checkpoints / 'last.ckpt'}", "frames=8000"]
    with pytest.raises(BadInput, match=f"resume with ckpt_path={checkpoints / 'newer.ckpt'}"):
        check_command_line(ROOT / "conf", "train", check, argv)


def test_resuming_a_finished_run_says_so_and_exits_0_at_once(finished_run):
    last = finished_run / "checkpoints" / "last.ckpt"
    before = snapshot(finished_run)
    result = run_script("train.py", f"ckpt_path={last}", timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"{finished_run} is finished: {frames(last):,} of frames=3,000 trained" in result.stdout
    assert "raise frames=" in result.stdout
    assert snapshot(finished_run) == before


def test_a_sweep_job_finding_its_run_finished_shows_that_runs_row(finished_run, tmp_path):
    last = finished_run / "checkpoints" / "last.ckpt"
    before = snapshot(finished_run)
    sweep = ("-m", f"hydra.sweep.dir={tmp_path}", f"ckpt_path={last}")
    result = run_script("train.py", *sweep, "callbacks.eval.episodes=1,2", timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    table = result.stdout[result.stdout.index("multirun of 2 jobs") :].splitlines()[2:]
    for episodes, row in zip((1, 2), table, strict=True):
        assert row.split()[:2] == [f"callbacks.eval.episodes={episodes}", f"{frames(last):,}"]
        assert row.endswith(str(finished_run)), row
    assert snapshot(finished_run) == before
