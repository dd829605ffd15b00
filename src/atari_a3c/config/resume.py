"""Resuming a run never loses work: only from the run's newest checkpoint, and a run whose
budget is spent is said to be finished instead of being trained one update further."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import torch

from atari_a3c.checkpoints.files import KEY
from atari_a3c.errors import CheckpointError, RunFinished


def frames_of(path: Path) -> int | None:
    """The frames a checkpoint file holds, or None if it is unreadable (memory-mapped: the
    weights are not read)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return int(
                torch.load(path, map_location="cpu", weights_only=True, mmap=True)[KEY]["frames"]
            )
    except Exception:  # a torn or foreign file is no newer checkpoint
        return None


def check_newest(path: str | Path, checkpoint: dict) -> None:
    """CheckpointError unless `path` is its run's newest checkpoint (most frames; `last.ckpt`
    on a tie): resuming from an older one would overwrite the newer `last.ckpt`."""
    path = Path(path).resolve()
    frames = checkpoint[KEY]["frames"]
    newest, newest_frames = path, frames
    for other in sorted(path.parent.glob("*.ckpt")):
        other_frames = frames_of(other) if other != path else None
        if other_frames is None:
            continue
        if (other_frames, other.name == "last.ckpt") > (newest_frames, newest.name == "last.ckpt"):
            newest, newest_frames = other, other_frames
    if newest != path:
        raise CheckpointError(
            f"ckpt_path={path} ({frames:,} frames) is not this run's newest checkpoint; resume "
            f"with ckpt_path={newest} ({newest_frames:,} frames), or start a new run from these "
            f"weights with init_from={path}"
        )


def check_unfinished(path: str | Path, checkpoint: dict, budget: int) -> None:
    """RunFinished when the checkpoint already holds the frame budget."""
    meta = checkpoint[KEY]
    if meta["frames"] < budget:
        return
    evals = meta["eval_history"]
    metric = evals[-1][1] if evals else math.nan
    run_dir = Path(path).resolve().parent.parent
    raise RunFinished(
        f"{run_dir} is finished: {meta['frames']:,} of frames={budget:,} trained; raise "
        f"frames= (frames={2 * budget}) to train it further",
        metric,
        str(run_dir),
        meta["frames"],
        evals,
    )
