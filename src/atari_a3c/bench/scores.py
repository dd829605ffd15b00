"""Scores by game: records grouped by game, their human-normalized scores (each game the mean of
its seeds, or each seed's), the named game sets and the targets a game is held to."""

from __future__ import annotations

import statistics
from importlib.resources import files

from atari_a3c.evaluation.scores import RANDOM_AND_HUMAN, human_normalized

# game: SB3 zoo A2C's published score after 40M frames, the seven games' targets at 10M frames
SB3_A2C_40M = {
    "pong": 19.0,
    "breakout": 280.0,
    "spaceinvaders": 627.0,
    "beamrider": 2890.0,
    "qbert": 3882.0,
    "mspacman": 1672.0,
    "seaquest": 1721.0,
}
# algo: {game: its own target at 10M frames}, for algorithms held to another than the peers' score
ALGO_TARGETS = {"dqn": {"pong": 18.0, "breakout": 50.0}}
# how a final score played (its record key): actions sampled from the policy, the peers' protocol
# and the headline; greedy actions beside
SAMPLED = "final_sampled"
PLAYS = (("sampled", SAMPLED), ("greedy", "final"))


def _read_atari5() -> dict[str, float]:
    lines = files(__package__).joinpath("atari5.csv").read_text().splitlines()
    rows = [line.split(",") for line in lines if line and not line.startswith("#")][1:]
    return {game: float(weight) for game, weight in rows}


ATARI5 = _read_atari5()  # game -> the weight of its log score in Atari-5's regression
# named game sets: the seven the project was first measured on, Atari-5 (`atari5.csv`), and two
# games outside both, named before any recipe was tuned on Atari-5, that check the recipes on
# games nobody tuned for
GAME_SETS = {"seven": list(SB3_A2C_40M), "atari5": list(ATARI5), "held-out": ["asterix", "enduro"]}


def by_game(records: list[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(r["game"], []).append(r)
    return groups


def seed_scores(records: list[dict], key: str = "final") -> dict[str, list[float]]:
    """game -> its seeds' human-normalized scores (`key`: greedy `final` or `final_sampled`), of
    the seeds that have that score, for the games of the 57."""
    scores = {
        game: [human_normalized(game, r[key]["mean"]) for r in rows if r.get(key)]
        for game, rows in by_game(records).items()
        if game in RANDOM_AND_HUMAN
    }
    return {game: s for game, s in scores.items() if s}


def game_means(records: list[dict], key: str = "final") -> dict[str, float]:
    """game -> its human-normalized score (`key` as in `seed_scores`), the mean of its seeds."""
    return {game: statistics.fmean(s) for game, s in seed_scores(records, key).items()}


def mean_score(rows: list[dict], key: str = "final") -> float | None:
    """The mean over `rows` that have the score `key` of its mean; None where none has it."""
    means = [r[key]["mean"] for r in rows if r.get(key)]
    return statistics.fmean(means) if means else None


def target(record: dict) -> tuple[float, str] | None:
    """The record's target at 10M frames and its name: its algorithm's own, else SB3 zoo A2C's;
    None for a game that has neither."""
    algo, game = record.get("algo", "impala"), record["game"]
    if game in ALGO_TARGETS.get(algo, {}):
        return ALGO_TARGETS[algo][game], f"{algo} target"
    return (SB3_A2C_40M[game], "SB3 A2C at 40M") if game in SB3_A2C_40M else None
