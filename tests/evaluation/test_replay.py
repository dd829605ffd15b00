"""A recorded game plays again exactly, from its seed, start state and actions, with no policy."""

import pytest
import torch
from helpers.runs import compose

from atari_a3c.envs.make import env_spec
from atari_a3c.errors import BadInput
from atari_a3c.evaluation import recorded
from atari_a3c.evaluation.play import play
from atari_a3c.models.actor_critic import build_model


@pytest.fixture(scope="module")
def breakout_games():
    cfg = compose("env=breakout", "env.sticky_action_prob=0.25")  # sticky: replayed exactly too
    spec = env_spec(cfg)
    torch.manual_seed(0)
    model = build_model(cfg.model, spec.obs_shape, spec.num_actions).eval()
    return play(cfg, model, 2, seed=7, greedy=False, record=True)


def test_a_saved_game_replays_to_the_same_score_and_length(breakout_games, tmp_path):
    for i, game in enumerate(breakout_games):
        path = tmp_path / f"game-{i + 1}.npz"
        recorded.save(game.recording, path)
        recording = recorded.load(path)
        assert len(recording.actions) == game.length and recording.start_state
        score, length, _ = recorded.play_again(recording)
        assert (score, length) == (game.score, game.length)


def test_a_replay_that_starts_elsewhere_is_refused(breakout_games):
    first, second = (game.recording for game in breakout_games)
    first.seed = second.seed  # another game's start
    with pytest.raises(BadInput, match="the emulator starts from another state than recorded"):
        recorded.play_again(first)


def test_a_file_that_is_not_a_replay_is_one_line(tmp_path):
    (tmp_path / "notes.npz").write_text("not an archive")
    for path in (tmp_path / "notes.npz", tmp_path / "absent.npz"):
        with pytest.raises(BadInput, match="replay file not found|not a replay file"):
            recorded.load(path)
