"""DQN's exploration (`algo=dqn`), shared by its actors and evaluation: the epsilon-greedy
choice over Q-values and its rate's schedule in env frames."""

from __future__ import annotations

import torch
from torch import Tensor


def epsilon(algo, frames: int) -> float:
    """The exploration rate after `frames` env frames: linear from `epsilon_start` to
    `epsilon_final` over `epsilon_frames`, then constant."""
    progress = min(1.0, frames / algo.epsilon_frames)
    return algo.epsilon_start + progress * (algo.epsilon_final - algo.epsilon_start)


def epsilon_greedy(q_values: Tensor, eps: float, generator=None) -> Tensor:
    """`[B, A]` -> `[B]`: the argmax, or with probability `eps` a uniformly random action."""
    greedy = q_values.argmax(-1)
    explore = torch.rand(greedy.shape, generator=generator) < eps
    random = torch.randint(q_values.shape[-1], greedy.shape, generator=generator)
    return torch.where(explore, random, greedy)
