"""The learner's own gradient step: clipping, skipping NaN/inf, advantage and value scaling."""

import copy
import math

import torch
from helpers.runs import compose, read_metrics, train
from omegaconf import OmegaConf

from atari_a3c.learners.actor_critic import ActorCriticLearner
from atari_a3c.learners.base import lr_factor


def make_learner(*overrides: str) -> tuple[ActorCriticLearner, torch.optim.Optimizer]:
    cfg = OmegaConf.to_container(compose("experiment=cartpole", *overrides), resolve=True)
    learner = ActorCriticLearner(cfg, (4,), 2)
    return learner, torch.optim.Adam(learner.parameters(), fused=True)


def grad_norm(learner: ActorCriticLearner) -> float:
    return math.sqrt(sum(p.grad.pow(2).sum().item() for p in learner.parameters()))


def test_gradients_are_clipped_to_the_global_norm():
    learner, optimizer = make_learner()
    for param in learner.parameters():
        param.grad = torch.full_like(param, 100.0)
    learner.configure_gradient_clipping(optimizer, 40.0)
    assert math.isclose(grad_norm(learner), 40.0, rel_tol=1e-4)
    assert learner.skipped_updates == 0


def test_clipping_matches_torchs_clip_grad_norm_bit_for_bit_above_and_below_the_limit():
    for scale in (1e-3, 0.1, 1.0):  # global norms of about 0.4, 38.7 (just under 40) and 387
        learner, optimizer = make_learner()
        g = torch.Generator().manual_seed(0)
        for param in learner.parameters():
            param.grad = scale * torch.randn(param.shape, generator=g)
        reference = copy.deepcopy(learner.model)  # gradients are not copied along
        for ref, param in zip(reference.parameters(), learner.model.parameters(), strict=True):
            ref.grad = param.grad.clone()
        torch.nn.utils.clip_grad_norm_(reference.parameters(), 40.0)
        expected = [p.grad for p in reference.parameters()]
        learner.configure_gradient_clipping(optimizer, 40.0)
        got = [p.grad for p in learner.model.parameters()]
        assert all(torch.equal(a, b) for a, b in zip(got, expected, strict=True)), scale


def test_non_finite_gradients_skip_the_update():
    learner, optimizer = make_learner()
    for param in learner.parameters():
        param.grad = torch.ones_like(param)
    next(learner.parameters()).grad[0] = float("nan")
    learner.configure_gradient_clipping(optimizer, 40.0)
    assert all(p.grad is None for p in learner.parameters())
    assert learner.skipped_updates == 1


def scaled_losses(learner: ActorCriticLearner, scale: float):
    """The losses on a fixed CartPole-shaped batch whose rewards, and PopArt's std, are
    multiplied by `scale`."""
    learner.model.value_std.fill_(scale)
    g = torch.Generator().manual_seed(0)
    steps, envs = 4, 3
    batch = {
        "obs": torch.randn(steps + 1, envs, 4, generator=g),
        "done": torch.zeros(steps + 1, envs, dtype=torch.bool),
        "action": torch.randint(0, 2, (steps, envs), generator=g),
        "reward": scale * torch.randn(steps, envs, generator=g),
        "h0": torch.zeros(envs, 128),
        "c0": torch.zeros(envs, 128),
    }
    with torch.no_grad():
        logits, values, _ = learner.model(batch["obs"], batch["done"], (batch["h0"], batch["c0"]))
        return learner.losses(batch, logits, values)[0]


def test_popart_scales_the_value_loss_to_the_return_std_and_leaves_advantages_raw():
    learner, _ = make_learner("algo.popart_rate=0.01")
    small, large = scaled_losses(learner, 1.0), scaled_losses(learner, 100.0)
    torch.testing.assert_close(small.value, large.value, rtol=1e-4, atol=0)
    torch.testing.assert_close(100 * small.policy, large.policy, rtol=1e-4, atol=0)


def test_the_learning_rate_rises_over_the_warmup_and_falls_over_the_cooldown():
    assert [lr_factor(step, 4, 100, 0) for step in (0, 1, 3, 100)] == [0.25, 0.5, 1.0, 1.0]
    assert [lr_factor(step, 0, 10, 10) for step in (0, 5, 10, 20)] == [1.0, 0.5, 0.0, 0.0]
    assert [lr_factor(step, 0, 100, 10) for step in (0, 90, 95, 100)] == [1.0, 1.0, 0.5, 0.0]
    assert math.isclose(lr_factor(1, 4, 10, 10), 0.5 * 0.9)
    assert lr_factor(7, 0, 10, 0) == 1.0


def test_advantages_divided_by_their_rms_make_the_policy_gradient_scale_free():
    learner, _ = make_learner("algo.popart_rate=0.01", "algo.advantage_rms_rate=0.01")
    small, large = scaled_losses(learner, 1.0), scaled_losses(learner, 100.0)  # the batch's RMS
    torch.testing.assert_close(small.policy, large.policy, rtol=1e-4, atol=0)
    learner.advantage_rms = 0.5  # tracked
    small = scaled_losses(learner, 1.0)
    learner.advantage_rms = 50.0
    torch.testing.assert_close(
        small.policy, scaled_losses(learner, 100.0).policy, rtol=1e-4, atol=0
    )
    learner.advantage_rms = 1.0  # twice the RMS, half the policy gradient
    torch.testing.assert_close(
        small.policy, 2 * scaled_losses(learner, 1.0).policy, rtol=1e-4, atol=0
    )


def test_the_advantages_rms_is_tracked_logged_and_kept_by_the_checkpoint(tmp_path):
    train(
        tmp_path, "experiment=cartpole", "debug=tiny", "logger=csv", "algo.advantage_rms_rate=0.1"
    )
    checkpoint = torch.load(tmp_path / "checkpoints" / "last.ckpt", weights_only=True)
    kept = checkpoint["atari_a3c"]["advantage_rms"]
    logged = [
        row["losses/advantage_rms"]
        for row in read_metrics(tmp_path)
        if "losses/advantage_rms" in row
    ]
    assert kept > 0 and math.isclose(logged[-1], kept, rel_tol=1e-6)
    resumed, _ = make_learner("algo.advantage_rms_rate=0.1")
    resumed.on_load_checkpoint(checkpoint)
    assert resumed.advantage_rms == kept
