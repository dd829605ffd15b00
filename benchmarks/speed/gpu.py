"""Frames/s per layout and minutes to a greedy +18 on Pong, on a machine with a GPU.

`python benchmarks/speed/gpu.py [--frames N] [--layouts 'A;B'] [--pong-frames N] [--out DIR]
[OVERRIDE ...]`

For each layout (train.py overrides, `;`-separated; the default layout from the machine is
`default`) it trains Pong for `--frames` without evaluations, sampling every second the GPU's
busy percent (`nvidia-smi`) and the machine's idle CPU percent, and reads the sustained
frames/s from the run's metrics. Then, unless `--pong-frames 0`, it trains the default recipe on
Pong with a greedy evaluation of 10 games every 500k frames and stops at the first mean >= +18,
recording the minutes from the command. Each measurement is a JSON record in `--out`:
command, commit, machine (CPU, cores, GPU), `frames_per_second`, `gpu_busy_percent`,
`cpu_idle_percent`, and for the Pong run `minutes_to_18`. `trainer.accelerator=cpu` measures
the same on the CPU alone.
"""

from __future__ import annotations

import argparse
import csv
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from throughput import read_column  # benchmarks/speed/throughput.py

from atari_a3c.bench.processes import NO_EVAL, kill_tree
from atari_a3c.hardware import cores, cpu_model

REPO = Path(__file__).resolve().parents[2]
TARGET = 18.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python benchmarks/speed/gpu.py", description=__doc__)
    p.add_argument("--frames", type=int, default=3_000_000, help="env frames per layout")
    p.add_argument("--layouts", default="default", help="';'-separated train.py overrides")
    p.add_argument("--pong-frames", type=int, default=10_000_000, help="Pong budget (0: none)")
    p.add_argument("--out", type=Path, default=REPO / "benchmarks" / "gpu", help="records")
    p.add_argument("overrides", nargs="*", help="train.py overrides for every run")
    return p.parse_args(argv)


def gpu_name() -> str | None:
    import torch

    return torch.cuda.get_device_name() if torch.cuda.is_available() else None


class Sampler:
    """Every second, the GPU's busy percent (where nvidia-smi runs) and the idle CPU percent."""

    def __init__(self):
        self.gpu: list[float] = []
        self.idle: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        psutil.cpu_times_percent()  # the first call only starts the interval
        while not self._stop.wait(1.0):
            self.idle.append(psutil.cpu_times_percent().idle)
            query = ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits"]
            try:
                out = subprocess.run(query, capture_output=True, text=True, timeout=5).stdout
                self.gpu.append(float(out.split()[0]))
            except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
                pass

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def train(overrides: list[str], run_dir: Path, until=None) -> tuple[float, int]:
    """Run train.py in `run_dir` until it ends or `until(run_dir)` is true; returns the wall
    seconds and the exit code."""
    cmd = [sys.executable, str(REPO / "train.py"), *overrides, f"hydra.run.dir={run_dir}"]
    start = time.perf_counter()
    with open(run_dir.parent / f"{run_dir.name}.log", "w") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT)
        root = psutil.Process(proc.pid)
        try:
            while proc.poll() is None:
                if until is not None and until(run_dir):
                    break
                time.sleep(1.0)
        finally:
            kill_tree(root)
    return time.perf_counter() - start, proc.wait()


def metrics(run_dir: Path) -> list[dict[str, str]]:
    (path,) = run_dir.glob("csv/version_*/metrics.csv")
    with path.open() as f:
        return list(csv.DictReader(f))


def evaluation_reached(run_dir: Path) -> bool:
    path = run_dir / "checkpoints" / "evaluations.jsonl"
    if not path.exists():
        return False
    means = [json.loads(line).get("mean", -99) for line in path.read_text().splitlines() if line]
    return any(mean >= TARGET for mean in means)


def machine() -> dict:
    return {"cpu": cpu_model(), "cores": cores(), "gpu": gpu_name()}


def record(out: Path, name: str, fields: dict) -> None:
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=REPO)
    base = {"command": shlex.join(["python", "benchmarks/speed/gpu.py", *sys.argv[1:]])}
    base |= {"commit": commit.stdout.strip(), "date": time.strftime("%Y-%m-%d"), **machine()}
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(base | fields, indent=1) + "\n")
    print(name, json.dumps(fields))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gpu-bench-") as tmp:
        for i, layout in enumerate(args.layouts.split(";")):
            own = [] if layout.strip() == "default" else layout.split()
            overrides = ["env=pong", "logger=csv", f"frames={args.frames}", *NO_EVAL]
            overrides += [*args.overrides, *own]
            with Sampler() as sampled:
                wall, code = train(overrides, Path(tmp) / f"layout{i}")
            if code != 0:
                sys.exit(f"train.py failed ({code}) with {' '.join(overrides)}")
            fps = read_column(metrics(Path(tmp) / f"layout{i}"), "charts/fps")
            fields = {"layout": layout.strip(), "overrides": overrides, "wall_s": wall}
            fields |= {"frames_per_second": median(fps[1:] or fps)}
            fields |= {"gpu_busy_percent": median(sampled.gpu)}
            fields |= {"cpu_idle_percent": median(sampled.idle)}
            record(args.out, f"layout{i}", fields)
        if args.pong_frames:
            overrides = ["env=pong", "logger=csv", f"frames={args.pong_frames}", *args.overrides]
            overrides += ["callbacks.eval.every_frames=500000", "callbacks.eval.episodes=10"]
            with Sampler() as sampled:
                wall, _ = train(overrides, Path(tmp) / "pong", evaluation_reached)
            reached = evaluation_reached(Path(tmp) / "pong")
            fields = {"overrides": overrides, "minutes_to_18": wall / 60 if reached else None}
            fields |= {"gpu_busy_percent": median(sampled.gpu)}
            fields |= {"cpu_idle_percent": median(sampled.idle)}
            record(args.out, "pong", fields)


if __name__ == "__main__":
    main()
