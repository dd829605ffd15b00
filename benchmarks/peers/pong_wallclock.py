"""Pong against wall-clock minutes, ours beside the peer's, and the minutes each took to a greedy
score of +18.

`python benchmarks/peers/pong_wallclock.py` reads the bench's records (`pong-seed*.json`) and
those of `benchmarks/peers/peer_a2c_pong.py` (`peer/sb3-a2c-pong-seed*.json`), prints one table
and writes `<dir>/pong-wallclock.png`. The peer's minutes are measured at each evaluation; ours
are the point's frames over the run's overall rate (its wall clock counts start-up, the
evaluation process and the final evaluation, so the estimate errs late).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib.pyplot as plt

from atari_a3c.bench.records import load_records

TARGET = 18.0


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dir", type=Path, default=Path("benchmarks/atari/experiments/earlier-default"))
    return p.parse_args()


def our_curves(records: list[dict]) -> dict[str, list[tuple[float, float]]]:
    """(minutes, greedy mean) of each of our Pong runs."""
    curves = {}
    for r in records:
        per_minute = r["frames_per_second"] * 60
        curve = [(p["frames"] / per_minute, p["mean"]) for p in r["eval_curve"]]
        curves[f"ours, seed {r['seed']} ({r['frames_per_second']:,.0f} frames/s)"] = curve
    return curves


def peer_curves(records: list[dict]) -> dict[str, list[tuple[float, float]]]:
    """(minutes, greedy mean) of each peer run, as measured."""
    return {
        f"SB3 A2C, seed {r['seed']}": [(minutes, mean) for _, minutes, mean, _ in r["curve"]]
        for r in records
    }


def minutes_to(curve: list[tuple[float, float]], score: float) -> float | None:
    """The first evaluation's minutes at which the greedy mean reached `score`."""
    return next((minutes for minutes, mean in curve if mean >= score), None)


def table(curves: dict[str, list[tuple[float, float]]]) -> str:
    lines = [f"| run | minutes to greedy +{TARGET:g} | best greedy (minutes) |", "|---|---:|---:|"]
    for name, curve in curves.items():
        reached = minutes_to(curve, TARGET)
        best = max(curve, key=lambda point: point[1])
        cell = f"{reached:.1f}" if reached is not None else f"not in {curve[-1][0]:.1f}"
        lines.append(f"| {name} | {cell} | {best[1]:+.1f} ({best[0]:.1f}) |")
    return "\n".join(lines)


def plot(curves: dict[str, list[tuple[float, float]]], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(6, 3.8))
    for name, curve in curves.items():
        ax.plot(*zip(*curve, strict=True), "o-" if name.startswith("ours") else "s--", label=name)
    ax.axhline(TARGET, color="gray", ls=":", label=f"+{TARGET:g}")
    ax.set_xlabel("wall-clock minutes (2 cores)")
    ax.set_ylabel("greedy Pong score (10 games)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    args = parse_args()
    curves = our_curves([r for r in load_records(args.dir) if r["game"] == "pong"])
    curves |= peer_curves(load_records(args.dir / "peer"))
    plot(curves, args.dir / "pong-wallclock.png")
    print(table(curves))


if __name__ == "__main__":
    main()
