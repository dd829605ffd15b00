"""Training's native vector env and evaluation's gymnasium pipeline show a policy the same game."""

import numpy as np
import pytest
from helpers.runs import compose, hydra_context

from atari_a3c.config.job import check, size_from_cores
from atari_a3c.envs.make import env_spec, make_env
from atari_a3c.envs.vector import TrainingEnvs

SAME_START = ("env.noop_max=0", "env.fire_reset=false")  # random no-ops differ by design


@pytest.mark.parametrize("game", ["breakout", "pong", "spaceinvaders"])
def test_both_pipelines_give_identical_observations_and_rewards(game):
    cfg = compose(f"env={game}", *SAME_START, "env.clip_rewards=false")
    size_from_cores(cfg)
    evaluation, training = make_env(cfg), TrainingEnvs(cfg, 1)
    obs, _ = evaluation.reset(seed=3)
    np.testing.assert_array_equal(obs, training.reset(seed=3)[0])
    actions = np.random.default_rng(0).integers(0, training.num_actions, 150)
    try:
        for action in actions:
            obs, reward, terminated, truncated, _ = evaluation.step(int(action))
            step = training.step(np.array([action]))
            assert reward == step.reward[0]
            if terminated or truncated:  # the vector env already shows the next game
                break
            np.testing.assert_array_equal(obs, step.obs[0])
    finally:
        evaluation.close()
        training.close()


def test_evaluation_copies_no_screen_that_the_preprocessing_throws_away():
    env = make_env(compose("env=pong"))
    try:  # the emulator env observes RAM: the preprocessing grabs the screens it keeps
        assert env.unwrapped.observation_space.shape == (128,)
    finally:
        env.close()


def test_rgb_screens_reach_the_conv_net_through_both_pipelines():
    cfg = compose("env.obs_type=rgb", *SAME_START)
    size_from_cores(cfg)
    spec = env_spec(cfg)
    assert spec.obs_shape == (4, 84, 84, 3)
    training = TrainingEnvs(cfg, 2)
    try:
        assert training.reset(seed=0).shape == (2, 4, 84, 84, 3)
    finally:
        training.close()


def test_ram_observations_are_the_consoles_bytes_and_train_the_mlp():
    overrides = ["env=breakout", "env.obs_type=ram", "env.frame_stack=1"]
    cfg = compose(*overrides)
    with hydra_context():
        cfg, _, spec, _ = check(cfg, overrides)
    assert spec.obs_shape == (1, 128) and cfg.model.encoder == "mlp"
    env = make_env(cfg)
    try:
        obs, _ = env.reset(seed=0)
        obs, *_ = env.step(1)
        np.testing.assert_array_equal(obs[-1], env.unwrapped.ale.getRAM())
    finally:
        env.close()


def test_a_game_mode_changes_the_game():
    def first_frames(*overrides):
        env = make_env(compose("env=spaceinvaders", *SAME_START, *overrides))
        try:
            obs, _ = env.reset(seed=0)
            return [env.step(1)[0] for _ in range(50)]
        finally:
            env.close()

    assert not np.array_equal(first_frames(), first_frames("env.mode=1"))


@pytest.mark.parametrize("backend", ["ale_vector", "gymnasium"])
def test_the_learner_sees_clipped_rewards_and_lost_lives_while_whole_games_keep_their_scores(
    backend,
):
    """Space Invaders scores 5 to 30 per invader and gives 3 lives: a recorded game's score is
    the raw sum over all its episodes, while the rewards the learner sees are in [-1, 1]."""
    cfgs = [compose("env=spaceinvaders", f"env.backend={backend}") for _ in range(2)]
    cfgs[1].env.clip_rewards = False
    for cfg in cfgs:
        size_from_cores(cfg)
    clipped, raw = (TrainingEnvs(cfg, 1) for cfg in cfgs)
    clipped.reset(seed=5), raw.reset(seed=5)
    actions = np.random.default_rng(0).integers(0, clipped.num_actions, (20000, 1))
    score, episodes, games = 0.0, 0, 0
    try:
        for action in actions:
            step, raw_step = clipped.step(action), raw.step(action)
            assert abs(step.reward[0]) <= 1 and step.done[0] == raw_step.done[0]
            assert step.reward[0] == np.sign(raw_step.reward[0])
            score, episodes = score + raw_step.reward[0], episodes + step.done[0]
            if len(step.game_returns):
                assert step.game_returns.tolist() == raw_step.game_returns.tolist() == [score]
                assert score > 30 and episodes == 3 and step.game_lengths[0] > 100
                score, episodes, games = 0.0, 0, games + 1
                if games == 2:
                    break
    finally:
        clipped.close(), raw.close()
    assert games == 2
