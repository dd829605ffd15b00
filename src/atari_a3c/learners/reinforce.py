"""REINFORCE (`algo=reinforce`): whole episodes out of the rollout stream, the loss on them,
and the learner that updates on each batch's completed episodes.

A rollout holds `unroll` steps of each of an actor's envs; an episode may span several rollouts.
`done[t]` marks `obs[t]` as the first observation of an episode. Each env (a batch column,
identified across batches by `batch["column"]`) keeps the steps of its episode under way until
the next episode starts; a rollout from a restarted actor (`batch["first"]`) drops them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import torch
from torch import Tensor

from atari_a3c.learners import returns as R
from atari_a3c.learners.actor_critic import ActorCriticLearner


@dataclass
class Episode:
    obs: Tensor  # [L, *obs_shape]
    action: Tensor  # [L]
    reward: Tensor  # [L]


class EpisodeAssembler:
    def __init__(self):
        self.open: dict[int, list[Episode]] = {}  # column -> pieces of its episode under way

    def add(self, batch: dict[str, Tensor]) -> list[Episode]:
        """The episodes this batch completes."""
        finished = []
        steps = batch["action"].shape[0]
        for j, column in enumerate(batch["column"].tolist()):
            pieces = None if batch["first"][j] else self.open.get(column)
            starts = torch.nonzero(batch["done"][:steps, j]).flatten().tolist()
            for begin, end in itertools.pairwise(sorted({0, *starts, steps})):
                if begin in starts:  # an episode starts here: the one under way has ended
                    if pieces:
                        finished.append(_joined(pieces))
                    pieces = []
                if pieces is not None:  # steps before the first start seen are dropped
                    pieces.append(_piece(batch, j, begin, end))
            self.open[column] = pieces
        return finished


def _piece(batch: dict[str, Tensor], j: int, begin: int, end: int) -> Episode:
    return Episode(
        batch["obs"][begin:end, j], batch["action"][begin:end, j], batch["reward"][begin:end, j]
    )


def _joined(pieces: list[Episode]) -> Episode:
    return Episode(
        *(torch.cat([getattr(p, k) for p in pieces]) for k in ("obs", "action", "reward"))
    )


def padded(episodes: list[Episode], gamma: float) -> dict[str, Tensor]:
    """Episodes side by side, time-major `[L, E]` padded to the longest, on the episodes'
    device: obs, `done` (true at each start), action, Monte-Carlo return-to-go, and
    `valid_index`, the positions of the steps that are not padding in the flattened `[L * E]`
    (row-major; made from the lengths, so picking them needs no host sync)."""
    lengths = [len(e.action) for e in episodes]
    length, count = max(lengths), len(episodes)
    device = episodes[0].reward.device
    valid_index = torch.tensor(
        [t * count + j for t in range(length) for j, n in enumerate(lengths) if t < n],
        device=device,
    )

    def stack(key: str) -> Tensor:
        tensors = [getattr(e, key) for e in episodes]
        out = tensors[0].new_zeros(length, count, *tensors[0].shape[1:])
        for j, tensor in enumerate(tensors):
            out[: len(tensor), j] = tensor
        return out

    rewards = stack("reward")
    discounts = torch.full_like(rewards, gamma)
    returns = R.discounted_returns(rewards, discounts, rewards.new_zeros(count))
    done = torch.zeros(length, count, dtype=torch.bool, device=device)
    done[0] = True
    return {
        "obs": stack("obs"),
        "done": done,
        "action": stack("action"),
        "return": returns,
        "valid_index": valid_index,
    }


def reinforce_losses(model, episodes: list[Episode], algo) -> tuple[R.Losses, Tensor, Tensor]:
    """The loss on whole episodes, each run from its first step with its Monte-Carlo
    return-to-go as target (minus the critic's value as a baseline when `algo.value_coef` > 0).
    Returns the losses, the returns and the values of every valid step, `[1, n]`."""
    ep = padded(episodes, algo.gamma)
    state = model.initial_state(len(episodes), ep["obs"].device)
    logits, values, _ = model(ep["obs"], ep["done"], state)
    index = ep["valid_index"]

    def valid(tensor: Tensor) -> Tensor:  # [L, E, ...] -> [1, n, ...]
        return tensor.flatten(0, 1).index_select(0, index)[None]

    logits, values = valid(logits.float()), valid(values.float())
    targets = valid(ep["return"])
    baseline = values.detach() if algo.value_coef else torch.zeros_like(targets)
    mean, std = model.value_mean, model.value_std  # identity unless PopArt is on
    losses = R.actor_critic_loss(
        logits,
        valid(ep["action"]),
        (values - mean) / std,
        targets - baseline,
        (targets - mean) / std,
        algo.entropy_coef,
        algo.value_coef,
    )
    return losses, targets, values


class ReinforceLearner(ActorCriticLearner):
    """REINFORCE on the episodes each batch completes; a batch that completes none is no
    update."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.episodes = EpisodeAssembler()

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor | None:
        self.begin_step(batch)
        episodes = self.episodes.add(batch)
        if not episodes:
            self.record_games(batch)
            return None
        losses, targets, values = reinforce_losses(self.model, episodes, self.cfg.algo)
        self.log_step(batch, losses, targets, values)
        self.keep_moments(targets)
        return losses.total
