"""Memory soak: train for a while and check that memory of all processes stays flat.

`python benchmarks/faults/soak.py --minutes 30 [OVERRIDE ...]` starts train.py (no evaluations),
samples the PSS of it and all its children every few seconds and prints the growth from the end of
warm-up to the end of the run. `--pid <train.py's pid>` samples a training that is already
running instead and leaves it running; there only samples taken while no evaluation process ran
(the tree at its smallest process count) are compared.
"""

from __future__ import annotations

import argparse
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import psutil

from atari_a3c.bench.processes import GIB, NO_EVAL, kill_tree, tree_memory
from atari_a3c.bench.runs import REPO


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python benchmarks/faults/soak.py", description=__doc__)
    p.add_argument("--minutes", type=float, default=30.0, help="how long to sample")
    p.add_argument("--warmup", type=float, default=3.0, help="minutes before the baseline")
    p.add_argument("--every", type=float, default=5.0, help="seconds between samples")
    p.add_argument("--pid", type=int, help="sample this running train.py instead of starting one")
    p.add_argument("overrides", nargs="*", help="Hydra overrides for train.py")
    args = p.parse_args(argv)
    if args.pid and args.overrides:
        p.error("--pid samples a running training: overrides do not apply")
    return args


def sample(root: psutil.Process, minutes: float, every: float) -> list[tuple[float, float, int]]:
    """(seconds, GiB, processes) of the process tree until `minutes` pass or the root exits."""
    samples, start = [], time.time()
    while time.time() - start < minutes * 60 and root.is_running():
        procs = len(root.children(recursive=True)) + 1
        samples.append((time.time() - start, tree_memory(root) / GIB, procs))
        time.sleep(every)
    return samples


def steady(samples: list[tuple[float, float, int]], warmup_s: float) -> list[float]:
    """GiB of the samples after warm-up taken with the fewest processes (no evaluation running)."""
    after = [(gib, procs) for t, gib, procs in samples if t >= warmup_s]
    fewest = min((procs for _, procs in after), default=0)
    return [gib for gib, procs in after if procs == fewest]


def soak_new_run(args: argparse.Namespace) -> list[tuple[float, float, int]]:
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        cmd = [sys.executable, str(REPO / "train.py"), "frames=10000000000", "logger=none"]
        cmd += [f"hydra.run.dir={tmp}", *NO_EVAL, *args.overrides]
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        root = psutil.Process(proc.pid)
        try:
            return sample(root, args.minutes, args.every)
        finally:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                kill_tree(root)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.pid:
        samples = sample(psutil.Process(args.pid), args.minutes, args.every)
    else:
        samples = soak_new_run(args)
    after = steady(samples, args.warmup * 60)
    if len(after) < 4:
        sys.exit("soak: too few samples after warm-up (run longer or warm up less)")
    quarter = max(1, len(after) // 4)
    first, last = statistics.median(after[:quarter]), statistics.median(after[-quarter:])
    command = ["python", "benchmarks/faults/soak.py", *(argv or sys.argv[1:])]
    print(f"command: {shlex.join(command)}")
    print(f"samples after warm-up, no evaluation running: {len(after)}, peak {max(after):.3f} GiB")
    print(f"median PSS, first quarter {first:.3f} GiB -> last quarter {last:.3f} GiB")
    print(f"growth after warm-up: {100 * (last - first) / first:+.2f}%")


if __name__ == "__main__":
    main()
