"""The bench in-process: its tables (medians, targets, provenance), aggregates, Atari-5's
prediction, and how a stopped step reads."""

import json
import subprocess

import pytest

from atari_a3c.bench import aggregates, recipes, records, runs, scores, tables
from atari_a3c.bench.__main__ import main, parse_args
from atari_a3c.evaluation.scores import RANDOM_AND_HUMAN


def record(game: str, seed: int, mean: float) -> dict:
    final = {"mean": mean, "std": 0.0, "median": mean}
    return {"game": game, "seed": seed, "final": final, "wall_clock_minutes": 1.0,
            "frames_per_second": 1.0, "commit": "x"}  # fmt: skip


def played_both_ways(game: str, seed: int, mean: float) -> dict:
    """A record whose sampled and greedy play scored `mean`."""
    return record(game, seed, mean) | {"final_sampled": {"mean": mean, "std": 0.0}}


def test_the_median_is_over_games_with_each_game_the_mean_of_its_seeds():
    human = {game: RANDOM_AND_HUMAN[game][1] for game in ("pong", "breakout", "qbert")}
    random = {game: RANDOM_AND_HUMAN[game][0] for game in human}
    made = [record("pong", 1, human["pong"]), record("pong", 2, random["pong"])]
    made += [record("breakout", 1, human["breakout"]), record("qbert", 1, random["qbert"])]
    assert sorted(scores.game_means(made).values()) == [0.0, 0.5, 1.0]
    assert (
        "Median human-normalized score of greedy play: 0.500 over 3 games"
        in tables.summary_table(made)
    )


def test_a_dqn_record_is_held_to_the_dqn_target():
    dqn = record("breakout", 1, 60.0) | {"algo": "dqn"}
    rows = tables.summary_table([dqn, record("breakout", 2, 60.0)]).splitlines()
    assert "| 50 |" in rows[2] and "| 280 |" in rows[3]


def test_sampled_play_has_its_own_median_over_the_records_that_have_it():
    human = {game: RANDOM_AND_HUMAN[game][1] for game in ("pong", "breakout")}
    sampled = {"mean": human["pong"], "std": 0.0}
    made = [record("pong", 1, 0.0) | {"final_sampled": sampled}, record("breakout", 1, 0.0)]
    assert list(scores.game_means(made, "final_sampled").values()) == [1.0]
    assert "Median human-normalized score of sampled play: 1.000 over 1 games" in (
        tables.summary_table(made)
    )


def test_a_step_killed_by_sigterm_counts_as_stopped_not_failed(tmp_path):
    kill = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"  # as evaluate.py dies
    with pytest.raises(SystemExit, match=r"stopped \(-15\).*resumes it"):
        runs.run(["python", "-c", kill], tmp_path / "step.log")


def test_the_per_game_table_counts_the_seeds_whose_sampled_play_meets_the_target():
    goal = scores.SB3_A2C_40M["breakout"]
    greedy = {"mean": 100.0, "std": 0.0, "median": 100.0}
    made = [played_both_ways("breakout", 1, goal + 20) | {"final": greedy},
            played_both_ways("breakout", 2, goal - 40) | {"final": greedy}]  # fmt: skip
    row = tables.per_game_table(made).splitlines()[2]
    assert row == f"| breakout | 2 | {goal - 10:,.1f} | 1 of 2 | 100.0 | {goal:g} " + (
        f"| {tables.norm_cell('breakout', goal - 10)} | {tables.norm_cell('breakout', 100.0)} |"
    )


def test_records_are_listed_by_game_then_by_seed_in_numeric_order(tmp_path):
    for game, seed in [("pong", 10), ("pong", 9), ("breakout", 2)]:
        path = tmp_path / f"{game}-seed{seed}.json"
        path.write_text(json.dumps(record(game, seed, 0.0)))
    order = [(r["game"], r["seed"]) for r in records.load_records(tmp_path)]
    assert order == [("breakout", 2), ("pong", 9), ("pong", 10)]


def test_the_summary_says_where_it_averages_across_evaluation_protocols():
    newer = record("pong", 1, 0.0) | {"eval_protocol": records.LIFE_RESTARTS_MEMORY}
    older = record("pong", 2, 0.0)  # no field, scored at an unknown commit: the older protocol
    assert records.protocol_of(older) == records.ONE_MEMORY_PER_GAME
    mixed = tables.summary_table([newer, older])
    assert "different evaluation protocols: 1 of 2 with the LSTM memory restarted" in mixed
    alike = tables.summary_table([newer, newer | {"seed": 3}])
    assert f"Evaluation protocol: {records.LIFE_RESTARTS_MEMORY}." in alike
    assert "different evaluation protocols" not in alike


def test_a_record_names_the_commit_its_training_started_at_and_where_it_was_dirty():
    trained = {"train_commit": "aaa", "train_dirty": True, "commit": "bbb"}
    trained["resumed"] = [{"frames": 2_500_000, "commit": "ccc", "dirty": False}]
    assert tables.commit_cell(trained) == "aaa+dirty, resumed at 2.5M: ccc, scored at bbb"
    clean = {"train_commit": "aaa", "train_dirty": False, "commit": "aaa"}
    assert tables.commit_cell(clean) == "aaa"
    older = record("pong", 1, 0.0)
    assert tables.commit_cell(older) == "x (scored)"
    note = "1 of 1 records do not name the commit their training started at"
    assert note in tables.summary_table([older])


def test_the_start_of_a_training_and_each_resume_are_written_down(tmp_path):
    runs.note_start(tmp_path, None, tmp_path)
    runs.note_start(tmp_path, 4000, tmp_path)
    start = json.loads((tmp_path / runs.START_FILE).read_text())
    assert start["commit"] == runs.commit() and isinstance(start["dirty"], bool)
    resume = {"frames": 4000, "commit": start["commit"], "dirty": start["dirty"]}
    assert start["resumed"] == [resume]


def test_the_bench_rewriting_its_own_summary_leaves_the_tree_clean(tmp_path, monkeypatch):
    repo, git = tmp_path / "repo", ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    out = repo / "benchmarks" / "atari" / "ppo"
    out.mkdir(parents=True)
    (out / "summary.md").write_text("before\n")
    (repo / "train.py").write_text("before\n")
    for command in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"]):
        subprocess.run([*git, *command], cwd=repo, check=True)
    monkeypatch.setattr(runs, "REPO", repo)
    (out / "summary.md").write_text("after\n")  # as the bench rewrites it after each record
    assert runs.tree_state(out)["dirty"] is False
    (repo / "train.py").write_text("after\n")
    assert runs.tree_state(out)["dirty"] is True


def test_the_summary_names_the_overrides_older_records_hold_in_their_command():
    command = "python train.py env=qbert seed=1 frames=10000000 algo=ppo model=impala_resnet"
    older = record("qbert", 1, 0.0) | {"command": command + " logger=csv"}
    assert records.overrides_of(older) == ["algo=ppo", "model=impala_resnet"]
    assert "Recipe: `algo=ppo model=impala_resnet` (overrides)." in tables.summary_table([older])
    default = record("qbert", 2, 0.0) | {"overrides": []}
    assert "Recipe: the default recipe." in tables.summary_table([default])
    mixed = tables.summary_table([older, default])
    assert "differ in their overrides: `algo=ppo model=impala_resnet` (1 records)" in mixed


def test_summary_mode_rewrites_the_summary_from_the_records_and_trains_nothing(tmp_path, capsys):
    curve = {"eval_curve": [{"frames": 1000, "mean": -21.0}], "frames": 2000}
    (tmp_path / "pong-seed1.json").write_text(json.dumps(record("pong", 1, 0.0) | curve))
    main(["--summary", "--out", str(tmp_path)])
    assert "| pong | 1 |" in (tmp_path / "summary.md").read_text()
    assert (tmp_path / "curves.png").exists() and not (tmp_path / "pong-seed1").exists()
    with pytest.raises(SystemExit, match="no records under"):
        main(["--summary", "--out", str(tmp_path / "empty")])


def test_the_summary_sets_each_game_beside_the_records_it_is_compared_with(tmp_path):
    human = {game: RANDOM_AND_HUMAN[game][1] for game in ("pong", "qbert", "breakout")}
    random = {game: RANDOM_AND_HUMAN[game][0] for game in human}
    both = played_both_ways
    ours, theirs = tmp_path / "ppo", tmp_path / "default"
    for out, rows in {
        ours: [both("pong", 1, human["pong"]), both("qbert", 1, human["qbert"])],
        theirs: [both("pong", 1, random["pong"]), both("pong", 2, human["pong"]),
                 both("breakout", 1, human["breakout"])],
    }.items():  # fmt: skip
        out.mkdir()
        for r in rows:
            curve = {"eval_curve": [], "frames": 1000}
            (out / f"{r['game']}-seed{r['seed']}.json").write_text(json.dumps(r | curve))
    main(["--summary", "--out", str(ours), "--against", str(theirs)])
    summary = (ours / "summary.md").read_text()
    assert f"| pong | 1 | {human['pong']:,.1f} | 1.000 | 2 | " in summary
    assert "| qbert | 1 | 13,455.0 | 1.000 | 0 | - | - |" in summary
    assert "over the 1 games both have: 1.000 here, 0.500 there." in summary
    main(["--summary", "--out", str(theirs), "--against", str(theirs)])
    assert "Side by side" not in (theirs / "summary.md").read_text()


def at(game: str, normalized: float) -> float:
    """The raw score of `game` that is `normalized` of the way from random to human."""
    random, human = RANDOM_AND_HUMAN[game]
    return random + normalized * (human - random)


def test_atari5_predicts_the_57_game_median_from_its_five_games_log_scores():
    assert parse_args(["--games", "atari5"]).games == [
        "battlezone", "doubledunk", "namethisgame", "phoenix", "qbert"
    ]  # fmt: skip
    assert parse_args(["--games", "held-out"]).games == ["asterix", "enduro"]
    at_human = dict.fromkeys(scores.ATARI5, 1.0)
    assert round(aggregates.atari5_median(at_human), 3) == 0.851
    assert aggregates.atari5_median(dict.fromkeys(scores.ATARI5, -0.5)) == 0.0  # below random: 0
    assert aggregates.atari5_median(at_human | {"phoenix": 2.0}) > aggregates.atari5_median(
        at_human
    )
    assert aggregates.atari5_median({"qbert": 1.0}) is None


def test_the_summary_gives_each_whole_game_set_its_aggregates_and_intervals():
    seven = [record(g, s, at(g, 0.1 * s)) for g in scores.GAME_SETS["seven"] for s in (1, 2, 3)]
    five = [record(g, 1, at(g, 1.0)) for g in scores.GAME_SETS["atari5"] if g != "qbert"]
    lines = tables.summary_table(seven + five).splitlines()
    start = lines.index(f"`--games seven` ({', '.join(scores.GAME_SETS['seven'])}):")
    assert lines[start + 1].startswith("Over 7 games x 3 seeds (the first 3 of each game)")
    median = lines[start + 2]  # each game's seeds at 0.1, 0.2, 0.3: the median run is 0.2
    assert median.startswith("- median: 0.200 [") and float(median[-6:-1]) >= 0.2
    atari5 = lines.index(f"`--games atari5` ({', '.join(scores.GAME_SETS['atari5'])}):")
    assert lines[atari5 + 1] == (
        "Over 5 games x 1 seed, greedy, human-normalized (one seed: no interval):"
    )
    predicted = "- predicted 57-game median from greedy play: "
    assert lines[atari5 + 5].startswith(predicted) and "seeds of qbert (3)" in lines[atari5 + 5]
    assert lines[atari5 + 6].startswith("- the regression's own error (the paper: within 10%")
    assert tables.summary_table(seven) == tables.summary_table(seven)  # the same bootstrap
    assert "All games (pong, qbert):" in tables.summary_table(
        [record("pong", 1, 0.0), record("qbert", 1, 0.0)]
    )


def test_own_command_records_are_those_that_train_what_the_games_command_trains(tmp_path):
    rows = [
        record("qbert", 1, 0.0) | {"algo": "ppo", "overrides": ["algo=ppo"]},
        record("qbert", 2, 0.0) | {"algo": "impala", "overrides": []},
        record("pong", 1, 0.0) | {"algo": "impala", "overrides": []},
        record("pong", 2, 0.0) | {"algo": "impala", "overrides": ["optim.lr=1e-3"]},
    ]
    for r in rows:
        (tmp_path / f"{r['game']}-seed{r['seed']}.json").write_text(json.dumps(r))
    own = recipes.own_command_records(["pong", "qbert"], [tmp_path])
    assert [(r["game"], r["seed"]) for r in own] == [("pong", 1), ("qbert", 1)]


def test_atari5s_interval_is_a_seeded_bootstrap_over_each_games_seeds():
    spread = {game: [0.2, 0.3, 0.4] for game in scores.ATARI5}
    low, high = aggregates.atari5_interval(spread)
    point = aggregates.atari5_median(dict.fromkeys(scores.ATARI5, 0.3))
    assert low < point < high and (low, high) == aggregates.atari5_interval(spread)
    narrower = aggregates.atari5_interval(spread | {"battlezone": [0.3]})
    assert high - low > narrower[1] - narrower[0], "a game of one seed adds no spread"
    assert aggregates.atari5_interval(dict.fromkeys(scores.ATARI5, [0.3])) is None
