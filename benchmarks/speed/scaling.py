"""How cost grows: frames/s and peak memory against envs per actor and against cores.

`python benchmarks/speed/scaling.py [--frames N] [--repeats R] [--envs 8,16,32,64] [--cores 1,2]
[--project 16] [OVERRIDE ...]` trains Pong with the default recipe once per setting and repeat,
side by side: every `--envs` value on all cores, then the default env count pinned to the first
k usable CPUs for each `--cores` value (the layout is sized from those cores, as `taskset`
would make it), with the emulator alone on the same CPUs. It prints Markdown tables of medians
and projects frames/s to `--project` cores along the power law through the two largest core
counts measured, capped by the emulator's rate projected the same way.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shlex
import signal
import statistics
import sys
from collections.abc import Iterator

from throughput import emulator_rate, training_run

from atari_a3c.hardware import bf16_supported, cpu_model


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python benchmarks/speed/scaling.py", description=__doc__)
    p.add_argument("--frames", type=int, default=60_000, help="env frames per training run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--envs", default="8,16,32,64", help="comma-separated envs per actor")
    p.add_argument("--cores", default="1,2", help="comma-separated core counts to pin to")
    p.add_argument("--project", type=int, default=16, help="core count to project to")
    p.add_argument("overrides", nargs="*", help="Hydra overrides for train.py")
    args = p.parse_args(argv)
    args.envs = [int(n) for n in args.envs.split(",")]
    args.cores = sorted(int(n) for n in args.cores.split(","))
    usable = len(os.sched_getaffinity(0))
    if any(n < 1 or n > usable for n in args.cores):
        p.error(f"--cores must lie in 1..{usable}, the CPUs this process may use")
    if len(args.cores) < 2:
        p.error("--cores needs two counts or more to project from")
    return args


def first_cpus(count: int) -> set[int]:
    return set(sorted(os.sched_getaffinity(0))[:count])


@contextlib.contextmanager
def pinned(cpus: set[int]) -> Iterator[None]:
    """Run this process (and the threads it starts) on `cpus` only."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)


def measure_repeat(args: argparse.Namespace, repeat: int) -> dict[str, float]:
    """One repeat of every setting: {name: value}."""
    measured = {}
    for envs in args.envs:
        run = training_run([*args.overrides, f"envs_per_worker={envs}"], args.frames)
        measured[f"envs={envs}/fps"] = run["sustained"]
        measured[f"envs={envs}/memory"] = run["memory"]
    for cores in args.cores:
        cpus = first_cpus(cores)
        with pinned(cpus):
            measured[f"cores={cores}/emulator"] = emulator_rate(
                args.overrides, args.frames, repeat
            )[0]
        measured[f"cores={cores}/fps"] = training_run(args.overrides, args.frames, cpus)[
            "sustained"
        ]
    return measured


def power_law(rates: dict[int, float], target: int) -> float:
    """The rate at `target` cores along the power law through the two largest core counts."""
    (c1, r1), (c2, r2) = sorted(rates.items())[-2:]
    exponent = math.log(r2 / r1) / math.log(c2 / c1)
    return r2 * (target / c2) ** exponent


def report(med: dict[str, float], args: argparse.Namespace) -> None:
    print(f"\n| envs per actor | frames/s, median of {args.repeats} | peak memory (GiB) |")
    print("|---:|---:|---:|")
    for envs in args.envs:
        print(f"| {envs} | {med[f'envs={envs}/fps']:,.0f} | {med[f'envs={envs}/memory']:.2f} |")
    print(
        f"\n| cores | training frames/s | emulator alone, frames/s | training / {args.cores[0]} |"
    )
    print("|---:|---:|---:|---:|")
    base = med[f"cores={args.cores[0]}/fps"]
    for cores in args.cores:
        fps, emulator = med[f"cores={cores}/fps"], med[f"cores={cores}/emulator"]
        print(f"| {cores} | {fps:,.0f} | {emulator:,.0f} | {fps / base:.2f} |")
    training = power_law({c: med[f"cores={c}/fps"] for c in args.cores}, args.project)
    emulator = power_law({c: med[f"cores={c}/emulator"] for c in args.cores}, args.project)
    print(
        f"\nprojected to {args.project} cores: training {min(training, emulator):,.0f} frames/s "
        f"(power law {training:,.0f}, emulator alone {emulator:,.0f})"
    )


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    results: dict[str, list[float]] = {}
    for i in range(args.repeats):
        measured = measure_repeat(args, i)
        print(f"repeat {i + 1}: " + ", ".join(f"{k}={v:,.2f}" for k, v in measured.items()))
        for key, value in measured.items():
            results.setdefault(key, []).append(value)
    report({key: statistics.median(values) for key, values in results.items()}, args)
    argv_used = sys.argv[1:] if argv is None else argv
    print(f"\ncommand: {shlex.join(['python', 'benchmarks/speed/scaling.py', *argv_used])}")
    print(f"cpu: {cpu_model()}; bf16: {'yes' if bf16_supported() else 'no'}")


if __name__ == "__main__":
    main()
