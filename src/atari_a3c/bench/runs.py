"""Runs: train.py trained (or resumed) per game and seed, evaluate.py scoring its checkpoints,
the stop signals passed to them, and the commit each run started and resumed at."""

from __future__ import annotations

import contextlib
import csv
import json
import shlex
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parents[3]  # the checkout: train.py, evaluate.py, conf/
KEY = "atari_a3c"
WALL_FILE = "bench_wall_seconds.json"
START_FILE = "bench_start.json"  # the commit a run's training started at, and each resume's
# record key: (checkpoint, greedy, evaluate.py output dir under the run's evaluations)
SCORES = {
    "final": ("last.ckpt", True, "final-eval"),
    "final_sampled": ("last.ckpt", False, "final-eval-sampled"),
    "final_best": ("best.ckpt", True, "final-eval-best"),
}
EVAL_SEED = 1000  # the first game's seed of every final score
# exit codes of a child stopped by Ctrl-C or SIGTERM: handled (train.py), or killed by the signal
STOP_CODES = {code for s in (signal.SIGINT, signal.SIGTERM) for code in (128 + s, -s)}


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
    """The user's own command for this game, with the bench's overrides."""
    return ["python", "train.py", f"env={game}", f"seed={seed}", f"frames={frames}", *overrides]


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


def checkpoint_meta(run_dir: Path, name: str = "last.ckpt") -> dict | None:
    """The run's checkpoint `name`'s metadata (frames, config, evaluations); None without one."""
    path = run_dir / "checkpoints" / name
    return torch.load(path, weights_only=True)[KEY] if path.exists() else None


def wall_seconds(run_dir: Path) -> float:
    """Training wall clock summed over the bench's invocations; for a run started by hand, the
    time from its config to its last checkpoint."""
    path = run_dir / WALL_FILE
    if path.exists():
        return float(json.loads(path.read_text())["seconds"])
    ckpt = run_dir / "checkpoints" / "last.ckpt"
    return ckpt.stat().st_mtime - (run_dir / ".hydra" / "config.yaml").stat().st_mtime


def median_fps(run_dir: Path) -> float:
    """The median of the run's logged `charts/fps` (CSV logger); NaN where it logged none."""
    rows = []
    for path in sorted(run_dir.glob("csv/version_*/metrics.csv")):
        with path.open() as f:
            rows += [float(r["charts/fps"]) for r in csv.DictReader(f) if r.get("charts/fps")]
    return statistics.median(rows) if rows else float("nan")


def train_game(args, game: str, seed: int, run_dir: Path) -> list[str]:
    """Train (or finish training) one game; returns the command a user would type."""
    cmd = train_command(game, seed, args.frames, [*args.overrides, "logger=csv"])
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


def stored_score(out: Path, frames: int | None) -> dict | None:
    """evaluate.py's summary in `out` if it scored the checkpoint at `frames` (None: there is no
    checkpoint to hold it to); None where there is none, or it scored an earlier checkpoint."""
    path = out / "results.json"
    if not path.exists():
        return None
    report = json.loads(path.read_text())
    return report["summary"] if frames in (None, report.get("frames_trained")) else None


def final_score(run_dir: Path, key: str, episodes: int, evals: Path | None = None) -> dict | None:
    """`evaluate.py`'s summary of `episodes` full games for `SCORES[key]`: the one the run dir
    holds, else one under `evals` (default: the run dir), played there if need be (and played
    again where the run trained on since); None when that checkpoint is missing."""
    name, greedy, out_name = SCORES[key]
    out = (evals or run_dir) / out_name
    meta = checkpoint_meta(run_dir, name)
    for stored in (run_dir / out_name, out):
        if (summary := stored_score(stored, meta and meta["frames"])) is not None:
            return summary
    if meta is None:
        return None
    ckpt = run_dir / "checkpoints" / name
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["python", "evaluate.py", f"ckpt={ckpt.resolve()}", f"episodes={episodes}",
           f"greedy={str(greedy).lower()}", f"seed={EVAL_SEED}",
           f"output_dir={out.resolve()}"]  # fmt: skip
    run(cmd, (evals or run_dir.parent) / f"{run_dir.name}.log")
    return json.loads((out / "results.json").read_text())["summary"]
