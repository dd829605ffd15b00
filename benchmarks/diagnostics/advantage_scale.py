"""How strong is the policy gradient beside the entropy bonus? Advantages of a trained policy.

Plays each checkpoint's policy (actions sampled, as the actors do) in 16 training envs of its
game (clipped rewards, a lost life ends the episode) for `--steps` agent steps, cuts the steps
into the training's unrolls and computes the training's V-trace advantages on them (on-policy,
so every importance weight is 1). Prints for each checkpoint the advantages' std and mean
magnitude, the share of steps with a reward, the policy's mean entropy and the entropy bonus
per unit of advantage std (`algo.entropy_coef` / std): the larger it is, the more the bonus
outweighs the policy gradient and the nearer the policy stays to uniform.

    python benchmarks/diagnostics/advantage_scale.py runs/beamrider/checkpoints/last.ckpt \
        [more.ckpt ...]
"""

from __future__ import annotations

import argparse

import torch

from atari_a3c.checkpoints.files import load_checkpoint, policy_from_checkpoint
from atari_a3c.envs.vector import TrainingEnvs
from atari_a3c.learners import returns as R

ENVS = 16


@torch.no_grad()
def play(checkpoint: str, steps: int) -> tuple:
    """The config, and `[T, B]` values and policy entropies of `steps + 1` steps, rewards and
    dones of the `steps` between them."""
    cfg, model = policy_from_checkpoint(load_checkpoint(checkpoint))
    envs = TrainingEnvs(cfg, ENVS)
    obs, done = torch.as_tensor(envs.reset(seed=cfg.seed)), torch.zeros(ENVS, dtype=torch.bool)
    state, values, rewards, dones, entropies = model.initial_state(ENVS), [], [], [], []
    for step in range(steps + 1):
        logits, value, state = model(obs[None], done[None], state)
        values.append(value[0])
        entropies.append(R.policy_entropy(logits[0]))
        if step == steps:
            break
        move = envs.step(torch.distributions.Categorical(logits=logits[0]).sample().numpy())
        obs, done = torch.as_tensor(move.obs), torch.as_tensor(move.done)
        rewards.append(torch.as_tensor(move.reward, dtype=torch.float32))
        dones.append(done)
    envs.close()
    return cfg, *(torch.stack(x) for x in (values, rewards, dones, entropies))


def advantages(cfg, values, rewards, dones) -> torch.Tensor:
    """The training's V-trace advantages, unroll by unroll (each bootstraps from its next step)."""
    algo, unroll, out = cfg.algo, cfg.algo.unroll, []
    for start in range(0, len(rewards) - unroll + 1, unroll):
        span = slice(start, start + unroll)
        logp = torch.zeros_like(rewards[span])
        discounts = algo.gamma * (~dones[span]).float()
        vt = R.vtrace(
            logp,
            logp,
            rewards[span],
            values[span],
            values[start + unroll],
            discounts,
            algo.gae_lambda,
        )
        out.append(vt.advantages)
    return torch.cat(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkpoints", nargs="+")
    parser.add_argument("--steps", type=int, default=1000, help="agent steps per env")
    args = parser.parse_args()
    torch.set_num_threads(1)
    for path in args.checkpoints:
        cfg, values, rewards, dones, entropies = play(path, args.steps)
        adv = advantages(cfg, values, rewards, dones)
        print(
            f"{cfg.env.id} {path}: advantage std {adv.std():.3f}, mean |advantage| "
            f"{adv.abs().mean():.3f}, steps with a reward {(rewards != 0).float().mean():.3f}, "
            f"policy entropy {entropies.mean():.2f}, entropy bonus per advantage std "
            f"{cfg.algo.entropy_coef / adv.std():.4f}"
        )


if __name__ == "__main__":
    main()
