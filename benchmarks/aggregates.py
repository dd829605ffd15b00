"""Aggregates over games and seeds as the field reports them (Agarwal et al., "Deep Reinforcement
Learning at the Edge of the Statistical Precipice", NeurIPS 2021), computed with `rliable`: the
median, interquartile mean and optimality gap of human-normalized scores with stratified-bootstrap
95% intervals, the performance profile, and the Atari-5 prediction of the 57-game median
(`atari5.csv`). `pip install -e '.[bench]'` installs rliable."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import matplotlib
import numpy as np
from rliable import library as rly
from rliable import metrics

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ATARI5_FILE = Path(__file__).with_name("atari5.csv")
ATARI5_ERROR = "the paper: within 10%, cross-validated mean absolute error 10.4%"
AGGREGATES = {
    "median": metrics.aggregate_median,
    "IQM": metrics.aggregate_iqm,
    "optimality gap": metrics.aggregate_optimality_gap,
}
REPS = 20_000  # bootstrap replications
# the bootstrap's seed, for numpy's global generator: rliable's StratifiedBootstrap draws its
# resamples from it whatever random_state it is given; the same records give the same intervals
SEED = 0


def _read_atari5() -> dict[str, float]:
    with ATARI5_FILE.open() as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {row["game"]: float(row["weight"]) for row in rows}


ATARI5 = _read_atari5()  # game -> weight of its log score


def score_matrix(scores: dict[str, list[float]]) -> np.ndarray:
    """(runs x games) human-normalized scores, the first k seeds of each game, k the fewest seeds
    any game has: the rectangle rliable's stratified bootstrap takes."""
    runs = min(len(s) for s in scores.values())
    return np.array([s[:runs] for s in scores.values()]).T


def aggregate_lines(scores: dict[str, list[float]]) -> list[str]:
    """One line per aggregate with its 95% interval, over `scores` (game -> its seeds' scores)."""
    matrix = score_matrix(scores)
    func = lambda x: np.array([aggregate(x) for aggregate in AGGREGATES.values()])  # noqa: E731
    runs, games = matrix.shape
    if runs == 1:  # nothing to resample
        lines = [f"Over {games} games x 1 seed, human-normalized (one seed: no interval):"]
        values = zip(AGGREGATES, func(matrix), strict=True)
        return lines + [f"- {name}: {value:.3f}" for name, value in values]
    np.random.seed(SEED)
    points, intervals = rly.get_interval_estimates({"run": matrix}, func, reps=REPS)
    lines = [
        f"Over {games} games x {runs} seeds (the first {runs} of each game), human-normalized, "
        "stratified-bootstrap 95% intervals (rliable):"
    ]
    for i, name in enumerate(AGGREGATES):
        low, high = intervals["run"][:, i]
        lines.append(f"- {name}: {points['run'][i]:.3f} [{low:.3f}, {high:.3f}]")
    return lines


def atari5_median(means: dict[str, float]) -> float | None:
    """The 57-game median human-normalized score Atari-5 predicts from each game's mean score
    (human-normalized, as a fraction); None unless all five games are there."""
    if not set(ATARI5) <= set(means):
        return None
    log_median = sum(w * math.log10(1 + max(0.0, 100 * means[g])) for g, w in ATARI5.items())
    return (10**log_median - 1) / 100


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
