"""The peer's learning curve on this machine: Stable-Baselines3 A2C on Pong with its zoo's Atari
settings, scored greedily every 1M frames, against wall-clock minutes.

Runs in a throwaway virtual environment, never the project's (it needs SB3, not atari_a3c):

    python -m venv /tmp/peer && /tmp/peer/bin/pip install torch==2.13.0 stable-baselines3 \
        ale-py gymnasium opencv-python-headless
    /tmp/peer/bin/python benchmarks/peers/peer_a2c_pong.py --frames 10000000 \
        --out benchmarks/atari/peer

The zoo's `a2c.yml` for Atari: AtariWrapper, 4-frame stack, CnnPolicy, 16 envs, n_steps 5,
RMSpropTFLike (lr 7e-4, alpha 0.99, eps 1e-5), vf_coef 0.25, ent_coef 0.01. Every `--every`
frames it plays `--episodes` full greedy games (no end-of-life cuts, true scores) on a separate
env and rewrites `<out>/sb3-a2c-pong-seed<s>.json` with the curve so far (frames, minutes since
start with the evaluations included, mean, std), and saves the model (optimizer included) in
`--saves`. A run whose record and saved model exist goes on from its last evaluation, its
minutes counted on from there, so a longer budget (`--frames 40000000`) can be spread over
several sittings.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

FRAME_SKIP = 4


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=10_000_000, help="env frames to train")
    p.add_argument("--every", type=int, default=1_000_000, help="env frames between evaluations")
    p.add_argument("--episodes", type=int, default=10, help="greedy games per evaluation")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    p.add_argument("--out", type=Path, default=Path("benchmarks/atari/peer"))
    p.add_argument("--saves", type=Path, default=Path("outputs/peer"), help="saved models")
    return p.parse_args()


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def greedy_scores(model, env, episodes: int) -> list[float]:
    """True scores of `episodes` whole games played with the argmax action."""
    scores, obs, total = [], env.reset(), 0.0
    while len(scores) < episodes:
        action, _ = model.predict(obs, deterministic=True)
        obs, reward, done, _ = env.step(action)
        total += float(reward[0])
        if done[0]:
            scores.append(total)
            total = 0.0
    return scores


def main() -> None:
    args = parse_args()
    import ale_py
    import gymnasium as gym
    import torch
    from stable_baselines3 import A2C
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_atari_env
    from stable_baselines3.common.sb2_compat.rmsprop_tf_like import RMSpropTFLike
    from stable_baselines3.common.vec_env import VecFrameStack

    gym.register_envs(ale_py)
    torch.set_num_threads(args.threads)
    env_id = "PongNoFrameskip-v4"
    train_env = VecFrameStack(make_atari_env(env_id, n_envs=16, seed=args.seed), 4)
    eval_kwargs = {"terminal_on_life_loss": False, "clip_reward": False}
    eval_env = VecFrameStack(
        make_atari_env(env_id, n_envs=1, seed=args.seed + 1000, wrapper_kwargs=eval_kwargs), 4
    )
    for folder in (args.out, args.saves):
        folder.mkdir(parents=True, exist_ok=True)
    path = args.out / f"sb3-a2c-pong-seed{args.seed}.json"
    saved = args.saves / f"sb3-a2c-pong-seed{args.seed}.zip"
    if path.exists() and saved.exists():  # go on from the last evaluation
        record = json.loads(path.read_text()) | {"frames": args.frames}
        model = A2C.load(saved, env=train_env, device="cpu")
        print(f"resuming at {model.num_timesteps * FRAME_SKIP} frames from {saved}", flush=True)
    else:
        model = A2C(
            "CnnPolicy", train_env, ent_coef=0.01, vf_coef=0.25, seed=args.seed, device="cpu",
            policy_kwargs={"optimizer_class": RMSpropTFLike, "optimizer_kwargs": {"eps": 1e-5}},
        )  # fmt: skip
        record = {
            "peer": "stable-baselines3 A2C (rl-zoo3 Atari settings)", "game": "pong",
            "env_id": env_id, "seed": args.seed, "cpu": cpu_model(), "torch_threads": args.threads,
            "settings": "CnnPolicy, 16 envs, n_steps 5, RMSpropTFLike lr 7e-4 eps 1e-5, "
                        "vf_coef 0.25, ent_coef 0.01", "frames": args.frames,
            "eval_episodes": args.episodes, "curve": [],
        }  # fmt: skip
    done_minutes = record["curve"][-1][1] if record["curve"] else 0.0
    start = time.perf_counter() - 60 * done_minutes

    class Evaluate(BaseCallback):
        """Greedy games every `args.every` frames; the record is rewritten after each."""

        def __init__(self):
            super().__init__()
            self.next_at = (model.num_timesteps * FRAME_SKIP // args.every + 1) * args.every

        def _on_step(self) -> bool:
            frames = self.num_timesteps * FRAME_SKIP
            if frames >= self.next_at:
                self.next_at += args.every
                scores = greedy_scores(self.model, eval_env, args.episodes)
                minutes = (time.perf_counter() - start) / 60
                point = [frames, minutes, statistics.mean(scores), statistics.pstdev(scores)]
                record["curve"].append(point)
                print(f"frames={frames} minutes={minutes:.1f} greedy={point[2]:.1f}", flush=True)
                path.write_text(json.dumps(record, indent=1) + "\n")
                self.model.save(saved)
            return True

    steps_left = args.frames // FRAME_SKIP - model.num_timesteps
    model.learn(steps_left, callback=Evaluate(), reset_num_timesteps=False)
    record["wall_clock_minutes"] = (time.perf_counter() - start) / 60
    path.write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
