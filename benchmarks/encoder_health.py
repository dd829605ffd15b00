"""Is a checkpoint's encoder alive? Dead units, feature scale, and state dependence.

Plays random actions in 8 native envs of the checkpoints' game for 200 steps, keeps every third
frame stack, and prints for each checkpoint: the share of dead units (zero on every frame) after
each ReLU of the encoder, the mean of its output features, and how much the values and the
policy logits vary across these states (std over frames). A healthy net has few dead units and
values that vary; a value std and logit spread of 0.000 mean the agent no longer tells states apart.

    python benchmarks/encoder_health.py runs/pong/checkpoints/last.ckpt [more.ckpt ...]

`fresh` in place of a path measures an untrained `nature_lstm` (on `--game`, default: the game of
the first checkpoint, else Pong).
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
from ale_py.vector_env import AtariVectorEnv
from gymnasium.vector import AutoresetMode
from omegaconf import OmegaConf

from atari_a3c.checkpoints.files import KEY, load_checkpoint, policy_from_checkpoint
from atari_a3c.envs.make import rom_name
from atari_a3c.models.actor_critic import ActorCritic, build_model

ENVS, STEPS = 8, 200


def game_frames(game: str) -> tuple[torch.Tensor, int]:
    """Frame stacks of random play in `game` (a ROM name), and the game's action count."""
    env = AtariVectorEnv(game, ENVS, num_threads=1, autoreset_mode=AutoresetMode.SAME_STEP)
    obs, _ = env.reset(seed=1)
    rng, frames, actions = np.random.default_rng(0), [], int(env.single_action_space.n)
    for step in range(STEPS):
        obs, *_ = env.step(rng.integers(0, actions, ENVS))
        if step % 3 == 0:
            frames.append(obs.copy())
    env.close()
    return torch.from_numpy(np.concatenate(frames)), actions


def load_model(path: str, actions: int) -> tuple[ActorCritic, int]:
    if path == "fresh":
        cfg = OmegaConf.create({"encoder": "nature", "hidden_size": 512})
        return build_model(cfg, (4, 84, 84), actions).eval(), 0
    checkpoint = load_checkpoint(path)
    _, model = policy_from_checkpoint(checkpoint)
    return model, checkpoint[KEY]["frames"]


@torch.no_grad()
def health(model: ActorCritic, frames: torch.Tensor) -> str:
    out, dead = model._prepare(frames), []
    for layer in model.encoder:
        out = layer(out)
        if isinstance(layer, torch.nn.ReLU):
            units = out.transpose(0, 1).flatten(1) if out.dim() == 4 else out.T
            dead.append(f"{((units > 0).sum(1) == 0).float().mean():.2f}")
    done = torch.ones(1, len(frames), dtype=torch.bool)
    logits, values, _ = model(frames[None], done, model.initial_state(len(frames)))
    return (
        f"dead after each ReLU {' / '.join(dead)}, feature mean {out.mean():.2f}, "
        f"value std {values.std():.3f}, logit spread {logits[0].std(0).mean():.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+", help="checkpoint paths, or `fresh`")
    parser.add_argument("--game", help="a ROM name such as beam_rider")
    args = parser.parse_args()
    trained = [path for path in args.checkpoints if path != "fresh"]
    game = args.game or (
        rom_name(load_checkpoint(trained[0])[KEY]["env_id"]) if trained else "pong"
    )
    torch.set_num_threads(1)
    frames, actions = game_frames(game)
    for path in args.checkpoints:
        model, trained = load_model(path, actions)
        print(f"{path} ({trained / 1e6:.1f}M frames): {health(model, frames)}", flush=True)


if __name__ == "__main__":
    main()
