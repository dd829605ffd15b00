"""Turning recorded games into a GIF and W&B videos."""

from __future__ import annotations

import math
from pathlib import Path

import imageio.v3 as iio

GIF_FPS = 15
GIF_FRAMES = 600  # at most: a long game plays faster, and memory stays small


def number_videos(video_dir: Path) -> None:
    """`game-episode-0.mp4` (gymnasium's name, counted from 0) -> `game-1.mp4`, numbered as the
    games, their replays and the GIF are."""
    for path in video_dir.glob("game-episode-*.mp4"):
        episode = int(path.stem.removeprefix("game-episode-"))
        path.rename(video_dir / f"game-{episode + 1}.mp4")


def first_video_to_gif(video_dir: Path, gif_path: Path, max_frames: int = GIF_FRAMES) -> None:
    """An animated GIF of the first recorded game, to drop into a slide or a README: every
    `stride`-th frame, streamed from the video, and the final one (the final score)."""
    first = video_dir / "game-1.mp4"
    meta = iio.immeta(first)
    stride = math.ceil(round(meta["duration"] * meta["fps"]) / (max_frames - 1))
    frames = []
    for i, frame in enumerate(iio.imiter(first)):
        if i % stride == 0:
            frames.append(frame)
    if i % stride:
        frames.append(frame)
    iio.imwrite(gif_path, frames, duration=1000 / GIF_FPS, loop=0)


def log_videos_to_wandb(video_dir: Path, out: Path, env_id: str) -> None:
    """Every game as a W&B video in an offline run under `out/wandb` (`wandb sync` uploads)."""
    import wandb

    run = wandb.init(
        project="atari-a3c", dir=str(out), mode="offline", job_type="evaluate", name=env_id
    )
    try:
        for path in sorted(video_dir.glob("*.mp4"), key=lambda p: int(p.stem.split("-")[-1])):
            run.log({f"videos/{path.stem}": wandb.Video(str(path), format="mp4")})
    finally:
        run.finish()


def save_videos(video_dir: Path, out: Path, env_id: str) -> None:
    """The GIF of the first game beside the videos, and every game in an offline W&B run."""
    number_videos(video_dir)
    first_video_to_gif(video_dir, out / "game-1.gif")
    log_videos_to_wandb(video_dir, out, env_id)
    print(f"videos: {video_dir}")
