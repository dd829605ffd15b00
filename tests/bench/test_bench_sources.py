"""A sweep's own runs summarized as the records are: a multirun of debug=tiny runs scored by the
records' protocol into the summary's dir, its run dirs left as they were, a run without a
checkpoint named and skipped, and an evaluate.py results.json read as it is."""

import os
import subprocess
import sys

from helpers.runs import ROOT, run_script

from atari_a3c.bench.__main__ import main

TINY = ("debug=tiny", "logger=csv", "env.max_episode_frames=2000")  # evaluation games of 500 steps


def files_of(path):
    return {p: p.stat().st_mtime_ns for p in path.rglob("*") if p.is_file()}


def test_a_multirun_is_summarized_with_human_normalized_scores(tmp_path, capsys):
    sweep = tmp_path / "sweep"
    trained = run_script("train.py", "-m", f"hydra.sweep.dir={sweep}", *TINY, "seed=1,2")
    assert trained.returncode == 0, trained.stderr[-3000:]
    (sweep / "2" / ".hydra").mkdir(parents=True)  # a job that ended before its first checkpoint
    (sweep / "2" / ".hydra" / "config.yaml").write_text("seed: 3\n")
    before = files_of(sweep)
    out = tmp_path / "summary"
    cmd = [sys.executable, "-m", "atari_a3c.bench", "--summary", str(sweep), "--out", str(out)]
    env = {**os.environ, "WANDB_SILENT": "true"}
    result = subprocess.run([*cmd, "--episodes", "1"], capture_output=True, text=True, cwd=ROOT,
                            env=env, timeout=600)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    assert f"{sweep / '2'}: no checkpoints/last.ckpt, skipped" in result.stdout
    rows = [line for line in result.stdout.splitlines() if line.startswith("| pong |")]
    assert [row.split(" | ")[1] for row in rows[:2]] == ["1", "2"], result.stdout
    assert rows[2].startswith("| pong | 2 | ") and "human-norm." in result.stdout
    assert "Over 1 games x 2 seeds" in result.stdout and (out / "summary.md").exists()
    assert files_of(sweep) == before, "nothing in a run dir changes"
    (results,) = out.glob("evaluations/0-*/final-eval-sampled/results.json")
    main(["--summary", str(results), "--out", str(tmp_path / "one")])
    assert "| pong | 1 | - | - | -" in capsys.readouterr().out  # sampled play only
