"""The bench command as a new install runs it: one 20,000-frame game of Pong trained by train.py,
scored by evaluate.py, recorded and summarized (the quick tier; CI runs it in a fresh venv)."""

import json
import os
import subprocess
import sys

from helpers.runs import ROOT

SMALL = ("debug=tiny", "env.max_episode_frames=2000")  # one actor; evaluation games of 500 steps


def test_the_bench_trains_scores_and_records_a_20000_frame_game(tmp_path):
    cmd = [sys.executable, "-m", "atari_a3c.bench", "--games", "pong", "--frames", "20000"]
    cmd += ["--seeds", "1", "--episodes", "1", "--out", str(tmp_path / "records")]
    cmd += ["--runs", str(tmp_path / "runs"), *SMALL]
    env = {**os.environ, "WANDB_SILENT": "true"}
    result = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads((tmp_path / "records" / "pong-seed1.json").read_text())
    assert record["command"] == (
        f"python train.py env=pong seed=1 frames=20000 {' '.join(SMALL)} logger=csv"
    )
    assert record["game"] == "pong" and record["seed"] == 1 and record["frames"] >= 20000
    assert record["overrides"] == list(SMALL) and record["frames_per_second"] > 0
    for key in ("final", "final_sampled", "final_best"):
        assert record[key]["episodes"] == 1 and -21 <= record[key]["mean"] <= 21, key
    assert record["eval_curve"] and record["train_commit"] == record["commit"]
    summary = (tmp_path / "records" / "summary.md").read_text()
    assert "| pong | 1 |" in summary and f"Recipe: `{' '.join(SMALL)}` (overrides)." in summary
    assert summary in result.stdout, "the summary it wrote is the one it printed"
    assert (tmp_path / "records" / "curves.png").stat().st_size > 0
