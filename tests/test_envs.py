"""Training's native vector env and evaluation's gymnasium pipeline show a policy the same game."""

import numpy as np
import pytest
from conftest import compose

from atari_a3c.envs import TrainingEnvs, make_env
from atari_a3c.training import size_from_cores

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
