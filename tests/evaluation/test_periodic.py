"""The evaluation during training keeps `best.ckpt` by the greedy mean its process reports."""

from types import SimpleNamespace

from atari_a3c.evaluation.periodic import PeriodicEvaluation


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
    callback = PeriodicEvaluation(tmp_path, every_frames=1000, episodes=2, seed=0, at_end=False)
    assert _evaluate(callback, "first", 1000, [19.0, 20.0]) == [(1000, 19.5)]
    _evaluate(callback, "second", 2000, [20.0, 19.0])  # as good: trained longer
    assert (tmp_path / "best.ckpt").read_text() == "second"
    _evaluate(callback, "third", 3000, [18.0, 20.0])  # worse
    assert (tmp_path / "best.ckpt").read_text() == "second"
    assert not callback.candidate.exists()
    assert (tmp_path / "evaluations.jsonl").read_text().count("\n") == 3
