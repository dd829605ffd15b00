"""How fast can `nature_lstm`'s critic fit Pong returns? A supervised probe, no RL loop.

Collects random-policy Pong rollouts from the native vector env (cached in `--data`), then
regresses the model's value on their discounted returns with Adam and prints, every 125
steps, the held-out explained variance and the share of the encoder's 512 output units that
are dead (zero on every one of 512 held-out frames). Variants isolate one cause each:

    python benchmarks/critic_probe.py --precision bf16 --variant none
    python benchmarks/critic_probe.py --precision bf16 --variant value_bias  # head starts at mean
    python benchmarks/critic_probe.py --precision bf16 --variant obs_mean  # popart + input mean
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

import numpy as np
import torch
from ale_py.vector_env import AtariVectorEnv
from gymnasium.vector import AutoresetMode
from omegaconf import OmegaConf

from atari_a3c.models import build_model

ENVS, STEPS, TAIL, GAMMA, BATCH = 16, 2500, 400, 0.99, 320
VARIANTS = ("none", "value_bias", "layer_norm", "no_lstm", "warmup", "popart", "obs_mean")


def collect(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Random-policy observations `[T, N, 4, 84, 84]` and their discounted returns `[T, N]`."""
    if path.exists():
        data = np.load(path)
        return data["obs"], data["ret"]
    env = AtariVectorEnv("pong", ENVS, num_threads=2, autoreset_mode=AutoresetMode.SAME_STEP)
    obs, _ = env.reset(seed=0)
    frames = np.empty((STEPS, ENVS, *obs.shape[1:]), np.uint8)
    rewards, dones = np.zeros((2, STEPS, ENVS), np.float32)
    for t in range(STEPS):
        frames[t] = obs
        obs, rewards[t], terminated, truncated, _ = env.step(np.random.randint(0, 6, ENVS))
        dones[t] = terminated | truncated
    env.close()
    returns, acc = np.zeros_like(rewards), np.zeros(ENVS, np.float32)
    for t in reversed(range(STEPS)):
        acc = rewards[t] + GAMMA * acc * (1 - dones[t])
        returns[t] = acc
    frames, returns = frames[:-TAIL], returns[:-TAIL]  # the tail's returns are cut short
    np.savez(path, obs=frames, ret=returns)
    return frames, returns


def flat(array: np.ndarray) -> torch.Tensor:
    """`[T, N, ...]` -> `[T * N, ...]`."""
    return torch.from_numpy(np.ascontiguousarray(array).reshape(-1, *array.shape[2:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="bf16")
    parser.add_argument("--variant", choices=VARIANTS, default="none")
    parser.add_argument("--steps", type=int, default=500)
    parser.add_argument("--lr", type=float, default=2.5e-4)
    parser.add_argument("--data", type=Path, default=Path("pong_random_rollouts.npz"))
    args = parser.parse_args()
    torch.manual_seed(0)
    np.random.seed(0)
    obs, returns = collect(args.data)
    train_obs, train_ret = flat(obs[:, :12]), flat(returns[:, :12])
    test_obs, test_ret = flat(obs[::4, 12:]), flat(returns[::4, 12:])

    model = build_model(OmegaConf.create({"encoder": "nature", "hidden_size": 512}), (4, 84, 84), 6)
    if args.variant == "layer_norm":
        model.encoder = torch.nn.Sequential(
            *model.encoder[:-1], torch.nn.LayerNorm(512), torch.nn.ReLU()
        )
    if args.variant == "obs_mean":  # the inputs' mean frame is subtracted (algo.obs_mean_rate)
        model.track_observations(train_obs[::16], 1.0)
    if args.variant == "value_bias":
        torch.nn.init.constant_(model.value.bias, float(train_ret.mean()))
    autocast = contextlib.nullcontext()
    if args.precision == "bf16":
        model.to(memory_format=torch.channels_last)
        autocast = torch.autocast("cpu", dtype=torch.bfloat16)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr, eps=1e-5)

    def values(frames: torch.Tensor) -> torch.Tensor:
        if args.variant == "no_lstm":
            return model.value(model.encoder(model._prepare(frames.clone()))).squeeze(-1).float()
        done = torch.ones(1, len(frames), dtype=torch.bool)
        return model(frames[None], done, model.initial_state(len(frames)))[1][0].float()

    for step in range(1, args.steps + 1):
        index = torch.randint(0, len(train_obs), (BATCH,))
        with autocast:
            predicted = values(train_obs[index])
        mean, std = model.value_mean, model.value_std
        loss = 0.5 * ((train_ret[index] - predicted) / std).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if args.variant in ("popart", "obs_mean"):
            model.track_value_targets(train_ret[index], 0.01)
        if args.variant == "warmup":
            optimizer.param_groups[0]["lr"] = args.lr * min(1.0, step / 300)
        if step % 125 == 0:
            with torch.no_grad(), autocast:
                test = torch.cat(
                    [values(test_obs[i : i + 512]) for i in range(0, len(test_obs), 512)]
                )
                features = model.encoder(model._prepare(test_obs[:512].clone())).float()
            explained = 1 - (test_ret - test).var() / test_ret.var()
            dead = ((features > 0).sum(0) == 0).float().mean()
            spread = features.std(0).mean() / features.mean()
            print(
                f"{args.variant} {args.precision} step {step}: explained variance {explained:.3f}, "
                f"dead units {dead:.2f}, value mean {float(mean):.2f}, "
                f"feature spread over states / mean {spread:.3f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
