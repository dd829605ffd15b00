"""The advantage-scale diagnostic: the training's advantages, unroll by unroll, of a real policy."""

import sys

import torch
from helpers.runs import ROOT
from omegaconf import OmegaConf

sys.path.insert(0, str(ROOT / "benchmarks" / "diagnostics"))
import advantage_scale  # noqa: E402  (benchmarks/diagnostics/advantage_scale.py)

PONG = str(ROOT / "src" / "atari_a3c" / "pretrained" / "pong.ckpt")


def test_each_unroll_bootstraps_from_its_next_value_as_in_training():
    cfg = OmegaConf.create({"algo": {"unroll": 5, "gamma": 0.99, "gae_lambda": 0.95}})
    steps, envs = 10, 2
    values = torch.zeros(steps + 1, envs)
    rewards = torch.zeros(steps, envs)
    rewards[7] = 1.0  # in the second unroll (steps 5-9)
    dones = torch.zeros(steps, envs, dtype=torch.bool)
    adv = advantage_scale.advantages(cfg, values, rewards, dones)
    assert adv.shape == (steps, envs)
    assert torch.equal(adv[:5], torch.zeros(5, envs))  # the first unroll ends at step 5's value
    assert (adv[5:8] > 0).all() and torch.equal(adv[8:], torch.zeros(2, envs))
    assert torch.allclose(adv[7], torch.ones(envs))


def test_the_shipped_pong_policy_is_played_in_its_training_envs():
    cfg, values, rewards, dones, entropies = advantage_scale.play(PONG, steps=10)
    assert cfg.env.id == "ALE/Pong-v5"
    envs = advantage_scale.ENVS
    assert values.shape == (11, envs) and rewards.shape == (10, envs)
    assert dones.dtype == torch.bool and torch.isfinite(values).all()
    assert ((entropies > 0) & (entropies <= torch.log(torch.tensor(6.0)) + 1e-4)).all()
