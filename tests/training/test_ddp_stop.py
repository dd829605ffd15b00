"""DDP on CPU (gloo, 2 ranks): an actor that keeps failing on one rank stops every rank alike."""

import contextlib
import os
import subprocess
import sys
import time

import psutil
import pytest
import torch
from helpers.runs import HELPERS, ROOT

pytestmark = pytest.mark.slow

CARTPOLE = ("experiment=cartpole", "logger=csv", "callbacks.eval.at_end=false")
CARTPOLE += ("callbacks.eval.every_frames=100000000", "frames=10000000")
DDP = ("trainer.strategy=ddp", "trainer.devices=2", "trainer.accelerator=cpu")


def processes_of(run_dir) -> list[psutil.Process]:
    """Every process, orphaned or not, whose command line names the run's dir."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        if any(str(run_dir) in part for part in process.info["cmdline"] or ()):
            found.append(process)
    return found


def test_actor_failing_on_one_rank_stops_every_rank_with_one_checkpoint_and_reason(run_dir):
    failing = ("env.id=faulty_envs:RankRaisingCartPole-v0", "actors.max_failures=3")
    args = [sys.executable, str(ROOT / "train.py"), f"hydra.run.dir={run_dir}", *CARTPOLE]
    env = {**os.environ, "PYTHONPATH": str(HELPERS), "FAULT_RANK": "1"}
    process = subprocess.Popen(
        [*args, *failing, *DDP], env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        stdout, stderr = (out.decode() for out in process.communicate(timeout=60))
        time.sleep(1)
        assert processes_of(run_dir) == [], "a rank outlived the run"
        assert psutil.Process().children(recursive=True) == []
    finally:
        for leftover in processes_of(run_dir):
            with contextlib.suppress(psutil.NoSuchProcess):
                leftover.kill()
        process.wait()
    assert process.returncode == 1  # a single-process run whose actor spent its budget: the same
    reason = "rank 1: actor-0 failed 4 times in 300 s; last: ValueError: env of rank 1 broke"
    assert stderr.count(f"error: {reason}\n") == 2, stderr[-3000:]  # each rank's one line
    for log in ("train.log", "train_ddp_process_1.log"):  # rank 0's log and rank 1's
        assert f"stopping: {reason}" in (run_dir / log).read_text()
    assert stdout.count("run stopped by an error at ") == 1
    last = run_dir / "checkpoints" / "last.ckpt"
    assert sorted(run_dir.rglob("*.ckpt*")) == [last]
    assert torch.load(last, weights_only=True)["atari_a3c"]["frames"] > 0
