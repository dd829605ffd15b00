"""A small weights-only copy of a checkpoint, to ship or share:
`python -m atari_a3c.checkpoints.export <run>/checkpoints/best.ckpt
src/atari_a3c/pretrained/pong.ckpt`.

It keeps what playing and fine-tuning need (the weights, with the parameters in bf16, the config,
env and shapes, frames and evaluation history) and drops the optimizer state and the games'
history, so it plays with `evaluate.py ckpt=` and starts runs with `train.py init_from=`, but
does not resume one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from atari_a3c.checkpoints.files import (
    KEY,
    load_checkpoint,
    policy_from_checkpoint,
    save_atomically,
)
from atari_a3c.errors import BadInput, fail

KEPT = ("config", "env_id", "num_actions", "obs_shape", "frames", "updates", "eval_history")


def export(source: Path, target: Path) -> int:
    """Write the weights-only copy of `source` to `target`; returns its size in bytes."""
    checkpoint = load_checkpoint(source)
    _, model = policy_from_checkpoint(checkpoint)
    parameters = {f"model.{name}" for name, _ in model.named_parameters()}
    weights = {
        name: tensor.to(torch.bfloat16) if name in parameters else tensor
        for name, tensor in checkpoint["state_dict"].items()
    }
    meta = {key: checkpoint[KEY][key] for key in KEPT}
    meta |= {"overrides": [], "recent_returns": [], "game_history": [], "wandb_id": None}
    save_atomically({"state_dict": weights, KEY: meta}, target)
    return target.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a run's last.ckpt or best.ckpt")
    parser.add_argument("target", type=Path, help="the weights-only file to write")
    args = parser.parse_args()
    try:
        size = export(args.source, args.target)
    except BadInput as error:
        fail(str(error))
    print(f"{args.target}: {size / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
