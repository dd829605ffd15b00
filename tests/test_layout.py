"""The default layout: actors, emulator threads and learner threads sized from the cores."""

import pytest
import torch
from conftest import compose

from atari_a3c.envs import env_spec
from atari_a3c.hardware import actor_layout, cores, learner_threads
from atari_a3c.job_config import size_from_cores
from atari_a3c.models import build_model


@pytest.mark.parametrize(
    ("num_cores", "expected"), [(1, (1, 1)), (2, (1, 2)), (8, (2, 2)), (16, (4, 2))]
)
def test_actor_layout_grows_with_the_cores(num_cores, expected):
    assert actor_layout(num_cores) == expected


def test_learner_gets_the_cores_the_emulators_leave():
    assert learner_threads(2, 1, 2) == 1
    assert learner_threads(16, 4, 2) == 8


def test_null_layout_keys_are_filled_and_set_ones_kept():
    cfg = compose("env=pong")
    size_from_cores(cfg)
    workers, env_threads = actor_layout(cores())
    assert (cfg.workers, cfg.env.env_threads) == (workers, env_threads)
    assert cfg.learner_threads == learner_threads(cores(), workers, env_threads)
    pinned = compose("env=pong", "workers=3", "env.env_threads=1", "learner_threads=5")
    size_from_cores(pinned)
    assert (pinned.workers, pinned.env.env_threads, pinned.learner_threads) == (3, 1, 5)


def test_conv_nets_are_channels_last():
    cfg = compose("env=pong")
    spec = env_spec(cfg)
    model = build_model(cfg.model, spec.obs_shape, spec.num_actions)
    conv = model.encoder[0].weight
    assert conv.is_contiguous(memory_format=torch.channels_last) and not conv.is_contiguous()
