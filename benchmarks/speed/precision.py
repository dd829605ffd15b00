"""Which precision and memory layout is fastest for the conv encoders on this CPU?

`python benchmarks/speed/precision.py [--repeats 12] [--threads 1]` times, for the Nature and the
A3C port's encoder, one learner update (forward + backward + Adam step, batch of 96 frames: 16
envs x 6 steps) and one actor inference (16 frames, no grad) in fp32 and bf16 autocast, each in
NCHW and channels_last, and prints the medians in milliseconds with the CPU's bf16 flags. The
run-time choice (`hardware.bf16_supported`) should pick the fastest row. Then, in the run-time
choice, one whole learner update of `nature_lstm` (16 envs x 5 steps plus the bootstrap step)
with the bootstrap step's frames encoded with and without gradient, interleaved; and where
the CPU does bf16, one actor step (16 envs) in bf16 autocast with float32 weights and with the
weights stored in bf16 (`prepare_inference`), interleaved.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import torch

from atari_a3c.hardware import BF16_FLAGS, bf16_supported, cpu_flags, cpu_model
from atari_a3c.models.actor_critic import ActorCritic, prepare_inference
from atari_a3c.models.encoders import a3c_encoder, nature_encoder

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


def bootstrap_update_ms(repeats: int) -> dict[bool, float]:
    """Median ms of one `nature_lstm` update, by whether the bootstrap step takes no gradient."""
    bf16 = bf16_supported()
    model = ActorCritic((4, 84, 84), 6, "nature", 512)
    if bf16:
        model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.Adam(model.parameters())
    obs = torch.randint(0, 255, (6, 16, 4, 84, 84), dtype=torch.uint8)
    done, state = torch.zeros(6, 16, dtype=torch.bool), model.initial_state(16)
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(repeats + 2):
        for last_bootstraps in times:
            start = time.perf_counter()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                logits, values, _ = model(obs, done, state, last_bootstraps=last_bootstraps)
            (logits[:-1].float().sum() + values[:-1].float().sum()).backward()
            optimizer.step()
            optimizer.zero_grad()
            times[last_bootstraps].append(time.perf_counter() - start)
    return {key: 1000 * statistics.median(values[2:]) for key, values in times.items()}


def acting_step_ms(repeats: int) -> tuple[float, float]:
    """Median ms of one `nature_lstm` actor step of 16 envs in bf16 autocast: float32 weights
    (cast at every step), then weights stored in bf16."""
    cast_each_step = ActorCritic((4, 84, 84), 6, "nature", 512)
    cast_each_step.to(memory_format=torch.channels_last)
    stored = copy.deepcopy(cast_each_step)
    prepare_inference(stored)
    obs = torch.randint(0, 255, (1, 16, 4, 84, 84), dtype=torch.uint8)
    done, state = torch.zeros(1, 16, dtype=torch.bool), stored.initial_state(16)
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats + 2):
        for model, kept in zip((cast_each_step, stored), times, strict=True):
            start = time.perf_counter()
            with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
                model(obs, done, state)
            kept.append(time.perf_counter() - start)
    return tuple(1000 * statistics.median(kept[2:]) for kept in times)


def main() -> None:
    p = argparse.ArgumentParser(prog="python benchmarks/speed/precision.py", description=__doc__)
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
    with_grad, without = bootstrap_update_ms(args.repeats).values()
    print(f"\n`nature_lstm` update, bootstrap step with gradient {with_grad:.1f} ms, without "
          f"{without:.1f} ms: {with_grad / without:.2f}x")  # fmt: skip
    if bf16_supported():
        cast, stored = acting_step_ms(10 * args.repeats)  # steps are short
        print(f"\n`nature_lstm` actor step, 16 envs, bf16: float32 weights {cast:.2f} ms, bf16 "
              f"weights {stored:.2f} ms: {cast / stored:.2f}x")  # fmt: skip
    flags = cpu_flags()
    present = ", ".join(f"{f}={'yes' if f in flags else 'no'}" for f in sorted(BF16_FLAGS))
    print(f"\ncpu: {cpu_model()}; {present}; bf16 chosen at run time: {bf16_supported()}")


if __name__ == "__main__":
    main()
