"""The compute-only ceiling of a training config: what its updates and its actors' inference
would allow if the machine's cores did nothing else (no emulator, no waiting, no logging).

`compute_ceiling(cfg)` times, on random frames and one thread each in the run-time precision
with the learner's malloc settings, one learner update of the config's shape (forward over the
rollout and its bootstrap step, the loss, backward, clipping, the optimizer step, the running
statistics) and one actor step of its envs (no-grad, prepared as the actors prepare it).
It also counts their FLOPs (torch's matmul and conv counter) and times a one-thread matrix
product in the same precision: the rate a core reaches on the best-tuned kernel, so
`frames_per_s_at_gemm` is what all cores would reach if every FLOP ran that fast.
Used by `benchmarks/speed/throughput.py`.
"""

from __future__ import annotations

import copy
import statistics
import time

import hydra
import torch
from omegaconf import OmegaConf
from torch.utils.flop_counter import FlopCounterMode

from atari_a3c.actors.shared import new_obs
from atari_a3c.envs.make import env_spec
from atari_a3c.hardware import cores, keep_freed_memory, resolve_precision
from atari_a3c.learners.actor_critic import ActorCriticLearner
from atari_a3c.learners.base import clip_gradients
from atari_a3c.models.actor_critic import prepare_inference


def random_batch(steps: int, envs: int, spec, hidden: int) -> dict[str, torch.Tensor]:
    """A rollout batch as the actors write it: `steps` + 1 observations (laid out as in the
    slots), `steps` actions."""
    obs = new_obs((steps + 1, envs), spec.obs_shape, spec.torch_dtype)
    obs.copy_(torch.randint(0, 255, obs.shape))
    return {
        "obs": obs,
        "done": torch.zeros(steps + 1, envs, dtype=torch.bool),
        "action": torch.randint(0, spec.num_actions, (steps, envs)),
        "logits": torch.randn(steps, envs, spec.num_actions),
        "reward": torch.randn(steps, envs).clamp(-1, 1),
        "h0": torch.zeros(envs, hidden),
        "c0": torch.zeros(envs, hidden),
    }


def median_ms(step, repeats: int) -> float:
    """Median milliseconds of `step()` after two warm-up calls."""
    times = []
    for _ in range(repeats + 2):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times[2:])


def flops(step) -> int:
    """Matmul and conv FLOPs of one `step()`."""
    with FlopCounterMode(display=False) as counter:
        step()
    return counter.get_total_flops()


def gemm_gflops(bf16: bool, side: int = 1024, repeats: int = 20) -> float:
    """GFLOP/s of a `side`-square matrix product on this thread, in bf16 or fp32."""
    dtype = torch.bfloat16 if bf16 else torch.float32
    a, b = torch.randn(side, side, dtype=dtype), torch.randn(side, side, dtype=dtype)
    return 2 * side**3 / median_ms(lambda: a @ b, repeats) / 1e6


def learner_for(cfg, spec) -> ActorCriticLearner:
    """An actor-critic learner of the config, its model fresh."""
    return ActorCriticLearner(OmegaConf.to_container(cfg), spec.obs_shape, spec.num_actions)


def update_step(cfg, learner, batch):
    """One actor-critic update of `learner`, as its `training_step` makes it, as a closure."""
    algo, model = cfg.algo, learner.model
    optimizer = hydra.utils.instantiate(cfg.optim)(model.parameters())
    bf16 = resolve_precision(str(cfg.trainer.precision)) == "bf16-mixed"
    state = (batch["h0"], batch["c0"])

    def step():
        if algo.obs_mean_rate:
            model.track_observations(batch["obs"][0], algo.obs_mean_rate)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits, values, _ = model(batch["obs"], batch["done"], state, last_bootstraps=True)
            losses, targets = learner.losses(batch, logits.float(), values.float())
        losses.total.backward()
        clip_gradients(model.parameters(), cfg.trainer.gradient_clip_val)
        optimizer.step()
        optimizer.zero_grad()
        if algo.popart_rate:
            model.track_value_targets(targets.detach(), algo.popart_rate)

    return step


def acting_step(model, batch):
    """One actor step of its envs, on the weights prepared as an actor prepares them."""
    actor = copy.deepcopy(model).eval()
    context = prepare_inference(actor)
    obs, done = batch["obs"][:1], batch["done"][:1]
    state = (batch["h0"], batch["c0"])

    @torch.no_grad()
    def step():
        with context:
            logits, _, _ = actor(obs, done, state)
        torch.multinomial(logits[0].float().softmax(-1), 1)

    return step


def compute_ceiling(cfg, repeats: int = 20) -> dict[str, float]:
    """Milliseconds and GFLOP of one update and one actor step, one thread each, the env
    frames/s all usable cores would reach doing only those (`frames_per_s`), and doing them at
    a one-thread matrix product's GFLOP/s (`frames_per_s_at_gemm`)."""
    spec = env_spec(cfg)
    steps, envs = cfg.algo.unroll, cfg.envs_per_worker
    rollouts = cfg.algo.batch_rollouts
    learner = learner_for(cfg, spec)
    model = learner.model
    batch = random_batch(steps, envs * rollouts, spec, model.hidden_size)
    acting = random_batch(0, envs, spec, model.hidden_size)  # one step's frames
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    keep_freed_memory()  # as the learner's process runs
    try:
        update, act = update_step(cfg, learner, batch), acting_step(model, acting)
        update_ms, act_ms = median_ms(update, repeats), median_ms(act, 10 * repeats)
        gemm = gemm_gflops(resolve_precision(str(cfg.trainer.precision)) == "bf16-mixed")
        gflop = (flops(update) + steps * rollouts * flops(act)) / 1e9
    finally:
        torch.set_num_threads(threads)
    frames = steps * envs * rollouts * cfg.env.frame_skip
    cpu_ms = update_ms + steps * rollouts * act_ms
    return {
        "update_ms": update_ms,
        "act_ms": act_ms,
        "frames_per_update": frames,
        "frames_per_s": cores() * frames / cpu_ms * 1000,
        "gflop_per_update": gflop,
        "gflops": gflop / cpu_ms * 1000,
        "gemm_gflops": gemm,
        "frames_per_s_at_gemm": cores() * frames * gemm / gflop,
    }
