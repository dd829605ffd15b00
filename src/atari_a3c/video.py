"""Turning recorded games into a GIF and W&B videos."""

from __future__ import annotations

import math
from pathlib import Path

import imageio.v3 as iio

GIF_FPS = 15
GIF_FRAMES = 600  # at most: a long game plays faster, and memory stays small


def first_video_to_gif(video_dir: Path, gif_path: Path, max_frames: int = GIF_FRAMES) -> None:
    """An animated GIF of the first recorded game, to drop into a slide or a README: every
    `stride`-th frame, streamed from the video."""
    first = sorted(video_dir.glob("*.mp4"))[0]
    meta = iio.immeta(first)
    stride = math.ceil(round(meta["duration"] * meta["fps"]) / max_frames)
    frames = [frame for i, frame in enumerate(iio.imiter(first)) if i % stride == 0]
    iio.imwrite(gif_path, frames, duration=1000 / GIF_FPS, loop=0)


def log_videos_to_wandb(video_dir: Path, out: Path, env_id: str) -> None:
    """Every game as a W&B video in an offline run under `out/wandb` (`wandb sync` uploads)."""
    import wandb

    run = wandb.init(
        project="atari-a3c", dir=str(out), mode="offline", job_type="evaluate", name=env_id
    )
    try:
        for path in sorted(video_dir.glob("*.mp4")):
            run.log({f"videos/{path.stem}": wandb.Video(str(path), format="mp4")})
    finally:
        run.finish()


def save_videos(video_dir: Path, out: Path, env_id: str) -> None:
    """The GIF of the first game beside the videos, and every game in an offline W&B run."""
    first_video_to_gif(video_dir, out / "game-1.gif")
    log_videos_to_wandb(video_dir, out, env_id)
    print(f"videos: {video_dir}")
