"""The learning-curve picture: game scores and evaluation means against env frames."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

WINDOW = 100


def plot_returns(
    path: Path, games: list[tuple[int, float]], evals: list[tuple[int, float]]
) -> None:
    """Write `path` (PNG): each training game's score, their running mean, evaluation means."""
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    if games:
        frames, scores = np.array(games, dtype=float).T
        ax.scatter(frames, scores, s=4, alpha=0.3, color="tab:blue", label="training game")
        kernel = np.ones(min(WINDOW, len(scores))) / min(WINDOW, len(scores))
        running = np.convolve(scores, kernel, mode="valid")
        ax.plot(
            frames[len(frames) - len(running) :], running, color="tab:blue", label="mean of 100"
        )
    if evals:
        frames, means = np.array(evals, dtype=float).T
        ax.plot(frames, means, "o-", color="tab:red", label="greedy evaluation mean")
    ax.set_xlabel("env frames")
    ax.set_ylabel("game score")
    ax.grid(alpha=0.3)
    if games or evals:
        ax.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
