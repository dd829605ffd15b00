"""The training-game history a checkpoint carries stays bounded and keeps the curve's shape."""

import numpy as np

from atari_a3c.curves import GameHistory, plot_returns


def test_history_stays_bounded_and_keeps_every_games_weight(tmp_path):
    history = GameHistory(max_points=64)
    scores = np.linspace(-21, 21, 10_000)
    for frames, score in enumerate(scores):
        history.add(frames * 1000, [float(score)])
    frames, means, games = np.array(history.points).T
    assert len(history.points) < 64 and games.sum() == len(scores)
    assert np.isclose(np.average(means, weights=games), scores.mean())
    assert np.all(np.diff(frames) > 0) and np.all(np.diff(means) > 0)  # the curve's shape
    plot_returns(tmp_path / "returns.png", history, [(5_000_000, 0.0)])
    assert (tmp_path / "returns.png").stat().st_size > 0


def test_history_reads_the_older_checkpoints_pairs():
    history = GameHistory([(1000, -21.0), (2000, -20.0)])
    assert history.points == [(1000, -21.0, 1), (2000, -20.0, 1)]
