"""The evaluation during training keeps `best.ckpt` by the mean its process reports, of greedy
or sampled games."""

from types import SimpleNamespace

import torch
from helpers.runs import compose
from omegaconf import OmegaConf

from atari_a3c.checkpoints.files import KEY
from atari_a3c.envs.make import env_spec
from atari_a3c.evaluation.periodic import PeriodicEvaluation
from atari_a3c.models.actor_critic import build_model


def _evaluate(callback: PeriodicEvaluation, weights: str, frames: int, scores: list[float]):
    """A snapshot `weights` taken at `frames`, scored `scores` by a real process."""
    callback.candidate.write_text(weights)
    callback.snapshot_frames = frames
    callback.process = callback.ctx.Process(target=callback.results.put, args=(scores,))
    callback.process.start()
    module = SimpleNamespace(eval_history=[])
    callback._collect(SimpleNamespace(logger=None), module, block=True)
    return module.eval_history


def test_best_ckpt_takes_the_later_of_equal_means_and_keeps_a_better_one(tmp_path):
    callback = PeriodicEvaluation(
        tmp_path, "ALE/Pong-v5", every_frames=1000, episodes=2, seed=0, at_end=False
    )
    assert _evaluate(callback, "first", 1000, [19.0, 20.0]) == [(1000, 19.5)]
    _evaluate(callback, "second", 2000, [20.0, 19.0])  # as good: trained longer
    assert (tmp_path / "best.ckpt").read_text() == "second"
    _evaluate(callback, "third", 3000, [18.0, 20.0])  # worse
    assert (tmp_path / "best.ckpt").read_text() == "second"
    assert not callback.candidate.exists()
    assert (tmp_path / "evaluations.jsonl").read_text().count("\n") == 3


def uniform_policy_checkpoint(path):
    """A CartPole checkpoint whose policy gives both actions the same probability in every
    state: argmax play always pushes left (the first of the tie), sampled play pushes both ways."""
    cfg = compose("experiment=cartpole")
    spec = env_spec(cfg)
    model = build_model(cfg.model, spec.obs_shape, spec.num_actions)
    with torch.no_grad():
        model.policy.weight.zero_()
        model.policy.bias.zero_()
    meta = {"config": OmegaConf.to_container(cfg, resolve=True), "env_id": cfg.env.id}
    meta |= {"num_actions": spec.num_actions, "obs_shape": list(spec.obs_shape)}
    weights = {f"model.{name}": tensor for name, tensor in model.state_dict().items()}
    torch.save({"state_dict": weights, KEY: meta}, path)


def test_the_evaluation_plays_greedy_or_sampled_actions_as_configured(tmp_path):
    means = {}
    for greedy in (True, False):
        callback = PeriodicEvaluation(
            tmp_path, "CartPole-v1", 1000, 16, seed=0, at_end=False, greedy=greedy
        )
        uniform_policy_checkpoint(callback.candidate)
        callback.snapshot_frames = 1000
        callback._score_candidate()  # a real evaluation process, as during training
        module = SimpleNamespace(eval_history=[])
        callback._collect(SimpleNamespace(logger=None), module, block=True)
        [(_, means[greedy])] = module.eval_history
    assert means[True] <= 11, "always left: the pole falls within a dozen steps"
    assert means[False] >= 18, "random pushes keep it up about twice as long"
