"""The results page shows what the bench's summary of the shipped records says: the per-game
tables, the aggregates with their intervals and Atari-5's predicted 57-game median."""

import pytest
from helpers.runs import ROOT

from atari_a3c.bench.aggregates import aggregate_lines, atari5_lines
from atari_a3c.bench.recipes import own_command_records
from atari_a3c.bench.records import load_records
from atari_a3c.bench.scores import GAME_SETS, PLAYS, seed_scores
from atari_a3c.bench.tables import per_game_table

RECORDS = ROOT / "benchmarks" / "atari"
PAGE = (ROOT / "docs" / "results.md").read_text()
SEVEN = GAME_SETS["seven"]


def page_table(heading: str) -> dict[str, list[str]]:
    """The first table under `heading` on the results page: game (lower case) -> its cells
    (thousands unseparated)."""
    section = PAGE[PAGE.index(f"## {heading}\n") :]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]
    cells = [[c.strip().replace(",", "") for c in row.strip("|").split("|")] for row in rows]
    table = {}
    for row in cells:
        game = row[0].split(" (")[0].lower()
        if game in table:
            break  # the next table
        table[game] = row
    return table


def bench_rows(records: list[dict]) -> dict[str, list[str]]:
    """The bench's per-game table (thousands unseparated): game -> seeds, sampled, seeds >= target,
    greedy, target, human-normalized (sampled), (greedy)."""
    rows = per_game_table(records).splitlines()[2:]
    cells = [[c.strip().replace(",", "") for c in row.strip("|").split("|")] for row in rows]
    return {row[0]: row[1:] for row in cells}


@pytest.fixture(scope="module")
def default():
    return [r for r in load_records(RECORDS / "default") if r["game"] in SEVEN]


@pytest.fixture(scope="module")
def own():
    return own_command_records(SEVEN, [RECORDS / "default", RECORDS / "ppo"])


def test_the_default_recipes_table_is_the_benchs(default):
    page, bench = page_table("Seven games with the default recipe"), bench_rows(default)
    for game in SEVEN:
        seeds, sampled, met, greedy, target, *normalized = page[game][1:8]
        assert [seeds, sampled, greedy, target, *normalized] == [
            bench[game][i] for i in (0, 1, 3, 4, 5, 6)
        ]
        assert met.startswith(bench[game][2]), game


def test_the_own_commands_table_is_the_benchs(own):
    page, bench = page_table("Seven games, each game's own command"), bench_rows(own)
    for game in SEVEN:
        assert page[game][2:9] == bench[game], game


def aggregates_cell(lines: list[str]) -> list[str]:
    """The median, IQM and optimality gap lines as the page's cells (`0.283 [0.273, 0.293]`)."""
    return [line.split(": ", 1)[1] for line in lines[1:]]


def test_the_aggregates_and_their_intervals_are_the_benchs(default, own):
    for name, records in (("each game's own command", own), ("the default recipe", default)):
        for play, key in PLAYS:
            scores = {
                game: seed_scores(records, key)[game] for game in SEVEN
            }  # the summary's order
            runs = min(len(s) for s in scores.values())
            row = next(
                line for line in PAGE.splitlines() if line.startswith(f"| {name} | {play} |")
            )
            cells = [c.strip().replace("**", "") for c in row.strip("|").split("|")]
            assert cells[2] == f"7 x {runs}"
            assert cells[3:] == aggregates_cell(aggregate_lines(scores))


def test_atari5s_prediction_and_its_interval_are_the_benchs():
    lines = atari5_lines(load_records(RECORDS / "default"))
    for play in ("greedy", "sampled"):
        line = next(line for line in lines if f"from {play} play" in line)
        predicted = line.split(": ", 1)[1].split(" (")[0]
        assert f"{predicted} from {play} play" in " ".join(PAGE.split())
