"""The seven-game bench in-process: its table (median, targets) and how a stopped step reads."""

import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
import atari  # noqa: E402  (benchmarks/atari.py)


def record(game: str, seed: int, mean: float) -> dict:
    final = {"mean": mean, "std": 0.0, "median": mean}
    return {"game": game, "seed": seed, "final": final, "wall_clock_minutes": 1.0,
            "frames_per_second": 1.0, "commit": "x"}  # fmt: skip


def test_the_median_is_over_games_with_each_game_the_mean_of_its_seeds():
    human = {game: atari.REFERENCE[game][1] for game in ("pong", "breakout", "qbert")}
    random = {game: atari.REFERENCE[game][0] for game in human}
    records = [record("pong", 1, human["pong"]), record("pong", 2, random["pong"])]
    records += [record("breakout", 1, human["breakout"]), record("qbert", 1, random["qbert"])]
    assert sorted(atari.game_scores(records)) == [0.0, 0.5, 1.0]
    assert "Median human-normalized score: 0.500 over 3 games" in atari.summary_table(records)


def test_a_dqn_record_is_held_to_the_dqn_target():
    dqn = record("breakout", 1, 60.0) | {"algo": "dqn"}
    rows = atari.summary_table([dqn, record("breakout", 2, 60.0)]).splitlines()
    assert "| 50 |" in rows[2] and "| 280 |" in rows[3]


def test_sampled_play_has_its_own_median_over_the_records_that_have_it():
    human = {game: atari.REFERENCE[game][1] for game in ("pong", "breakout")}
    sampled = {"mean": human["pong"], "std": 0.0}
    records = [record("pong", 1, 0.0) | {"final_sampled": sampled}, record("breakout", 1, 0.0)]
    assert atari.game_scores(records, "final_sampled") == [1.0]
    assert "Of sampled play (how the SB3 zoo scores its Atari agents): 1.000 over 1 games" in (
        atari.summary_table(records)
    )


def test_a_step_killed_by_sigterm_counts_as_stopped_not_failed(tmp_path):
    kill = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"  # as evaluate.py dies
    with pytest.raises(SystemExit, match=r"stopped \(-15\).*resumes it"):
        atari.run(["python", "-c", kill], tmp_path / "step.log")


def test_the_per_game_table_gives_each_games_mean_and_the_seeds_that_meet_its_target():
    goal = atari.REFERENCE["breakout"][2]
    sampled = {"mean": 100.0, "std": 0.0}
    records = [record("breakout", 1, goal + 20) | {"final_sampled": sampled},
               record("breakout", 2, goal - 40)]  # fmt: skip
    row = atari.per_game_table(records).splitlines()[2]
    assert row == f"| breakout | 2 | {goal - 10:,.1f} | 1 of 2 | 100.0 | {goal:g} " + (
        f"| {atari.normalized('breakout', goal - 10):.3f} |"
    )


def test_records_are_listed_by_game_then_by_seed_in_numeric_order(tmp_path):
    for game, seed in [("pong", 10), ("pong", 9), ("breakout", 2)]:
        path = tmp_path / f"{game}-seed{seed}.json"
        path.write_text(atari.json.dumps(record(game, seed, 0.0)))
    order = [(r["game"], r["seed"]) for r in atari.load_records(tmp_path)]
    assert order == [("breakout", 2), ("pong", 9), ("pong", 10)]
