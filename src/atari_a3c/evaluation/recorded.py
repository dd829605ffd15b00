"""A game recorded so that it plays again exactly: the config it was played with, its reset seed,
the emulator state it started from and every action. `evaluate.py replay=<file>` plays it again,
with no checkpoint: the same seed and actions give the same frames and the same score."""

from __future__ import annotations

import json
import sys
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import gymnasium as gym
import numpy as np
from omegaconf import DictConfig, OmegaConf

from atari_a3c.envs.make import make_env
from atari_a3c.errors import BadInput
from atari_a3c.evaluation.video import save_videos


@dataclass
class Recording:
    config: dict  # the training config the game was played with (env and observation settings)
    seed: int  # the reset seed
    start_state: bytes  # the emulator's serialized state after the reset (empty without an ALE)
    actions: list[int]
    score: float
    length: int


def emulator_state(env: gym.Env) -> bytes:
    """The serialized ALE state (machine, RAM, frame number), or b"" for envs without one."""
    ale = getattr(env.unwrapped, "ale", None)
    return ale.cloneState().serialize() if ale is not None else b""


def save(recording: Recording, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        config=json.dumps(recording.config),
        seed=recording.seed,
        start_state=np.frombuffer(recording.start_state, np.uint8),
        actions=np.asarray(recording.actions, np.int16),
        score=recording.score,
        length=recording.length,
    )


def load(path: str | Path) -> Recording:
    """The recording in `path`, or BadInput with a one-line reason."""
    path = Path(path)
    if not path.is_file():
        raise BadInput(f"replay file not found: {path}")
    try:
        with np.load(path, allow_pickle=False) as data:
            return Recording(
                config=json.loads(str(data["config"])),
                seed=int(data["seed"]),
                start_state=data["start_state"].tobytes(),
                actions=data["actions"].tolist(),
                score=float(data["score"]),
                length=int(data["length"]),
            )
    except (OSError, ValueError, KeyError, zipfile.BadZipFile):
        raise BadInput(f"not a replay file (evaluate.py writes them to replays/): {path}") from None


def play_again(
    recording: Recording, render_mode: str | None = None, video_dir: Path | None = None
) -> tuple[float, int, float]:
    """Reset with the recorded seed, check the emulator starts where it did, replay every action.

    Returns the score, the agent steps taken and the seconds it took.
    """
    cfg: DictConfig = OmegaConf.create(recording.config)
    env = make_env(cfg, render_mode=render_mode, video_dir=video_dir)
    start = time.perf_counter()
    try:
        env.reset(seed=recording.seed)
        if emulator_state(env) != recording.start_state:
            raise BadInput(
                "replay: the emulator starts from another state than recorded "
                "(another ale-py or ROM version?)"
            )
        score, steps = 0.0, 0
        for action in recording.actions:
            _, reward, terminated, truncated, _ = env.step(action)
            score, steps = score + float(reward), steps + 1
            if terminated or truncated:
                break
    finally:
        env.close()
    return score, steps, time.perf_counter() - start


def play_recording(path: str, out: Path | None, render: bool | str) -> float:
    """`evaluate.py replay=<file>`: the recorded game again, action for action; prints both
    scores; a video in `out` with render=true, a window with render=human."""
    recording = load(path)
    video_dir = out / "videos" if render is True else None
    render_mode = "human" if render == "human" else None
    score, length, seconds = play_again(recording, render_mode, video_dir)
    print(
        f"replayed {path}: score {score:.1f}  length {length}  {seconds:.1f} s  "
        f"(recorded: score {recording.score:.1f}  length {recording.length})"
    )
    if (score, length) != (recording.score, recording.length):
        print("warning: the replay differs from the recording", file=sys.stderr)
    if video_dir is not None:
        save_videos(video_dir, out, recording.config["env"]["id"])
    return score
