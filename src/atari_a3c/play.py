"""Playing full games with a policy: one implementation for evaluate.py and training."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig

from atari_a3c.envs import make_env
from atari_a3c.models import ActorCritic, inference_context


@dataclass
class Game:
    score: float  # the true game score: raw rewards, no life cuts
    length: int  # agent steps
    seed: int  # the reset seed that replays this game
    seconds: float  # wall-clock time it took


def play(
    cfg: DictConfig,
    model: ActorCritic,
    episodes: int,
    seed: int,
    greedy: bool = True,
    render_mode: str | None = None,
    video_dir: Path | None = None,
    on_game: Callable[[int, Game], None] | None = None,
) -> list[Game]:
    """Play `episodes` full games, game i reset with seed `seed + i`."""
    env = make_env(cfg, render_mode=render_mode, video_dir=video_dir)
    generator = torch.Generator().manual_seed(seed)
    games = []
    try:
        for i in range(episodes):
            games.append(play_one(env, model, seed + i, greedy, generator))
            if on_game is not None:
                on_game(i, games[-1])
    finally:
        env.close()
    return games


@torch.no_grad()
def play_one(env, model: ActorCritic, seed: int, greedy: bool, generator) -> Game:
    """One full game from `env.reset(seed=seed)` to its own end."""
    start = time.perf_counter()
    autocast = inference_context(model)
    obs, _ = env.reset(seed=seed)
    state, first = model.initial_state(1), torch.ones(1, 1, dtype=torch.bool)
    while True:
        with autocast:
            logits, _, (h, c) = model(torch.as_tensor(np.asarray(obs))[None, None], first, state)
        state, first = (h, c), torch.zeros_like(first)
        probs = logits[0, 0].float().softmax(-1)
        action = probs.argmax() if greedy else torch.multinomial(probs, 1, generator=generator)
        obs, _, terminated, truncated, info = env.step(int(action))
        if terminated or truncated:
            episode = info["episode"]
            return Game(float(episode["r"]), int(episode["l"]), seed, time.perf_counter() - start)


def summarize(games: list[Game]) -> dict[str, float]:
    scores = [g.score for g in games]
    return {
        "episodes": len(games),
        "mean": statistics.fmean(scores),
        "std": statistics.pstdev(scores),
        "min": min(scores),
        "median": statistics.median(scores),
        "max": max(scores),
        "mean_length": statistics.fmean(g.length for g in games),
    }


def as_rows(games: list[Game]) -> list[dict]:
    return [asdict(g) for g in games]
