"""Scores read against the field's tables: the random and human scores of the 57 games of the
standard benchmark (`atari57_scores.csv`, with its sources) and the human-normalized score."""

from __future__ import annotations

import csv
from pathlib import Path

from atari_a3c.envs.games import GAMES

TABLE = Path(__file__).with_name("atari57_scores.csv")


def _read_table() -> dict[str, tuple[float, float]]:
    with TABLE.open() as f:
        rows = csv.DictReader(line for line in f if not line.startswith("#"))
        return {row["game"]: (float(row["random"]), float(row["human"])) for row in rows}


RANDOM_AND_HUMAN = _read_table()  # game -> (random score, human score)
GAME_OF_ID = {env_id: name for name, env_id in GAMES.items()}


def game_name(game_or_id: str) -> str:
    """`ALE/Pong-v5` -> `pong`; a game's name stays as it is."""
    return GAME_OF_ID.get(game_or_id, game_or_id)


def human_normalized(game_or_id: str, score: float) -> float | None:
    """(score - random) / (human - random) for a game of the 57 (by name or gymnasium id);
    None for a game the table lacks."""
    scores = RANDOM_AND_HUMAN.get(game_name(game_or_id))
    if scores is None:
        return None
    random, human = scores
    return (score - random) / (human - random)
