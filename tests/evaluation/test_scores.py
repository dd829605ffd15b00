"""The field's score tables: the 57 games' random and human scores against the games ale-py ships,
and the human-normalized score evaluate.py prints and stores."""

import json

import pytest
from helpers.runs import run_script

from atari_a3c.envs.games import GAMES
from atari_a3c.evaluation.scores import RANDOM_AND_HUMAN, human_normalized


def test_the_57_games_of_the_table_are_games_ale_py_ships_with_human_above_random():
    assert len(RANDOM_AND_HUMAN) == 57
    assert not set(RANDOM_AND_HUMAN) - set(GAMES)
    assert all(human > random for random, human in RANDOM_AND_HUMAN.values())


def test_a_score_is_normalized_from_random_to_human_by_name_or_gymnasium_id():
    random, human = RANDOM_AND_HUMAN["breakout"]
    assert human_normalized("breakout", human) == 1.0
    assert human_normalized("ALE/Breakout-v5", random) == 0.0
    assert human_normalized("tetris", 100.0) is None  # ale-py ships it; the 57 lack it


def test_a_game_of_the_57_gets_its_human_normalized_mean_printed_and_stored(tmp_path):
    """On the shipped agent, whose stored env config predates `env.obs_type`, named by env."""
    out = tmp_path / "eval"
    args = ("ckpt=pretrained/pong", "env=pong", "episodes=1", f"output_dir={out}")
    result = run_script("evaluate.py", *args, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    summary = json.loads((out / "results.json").read_text())["summary"]
    random, human = RANDOM_AND_HUMAN["pong"]
    normalized = (summary["mean"] - random) / (human - random)
    assert summary["human_normalized"] == pytest.approx(normalized)
    line = f"human-normalized mean: {normalized:.3f} (random {random:g}, human {human:g})"
    assert line in result.stdout.splitlines()
