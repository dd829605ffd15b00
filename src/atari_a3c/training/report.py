"""What a run says when it ends (finished, or stopped by a signal or an error): where its files
are, how its checkpoints scored, how fast it ran, how to resume it and how to watch it play."""

from __future__ import annotations

import time
from pathlib import Path

from lightning.pytorch.callbacks import Callback

from atari_a3c.training.job_table import best_evaluation, write_report


class RunClock(Callback):
    """The time and frames at which this session's training started."""

    def __init__(self):
        self.started, self.frames = time.perf_counter(), 0

    def on_train_start(self, trainer, pl_module) -> None:
        self.started, self.frames = time.perf_counter(), pl_module.frames


def _scored(frames: int | None, eval_history: list) -> str:
    means = dict(eval_history)
    if frames is None:
        return "not saved"
    mean = f"eval mean {means[frames]:.1f}" if frames in means else "not evaluated"
    return f"{frames:,} frames, {mean}"


def run_report(
    run_dir: Path, learner, clock: RunClock, budget: int, saved: int | None, stopped_by: str | None
) -> str:
    """The report's lines, and `report.json` written beside the checkpoints' dir. `saved`: the
    frames `last.ckpt` holds; `stopped_by`: the signal or error that ended training early."""
    checkpoints = run_dir / "checkpoints"
    last, best = checkpoints / "last.ckpt", checkpoints / "best.ckpt"
    evals = learner.eval_history
    best_point = best_evaluation(evals)
    seconds = time.perf_counter() - clock.started
    trained = learner.frames - clock.frames
    resume = f"python train.py ckpt_path={last}"
    if stopped_by:
        status = f"stopped by {stopped_by} at {learner.frames:,} of {budget:,} frames"
    else:
        status = f"finished: {learner.frames:,} frames"
        resume += f" frames={2 * budget}"
    lines = [
        f"run {status}",
        f"  run dir: {run_dir}",
        f"  last:    {last} ({_scored(saved if last.exists() else None, evals)})",
    ]
    if best.exists() and best_point:
        lines.append(f"  best:    {best} ({_scored(best_point[0], evals)})")
    speed = f"{trained:,} frames at {trained / seconds:,.0f} frames/s"
    took = f"{seconds:.0f} s" if seconds < 60 else f"{seconds / 60:.1f} min"
    lines.append(f"  time:    {took}, {speed}")
    if last.exists():
        lines.append(f"  {'resume' if stopped_by else 'extend'}:  {resume}")
        watched = best if best.exists() and best_point else last
        lines.append(f"  watch:   python evaluate.py ckpt={watched} render=true")
    write_report(run_dir, run_dir, learner.frames, evals)
    return "\n".join(lines)
