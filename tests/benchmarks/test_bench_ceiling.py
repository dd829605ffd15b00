"""The throughput bench's compute-only ceiling: a real update of the recipe's shape."""

import sys

import torch
from helpers.runs import ROOT

from atari_a3c.bench.recipes import compose_config

sys.path.insert(0, str(ROOT / "benchmarks" / "speed"))
import ceiling  # noqa: E402  (benchmarks/speed/ceiling.py)


def recipe_learner_and_batch():
    """The default recipe's config, a fresh learner and a random rollout batch of its shape."""
    cfg = compose_config([])
    spec = ceiling.env_spec(cfg)
    learner = ceiling.learner_for(cfg, spec)
    hidden = learner.model.hidden_size
    batch = ceiling.random_batch(cfg.algo.unroll, cfg.envs_per_worker, spec, hidden)
    return cfg, learner, batch


def test_the_timed_update_trains_the_model_and_acting_leaves_it_alone():
    cfg, learner, batch = recipe_learner_and_batch()
    model = learner.model
    before = [p.detach().clone() for p in model.parameters()]
    ceiling.acting_step(model, batch)()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    ceiling.update_step(cfg, learner, batch)()
    assert all(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert model.obs_mean.abs().sum() > 0 and model.value_mean != 0


def test_the_timed_frames_are_laid_out_as_the_learner_receives_them():
    cfg = compose_config([])
    spec = ceiling.env_spec(cfg)
    batch = ceiling.random_batch(cfg.algo.unroll, cfg.envs_per_worker, spec, 512)
    frames = batch["obs"].flatten(0, 1)  # as the encoder sees them
    assert frames.is_contiguous(memory_format=torch.channels_last)
    assert batch["obs"].dtype == torch.uint8 and batch["obs"].max() > 0


def test_the_counted_update_flops_include_the_backward_pass():
    cfg, learner, batch = recipe_learner_and_batch()
    model = learner.model
    state = (batch["h0"], batch["c0"])
    forward = ceiling.flops(lambda: model(batch["obs"], batch["done"], state, True))
    update = ceiling.flops(ceiling.update_step(cfg, learner, batch))
    # backward costs about twice the forward, less the frames' gradient, which nothing needs
    assert forward > 0 and 2.2 * forward < update < 3 * forward
