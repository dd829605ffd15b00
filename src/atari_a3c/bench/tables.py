"""Tables: one row per record, one per game, a recipe's games beside another's, and the notes on
what the records share and where they differ (recipe, evaluation protocol, commits)."""

from __future__ import annotations

import shlex
import statistics
from collections import Counter

from atari_a3c.bench.aggregates import aggregate_sections
from atari_a3c.bench.records import LIFE_MEMORY_COMMIT, overrides_of, protocol_of
from atari_a3c.bench.scores import PLAYS, SAMPLED, by_game, game_means, mean_score, target
from atari_a3c.evaluation.scores import RANDOM_AND_HUMAN, human_normalized


def norm_cell(game: str, score: float | None) -> str:
    """The human-normalized score as a table cell; `-` for a game outside the 57 or no score."""
    value = None if score is None else human_normalized(game, score)
    return "-" if value is None else f"{value:.3f}"


def cell(summary: dict | None) -> str:
    return f"{summary['mean']:.1f} +- {summary['std']:.1f}" if summary else "-"


def number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def goal_cell(record: dict) -> str:
    goal = target(record)
    return f"{goal[0]:g}" if goal else "-"


def summary_table(records: list[dict]) -> str:
    """Every record's row, the per-game table, the medians, the aggregates and the notes; sampled
    play (the peers' protocol) first, greedy play beside."""
    played = {r["final_sampled"].get("episodes") for r in records if r.get("final_sampled")}
    games = f" ({played.pop()} games)" if len(played) == 1 else ""
    lines = [
        f"| game | seed | sampled mean +- std{games} | greedy mean +- std | greedy median "
        "| best.ckpt greedy | target | human-norm. (sampled) | minutes | frames/s | commit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in records:
        final, sampled = r.get("final"), r.get("final_sampled")
        lines.append(
            f"| {r['game']} | {r['seed']} | {cell(sampled)} | {cell(final)} "
            f"| {number(final and final['median'], '.1f')} "
            f"| {cell(r.get('final_best'))} | {goal_cell(r)} "
            f"| {norm_cell(r['game'], sampled and sampled['mean'])} "
            f"| {number(r.get('wall_clock_minutes'), '.0f')} "
            f"| {number(r.get('frames_per_second'), ',.0f')} | {commit_cell(r)} |"
        )
    if records:
        lines.append("\n" + per_game_table(records))
    medians = [
        f"Median human-normalized score of {play} play: {statistics.median(scores):.3f} over "
        f"{len(scores)} games (each the mean of its seeds)."
        for play, key in PLAYS
        if (scores := list(game_means(records, key).values()))
    ]
    if medians:
        lines.append("\n" + "\n".join(medians))
    lines += aggregate_sections(records)
    if records:
        lines.append("\n" + "\n".join(f"- {note}" for note in provenance(records)))
    return "\n".join(lines)


def per_game_table(records: list[dict]) -> str:
    """One row per game: its seeds' mean sampled and greedy scores and how many seeds meet the
    target with sampled play (as the peers whose scores are the targets play)."""
    lines = [
        "| game | seeds | sampled, mean of seeds | seeds >= target | greedy, mean of seeds "
        "| target | human-norm. (sampled) | (greedy) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for game, rows in by_game(records).items():
        sampled, greedy, goal = mean_score(rows, SAMPLED), mean_score(rows), target(rows[0])
        scored = [r for r in rows if r.get("final_sampled")]
        met = sum(r["final_sampled"]["mean"] >= goal[0] for r in scored) if goal else None
        lines.append(
            f"| {game} | {len(rows)} | {number(sampled, ',.1f')} "
            f"| {'-' if met is None else f'{met} of {len(scored)}'} "
            f"| {number(greedy, ',.1f')} | {goal_cell(rows[0])} "
            f"| {norm_cell(game, sampled)} | {norm_cell(game, greedy)} |"
        )
    return "\n".join(lines)


def versus_table(records: list[dict], baseline: list[dict], name: str) -> str:
    """This recipe's games beside `baseline`'s (sampled play, mean of seeds), and the median
    human-normalized score of each over the games both have."""
    lines = [
        f"Side by side with `{name}` (sampled play, mean of seeds):\n",
        "| game | seeds | sampled | human-norm. | seeds there | sampled there "
        "| human-norm. there |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    theirs = by_game(baseline)
    ours, both = [], []
    for game, rows in by_game(records).items():
        score = mean_score(rows, SAMPLED)
        row = f"| {game} | {len(rows)} | {number(score, ',.1f')} | {norm_cell(game, score)} "
        other = mean_score(theirs[game], SAMPLED) if game in theirs else None
        if other is not None:
            row += f"| {len(theirs[game])} | {other:,.1f} | {norm_cell(game, other)} |"
            if game in RANDOM_AND_HUMAN and score is not None:
                ours.append(human_normalized(game, score))
                both.append(human_normalized(game, other))
        else:
            row += "| 0 | - | - |"
        lines.append(row)
    if both:
        lines.append(f"\nMedian human-normalized score over the {len(both)} games both have: "
                     f"{statistics.median(ours):.3f} here, {statistics.median(both):.3f} "
                     f"there.")  # fmt: skip
    return "\n".join(lines)


def commit_cell(record: dict) -> str:
    """The commit training started at (+dirty: with uncommitted changes), the commits it resumed
    and was scored at where they differ; an older record's only commit is the scoring one."""
    start = record.get("train_commit")
    if not start:
        return f"{record['commit']} (scored)" if record.get("commit") else "-"
    cell = start + ("+dirty" if record.get("train_dirty") else "")
    for r in record.get("resumed", []):
        if (r["commit"], r["dirty"]) != (start, bool(record.get("train_dirty"))):
            cell += f", resumed at {r['frames'] / 1e6:.1f}M: {r['commit']}"
            cell += "+dirty" if r["dirty"] else ""
    return cell + (f", scored at {record['commit']}" if record["commit"] != start else "")


def provenance(records: list[dict]) -> list[str]:
    """What the records share and where they differ: recipe, evaluation protocol, commits."""
    recipes = Counter(shlex.join(overrides_of(r)) for r in records)
    named = {f"`{k}`" if k else "the default recipe": n for k, n in recipes.items()}
    if len(named) == 1:
        lines = [f"Recipe: {next(iter(named))}" + ("" if "" in recipes else " (overrides)") + "."]
    else:
        mix = ", ".join(f"{k} ({n} records)" for k, n in named.items())
        lines = [f"The records differ in their overrides: {mix}; each game's mean averages them."]
    protocols = Counter(protocol_of(r) for r in records)
    if len(protocols) == 1:
        lines.append(f"Evaluation protocol: {next(iter(protocols))}.")
    else:
        mix = ", ".join(f"{n} of {len(records)} with {p}" for p, n in protocols.most_common())
        lines.append(f"The means average records scored under different evaluation protocols: "
                     f"{mix} (evaluate.py restarts it from commit {LIFE_MEMORY_COMMIT} "
                     f"on).")  # fmt: skip
    if unknown := sum(not r.get("train_commit") for r in records):
        lines.append(f"{unknown} of {len(records)} records do not name the commit their training "
                     "started at (made before records did, or trained outside the bench): each "
                     "names the commit it was scored at, and its training may have started at "
                     "an earlier one.")  # fmt: skip
    if dirty := sum(bool(r.get("train_dirty")) for r in records):
        lines.append(f"{dirty} of {len(records)} records trained from a tree with uncommitted "
                     "changes to tracked files (+dirty).")  # fmt: skip
    return lines
