"""REINFORCE's whole episodes, cut out of the rollout stream across rollouts and actor restarts."""

import torch

from atari_a3c.learners.reinforce import EpisodeAssembler, padded


def rollout(starts: list[int], first: bool = False, steps: int = 4, offset: int = 0) -> dict:
    """One env's rollout: obs and reward are the step number; episodes start at `starts`."""
    done = torch.zeros(steps + 1, 1, dtype=torch.bool)
    done[starts] = True
    t = torch.arange(offset, offset + steps + 1, dtype=torch.float32)
    return {
        "obs": t[:, None, None],
        "done": done,
        "action": torch.zeros(steps, 1, dtype=torch.int64),
        "reward": t[:steps, None],
        "column": torch.tensor([0]),
        "first": torch.tensor([first]),
    }


def test_an_episode_spanning_rollouts_is_returned_whole_once_the_next_one_starts():
    episodes = EpisodeAssembler()
    assert episodes.add(rollout([0], first=True)) == []
    assert episodes.add(rollout([4], offset=4)) == []  # the next rollout's obs[0] starts one
    whole, short = episodes.add(rollout([0, 2], offset=8))
    assert whole.reward.tolist() == [0, 1, 2, 3, 4, 5, 6, 7] and short.reward.tolist() == [8, 9]
    (episode,) = episodes.add(rollout([1], offset=12))
    assert episode.reward.tolist() == [10, 11, 12]
    assert episode.obs.flatten().tolist() == [10, 11, 12]


def test_steps_before_the_first_start_and_a_restarted_actors_leftovers_are_dropped():
    episodes = EpisodeAssembler()
    assert episodes.add(rollout([2])) == []  # steps 0-1 belong to an episode begun unseen
    assert episodes.add(rollout([0], first=True, offset=100)) == []  # fresh envs: 2-3 dropped
    (episode,) = episodes.add(rollout([1], offset=104))
    assert episode.reward.tolist() == [100, 101, 102, 103, 104]


def test_padded_returns_are_monte_carlo_to_each_episodes_end():
    episodes = EpisodeAssembler()
    episodes.add(rollout([0], first=True))
    (long_one,) = episodes.add(rollout([2], offset=4))  # rewards 0..5
    short = long_one.__class__(long_one.obs[:2], long_one.action[:2], torch.ones(2))
    batch = padded([long_one, short], gamma=0.5)
    assert batch["valid_index"].tolist() == [0, 1, 2, 3, 4, 6, 8, 10]  # t * 2 + episode
    assert batch["done"][0].all()
    assert batch["return"][:, 1].tolist()[:2] == [1.5, 1.0]
    assert batch["return"][0, 0] == sum(r * 0.5**i for i, r in enumerate(range(6)))
