"""PPO (`algo=ppo`): its loss against a case worked by hand, the minibatches of whole envs,
its config refused in one line when wrong, and CartPole solved with it."""

import math

import pytest
import torch
from helpers.runs import compose, read_metrics, train

from atari_a3c.actors.shared import new_obs
from atari_a3c.config.checks import validate
from atari_a3c.errors import ConfigError
from atari_a3c.learners.ppo import columns
from atari_a3c.learners.ppo_loss import normalized, ppo_loss


def worked_case(clip_value: bool):
    """Two steps under a uniform policy over two actions: one the behaviour policy took with
    probability 0.25 (ratio 2, clipped to 1.1, advantage +1), one with 0.5 (ratio 1, advantage
    -2); values 1.0 and 0.0, from 0.5 and 0.0, towards targets 2.0 and 0.05."""
    return ppo_loss(
        logits=torch.zeros(1, 2, 2),
        actions=torch.tensor([[0, 1]]),
        behaviour_logp=torch.tensor([[math.log(0.25), math.log(0.5)]]),
        values=torch.tensor([[1.0, 0.0]]),
        old_values=torch.tensor([[0.5, 0.0]]),
        advantages=torch.tensor([[1.0, -2.0]]),
        targets=torch.tensor([[2.0, 0.05]]),
        clip=0.1,
        clip_value=clip_value,
        entropy_coef=0.01,
        value_coef=0.5,
    )


def test_the_ppo_loss_matches_a_case_worked_by_hand():
    losses = worked_case(clip_value=True)
    policy = -(1.1 * 1.0 + 1.0 * -2.0) / 2  # the first step's ratio clipped to 1 + 0.1
    value = 0.5 * ((0.6 - 2.0) ** 2 + 0.05**2) / 2  # the first value clipped to 0.5 + 0.1
    entropy = math.log(2)
    expected = {
        "policy": policy,
        "value": value,
        "entropy": entropy,
        "total": policy + 0.5 * value - 0.01 * entropy,
        "clip_fraction": 0.5,
        "approx_kl": ((2 - 1) - math.log(2)) / 2,
    }
    for name, number in expected.items():
        assert getattr(losses, name).item() == pytest.approx(number, rel=1e-6), name
    unclipped = worked_case(clip_value=False)
    assert unclipped.value.item() == pytest.approx(0.5 * (1.0 + 0.05**2) / 2, rel=1e-6)


def test_advantages_are_normalized_over_the_minibatch():
    advantages = normalized(torch.tensor([[1.0, 2.0], [3.0, 6.0]]))
    assert advantages.mean().item() == pytest.approx(0, abs=1e-6)
    assert advantages.std().item() == pytest.approx(1, rel=1e-6)


def test_minibatches_take_whole_envs_and_frames_stay_channels_last():
    obs = new_obs((3, 5), (4, 84, 84), torch.uint8)
    obs.copy_(torch.randint(0, 255, obs.shape, dtype=torch.uint8))
    index = torch.tensor([3, 0])
    picked = columns(obs, index)
    assert torch.equal(picked, obs[:, [3, 0]])
    assert picked.flatten(0, 1).is_contiguous(memory_format=torch.channels_last)
    state = torch.randn(5, 8)
    assert torch.equal(columns(state, index, 0), state[[3, 0]])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("algo.minibatches=17", "algo.minibatches=17 exceeds the 16 envs of a batch"),
        ("algo.clip_coef=1.5", "algo.clip_coef must be in (0, 1)"),
        ("algo.epochs=0", "algo.epochs must be a positive integer"),
        ("algo.max_grad_norm=0", "algo.max_grad_norm must be > 0"),
    ],
)
def test_bad_ppo_values_are_refused_in_one_line(override, message):
    cfg = compose("algo=ppo", "workers=1", override)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        validate(cfg)


@pytest.mark.slow
def test_ppo_solves_cartpole_taking_epochs_times_minibatches_steps_per_batch(run_dir):
    overrides = ("experiment=cartpole", "algo=ppo", "logger=csv", "callbacks.stop_at_score=195")
    train(run_dir, *overrides, timeout=600)
    rows = read_metrics(run_dir)
    assert [r for r in rows if "charts/mean_return_100" in r][-1]["charts/mean_return_100"] >= 195
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    meta = checkpoint["atari_a3c"]
    batches = meta["frames"] // (16 * 20)  # one rollout of 16 envs x 20 steps per batch
    algo = meta["config"]["algo"]
    assert checkpoint["global_step"] == batches * algo["epochs"] * algo["minibatches"] > 0
    assert any("losses/clip_fraction" in r and "losses/approx_kl" in r for r in rows)
