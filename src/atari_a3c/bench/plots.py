"""Plots: each game's score against frames, and the performance profile over games and seeds."""

from __future__ import annotations

from pathlib import Path

import matplotlib
import numpy as np
from rliable import library as rly

from atari_a3c.bench.aggregates import SEED, score_matrix
from atari_a3c.bench.scores import target
from atari_a3c.evaluation.scores import RANDOM_AND_HUMAN

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def plot_curves(records: list[dict], path: Path) -> None:
    """Score against frames, one panel per game, with random and the game's target."""
    games = sorted({r["game"] for r in records if r.get("eval_curve") or r.get("final")})
    if not games:
        return
    fig, axes = plt.subplots(1, len(games), figsize=(4 * len(games), 3.5), squeeze=False)
    for ax, game in zip(axes[0], games, strict=True):
        rows = [r for r in records if r["game"] == game]
        for r in rows:
            points = [(p["frames"], p["mean"]) for p in r.get("eval_curve", [])]
            points += [(r["frames"], r["final"]["mean"])] if r.get("final") else []
            if points:
                xs, ys = zip(*sorted(points), strict=True)
                ax.plot([x / 1e6 for x in xs], ys, "o-", label=f"seed {r['seed']}")
        if goal := target(rows[0]):
            ax.axhline(goal[0], color="tab:green", ls="--", label=goal[1])
        if game in RANDOM_AND_HUMAN:
            ax.axhline(RANDOM_AND_HUMAN[game][0], color="gray", ls=":", label="random")
        ax.set_title(game)
        ax.set_xlabel("env frames (M)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("greedy game score")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_profile(scores: dict[str, list[float]], path: Path) -> None:
    """The performance profile: the fraction of runs scoring above each human-normalized tau."""
    matrix = score_matrix(scores)
    taus = np.linspace(0.0, max(2.0, float(np.quantile(matrix, 0.9))), 101)
    np.random.seed(SEED)
    profiles, intervals = rly.create_performance_profile({"run": matrix}, taus, reps=2_000)
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot(taus, profiles["run"], color="tab:blue")
    ax.fill_between(taus, *intervals["run"], color="tab:blue", alpha=0.2)
    ax.set_xlabel("human-normalized score (tau)")
    ax.set_ylabel("fraction of runs > tau")
    ax.set_title(f"performance profile, {matrix.shape[1]} games")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
