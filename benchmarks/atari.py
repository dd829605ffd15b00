"""Any games, one command: train each with a recipe, score it, tabulate, plot.

`python benchmarks/atari.py --games pong,breakout --frames 10000000 --seeds 1 [OVERRIDE ...]`
(`--games atari5`: the five games that predict the 57-game median; `seven`: the default)

The overrides are train.py's (`algo=ppo model=impala_resnet`, `optim.lr=1e-4`); none gives the
default recipe. Per game and seed it runs `python train.py env=<game> seed=<s> frames=<F>` (plus
the overrides), then `python evaluate.py` on the final checkpoint: 30 greedy full games (30 no-op
starts, true scores), and 30 with actions sampled from the policy, the protocol of the SB3 zoo's
published Atari scores; and 30 greedy games of `best.ckpt` (the weights the evaluations during
training scored best). It writes `<out>/<game>-seed<s>.json`: command, overrides, algorithm and
encoder, the commit the training started at (with a `dirty` flag for uncommitted changes to
tracked files, and the commit of each resume), the commit it was scored at, the evaluation
protocol, CPU, wall clock, frames/s, the greedy evaluation curve of training (every 1M frames by
default) and the three final summaries; a record without one of them gets it added.
A game whose record exists is skipped; a run dir holding a `last.ckpt` short of the budget is
resumed. After every game it rewrites `<out>/summary.md` (one table, with human-normalized
scores; the aggregates with their intervals over each named game set the records hold whole,
and the 57-game median Atari-5's five games predict), `<out>/curves.png` and
`<out>/profile.png` (the performance profile); `--summary` rewrites only those, from the
records, offline. `--summary --own <dir>,<dir>` summarizes instead, from those dirs, the records
of each game's own command (`python train.py env=<game>`, with the recipe its game file
chooses). The summary ends with its
games side by side with the default recipe's records (`benchmarks/atari/default`; `--against`
names others, comma-separated).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import functools
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from datetime import date
from pathlib import Path

import matplotlib
import torch
from aggregates import ATARI5, ATARI5_ERROR, aggregate_lines, atari5_median, plot_profile
from omegaconf import OmegaConf
from throughput import compose_config

from atari_a3c.envs.games import GAMES
from atari_a3c.evaluation.scores import RANDOM_AND_HUMAN, human_normalized
from atari_a3c.hardware import bf16_supported, cpu_model

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
KEY = "atari_a3c"
# game: SB3 zoo A2C's published score after 40M frames, the seven games' targets at 10M frames
SB3_A2C_40M = {
    "pong": 19.0,
    "breakout": 280.0,
    "spaceinvaders": 627.0,
    "beamrider": 2890.0,
    "qbert": 3882.0,
    "mspacman": 1672.0,
    "seaquest": 1721.0,
}
# named game sets: the seven the project was first measured on, and Atari-5 (`atari5.csv`)
GAME_SETS = {"seven": list(SB3_A2C_40M), "atari5": list(ATARI5)}
# how a final score played: greedy actions, or actions sampled from the policy
PLAYS = (("greedy", "final"), ("sampled", "final_sampled"))
# algo: {game: its own target at 10M frames}, for algorithms held to another than the peers' score
ALGO_TARGETS = {"dqn": {"pong": 18.0, "breakout": 50.0}}
DEFAULT_RECORDS = REPO / "benchmarks" / "atari"
DEFAULT_RECIPE = DEFAULT_RECORDS / "default"  # the default recipe's current records
WALL_FILE = "bench_wall_seconds.json"
START_FILE = "bench_start.json"  # the commit a run's training started at, and each resume's
# evaluation protocols: how evaluate.py carried the policy's LSTM memory across a lost life
LIFE_RESTARTS_MEMORY = "the LSTM memory restarted at each lost life"  # as training cut episodes
ONE_MEMORY_PER_GAME = "one LSTM memory per game"  # every record scored before LIFE_MEMORY_COMMIT
LIFE_MEMORY_COMMIT = "d65600d"  # evaluate.py restarts the memory at a lost life from here on


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python benchmarks/atari.py", description=__doc__)
    (p.add_argument("--games", default=",".join(SB3_A2C_40M), help="comma-separated game names"))
    p.add_argument("--frames", type=int, default=10_000_000, help="env frames per game")
    p.add_argument("--seeds", default="1", help="comma-separated seeds")
    p.add_argument("--episodes", type=int, default=30, help="greedy games of the final score")
    p.add_argument("--out", type=Path, default=DEFAULT_RECORDS, help="records")
    p.add_argument("--runs", type=Path, default=REPO / "outputs" / "atari-bench", help="run dirs")
    summary = "only rewrite <out>/summary.md and curves.png from the records; nothing trains"
    p.add_argument("--summary", action="store_true", help=summary)
    against = "records the summary compares with, game by game (default: the default recipe's)"
    p.add_argument("--against", default=str(DEFAULT_RECIPE), help=against)
    own = "with --summary: dirs whose records of each game's own command the summary shows"
    p.add_argument("--own", help=own)
    recipe = "train.py overrides for every run (algo=ppo model=impala_resnet); none: the default"
    p.add_argument("overrides", nargs="*", help=recipe)
    args = p.parse_args(argv)
    args.games = [g for name in args.games.split(",") for g in GAME_SETS.get(name, [name])]
    args.seeds = [int(s) for s in args.seeds.split(",")]
    args.against = [Path(d) for d in args.against.split(",")]
    args.own = [Path(d) for d in args.own.split(",")] if args.own else None
    if unknown := [g for g in args.games if g not in GAMES]:
        p.error(
            f"unknown game(s) {', '.join(unknown)} (`python -m atari_a3c.envs.games` lists them)"
        )
    return args


def git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=REPO, text=True, capture_output=True)


def commit() -> str:
    return git("rev-parse", "--short", "HEAD").stdout.strip() or "unknown"


def tree_state(out: Path) -> dict:
    """HEAD's short hash and whether tracked files differ from it, apart from the bench's own
    summary and curves under `out` (untracked files do not count)."""
    spec = ["."]
    if out.resolve().is_relative_to(REPO):
        spec.append(f":(exclude){out.resolve().relative_to(REPO)}")
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", *spec)
    return {"commit": commit(), "dirty": dirty.returncode != 0 or bool(dirty.stdout.strip())}


def note_start(run_dir: Path, frames: int | None, out: Path) -> None:
    """Write down the tree a training starts from (`frames` None) or resumes from at `frames`."""
    path = run_dir / START_FILE
    start = json.loads(path.read_text()) if path.exists() else {}
    if frames is None:
        start = tree_state(out)
    else:  # a run started by hand has no start of its own here: its resumes are still noted
        start.setdefault("resumed", []).append({"frames": frames, **tree_state(out)})
    path.write_text(json.dumps(start, indent=2) + "\n")


def train_command(game: str, seed: int, frames: int, overrides: list[str]) -> list[str]:
    """The user's own command for this game, with the bench's run dir and CSV metrics."""
    return ["python", "train.py", f"env={game}", f"seed={seed}", f"frames={frames}", *overrides]


# exit codes of a child stopped by Ctrl-C or SIGTERM: handled (train.py), or killed by the signal
STOP_CODES = {code for s in (signal.SIGINT, signal.SIGTERM) for code in (128 + s, -s)}


def run(cmd: list[str], log: Path) -> None:
    """Run `cmd` in the repo with output to `log`; exit naming it if it fails or is stopped."""
    with log.open("a") as f:
        proc = subprocess.Popen([sys.executable, *cmd[1:]], cwd=REPO, stdout=f, stderr=f,
                                start_new_session=True)  # fmt: skip
        with signals_passed_to(proc):
            code = proc.wait()
    if code in STOP_CODES:
        sys.exit(f"stopped ({code}): {shlex.join(cmd)}; the same bench command resumes it")
    if code != 0:
        sys.exit(f"failed ({code}): {shlex.join(cmd)}; see {log}")


@contextlib.contextmanager
def signals_passed_to(proc: subprocess.Popen):
    """Ctrl-C and SIGTERM go to `proc` alone, once per signal: train.py saves last.ckpt on the
    first and exits at once on the second (were the bench to stop first, the run would be lost)."""
    signums = (signal.SIGINT, signal.SIGTERM)
    before = {s: signal.signal(s, lambda signum, _: proc.send_signal(signum)) for s in signums}
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def checkpoint_meta(run_dir: Path) -> dict | None:
    path = run_dir / "checkpoints" / "last.ckpt"
    return torch.load(path, weights_only=True)[KEY] if path.exists() else None


def wall_seconds(run_dir: Path) -> float:
    """Training wall clock summed over the bench's invocations; for a run started by hand, the
    time from its config to its last checkpoint."""
    path = run_dir / WALL_FILE
    if path.exists():
        return float(json.loads(path.read_text())["seconds"])
    ckpt = run_dir / "checkpoints" / "last.ckpt"
    return ckpt.stat().st_mtime - (run_dir / ".hydra" / "config.yaml").stat().st_mtime


def train_game(args, game: str, seed: int, run_dir: Path) -> list[str]:
    """Train (or finish training) one game; returns the command a user would type."""
    base = [*args.overrides, "logger=csv"]
    cmd = train_command(game, seed, args.frames, base)
    meta = checkpoint_meta(run_dir)
    if meta is not None and meta["frames"] >= args.frames:
        return cmd
    extra = [f"ckpt_path={run_dir / 'checkpoints' / 'last.ckpt'}"] if meta else []
    print(f"{game} seed {seed}: {'resuming at ' + str(meta['frames']) if meta else 'training'}")
    before = wall_seconds(run_dir) if meta else 0.0
    run_dir.mkdir(parents=True, exist_ok=True)
    note_start(run_dir, meta["frames"] if meta else None, args.out)
    start = time.perf_counter()
    try:
        run([*cmd, f"hydra.run.dir={run_dir}", *extra], run_dir.parent / f"{run_dir.name}.log")
    finally:  # a stopped run's time counts too: the next invocation resumes it
        seconds = before + time.perf_counter() - start
        (run_dir / WALL_FILE).write_text(json.dumps({"seconds": seconds}))
    return cmd


# record key: (checkpoint, greedy, evaluate.py output dir under the run dir)
SCORES = {
    "final": ("last.ckpt", True, "final-eval"),
    "final_sampled": ("last.ckpt", False, "final-eval-sampled"),
    "final_best": ("best.ckpt", True, "final-eval-best"),
}


def final_score(args, run_dir: Path, key: str) -> dict | None:
    """`evaluate.py` summary of `args.episodes` full games for `SCORES[key]`; None when that
    checkpoint does not exist."""
    name, greedy, out_name = SCORES[key]
    out = run_dir / out_name
    if not (out / "results.json").exists():
        ckpt = run_dir / "checkpoints" / name
        if not ckpt.exists():
            return None
        cmd = ["python", "evaluate.py", f"ckpt={ckpt}", f"episodes={args.episodes}",
               f"greedy={str(greedy).lower()}", "seed=1000", f"output_dir={out}"]  # fmt: skip
        run(cmd, run_dir.parent / f"{run_dir.name}.log")
    return json.loads((out / "results.json").read_text())["summary"]


def median_fps(run_dir: Path) -> float:
    rows = []
    for path in sorted(run_dir.glob("csv/version_*/metrics.csv")):
        with path.open() as f:
            rows += [float(r["charts/fps"]) for r in csv.DictReader(f) if r.get("charts/fps")]
    return statistics.median(rows) if rows else float("nan")


def record(args, game: str, seed: int) -> dict:
    run_dir = args.runs / f"{game}-seed{seed}"
    cmd = train_game(args, game, seed, run_dir)
    meta = checkpoint_meta(run_dir)
    config = meta["config"]
    wall = wall_seconds(run_dir)
    start_file = run_dir / START_FILE
    start = json.loads(start_file.read_text()) if start_file.exists() else {}
    return {
        "game": game,
        "env_id": meta["env_id"],
        "algo": config["algo"].get("name"),
        "encoder": config["model"].get("encoder"),
        "overrides": list(args.overrides),
        "seed": seed,
        "command": shlex.join(cmd),
        "train_commit": start.get("commit"),  # None: the run was started outside the bench
        "train_dirty": start.get("dirty"),
        "resumed": start.get("resumed", []),
        "commit": commit(),  # the commit it was scored at
        "eval_protocol": LIFE_RESTARTS_MEMORY
        if config["env"].get("episodic_life")
        else ONE_MEMORY_PER_GAME,
        "date": date.today().isoformat(),
        "cpu": cpu_model(),
        "bf16": bf16_supported(),
        "sticky_actions": meta["config"]["env"]["sticky_action_prob"],
        "frames": meta["frames"],
        "wall_clock_minutes": wall / 60,
        "frames_per_second": meta["frames"] / wall,
        "median_logged_fps": median_fps(run_dir),
        "eval_curve": [{"frames": f, "mean": m} for f, m in meta["eval_history"]],
        **{key: final_score(args, run_dir, key) for key in SCORES},
    }


def missing_scores(result: dict) -> list[str]:
    """The `SCORES` keys a record lacks (one made before those scores were kept)."""
    return [key for key in SCORES if key not in result]


def norm_cell(game: str, score: float) -> str:
    """The human-normalized score as a table cell; `-` for a game outside the 57."""
    value = human_normalized(game, score)
    return "-" if value is None else f"{value:.3f}"


def load_records(out: Path) -> list[dict]:
    """The records under `out`, by game, then by seed in numeric order."""
    records = [json.loads(p.read_text()) for p in out.glob("*-seed*.json")]
    return sorted(records, key=lambda r: (r["game"], r["seed"]))


def summary_table(records: list[dict]) -> str:
    lines = [
        "| game | seed | greedy mean +- std (30 games) | median | sampled mean +- std "
        "| best.ckpt greedy | target | human-norm. | minutes | frames/s | commit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in records:
        final = r["final"]
        lines.append(
            f"| {r['game']} | {r['seed']} | {final['mean']:.1f} +- {final['std']:.1f} "
            f"| {final['median']:.1f} | {cell(r.get('final_sampled'))} "
            f"| {cell(r.get('final_best'))} "
            f"| {goal_cell(r)} "
            f"| {norm_cell(r['game'], final['mean'])} | {r['wall_clock_minutes']:.0f} "
            f"| {r['frames_per_second']:,.0f} | {commit_cell(r)} |"
        )
    if records:
        lines.append("\n" + per_game_table(records))
    if scores := list(game_means(records).values()):
        lines.append(f"\nMedian human-normalized score: {statistics.median(scores):.3f} "
                     f"over {len(scores)} games (each the mean of its seeds).")  # fmt: skip
    if sampled := list(game_means(records, "final_sampled").values()):
        lines.append(f"Of sampled play (how the SB3 zoo scores its Atari agents): "
                     f"{statistics.median(sampled):.3f} over {len(sampled)} games.")  # fmt: skip
    lines += aggregate_sections(records)
    if records:
        lines.append("\n" + "\n".join(f"- {note}" for note in provenance(records)))
    return "\n".join(lines)


def aggregate_sections(records: list[dict]) -> list[str]:
    """The aggregates with their intervals over each named game set the records hold whole (over
    all their games where they hold none), and for Atari-5 the 57-game median it predicts from
    greedy and from sampled play."""
    if not (seeds := seed_scores(records)):
        return []
    whole = {
        f"`--games {name}`": games for name, games in GAME_SETS.items() if set(games) <= set(seeds)
    }
    lines = []
    for heading, games in (whole or {"All games": list(seeds)}).items():
        lines += ["", f"{heading} ({', '.join(games)}):"]
        lines += aggregate_lines({g: seeds[g] for g in games})
        if games == GAME_SETS["atari5"]:
            predicted = {play: atari5_median(game_means(records, key)) for play, key in PLAYS}
            shown = ", ".join(f"{v:.3f} {play}" for play, v in predicted.items() if v is not None)
            lines.append(f"- predicted 57-game median ({ATARI5_ERROR}): {shown}")
    return lines


def overrides_of(record: dict) -> list[str]:
    """The record's train.py overrides; older records hold them only in their command."""
    if "overrides" in record:
        return record["overrides"]
    words = shlex.split(record.get("command", ""))[5:]  # after python train.py env= seed= frames=
    return [w for w in words if w != "logger=csv"]


def protocol_of(record: dict) -> str:
    """The record's evaluation protocol; a record older than the field used the newer one only if
    it was scored at a commit that descends from `LIFE_MEMORY_COMMIT`."""
    if "eval_protocol" in record:
        return record["eval_protocol"]
    scored = record.get("commit", "")
    later = bool(scored) and git("merge-base", "--is-ancestor", LIFE_MEMORY_COMMIT, scored)
    return LIFE_RESTARTS_MEMORY if later and later.returncode == 0 else ONE_MEMORY_PER_GAME


def commit_cell(record: dict) -> str:
    """The commit training started at (+dirty: with uncommitted changes), the commits it resumed
    and was scored at where they differ; an older record's only commit is the scoring one."""
    start = record.get("train_commit")
    if not start:
        return f"{record['commit']} (scored)"
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
        lines.append(f"{unknown} of {len(records)} records were made before records named the "
                     "commit their training started at: each names the commit it was scored at, "
                     "and its training may have started at an earlier one.")  # fmt: skip
    if dirty := sum(bool(r.get("train_dirty")) for r in records):
        lines.append(f"{dirty} of {len(records)} records trained from a tree with uncommitted "
                     "changes to tracked files (+dirty).")  # fmt: skip
    return lines


def per_game_table(records: list[dict]) -> str:
    """One row per game: its seeds' mean greedy and sampled scores and how many meet the target."""
    lines = [
        "| game | seeds | greedy, mean of seeds | seeds >= target | sampled, mean of seeds "
        "| target | human-norm. (greedy) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for game, rows in by_game(records).items():
        greedy = statistics.fmean(r["final"]["mean"] for r in rows)
        sampled = [r["final_sampled"]["mean"] for r in rows if r.get("final_sampled")]
        goal = target(rows[0])
        met = f"{sum(r['final']['mean'] >= goal[0] for r in rows)} of {len(rows)}" if goal else "-"
        lines.append(
            f"| {game} | {len(rows)} | {greedy:,.1f} | {met} "
            f"| {f'{statistics.fmean(sampled):,.1f}' if sampled else '-'} | {goal_cell(rows[0])} "
            f"| {norm_cell(game, greedy)} |"
        )
    return "\n".join(lines)


def versus_table(records: list[dict], baseline: list[dict], name: str) -> str:
    """This recipe's games beside `baseline`'s (greedy, mean of seeds), and the median
    human-normalized score of each over the games both have."""
    lines = [
        f"Side by side with `{name}` (greedy, mean of seeds):\n",
        "| game | seeds | greedy | human-norm. | seeds there | greedy there | human-norm. there |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    theirs = by_game(baseline)
    ours, both = [], []
    for game, rows in by_game(records).items():
        greedy = statistics.fmean(r["final"]["mean"] for r in rows)
        row = f"| {game} | {len(rows)} | {greedy:,.1f} | {norm_cell(game, greedy)} "
        if game in theirs:
            other = statistics.fmean(r["final"]["mean"] for r in theirs[game])
            row += f"| {len(theirs[game])} | {other:,.1f} | {norm_cell(game, other)} |"
            if game in RANDOM_AND_HUMAN:
                ours.append(human_normalized(game, greedy))
                both.append(human_normalized(game, other))
        else:
            row += "| 0 | - | - |"
        lines.append(row)
    if both:
        lines.append(f"\nMedian human-normalized score over the {len(both)} games both have: "
                     f"{statistics.median(ours):.3f} here, {statistics.median(both):.3f} "
                     f"there.")  # fmt: skip
    return "\n".join(lines)


def by_game(records: list[dict]) -> dict[str, list[dict]]:
    groups: dict[str, list[dict]] = {}
    for r in records:
        groups.setdefault(r["game"], []).append(r)
    return groups


def target(record: dict) -> tuple[float, str] | None:
    """The record's target at 10M frames and its name: its algorithm's own, else SB3 zoo A2C's;
    None for a game that has neither."""
    algo, game = record.get("algo", "impala"), record["game"]
    if game in ALGO_TARGETS.get(algo, {}):
        return ALGO_TARGETS[algo][game], f"{algo} target"
    return (SB3_A2C_40M[game], "SB3 A2C at 40M") if game in SB3_A2C_40M else None


def goal_cell(record: dict) -> str:
    goal = target(record)
    return f"{goal[0]:g}" if goal else "-"


def cell(summary: dict | None) -> str:
    return f"{summary['mean']:.1f} +- {summary['std']:.1f}" if summary else "-"


def game_means(records: list[dict], key: str = "final") -> dict[str, float]:
    """game -> its human-normalized score (`key`: greedy `final` or `final_sampled`), averaged
    over its seeds that have it, for the games of the 57."""
    scores = {
        game: [human_normalized(game, r[key]["mean"]) for r in rows if r.get(key)]
        for game, rows in by_game(records).items()
        if game in RANDOM_AND_HUMAN
    }
    return {game: statistics.fmean(s) for game, s in scores.items() if s}


def seed_scores(records: list[dict]) -> dict[str, list[float]]:
    """game -> its seeds' greedy human-normalized scores, for the games of the 57."""
    return {
        game: [human_normalized(game, r["final"]["mean"]) for r in rows]
        for game, rows in by_game(records).items()
        if game in RANDOM_AND_HUMAN
    }


def plot(records: list[dict], path: Path) -> None:
    """Score against frames, one panel per game, with random, human and the peers' target."""
    games = sorted({r["game"] for r in records})
    if not games:
        return
    fig, axes = plt.subplots(1, len(games), figsize=(4 * len(games), 3.5), squeeze=False)
    for ax, game in zip(axes[0], games, strict=True):
        for r in (r for r in records if r["game"] == game):
            points = [(p["frames"], p["mean"]) for p in r["eval_curve"]]
            points.append((r["frames"], r["final"]["mean"]))
            xs, ys = zip(*sorted(points), strict=True)
            ax.plot([x / 1e6 for x in xs], ys, "o-", label=f"seed {r['seed']}")
        if goal := target(next(r for r in records if r["game"] == game)):
            ax.axhline(goal[0], color="tab:green", ls="--", label=goal[1])
        if game in RANDOM_AND_HUMAN:
            ax.axhline(RANDOM_AND_HUMAN[game][0], color="gray", ls=":", label="random")
        ax.set_title(game)
        ax.set_xlabel("env frames (M)")
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("greedy game score")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def recipe_of(overrides: tuple[str, ...]) -> dict:
    """What a training command trains with: its composed config but for seed and budget."""
    cfg = OmegaConf.to_container(compose_config(list(overrides)), resolve=True)
    return {k: v for k, v in cfg.items() if k not in ("seed", "frames", "logger")}


def own_command_records(games: list[str], sources: list[Path]) -> list[dict]:
    """The records, among `sources`, of each game's own command (`python train.py env=<game>`):
    those whose algorithm and overrides compose, on that game, to what the command trains with
    today."""
    recipes = functools.cache(recipe_of)
    own = []
    for record in (r for source in sources for r in load_records(source)):
        game = record["game"]
        trained = (f"env={game}", f"algo={record.get('algo', 'impala')}", *overrides_of(record))
        if game in games and recipes(trained) == recipes((f"env={game}",)):
            own.append(record)
    return sorted(own, key=lambda r: (r["game"], r["seed"]))


def write_summary(out: Path, against: list[Path], records: list[dict] | None = None) -> None:
    """`<out>/summary.md` of `records` (default: those under `out`), with the records of each
    `against` dir side by side (unless they are these), `<out>/curves.png` and `profile.png`."""
    records = load_records(out) if records is None else records
    text = summary_table(records)
    for baseline_dir in against:
        if out.resolve() != baseline_dir.resolve() and (baseline := load_records(baseline_dir)):
            name = os.path.relpath(baseline_dir.resolve(), REPO)
            text += "\n\n" + versus_table(records, baseline, name)
    (out / "summary.md").write_text(text + "\n")
    plot(records, out / "curves.png")
    if seeds := seed_scores(records):
        plot_profile(seeds, out / "profile.png")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.summary:
        records = own_command_records(args.games, args.own) if args.own else None
        if not (records or any(args.out.glob("*-seed*.json"))):
            sys.exit(f"no records under {args.out}")
        args.out.mkdir(parents=True, exist_ok=True)
        write_summary(args.out, args.against, records)
        print((args.out / "summary.md").read_text())
        return
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"cpu: {cpu_model()}; bf16: {bf16_supported()}")
    for game in args.games:
        for seed in args.seeds:
            path = args.out / f"{game}-seed{seed}.json"
            if not path.exists():
                result = record(args, game, seed)
            elif missing := missing_scores(result := json.loads(path.read_text())):
                result |= {k: final_score(args, args.runs / path.stem, k) for k in missing}
            else:
                print(f"{game} seed {seed}: record exists, skipped")
                continue
            path.write_text(json.dumps(result, indent=2) + "\n")
            write_summary(args.out, args.against)
    write_summary(args.out, args.against)
    print((args.out / "summary.md").read_text())


if __name__ == "__main__":
    main()
