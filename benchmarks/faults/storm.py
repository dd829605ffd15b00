"""Kill storms on the user's own Atari command, on a busy machine.

`python benchmarks/faults/storm.py --storms 10 --kills 10 --seed 0 --out <record.json> [--load]
[OVERRIDE ...]` runs, per storm, `python train.py frames=100000000 logger=csv
actors.max_failures=100` (Pong) in a session of its own and SIGKILLs a random descendant of it
(the fork server, its resource tracker, an actor or the evaluation process), seeded, 2-6 s apart.
Then train.py must be alive with its frames (csv metrics) rising, a SIGTERM to its group must
end it within 15 s with no process left, and `last.ckpt` must load. `--load` starts a second
CPU-bound `train.py` (Breakout) beside the storms; without it the load present is recorded (load
average, other processes' CPU). Writes one JSON record; exits 1 if a storm fails.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import torch

from atari_a3c.bench.runs import REPO, tree_state

COMMAND = ("frames=100000000", "logger=csv", "actors.max_failures=100")
LOAD_COMMAND = ("env=breakout", "frames=100000000", "logger=none")
START_SECONDS = 300  # the first metrics must come within this (imports, envs, first updates)
HANG_SECONDS = 120  # frames not rising for this long after the last kill: a hang
EXIT_SECONDS = 15  # a group SIGTERM must end train.py within this
BUDGET_STOP = " times in "  # the one line of an actor that spent actors.max_failures
STARTED: list[subprocess.Popen] = []  # stopped at the end, whatever happens


def start(overrides: list[str], run_dir: Path) -> subprocess.Popen:
    """train.py in a new session (its pid is its group's), stderr in the run's parent dir."""
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "train.py", *overrides, f"hydra.run.dir={run_dir}"]
    with (run_dir.parent / f"{run_dir.name}.stderr").open("w") as log:
        STARTED.append(subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=log,
                                        start_new_session=True))  # fmt: skip
    return STARTED[-1]


def frames_reached(run_dir: Path) -> int:
    """The most frames the run's csv metrics show (0 before the first write)."""
    path = run_dir / "csv" / "version_0" / "metrics.csv"
    if not path.exists():
        return 0
    with path.open() as f:
        values = [row.get("charts/frames") or "" for row in csv.DictReader(f)]
    return int(max((float(v) for v in values if v.replace(".", "", 1).isdigit()), default=0))


def wait_frames(proc: subprocess.Popen, run_dir: Path, above: int, seconds: float) -> int | None:
    """Frames once they pass `above`; None if train.py exits or they do not within `seconds`."""
    deadline = time.time() + seconds
    while time.time() < deadline and proc.poll() is None:
        if (frames := frames_reached(run_dir)) > above:
            return frames
        time.sleep(0.5)
    return None


def kind_of(process: psutil.Process, root: int) -> str:
    if process.ppid() != root:
        return "forked child"  # an actor or the evaluation process
    return "resource tracker" if "resource_tracker" in str(process.cmdline()) else "fork server"


def kill_one(proc: subprocess.Popen, rng: random.Random, began: float) -> dict:
    """SIGKILL a descendant of train.py picked by `rng` (again if it exited first): what, when."""
    kind = "none (no descendant)"
    for _ in range(10):
        try:
            tree = sorted(psutil.Process(proc.pid).children(recursive=True), key=lambda p: p.pid)
            target = rng.choice(tree) if tree else None
            if target:
                kind = kind_of(target, proc.pid)
                target.kill()
            break
        except psutil.NoSuchProcess:
            kind = "gone before the kill"
            time.sleep(0.1)
    return {"at_s": round(time.time() - began, 1), "kind": kind}


def reason(stderr: Path) -> str:
    """The one line a run ended with: its `error:` line, else stderr's last meaningful line."""
    lines = [ln.strip() for ln in stderr.read_text(errors="replace").splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("error:")]
    lines = [ln for ln in lines if not ln.startswith("Set the environment variable HYDRA")]
    return (errors or lines or ["(no stderr)"])[-1]


def stop(proc: subprocess.Popen) -> tuple[float | None, int | None, int]:
    """SIGTERM train.py's group: seconds to exit (None: over 60 s), exit code, children left."""
    try:
        tree = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        tree = []
    begin = time.time()
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=60)
        seconds = round(time.time() - begin, 2)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        seconds = None
    _, alive = psutil.wait_procs(tree, timeout=5)
    for process in alive:
        process.kill()
    return seconds, proc.returncode, len(alive)


def checkpoint_frames(run_dir: Path) -> int | None:
    """Frames in the run's last.ckpt, loaded as the docs say; None if missing or unloadable."""
    try:
        ckpt = torch.load(run_dir / "checkpoints" / "last.ckpt", map_location="cpu",
                          weights_only=True)  # fmt: skip
        return int(ckpt["atari_a3c"]["frames"])
    except Exception:
        return None


def other_load() -> dict:
    """The load average and the other processes' CPU (% of one core, over 2 s) before a storm."""
    list(psutil.process_iter(["cpu_percent"]))  # psutil's first call sets each process's mark
    time.sleep(2)  # process_iter keeps its Process objects: the second call measures these 2 s
    procs = [p for p in psutil.process_iter(["cpu_percent", "cmdline"]) if p.pid != os.getpid()]
    busy = [(p.info["cpu_percent"] or 0.0, " ".join(p.info["cmdline"] or [])[:100]) for p in procs]
    top = sorted((b for b in busy if b[0] >= 5), reverse=True)[:4]
    return {"loadavg_1m": os.getloadavg()[0], "others_cpu_percent": round(sum(c for c, _ in busy)),
            "top_others": [{"cpu_percent": round(c), "command": a} for c, a in top]}  # fmt: skip


def storm(number: int, seed: int, args, tmp: Path) -> dict:
    """One storm on a fresh run; its record."""
    rng, run_dir, load = random.Random(seed), tmp / f"storm-{number}", other_load()
    began, proc = time.time(), start([*COMMAND, *args.overrides], run_dir)
    record = {"storm": number, "seed": seed, "load": load, "kills": [], "exit": None}
    record["hang"] = wait_frames(proc, run_dir, 0, START_SECONDS) is None and proc.poll() is None
    for _ in range(args.kills if proc.poll() is None and not record["hang"] else 0):
        time.sleep(rng.uniform(args.min_delay, args.max_delay))
        if proc.poll() is not None:
            break
        record["kills"].append(kill_one(proc, rng, began))
    frames_at_last_kill, after = frames_reached(run_dir), None
    if proc.poll() is None and not record["hang"]:
        after = wait_frames(proc, run_dir, frames_at_last_kill, HANG_SECONDS)
        record["hang"] = after is None and proc.poll() is None
    stderr, reached = run_dir.parent / f"{run_dir.name}.stderr", frames_reached(run_dir)
    if proc.poll() is None:
        record["sigterm_exit_s"], record["exit_code"], record["left_over"] = stop(proc)
        record["hang"] |= record["sigterm_exit_s"] is None
    else:
        line = reason(stderr)
        record["exit"] = {"code": proc.returncode, "after_kills": len(record["kills"]),
                          "reason": line, "budget": BUDGET_STOP in line}  # fmt: skip
    ckpt = checkpoint_frames(run_dir)
    record |= {"frames_at_last_kill": frames_at_last_kill, "frames_after": after,
               "frames_reached": reached, "last_ckpt_frames": ckpt,
               "frames_lost": None if ckpt is None else max(0, reached - ckpt)}  # fmt: skip
    seconds = record.get("sigterm_exit_s")
    record["still_training"] = after is not None and record["exit"] is None
    record["ok"] = (record["still_training"] and seconds is not None and seconds <= EXIT_SECONDS
                    and record["left_over"] == 0 and ckpt is not None)  # fmt: skip
    if not record["ok"]:  # what train.py said, for the cause
        record["stderr_tail"] = stderr.read_text(errors="replace").splitlines()[-25:]
    return record


def summary(storms: list[dict]) -> dict:
    kinds: dict[str, int] = {}
    for kill in (k for s in storms for k in s["kills"]):
        kinds[kill["kind"]] = kinds.get(kill["kind"], 0) + 1
    exits = [s["exit"] for s in storms if s["exit"]]
    stops = [s["sigterm_exit_s"] for s in storms if s.get("sigterm_exit_s") is not None]
    lost = [s["frames_lost"] for s in storms if s["frames_lost"] is not None]
    return {"storms": len(storms), "ok": sum(s["ok"] for s in storms),
            "still_training": sum(s["still_training"] for s in storms),
            "kills": sum(kinds.values()), "kills_by_kind": kinds,
            "hangs": sum(s["hang"] for s in storms),
            "exits": len(exits), "exits_not_budget": sum(not e["budget"] for e in exits),
            "exit_reasons": sorted({e["reason"] for e in exits}),
            "sigterm_exit_s_max": max(stops, default=None),
            "unloadable_last_ckpt": sum(s["last_ckpt_frames"] is None for s in storms),
            "frames_lost_max": max(lost, default=None)}  # fmt: skip


def cpu_model() -> str:
    lines = Path("/proc/cpuinfo").read_text().splitlines()
    return next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), "?")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python benchmarks/faults/storm.py", description=__doc__)
    p.add_argument("--storms", type=int, default=10, help="storms, each on a fresh run")
    p.add_argument("--kills", type=int, default=10, help="SIGKILLs per storm")
    p.add_argument("--seed", type=int, default=0, help="storm i is seeded with seed*1000+i")
    p.add_argument("--min-delay", type=float, default=2.0, help="seconds between kills, at least")
    p.add_argument("--max-delay", type=float, default=6.0, help="seconds between kills, at most")
    p.add_argument("--load", action="store_true", help="start a second train.py beside them")
    p.add_argument("--out", type=Path, required=True, help="the JSON record to write")
    p.add_argument("overrides", nargs="*", help="Hydra overrides added to train.py's command")
    args = p.parse_args(argv)
    began, storms = time.time(), []
    with tempfile.TemporaryDirectory(prefix="storm-") as tmp:
        try:
            if args.load:
                start(list(LOAD_COMMAND), Path(tmp) / "load")
                time.sleep(30)  # past its imports: training, CPU-bound
            for number in range(args.storms):
                storms.append(storm(number, args.seed * 1000 + number, args, Path(tmp)))
                shown = ("ok", "hang", "exit", "sigterm_exit_s", "frames_reached", "frames_lost")
                print(f"storm {number}:", {k: storms[-1].get(k) for k in shown}, flush=True)
        finally:
            for proc in STARTED:  # the load, and a storm's run if this was stopped mid-storm
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
                    proc.wait()
    record = {
        "question": "Does the default Atari command survive seeded SIGKILL storms under load?",
        "command": shlex.join(["python", "benchmarks/faults/storm.py", *(argv or sys.argv[1:])]),
        "train_command": shlex.join(["python", "train.py", *COMMAND, *args.overrides]),
        **tree_state(args.out),
        "cpu": cpu_model(), "cores": os.cpu_count(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(began)),
        "minutes": round((time.time() - began) / 60, 1),
        "load_source": "own second train.py: " + shlex.join(["python", "train.py", *LOAD_COMMAND])
        if args.load else "present on the machine (see each storm's load)",
        "summary": summary(storms), "storms": storms,
    }  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps(record["summary"], indent=1))
    sys.exit(0 if record["summary"]["ok"] == len(storms) else 1)


if __name__ == "__main__":
    main()
