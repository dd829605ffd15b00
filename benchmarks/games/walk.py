"""Every game ale-py ships, trained briefly by its name: `python train.py env=<game> frames=20000`.

`python benchmarks/games/walk.py [--games asterix,pong] [--jobs 2]`

Runs the command for each game (one short greedy evaluation game of at most 2,000 frames, so that
the walk measures the games' set-up rather than their evaluation) and writes
`benchmarks/games/walk.json`: the command, commit, date, CPU, and per game its exit code, its
seconds and, for a failure, the last line it printed. The slow test tier runs every game's checks
and training env; this is the walk through train.py itself, a quarter of an hour on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

from atari_a3c.bench.runs import REPO, tree_state
from atari_a3c.envs.games import GAMES
from atari_a3c.hardware import bf16_supported, cpu_model

SHORT = ("frames=20000", "callbacks.eval.episodes=1", "env.max_episode_frames=2000", "logger=none")
OUT = REPO / "benchmarks" / "games"


def train(game: str, runs: Path) -> dict:
    command = [sys.executable, "train.py", f"env={game}", *SHORT, f"hydra.run.dir={runs / game}"]
    start = time.perf_counter()
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    row = {"game": game, "returncode": result.returncode}
    row["seconds"] = round(time.perf_counter() - start, 1)
    if result.returncode:
        row["last_line"] = (result.stderr.strip() or result.stdout.strip()).splitlines()[-1]
    print(f"{game}: exit {result.returncode}, {row['seconds']} s", flush=True)
    return row


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python benchmarks/games/walk.py", description=__doc__)
    p.add_argument("--games", default=",".join(GAMES), help="comma-separated (default: all)")
    p.add_argument("--jobs", type=int, default=2, help="games trained at once")
    args = p.parse_args(argv)
    games = args.games.split(",")
    tree, start = tree_state(OUT), time.perf_counter()  # the tree the games train from
    with tempfile.TemporaryDirectory() as runs, ThreadPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(lambda game: train(game, Path(runs)), games))
    failed = [row["game"] for row in rows if row["returncode"]]
    record = {
        "command": f"python train.py env=<game> {' '.join(SHORT)}",
        **tree,
        "date": date.today().isoformat(),
        "cpu": cpu_model(),
        "bf16": bf16_supported(),
        "jobs": args.jobs,
        "minutes": round((time.perf_counter() - start) / 60, 1),
        "games": len(rows),
        "failed": failed,
        "runs": rows,
    }
    OUT.mkdir(exist_ok=True)
    (OUT / "walk.json").write_text(json.dumps(record, indent=2) + "\n")
    print(f"{len(rows) - len(failed)} of {len(rows)} games trained; failed: {failed or 'none'}")


if __name__ == "__main__":
    main()
