"""Several checkpoints on identical games: game i of every checkpoint is reset with the same
seed, which restores the same emulator state and random streams, so score differences are the
policies' alone. One row per checkpoint, with the paired difference to the first."""

from __future__ import annotations

import math
import statistics

from atari_a3c.evaluation.play import Game


def paired_rows(results: list[tuple[str, list[Game]]]) -> list[dict]:
    """Per checkpoint: mean, std, median; against the first one, the mean paired difference,
    its standard error and the games won, tied and lost."""
    baseline = results[0][1]
    rows = []
    for name, games in results:
        scores = [g.score for g in games]
        diffs = [g.score - b.score for g, b in zip(games, baseline, strict=True)]
        spread = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
        rows.append(
            {
                "checkpoint": name,
                "mean": statistics.fmean(scores),
                "std": statistics.pstdev(scores),
                "median": statistics.median(scores),
                "diff": statistics.fmean(diffs),
                "diff_se": spread / math.sqrt(len(diffs)),
                "won": sum(d > 0 for d in diffs),
                "tied": sum(d == 0 for d in diffs),
                "lost": sum(d < 0 for d in diffs),
            }
        )
    return rows


def print_rows(rows: list[dict]) -> None:
    width = max(len(row["checkpoint"]) for row in rows)
    header = f"{'checkpoint':<{width}}  {'mean':>9} {'std':>8} {'median':>9}"
    print(f"\n{header}  vs first (+- s.e.)  W/T/L")
    for i, row in enumerate(rows):
        versus = "" if i == 0 else f"{row['diff']:+9.2f} +- {row['diff_se']:<6.2f}"
        record = "" if i == 0 else f"{row['won']}/{row['tied']}/{row['lost']}"
        print(
            f"{row['checkpoint']:<{width}}  {row['mean']:9.2f} {row['std']:8.2f} "
            f"{row['median']:9.2f}  {versus:<19} {record}"
        )
