"""A sweep's own runs summarized as the records are: a multirun of debug=tiny runs scored by the
records' protocol into the summary's dir, its run dirs left as they were, a run without a
checkpoint named and skipped, an evaluate.py results.json read as it is, and a run that trained
on since its evaluation scored again."""

import json
import os
import subprocess
import sys

import pytest
from helpers.runs import ROOT, run_script, train

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
    row = next(r for r in capsys.readouterr().out.splitlines() if r.startswith("| pong | 1 |"))
    sampled, greedy, median, best = row.split(" | ")[2:6]  # the per-record table's row
    assert sampled != "-" and greedy == median == best == "-"  # sampled play only


def frames_scored(out) -> dict[str, int]:
    """The frames of the checkpoint each evaluation under `out` scored."""
    found = out.glob("evaluations/run-*/*/results.json")
    return {p.parent.name: json.loads(p.read_text())["frames_trained"] for p in found}


@pytest.mark.slow  # two trainings and four evaluations
def test_a_run_that_trained_on_since_its_evaluation_is_scored_again(tmp_path):
    run_dir, out = tmp_path / "run", tmp_path / "summary"
    summarize = ["--summary", str(run_dir), "--out", str(out), "--episodes", "1"]
    last = ("callbacks.eval.at_end=false",)  # no best.ckpt: last.ckpt's two scores alone
    train(run_dir, *TINY, *last)
    main(summarize)
    assert frames_scored(out) == {"final-eval": 4000, "final-eval-sampled": 4000}
    train(run_dir, *TINY, *last, "frames=8000", f"ckpt_path={run_dir / 'checkpoints/last.ckpt'}")
    main(summarize)  # the same --out: its evaluations at 4000 frames are out of date
    assert frames_scored(out) == {"final-eval": 8000, "final-eval-sampled": 8000}
