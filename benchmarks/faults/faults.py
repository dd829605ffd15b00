"""Fault injection: SIGKILL a random process of a real training run at random moments.

`python benchmarks/faults/faults.py --kills 50 --seed 0 [OVERRIDE ...]` trains CartPole (by default)
to a fixed budget while killing, `--kills` times, one process of the run's tree picked at random
(the learner, an actor or the evaluation process) after a random delay. A killed actor or
evaluation process must be replaced while training goes on; a killed learner must leave a
loadable `last.ckpt`, no child process and no new /dev/shm entry, and the run is resumed from
it. At the end the run must reach its budget. Prints one line per kill and a summary; exits 1
on any hang, unloadable checkpoint, leftover process or unfinished budget.
"""

from __future__ import annotations

import argparse
import os
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import torch

from atari_a3c.bench.processes import kill_tree
from atari_a3c.bench.runs import REPO

FRAMES_PER_KILL = 25_000  # the budget leaves this much CartPole training per kill
RUN = (
    "experiment=cartpole",
    "logger=csv",
    "callbacks.checkpoint_every_frames=3200",
    "callbacks.eval.every_frames=40000",
    "callbacks.eval.episodes=5",
    "actors.max_failures=1000",  # every kill of an actor counts as a failure of that actor
)
HANG_SECONDS = 120  # no new checkpoint for this long while running counts as a hang
CHILD_EXIT_SECONDS = 15


def shm_entries() -> set[str]:
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def launch(run_dir: Path, overrides: list[str]) -> subprocess.Popen:
    last = run_dir / "checkpoints" / "last.ckpt"
    resume = [f"ckpt_path={last}"] if last.exists() else [f"hydra.run.dir={run_dir}"]
    cmd = [sys.executable, str(REPO / "train.py"), *RUN, *overrides, *resume]
    with (run_dir.parent / "stderr.log").open("a") as log:  # a pipe nobody reads would fill up
        return subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=log)


def wait_for_checkpoint(run_dir: Path, proc: subprocess.Popen, after: float) -> bool:
    """Until `last.ckpt` is newer than `after` (training runs); False on a hang or an exit."""
    last = run_dir / "checkpoints" / "last.ckpt"
    deadline = time.time() + HANG_SECONDS
    while time.time() < deadline and proc.poll() is None:
        if last.exists() and last.stat().st_mtime > after:
            return True
        time.sleep(0.2)
    return False


def loadable(path: Path) -> bool:
    try:
        torch.load(path, map_location="cpu", weights_only=True)
        return True
    except Exception:
        return False


def frames_of(path: Path) -> int:
    return int(torch.load(path, map_location="cpu", weights_only=True)["atari_a3c"]["frames"])


def kill_learner(proc: subprocess.Popen, run_dir: Path, shm_before: set[str]) -> list[str]:
    """SIGKILL the learner; the problems found afterwards."""
    root = psutil.Process(proc.pid)
    children = root.children(recursive=True)
    proc.kill()
    proc.wait()
    _, alive = psutil.wait_procs(children, timeout=CHILD_EXIT_SECONDS)
    problems = [f"{len(alive)} child processes outlived the learner"] if alive else []
    for child in alive:
        child.kill()
    if not loadable(run_dir / "checkpoints" / "last.ckpt"):
        problems.append("last.ckpt does not load")
    if leaked := shm_entries() - shm_before:
        problems.append(f"new /dev/shm entries: {sorted(leaked)}")
    return problems


def inject(proc, run_dir: Path, rng: random.Random, shm_before: set[str], overrides: list[str]):
    """Kill the learner or one of its spawned children; returns the kind, the problems found
    and the running training process (a resumed one if the learner was killed)."""
    children = [  # what the fork server forked: actors and the evaluation process
        c
        for c in psutil.Process(proc.pid).children(recursive=True)
        if c.ppid() != proc.pid and "forkserver" in " ".join(c.cmdline())
    ]
    target = rng.choice(["learner", *children])
    if target == "learner":
        found = kill_learner(proc, run_dir, shm_before)
        return "learner", found, launch(run_dir, overrides)
    before = time.time()
    target.kill()
    recovered = wait_for_checkpoint(run_dir, proc, before)
    return "child", [] if recovered else ["training did not go on"], proc


def finish(proc: subprocess.Popen, run_dir: Path) -> tuple[int | None, int]:
    """Let the run reach its budget; its exit code and the frames in its last.ckpt."""
    try:
        code = proc.wait(timeout=1800)
    except subprocess.TimeoutExpired:
        kill_tree(psutil.Process(proc.pid))
        code = None
    last = run_dir / "checkpoints" / "last.ckpt"
    return code, frames_of(last) if loadable(last) else 0


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python benchmarks/faults/faults.py", description=__doc__)
    p.add_argument("--kills", type=int, default=50, help="SIGKILLs to inject")
    p.add_argument("--seed", type=int, default=0, help="seeds which process and when")
    p.add_argument("--max-delay", type=float, default=6.0, help="seconds between kills, at most")
    p.add_argument("overrides", nargs="*", help="Hydra overrides for train.py")
    args = p.parse_args(argv)
    rng, problems, kinds = random.Random(args.seed), [], {"learner": 0, "child": 0}
    budget = FRAMES_PER_KILL * (args.kills + 4)
    overrides = [f"frames={budget}", *args.overrides]
    shm_before, start = shm_entries(), time.time()
    with tempfile.TemporaryDirectory(prefix="faults-") as tmp:
        run_dir = Path(tmp) / "run"
        proc, since = launch(run_dir, overrides), time.time()
        for kill in range(args.kills):
            if not wait_for_checkpoint(run_dir, proc, after=since):
                problems.append(f"kill {kill + 1}: training never saved (hang or exit)")
                break
            time.sleep(rng.uniform(0.0, args.max_delay))
            if proc.poll() is not None:
                problems.append(f"kill {kill + 1}: the run ended early ({proc.returncode})")
                break
            since = time.time()
            kind, found, proc = inject(proc, run_dir, rng, shm_before, overrides)
            kinds[kind] += 1
            problems += [f"kill {kill + 1} ({kind}): {problem}" for problem in found]
            outcome = "; ".join(found) or "recovered"
            print(f"kill {kill + 1}/{args.kills}: {kind} -> {outcome}", flush=True)
        code, frames = finish(proc, run_dir)
        if code != 0 or frames < budget:
            problems.append(f"final run: exit code {code}, {frames} frames")
    command = ["python", "benchmarks/faults/faults.py", *(argv or sys.argv[1:])]
    print(f"command: {shlex.join(command)}")
    minutes = (time.time() - start) / 60
    print(
        f"kills: {sum(kinds.values())} ({kinds['learner']} of the learner, {kinds['child']} of "
        f"an actor or the evaluation process); final frames {frames}; {minutes:.1f} min"
    )
    print(f"problems: {len(problems)}")
    for problem in problems:
        print(f"  {problem}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
