"""The learner's own gradient step: clipping at the configured norm and skipping NaN/inf."""

import math

import torch
from conftest import compose
from omegaconf import OmegaConf

from atari_a3c.module import ActorCriticLearner


def make_learner() -> tuple[ActorCriticLearner, torch.optim.Optimizer]:
    cfg = OmegaConf.to_container(compose("experiment=cartpole"), resolve=True)
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


def test_non_finite_gradients_skip_the_update():
    learner, optimizer = make_learner()
    for param in learner.parameters():
        param.grad = torch.ones_like(param)
    next(learner.parameters()).grad[0] = float("nan")
    learner.configure_gradient_clipping(optimizer, 40.0)
    assert all(p.grad is None for p in learner.parameters())
    assert learner.skipped_updates == 1
