"""The rollout stream: full slots become learner batches `[T, B, ...]`."""

from __future__ import annotations

from collections.abc import Iterator

import torch
from torch import Tensor
from torch.utils.data import IterableDataset

from atari_a3c.actors import ActorPool

TIME_MAJOR = ("obs", "done", "action", "reward", "logits", "value")
ENV_MAJOR = ("h0", "c0")
GAMES = ("game_return", "game_length")


class RolloutDataset(IterableDataset):
    """Endless stream of batches of `batch_rollouts` rollouts; slots go back to the actors at once.

    Each batch is trained on `epochs` times, each time split across its envs into `minibatches`
    updates (PPO-style reuse; V-trace corrects for the policy moving in between). `steps` counts
    the new env steps a batch brings: all of them on its first pass, none on the others.
    Use with `DataLoader(dataset, batch_size=None, num_workers=0)`: the batches are already made.
    """

    def __init__(self, pool: ActorPool, batch_rollouts: int, epochs: int = 1, minibatches: int = 1):
        self.pool, self.batch_rollouts = pool, batch_rollouts
        self.epochs, self.minibatches = epochs, minibatches

    def __iter__(self) -> Iterator[dict[str, Tensor]]:
        while True:
            batch = self.collect()
            for epoch in range(self.epochs):
                yield from self.split(batch, fresh=epoch == 0)

    def collect(self) -> dict[str, Tensor]:
        """The next `batch_rollouts` full slots, copied out, their slots released."""
        slots = self.pool.slots
        indices = [self.pool.next_full() for _ in range(self.batch_rollouts)]
        counts = slots["num_games"][indices].tolist()
        batch = {key: torch.cat([slots[key][i] for i in indices], 1) for key in TIME_MAJOR}
        for key in ENV_MAJOR:
            batch[key] = torch.cat([slots[key][i] for i in indices])
        for key in GAMES:
            batch[key] = torch.cat(
                [slots[key][i, :n] for i, n in zip(indices, counts, strict=True)]
            )
        batch["version"] = slots["version"][indices].clone()
        for index in indices:
            self.pool.release(index)
        return batch

    def split(self, batch: dict[str, Tensor], fresh: bool) -> Iterator[dict[str, Tensor]]:
        """The batch as `minibatches` random env subsets; games and new steps go with the first."""
        envs, steps = batch["done"].shape[1], len(batch["done"]) - 1
        parts = torch.randperm(envs).tensor_split(self.minibatches) if self.minibatches > 1 else []
        for part, env_ids in enumerate(parts or [None]):
            sub = dict(batch) if env_ids is None else select_envs(batch, env_ids)
            first = fresh and part == 0
            if not first:
                sub.update({key: batch[key][:0] for key in GAMES})
            sub["steps"] = torch.tensor(envs * steps if first else 0)
            yield sub


def select_envs(batch: dict[str, Tensor], env_ids: Tensor) -> dict[str, Tensor]:
    """The rollouts of `env_ids` only; the batch-wide entries (games, version) are kept."""
    sub = dict(batch)
    sub.update({key: batch[key][:, env_ids] for key in TIME_MAJOR})
    sub.update({key: batch[key][env_ids] for key in ENV_MAJOR})
    return sub
