"""The summary file: `<out>/summary.md` (the tables, aggregates and notes, with other records
side by side), `<out>/curves.png` and `<out>/profile.png`."""

from __future__ import annotations

import os
from pathlib import Path

from atari_a3c.bench.plots import plot_curves, plot_profile
from atari_a3c.bench.records import load_records
from atari_a3c.bench.runs import REPO
from atari_a3c.bench.scores import seed_scores
from atari_a3c.bench.tables import summary_table, versus_table


def write_summary(out: Path, against: list[Path], records: list[dict] | None = None) -> str:
    """Write the summary of `records` (default: those under `out`) with the records of each
    `against` dir side by side (unless they are these) and its plots; returns its text."""
    records = load_records(out) if records is None else records
    text = summary_table(records)
    for baseline_dir in against:
        if out.resolve() != baseline_dir.resolve() and (baseline := load_records(baseline_dir)):
            name = os.path.relpath(baseline_dir.resolve(), REPO)
            text += "\n\n" + versus_table(records, baseline, name)
    (out / "summary.md").write_text(text + "\n")
    plot_curves(records, out / "curves.png")
    if seeds := seed_scores(records):
        plot_profile(seeds, out / "profile.png")
    return text + "\n"
