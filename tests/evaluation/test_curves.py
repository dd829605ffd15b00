"""The training-game history a checkpoint carries stays bounded and keeps the curve's shape."""

import numpy as np

from atari_a3c.evaluation.curves import plot_returns, returns_figure
from atari_a3c.learners.game_history import GameHistory


def test_history_stays_bounded_and_keeps_every_games_weight(tmp_path):
    history = GameHistory(max_points=64)
    scores = np.linspace(-21, 21, 10_000)
    for frames, score in enumerate(scores):
        history.add(frames * 1000, [float(score)])
    frames, means, games = np.array(history.points).T
    assert len(history.points) < 64 and games.sum() == len(scores)
    assert np.isclose(np.average(means, weights=games), scores.mean())
    assert np.all(np.diff(frames) > 0) and np.all(np.diff(means) > 0)  # the curve's shape
    plot_returns(tmp_path / "returns.png", history, [(5_000_000, 0.0)], "ALE/Pong-v5", True)
    assert (tmp_path / "returns.png").stat().st_size > 0


def test_history_reads_the_older_checkpoints_pairs():
    history = GameHistory([(1000, -21.0), (2000, -20.0)])
    assert history.points == [(1000, -21.0, 1), (2000, -20.0, 1)]


def test_a_short_run_gets_a_titled_curve_without_empty_entries():
    one_game = returns_figure(GameHistory([(1000, 20.0)]), [(2000, 30.0)], "CartPole-v1")
    ax = one_game.axes[0]
    assert ax.get_title() == "CartPole-v1: game scores"
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["training game", "evaluation mean (greedy)"]
    sampled = returns_figure(GameHistory(), [(2000, 30.0)], "CartPole-v1", greedy=False)
    assert sampled.axes[0].get_lines()[0].get_label() == "evaluation mean (sampled)"
    nothing = returns_figure(GameHistory(), [], "CartPole-v1").axes[0]
    assert [t.get_text() for t in nothing.texts] == ["no finished game yet"]


def test_the_running_mean_spans_at_most_100_games():
    history = GameHistory([(i * 100, float(i)) for i in range(150)])
    ax = returns_figure(history, [], "CartPole-v1").axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["mean of 100"]
