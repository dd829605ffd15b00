"""Would `torch.compile` make the default recipe faster on this CPU?

`python benchmarks/speed/compiled.py [--repeats 15] [OVERRIDE ...]` times, one thread each in the
run-time precision, one learner update of the recipe's shape and one actor step of its envs
(`benchmarks/speed/ceiling.py`'s), eagerly and through `torch.compile` (Inductor's defaults; the
actor step also with `freezing`, Inductor's inference mode that folds the weights into its kernels),
interleaved, and prints the medians, their pairwise ratios and the seconds each compile took
(from an empty cache, as a user's first run compiles; Inductor caches what it compiles on disk).
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import tempfile
import time

import torch
import torch._inductor.config as inductor
from ceiling import acting_step, median_ms, random_batch, update_step

from atari_a3c.bench.recipes import compose_config
from atari_a3c.envs.make import env_spec
from atari_a3c.hardware import bf16_supported, cpu_model, keep_freed_memory
from atari_a3c.models.actor_critic import build_model


def compiled(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of `model` that runs through `torch.compile`."""
    return torch.compile(copy.deepcopy(model))


def warmed(step) -> tuple[object, float]:
    """`step` after the calls that compile it, and the seconds they took."""
    start = time.perf_counter()
    step(), step()
    return step, time.perf_counter() - start


def side_by_side(eager, other, repeats: int, calls: int) -> tuple[float, float, float]:
    """Median ms of each (medians of `calls` calls, `repeats` times in turn) and the median of
    the pairwise ratios eager / other."""
    pairs = [(median_ms(eager, calls), median_ms(other, calls)) for _ in range(repeats)]
    ratio = statistics.median(a / b for a, b in pairs)
    return statistics.median(a for a, _ in pairs), statistics.median(b for _, b in pairs), ratio


def main() -> None:
    p = argparse.ArgumentParser(prog="python benchmarks/speed/compiled.py", description=__doc__)
    p.add_argument("--repeats", type=int, default=15)
    p.add_argument("overrides", nargs="*", help="Hydra overrides for train.py")
    args = p.parse_args()
    cfg = compose_config(args.overrides)
    spec = env_spec(cfg)
    torch.set_num_threads(1)
    keep_freed_memory()  # as the learner's process runs
    model = build_model(cfg.model, spec.obs_shape, spec.num_actions)
    batch = random_batch(cfg.algo.unroll, cfg.envs_per_worker, spec, model.hidden_size)
    frames = random_batch(0, cfg.envs_per_worker, spec, model.hidden_size)
    print(f"{cpu_model()}, bf16: {bf16_supported()}, encoder {cfg.model.encoder}, one thread")
    print(f"| measure (ms, median of {args.repeats}) | eager | compiled | eager / compiled "
          "| compile (s) |\n|---|---:|---:|---:|---:|")  # fmt: skip
    update, seconds = warmed(update_step(cfg, compiled(model), batch))
    row("update", side_by_side(update_step(cfg, model, batch), update, args.repeats, 3), seconds)
    eager_act = acting_step(model, frames)
    for label, freezing in (("actor step", False), ("actor step, frozen weights", True)):
        inductor.freezing = freezing
        act, seconds = warmed(acting_step(compiled(model), frames))
        row(label, side_by_side(eager_act, act, args.repeats, 20), seconds)


def row(label: str, timed: tuple[float, float, float], seconds: float) -> None:
    eager, other, ratio = timed
    print(f"| {label} | {eager:.1f} | {other:.1f} | {ratio:.2f}x | {seconds:.0f} |")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache  # compile from scratch
        main()
