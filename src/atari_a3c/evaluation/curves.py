"""The learning-curve picture: game scores and evaluation means against env frames."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from atari_a3c.learners.game_history import GameHistory  # noqa: E402

WINDOW = 100


def returns_figure(
    history: GameHistory, evals: list[tuple[int, float]], game: str, greedy: bool = True
):
    """Training scores (binned means once there are many), their running mean over about 100
    games once there are two, and the evaluation means, under the game's name."""
    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    if history.points:
        frames, scores, games = np.array(history.points, dtype=float).T
        few = len(scores) < WINDOW  # bigger, darker dots while they are few
        ax.scatter(
            frames, scores, s=12 if few else 4, alpha=0.8 if few else 0.3, label="training game"
        )
        width = max(1, min(len(scores), round(WINDOW * len(scores) / games.sum())))
        if len(scores) - width >= 1:  # a line of two points or more
            kernel = np.ones(width)
            running = np.convolve(scores * games, kernel, "valid")
            running /= np.convolve(games, kernel, "valid")
            ax.plot(frames[width - 1 :], running, color="tab:blue", label="mean of 100")
    if evals:
        frames, means = np.array(evals, dtype=float).T
        actions = "greedy" if greedy else "sampled"
        ax.plot(frames, means, "o-", color="tab:red", label=f"evaluation mean ({actions})")
    if not (history.points or evals):
        ax.text(0.5, 0.5, "no finished game yet", ha="center", transform=ax.transAxes)
    ax.set_title(f"{game}: game scores")
    ax.set_xlabel("env frames")
    ax.set_ylabel("game score")
    ax.grid(alpha=0.3)
    if history.points or evals:
        ax.legend(loc="best")
    fig.tight_layout()
    return fig


def plot_returns(
    path: Path, history: GameHistory, evals: list[tuple[int, float]], game: str, greedy: bool
):
    """Write the learning curve to `path` (PNG)."""
    fig = returns_figure(history, evals, game, greedy)
    fig.savefig(path)
    plt.close(fig)
