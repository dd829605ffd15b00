"""Aggregates over games and seeds as the field reports them (Agarwal et al., "Deep Reinforcement
Learning at the Edge of the Statistical Precipice", NeurIPS 2021), computed with `rliable`: the
median, interquartile mean and optimality gap of human-normalized scores with stratified-bootstrap
95% intervals; and the 57-game median Atari-5's regression predicts (`atari5.csv`), with a
bootstrap interval over each game's seeds and the regression's own stated error."""

from __future__ import annotations

import numpy as np
from rliable import library as rly
from rliable import metrics

from atari_a3c.bench.scores import ATARI5, GAME_SETS, PLAYS, seed_scores

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


def score_matrix(scores: dict[str, list[float]]) -> np.ndarray:
    """(runs x games) human-normalized scores, the first k seeds of each game, k the fewest seeds
    any game has: the rectangle rliable's stratified bootstrap takes."""
    runs = min(len(s) for s in scores.values())
    return np.array([s[:runs] for s in scores.values()]).T


def aggregate_lines(scores: dict[str, list[float]], play: str = "greedy") -> list[str]:
    """One line per aggregate with its 95% interval, over `scores` (game -> its seeds' scores)."""
    matrix = score_matrix(scores)
    func = lambda x: np.array([aggregate(x) for aggregate in AGGREGATES.values()])  # noqa: E731
    runs, games = matrix.shape
    if runs == 1:  # nothing to resample
        lines = [f"Over {games} games x 1 seed, {play}, human-normalized (one seed: no interval):"]
        values = zip(AGGREGATES, func(matrix), strict=True)
        return lines + [f"- {name}: {value:.3f}" for name, value in values]
    np.random.seed(SEED)
    points, intervals = rly.get_interval_estimates({"run": matrix}, func, reps=REPS)
    lines = [
        f"Over {games} games x {runs} seeds (the first {runs} of each game), {play}, "
        "human-normalized, stratified-bootstrap 95% intervals (rliable):"
    ]
    for i, name in enumerate(AGGREGATES):
        low, high = intervals["run"][:, i]
        lines.append(f"- {name}: {points['run'][i]:.3f} [{low:.3f}, {high:.3f}]")
    return lines


def atari5_median(means: dict[str, float | np.ndarray]) -> float | np.ndarray | None:
    """The 57-game median human-normalized score Atari-5 predicts from each game's mean score
    (human-normalized, as a fraction; arrays give one prediction each); None unless all five
    games are there."""
    if not set(ATARI5) <= set(means):
        return None
    log_median = sum(w * np.log10(1 + np.maximum(0.0, 100 * means[g])) for g, w in ATARI5.items())
    return (10**log_median - 1) / 100


def atari5_interval(scores: dict[str, list[float]]) -> tuple[float, float] | None:
    """The 95% interval of Atari-5's prediction over a bootstrap of each game's seeds (each game's
    mean taken over its seeds drawn again with replacement); None where every game has one."""
    if all(len(scores[g]) == 1 for g in ATARI5):
        return None
    rng = np.random.default_rng(SEED)
    means = {}
    for game in ATARI5:
        seeds = np.asarray(scores[game])
        means[game] = seeds[rng.integers(0, len(seeds), (REPS, len(seeds)))].mean(axis=1)
    low, high = np.quantile(atari5_median(means), [0.025, 0.975])
    return float(low), float(high)


def atari5_lines(records: list[dict]) -> list[str]:
    """Atari-5's predicted 57-game median from greedy and from sampled play, each with its
    interval over the seeds where a game has several, and the regression's error beside."""
    lines = []
    for play, key in PLAYS:
        scores = seed_scores(records, key)
        if not set(ATARI5) <= set(scores):
            continue
        point = atari5_median({g: float(np.mean(scores[g])) for g in ATARI5})
        interval = atari5_interval(scores)
        shown = f"{point:.3f}" + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else "")
        several = [f"{g} ({len(scores[g])})" for g in ATARI5 if len(scores[g]) > 1]
        note = f" (95%: a bootstrap over the seeds of {', '.join(several)})" if interval else ""
        lines.append(f"- predicted 57-game median from {play} play: {shown}{note}")
    if lines:
        lines.append(f"- the regression's own error ({ATARI5_ERROR})")
    return lines


def aggregate_sections(records: list[dict]) -> list[str]:
    """The aggregates with their intervals, of greedy and of sampled play, over each named game
    set the records hold whole (over all their games where they hold none), and for Atari-5 the
    57-game median it predicts."""
    plays = {play: s for play, key in PLAYS if (s := seed_scores(records, key))}
    if not plays:
        return []
    scored = set().union(*plays.values())
    whole = {
        f"`--games {name}`": games for name, games in GAME_SETS.items() if set(games) <= scored
    }
    lines = []
    for heading, games in (whole or {"All games": sorted(scored)}).items():
        lines += ["", f"{heading} ({', '.join(games)}):"]
        for play, scores in plays.items():
            if set(games) <= set(scores):
                lines += aggregate_lines({g: scores[g] for g in games}, play)
        if games == GAME_SETS["atari5"]:
            lines += atari5_lines(records)
    return lines
