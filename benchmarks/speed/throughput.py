"""Throughput of the default recipe on Pong: emulator alone, training per model, the evaluation
that ends a run, SB3 peers.

`python benchmarks/speed/throughput.py [--frames N] [--repeats R] [--models nature_lstm,a3c_lstm]
[--peers] [OVERRIDE ...]` measures everything once per repeat, side by side, and prints a
Markdown table of medians with the ratios of the first model's training rate to the others.
"""

from __future__ import annotations

import argparse
import csv
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import psutil
from ceiling import compute_ceiling  # benchmarks/speed/ceiling.py, beside this script
from peer_rates import peer_rates, peers_missing  # beside this script

from atari_a3c.bench.processes import GIB, NO_EVAL, kill_tree, tree_memory
from atari_a3c.bench.recipes import compose_config
from atari_a3c.hardware import BF16_FLAGS, cores, cpu_flags, cpu_model

REPO = Path(__file__).resolve().parents[2]
RESERVED = ("frames=", "logger=", "hydra.run.dir=")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python benchmarks/speed/throughput.py", description=__doc__)
    p.add_argument("--frames", type=int, default=400_000, help="env frames per measurement")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--models",
        default="nature_lstm",
        help="comma-separated conf/model names, each optionally followed by its own overrides "
        "('nature_lstm,nature_lstm learner_threads=2' times both side by side)",
    )
    p.add_argument("--peers", action="store_true", help="also time SB3 A2C and RecurrentPPO")
    p.add_argument("--peer-python", default=sys.executable, help="python that has SB3")
    p.add_argument("--peer-steps", type=int, default=8000, help="agent steps per peer run")
    p.add_argument("overrides", nargs="*", help="Hydra overrides for train.py")
    args = p.parse_args(argv)
    if bad := [o for o in args.overrides if o.startswith(RESERVED)]:
        p.error(f"the bench sets these itself: {' '.join(bad)}")
    if args.peers and (why := peers_missing(args.peer_python)):
        p.error(f"--peers: {why}")
    return args


def emulator_rate(overrides: list[str], frames: int, seed: int) -> tuple[float, int, int]:
    """Env frames/s of all the actors' envs in one vector env with all their emulator threads,
    stepped with random actions. Returns the rate, the env count and the env threads."""
    from atari_a3c.envs.vector import TrainingEnvs

    cfg = compose_config(overrides)
    cfg.env.env_threads = int(cfg.workers * cfg.env.env_threads)
    num_envs = int(cfg.workers * cfg.envs_per_worker)
    envs = TrainingEnvs(cfg, num_envs)
    rng = np.random.default_rng(seed)
    steps = -(-frames // (num_envs * cfg.env.frame_skip))
    try:
        envs.reset(seed)
        start = time.perf_counter()
        for _ in range(steps):
            envs.step(rng.integers(0, envs.num_actions, num_envs))
        elapsed = time.perf_counter() - start
    finally:
        envs.close()
    return steps * num_envs * cfg.env.frame_skip / elapsed, num_envs, cfg.env.env_threads


def read_column(rows: list[dict[str, str]], name: str) -> list[float]:
    return [float(r[name]) for r in rows if r.get(name)]


def training_run(
    overrides: list[str], frames: int, cpus: set[int] | None = None
) -> dict[str, float]:
    """Run train.py once (on the CPUs `cpus`, default all), sampling the memory of its process
    tree every 0.25 s."""
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        cmd = [sys.executable, str(REPO / "train.py"), *overrides, f"frames={frames}"]
        cmd += ["logger=csv", f"hydra.run.dir={tmp}", *NO_EVAL]
        log_path = Path(tmp) / "bench.log"
        peak = 0
        with open(log_path, "w") as log:
            start = time.perf_counter()
            pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
            proc = subprocess.Popen(
                cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, preexec_fn=pin
            )
            root = psutil.Process(proc.pid)
            try:
                while proc.poll() is None:
                    peak = max(peak, tree_memory(root))
                    time.sleep(0.25)
            finally:
                kill_tree(root)
            wall = time.perf_counter() - start
        if proc.returncode != 0:
            tail = log_path.read_text().splitlines()[-20:]
            sys.exit(f"train.py failed ({proc.returncode}): {shlex.join(cmd)}\n" + "\n".join(tail))
        with open(Path(tmp) / "csv" / "version_0" / "metrics.csv") as f:
            rows = list(csv.DictReader(f))
    fps = read_column(rows, "charts/fps")
    lag = read_column(rows, "perf/policy_lag")
    done = max(read_column(rows, "charts/frames"))
    return {
        "sustained": statistics.median(fps[1:] or fps),
        "overall": done / wall,
        "startup": read_column(rows, "perf/startup_s")[0],
        "lag": statistics.median(lag) if lag else float("nan"),
        "memory": peak / GIB,
    }


def final_evaluation(overrides: list[str], seed: int) -> dict[str, float]:
    """Seconds and env frames/s of the evaluation that ends every training run: the config's
    `callbacks.eval.episodes` greedy games on one thread, as its evaluation process plays them,
    by the shipped Pong agent (a trained policy plays games as long as a finished run's)."""
    import torch

    from atari_a3c.checkpoints.files import load_checkpoint, policy_from_checkpoint
    from atari_a3c.checkpoints.sources import locate
    from atari_a3c.evaluation.play import play

    episodes = compose_config(overrides).callbacks.eval.episodes
    cfg, model = policy_from_checkpoint(load_checkpoint(locate("pretrained/pong")))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        start = time.perf_counter()
        games = play(cfg, model, episodes, seed)
        seconds = time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)
    frames = sum(game.length for game in games) * cfg.env.frame_skip
    return {
        "final_eval/games": episodes,
        "final_eval/seconds": seconds,
        "final_eval/rate": frames / seconds,
    }


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}" if b else "-"


def ceiling_rows(med: dict[str, float], model: str, emulator_threads: int) -> list:
    """The model's compute-only ceiling, and with the emulator's CPU time added (all work
    spread perfectly over the cores: a bound no layout can beat), and its compute at a
    one-thread matrix product's rate (a bound no kernel can beat by much)."""
    update, act = med[f"{model}/compute/update_ms"], med[f"{model}/compute/act_ms"]
    ms = f"update {update:.1f} ms, actor step {act:.2f} ms"
    compute = med[f"{model}/compute/frames_per_s"]
    gflop, gflops = med[f"{model}/compute/gflop_per_update"], med[f"{model}/compute/gflops"]
    gemm = med[f"{model}/compute/gemm_gflops"]
    work = f"{gflop:.2f} GFLOP per update and its rollout at {gflops:.1f} GFLOP/s"
    n = cores()
    both = n / (n / compute + emulator_threads / med["emulator"])
    return [
        (f"compute only, `{model}` ({ms}; {work}; {n} cores, no emulator)", compute),
        (f"ceiling, `{model}`: compute + emulator CPU time on {n} cores", both),
        (
            f"compute only, `{model}`, every FLOP at a one-thread matrix product's "
            f"{gemm:.1f} GFLOP/s",
            med[f"{model}/compute/frames_per_s_at_gemm"],
        ),
    ]


def report(
    results: dict[str, list[float]], models: list[str], label: str, repeats: int, threads: int
) -> None:
    """Print the medians over the repeats and the first model's training rate over each rate."""
    med = {key: statistics.median(values) for key, values in results.items()}
    train = med[f"{models[0]}/sustained"]
    rows = [(f"emulator only, {label} (frames/s)", med["emulator"])]
    for model in models:
        rows += ceiling_rows(med, model, threads)
        rows += [
            (
                f"training `{model}`, sustained: median charts/fps (frames/s)",
                med[f"{model}/sustained"],
            ),
            (f"training `{model}`, frames / wall time incl. start-up", med[f"{model}/overall"]),
        ]
    peers = [name for name in med if "/" not in name and name != "emulator"]
    rows += [(f"peer {name} (frames/s)", med[name]) for name in peers]
    print(f"\n| measure | median of {repeats} | {models[0]} / this |\n|---|---:|---:|")
    for name, value in rows:
        print(f"| {name} | {value:,.0f} | {ratio(train, value)} |")
    episodes = int(med["final_eval/games"])
    print(f"| final evaluation: {episodes} greedy games, shipped Pong agent (s) | "
          f"{med['final_eval/seconds']:.1f} | |")  # fmt: skip
    print(f"| final evaluation's play (frames/s, 1 thread) | {med['final_eval/rate']:,.0f} | |")
    for model in models:
        startup = med[f"{model}/startup"]
        print(f"| `{model}` start-up: command to first update (s) | {startup:.1f} | |")
        print(f"| `{model}` policy lag (updates) | {med[f'{model}/lag']:.2f} | |")
        print(
            f"| `{model}` peak memory, tree PSS (else RSS), GiB | {med[f'{model}/memory']:.2f} | |"
        )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    models = args.models.split(",")
    results: dict[str, list[float]] = {}
    for i in range(args.repeats):
        rate, num_envs, threads = emulator_rate(args.overrides, args.frames, seed=i)
        measured = {"emulator": rate} | final_evaluation(args.overrides, seed=i)
        for model in models:
            name, *own = model.split()
            overrides = [f"model={name}", *args.overrides, *own]
            run = training_run(overrides, args.frames)
            ceiling = compute_ceiling(compose_config(overrides))
            run |= {f"compute/{key}": value for key, value in ceiling.items()}
            measured |= {f"{model}/{key}": value for key, value in run.items()}
        if args.peers:
            measured |= peer_rates(args.peer_python, args.peer_steps)
        print(f"repeat {i + 1}: " + ", ".join(f"{k}={v:,.2f}" for k, v in measured.items()))
        for key, value in measured.items():
            results.setdefault(key, []).append(value)
    label = f"{num_envs} envs, {threads} emulator threads"
    report(results, models, label, args.repeats, threads)
    flags = cpu_flags()
    argv_used = sys.argv[1:] if argv is None else argv
    print(f"\ncommand: {shlex.join(['python', 'benchmarks/speed/throughput.py', *argv_used])}")
    print(f"cpu: {cpu_model()}; cores: {os.cpu_count()} (usable: {len(os.sched_getaffinity(0))})")
    present = [f"{flag}={'yes' if flag in flags else 'no'}" for flag in sorted(BF16_FLAGS)]
    print(f"bf16 flags: {', '.join(present)}")


if __name__ == "__main__":
    main()
