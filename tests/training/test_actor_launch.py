"""The actors' first launch: a start that fails there (the fork server killed while it forks) is
one more failure of that actor, as for a replacement, and the run trains."""

import os
import subprocess
import sys
import time

import psutil
import pytest
from helpers.runs import HELPERS, ROOT, read_metrics

pytestmark = pytest.mark.slow

CARTPOLE = ("experiment=cartpole", "logger=csv", "callbacks.eval.at_end=false")
CARTPOLE += ("callbacks.eval.every_frames=100000000", "frames=20000")


def fork_server_of(pid: int) -> psutil.Process | None:
    for child in psutil.Process(pid).children():
        try:
            if "forkserver" in " ".join(child.cmdline()):
                return child
        except psutil.NoSuchProcess:
            continue
    return None


def test_fork_server_killed_while_forking_the_first_actor_is_one_failure(run_dir, tmp_path):
    arm = tmp_path / "arm"
    arm.touch()  # armed from the start: the fork server holds its first fork, actor-0's launch
    hook = {"PYTHONPATH": f"{HELPERS}:{HELPERS / 'fork_delay'}", "FORK_DELAY_ARM": str(arm)}
    args = [sys.executable, str(ROOT / "train.py"), f"hydra.run.dir={run_dir}", *CARTPOLE]
    process = subprocess.Popen(
        args,
        env={**os.environ, **hook},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 60
        while not (tmp_path / "arm.forking").exists():
            assert time.time() < deadline and process.poll() is None
            time.sleep(0.05)
        fork_server_of(process.pid).kill()
        _, stderr = process.communicate(timeout=120)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == 0, stderr[-3000:]
    assert "actor-0 failed (it did not start: " in (run_dir / "train.log").read_text()
    rows = read_metrics(run_dir)
    assert max(row.get("perf/actor_restarts", 0) for row in rows) == 1
    assert max(row.get("charts/frames", 0) for row in rows) >= 20000
