"""The rollout stream: full slots become learner batches `[T, B, ...]`."""

from __future__ import annotations

from collections.abc import Iterator

import torch
from torch import Tensor
from torch.utils.data import IterableDataset

from atari_a3c.actors import ActorPool

TIME_MAJOR = ("obs", "done", "action", "reward", "logits", "value")


class RolloutDataset(IterableDataset):
    """Endless stream of batches of `batch_rollouts` rollouts; slots go back to the actors at once.

    Use with `DataLoader(dataset, batch_size=None, num_workers=0)`: the batches are already made.
    """

    def __init__(self, pool: ActorPool, batch_rollouts: int):
        self.pool, self.batch_rollouts = pool, batch_rollouts

    def __iter__(self) -> Iterator[dict[str, Tensor]]:
        slots = self.pool.slots
        while True:
            indices = [self.pool.next_full() for _ in range(self.batch_rollouts)]
            counts = slots["num_games"][indices].tolist()
            batch = {key: torch.cat([slots[key][i] for i in indices], 1) for key in TIME_MAJOR}
            batch["h0"] = torch.cat([slots["h0"][i] for i in indices])
            batch["c0"] = torch.cat([slots["c0"][i] for i in indices])
            batch["version"] = slots["version"][indices].clone()
            batch["game_return"] = torch.cat(
                [slots["game_return"][i, :n] for i, n in zip(indices, counts, strict=True)]
            )
            batch["game_length"] = torch.cat(
                [slots["game_length"][i, :n] for i, n in zip(indices, counts, strict=True)]
            )
            for index in indices:
                self.pool.release(index)
            yield batch
