"""Which precision and memory layout is fastest for the conv encoders on this CPU?

`python benchmarks/precision.py [--repeats 12] [--threads 1]` times, for the Nature and the
A3C port's encoder, one learner update (forward + backward + Adam step, batch of 96 frames: 16
envs x 6 steps) and one actor inference (16 frames, no grad) in fp32 and bf16 autocast, each in
NCHW and channels_last, and prints the medians in milliseconds with the CPU's bf16 flags. The
run-time choice (`hardware.bf16_supported`) should pick the fastest row.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from atari_a3c.encoders import a3c_encoder, nature_encoder
from atari_a3c.hardware import BF16_FLAGS, bf16_supported, cpu_flags, cpu_model

ENCODERS = {"nature": (nature_encoder, (4, 84, 84)), "a3c": (a3c_encoder, (1, 80, 80))}
SETTINGS = [(bf16, cl) for bf16 in (False, True) for cl in (False, True)]


def median_ms(encoder: str, batch: int, bf16: bool, channels_last: bool, train: bool, repeats: int):
    make, shape = ENCODERS[encoder]
    net, x = make(shape[0]), torch.rand(batch, *shape)
    net(x[:1])  # materialize lazy layers
    if channels_last:
        net, x = (
            net.to(memory_format=torch.channels_last),
            x.contiguous(memory_format=torch.channels_last),
        )
    optimizer = torch.optim.Adam(net.parameters())
    times = []
    for _ in range(repeats + 2):
        start = time.perf_counter()
        with (
            torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16),
            torch.set_grad_enabled(train),
        ):
            out = net(x).float().sum()
        if train:
            optimizer.zero_grad()
            out.backward()
            optimizer.step()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times[2:])


def main() -> None:
    p = argparse.ArgumentParser(prog="python benchmarks/precision.py", description=__doc__)
    p.add_argument("--repeats", type=int, default=12)
    p.add_argument("--threads", type=int, default=1, help="torch threads (the learner has 1)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    header = " | ".join(f"{'bf16' if b else 'fp32'}{' + channels_last' if c else ''}"
                        for b, c in SETTINGS)  # fmt: skip
    print(f"| encoder, measure (ms, median of {args.repeats}) | {header} |")
    print("|---" + "|---:" * len(SETTINGS) + "|")
    for encoder in ENCODERS:
        for label, batch, train in (("update, 96 frames", 96, True), ("inference, 16", 16, False)):
            cells = [median_ms(encoder, batch, *s, train, args.repeats) for s in SETTINGS]
            print(f"| {encoder}, {label} | " + " | ".join(f"{c:.1f}" for c in cells) + " |")
    flags = cpu_flags()
    present = ", ".join(f"{f}={'yes' if f in flags else 'no'}" for f in sorted(BF16_FLAGS))
    print(f"\ncpu: {cpu_model()}; {present}; bf16 chosen at run time: {bf16_supported()}")


if __name__ == "__main__":
    main()
