"""Any games, one command: train each with a recipe, score it, tabulate, plot; or summarize
records and a sweep's own runs the same way.

`python -m atari_a3c.bench --games pong,breakout --frames 10000000 --seeds 1 [OVERRIDE ...]`
(`--games atari5`: the five games that predict the 57-game median; `seven`: the default;
`held-out`: Asterix and Enduro, outside both)

The overrides are train.py's (`algo=ppo model=impala_resnet`, `optim.lr=1e-4`); none gives the
default recipe. Per game and seed it runs `python train.py env=<game> seed=<s> frames=<F>` (plus
the overrides), then `python evaluate.py` on the final checkpoint: 30 greedy full games (30 no-op
starts, true scores), 30 with actions sampled from the policy (the peers' protocol), and 30
greedy games of `best.ckpt`. It writes `<out>/<game>-seed<s>.json`: the command, the recipe, the
commits it trained, resumed and was scored at (`dirty`: with uncommitted changes to tracked
files), the evaluation protocol, CPU, wall clock, frames/s, the evaluation curve of training and
the three final summaries; a record without one of them gets it added. A game whose record
exists is skipped; a run dir holding a `last.ckpt` short of the budget is resumed. After every
game it rewrites `<out>/summary.md` (the per-record and per-game tables, human-normalized; the
aggregates with intervals over each named game set the records hold whole; the 57-game median
Atari-5 predicts, with its interval), `<out>/curves.png` and `<out>/profile.png`.

`--summary` rewrites only those, offline. `--summary PATH ...` summarizes the PATHs instead: records
dirs, train.py run dirs, Hydra multirun dirs (their jobs) or evaluate.py's `results.json`; each
run's checkpoints are scored as the records are (or its stored evaluations of them read; one of
an earlier checkpoint is played again), the evaluations written under `--out` (default: a new
temp dir); a run without a checkpoint is named and skipped. `--summary --own <dir>,<dir>`
summarizes the records of each game's own command (`python train.py env=<game>`). The summary
ends with its games side by side with the default recipe's records (`benchmarks/atari/default`;
`--against` names others, comma-separated).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
from pathlib import Path

from atari_a3c.bench.records import missing_scores, record_of
from atari_a3c.bench.runs import REPO, final_score, train_game
from atari_a3c.bench.scores import GAME_SETS
from atari_a3c.envs.games import GAMES
from atari_a3c.hardware import bf16_supported, cpu_model

DEFAULT_RECORDS = REPO / "benchmarks" / "atari"
DEFAULT_RECIPE = DEFAULT_RECORDS / "default"  # the default recipe's current records
INSTALL = "the bench's summary needs rliable: pip install -e '.[bench]'"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m atari_a3c.bench", description=__doc__)
    p.add_argument("--games", default="seven", help="comma-separated game names or sets")
    p.add_argument("--frames", type=int, default=10_000_000, help="env frames per game")
    p.add_argument("--seeds", default="1", help="comma-separated seeds")
    p.add_argument("--episodes", type=int, default=30, help="games of each final score")
    p.add_argument("--out", type=Path, help=f"records and summary (default: {DEFAULT_RECORDS})")
    p.add_argument("--runs", type=Path, default=REPO / "outputs" / "atari-bench", help="run dirs")
    summary = "only rewrite the summary from the records (or of PATHs); nothing trains"
    p.add_argument("--summary", action="store_true", help=summary)
    against = "records the summary compares with, game by game (default: the default recipe's)"
    p.add_argument("--against", default=str(DEFAULT_RECIPE), help=against)
    own = "with --summary: dirs whose records of each game's own command the summary shows"
    p.add_argument("--own", help=own)
    recipe = "train.py overrides for every run (algo=ppo model=impala_resnet); none: the default"
    paths = "with --summary: records dirs, run dirs, multirun dirs or results.json to summarize"
    p.add_argument("overrides", nargs="*", metavar="OVERRIDE|PATH", help=f"{recipe}; {paths}")
    args = p.parse_args(argv)
    args.paths = [Path(s) for s in args.overrides] if args.summary else []
    args.games = [g for name in args.games.split(",") for g in GAME_SETS.get(name, [name])]
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.against = [Path(d) for d in args.against.split(",")]
    args.own = [Path(d) for d in args.own.split(",")] if args.own else None
    if unknown := [g for g in args.games if g not in GAMES]:
        p.error(
            f"unknown game(s) {', '.join(unknown)} (`python -m atari_a3c.envs.games` lists them)"
        )
    if missing := [str(s) for s in args.paths if not s.exists()]:
        p.error(f"no such file or dir: {', '.join(missing)}")
    if args.out is None:  # a sweep's evaluations go to a new dir, never into its run dirs
        args.out = Path(tempfile.mkdtemp(prefix="bench-")) if args.paths else DEFAULT_RECORDS
    return args


def summarize(args) -> None:
    """Rewrite and print the summary of the records under `--out`, or of the PATHs, or of
    `--own`'s records."""
    from atari_a3c.bench.recipes import own_command_records
    from atari_a3c.bench.sources import gather
    from atari_a3c.bench.summary import write_summary

    records = None
    if args.paths:
        records = gather(args.paths, args.episodes, args.out / "evaluations")
        print(f"evaluations and summary: {args.out}")
    elif args.own:
        records = own_command_records(args.games, args.own)
    if records is None and not any(args.out.glob("*-seed*.json")):
        sys.exit(f"no records under {args.out}")
    args.out.mkdir(parents=True, exist_ok=True)
    print(write_summary(args.out, args.against, records))


def bench(args) -> None:
    """Train, score and record each game and seed that has no record yet."""
    from atari_a3c.bench.summary import write_summary

    args.out.mkdir(parents=True, exist_ok=True)
    print(f"cpu: {cpu_model()}; bf16: {bf16_supported()}")
    for game in args.games:
        for seed in args.seeds:
            path, run_dir = args.out / f"{game}-seed{seed}.json", args.runs / f"{game}-seed{seed}"
            if not path.exists():
                cmd = train_game(args, game, seed, run_dir)
                result = record_of(run_dir, cmd, args.overrides, args.episodes, None)
            elif missing := missing_scores(result := json.loads(path.read_text())):
                result |= {k: final_score(run_dir, k, args.episodes) for k in missing}
            else:
                print(f"{game} seed {seed}: record exists, skipped")
                continue
            path.write_text(json.dumps(result, indent=2) + "\n")
            write_summary(args.out, args.against)
    print(write_summary(args.out, args.against))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if importlib.util.find_spec("rliable") is None:
        print(INSTALL, file=sys.stderr)
        sys.exit(2)
    if args.summary:
        summarize(args)
    else:
        bench(args)


if __name__ == "__main__":
    main()
