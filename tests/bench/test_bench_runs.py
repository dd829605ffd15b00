"""The bench: trains, scores with evaluate.py, records, and skips what it has."""

import json
import signal
import subprocess
import sys
import time

import pytest
import torch
from helpers.runs import ROOT

pytestmark = pytest.mark.slow

TINY = ("workers=1", "envs_per_worker=2", "callbacks.eval.every_frames=2000")
TINY += ("callbacks.eval.episodes=1", "callbacks.eval.at_end=false")


def bench_command(tmp_path, *args: str, frames: int = 4000) -> list[str]:
    cmd = [sys.executable, "-m", "atari_a3c.bench", "--games", "pong"]
    cmd += ["--frames", str(frames), "--episodes", "2", "--seeds", "3"]
    return cmd + ["--out", str(tmp_path / "records"), "--runs", str(tmp_path / "runs"), *args]


def bench(tmp_path, *args: str) -> subprocess.CompletedProcess:
    cmd = bench_command(tmp_path, *args)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT)


def test_bench_records_a_game_then_completes_and_skips_it(tmp_path):
    first = bench(tmp_path, *TINY)
    assert first.returncode == 0, first.stderr[-3000:]
    record = json.loads((tmp_path / "records" / "pong-seed3.json").read_text())
    assert record["command"].startswith("python train.py env=pong seed=3 frames=4000")
    assert record["frames"] >= 4000 and record["seed"] == 3 and record["wall_clock_minutes"] > 0
    assert record["final"]["episodes"] == 2 and -21 <= record["final"]["mean"] <= 21
    assert record["final_sampled"]["episodes"] == 2 and record["final_best"]["episodes"] == 2
    assert record["eval_curve"] and record["eval_curve"][0]["frames"] >= 2000
    assert record["overrides"] == list(TINY) and record["train_commit"] == record["commit"]
    assert isinstance(record["train_dirty"], bool) and record["resumed"] == []
    assert record["eval_protocol"] == "the LSTM memory restarted at each lost life"
    summary = (tmp_path / "records" / "summary.md").read_text()
    assert "| pong | 3 |" in summary and f"Recipe: `{' '.join(TINY)}` (overrides)." in summary
    assert (tmp_path / "records" / "curves.png").stat().st_size > 0
    path = tmp_path / "records" / "pong-seed3.json"
    older = {k: record.pop(k) for k in ("final_sampled", "final_best")}
    path.write_text(json.dumps(record))  # a record older than these scores gets them added
    assert bench(tmp_path, *TINY).returncode == 0
    assert {k: json.loads(path.read_text())[k] for k in older} == older
    again = bench(tmp_path, *TINY)
    assert again.returncode == 0 and "record exists, skipped" in again.stdout


def test_bench_refuses_an_unknown_game(tmp_path):
    result = bench(tmp_path, "--games", "pongg")
    assert result.returncode == 2 and "unknown game(s) pongg" in result.stderr


def test_bench_keeps_the_time_of_a_training_that_stopped_short(tmp_path):
    result = bench(tmp_path, *TINY, "algo.gamma=1.5")  # train.py stops at once (exit 2)
    assert result.returncode != 0 and "failed (2)" in result.stderr
    wall = json.loads((tmp_path / "runs" / "pong-seed3" / "bench_wall_seconds.json").read_text())
    assert wall["seconds"] > 0, "the next invocation resumes from last.ckpt and adds to this"


def test_ctrl_c_on_the_bench_saves_the_training_it_runs(tmp_path):
    cmd = bench_command(tmp_path, *TINY, frames=10_000_000)
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    proc = subprocess.Popen(cmd, cwd=ROOT, text=True, **pipes)
    log = tmp_path / "runs" / "pong-seed3.log"
    deadline = time.monotonic() + 300
    while not (log.exists() and "frame/s" in log.read_text()) and time.monotonic() < deadline:
        time.sleep(1)
    proc.send_signal(signal.SIGINT)  # the bench alone, as `kill -INT` does
    _, err = proc.communicate(timeout=300)
    assert proc.returncode != 0 and "stopped (130)" in err, err[-3000:]
    ckpt = torch.load(tmp_path / "runs" / "pong-seed3" / "checkpoints" / "last.ckpt")
    assert 0 < ckpt["atari_a3c"]["frames"] < 10_000_000, "the run stopped early and was saved"
