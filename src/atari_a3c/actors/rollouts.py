"""The rollout stream: full slots become learner batches `[T, B, ...]`."""

from __future__ import annotations

from collections.abc import Iterator

import torch
import torch.distributed as dist
from torch import Tensor
from torch.utils.data import IterableDataset

from atari_a3c.actors.pool import ActorPool
from atari_a3c.actors.shared import new_obs
from atari_a3c.errors import ActorFailure

TIME_MAJOR = ("done", "action", "reward", "logits")  # and "obs", laid out as the slots hold it
ENV_MAJOR = ("h0", "c0")
GAMES = ("game_return", "game_length")
FAILURE = "actor_failure"  # the only key of the batch an ActorFailure becomes


class RolloutDataset(IterableDataset):
    """Endless stream of batches of `batch_rollouts` rollouts; slots go back to the actors at once.

    `steps` counts the env steps a batch brings. An ActorFailure becomes a batch holding only
    its message under FAILURE, so that under DDP every rank stops at that step. Use with
    `DataLoader(dataset, batch_size=None, num_workers=0)`: the batches are already made.
    """

    def __init__(self, pool: ActorPool, batch_rollouts: int):
        self.pool, self.batch_rollouts = pool, batch_rollouts

    def __iter__(self) -> Iterator[dict[str, Tensor]]:
        while True:
            try:
                yield self.collect()
            except ActorFailure as failure:  # the learner stops every rank at the same step
                yield {FAILURE: str(failure)}

    def collect(self) -> dict[str, Tensor]:
        """The next `batch_rollouts` full slots, copied out, their slots released."""
        slots = self.pool.slots
        indices = [self.pool.next_full() for _ in range(self.batch_rollouts)]
        counts = slots["num_games"][indices].tolist()
        obs = [slots["obs"][i] for i in indices]
        steps, envs, obs_shape = obs[0].shape[0], sum(o.shape[1] for o in obs), obs[0].shape[2:]
        batch = {"obs": torch.cat(obs, 1, out=new_obs((steps, envs), obs_shape, obs[0].dtype))}
        batch |= {key: torch.cat([slots[key][i] for i in indices], 1) for key in TIME_MAJOR}
        for key in ENV_MAJOR:
            batch[key] = torch.cat([slots[key][i] for i in indices])
        for key in GAMES:
            batch[key] = torch.cat(
                [slots[key][i, :n] for i, n in zip(indices, counts, strict=True)]
            )
        batch["version"] = slots["version"][indices].clone()
        num_envs = slots["h0"].shape[1]  # each column: one env of one actor, its stream in order
        workers = torch.tensor(indices) // self.pool.slots_per_worker
        batch["column"] = (workers[:, None] * num_envs + torch.arange(num_envs)).flatten()
        batch["first"] = slots["first"][indices].repeat_interleave(num_envs)
        batch["steps"] = torch.tensor(batch["action"].numel())
        for index in indices:
            self.pool.release(index)
        return batch


def failure_of_any_rank(strategy, batch: dict) -> str | None:
    """The FAILURE message of the lowest DDP rank whose batch holds one, the same on every rank
    (None where no rank's does): one collective decision, then that rank's message to all."""
    if not strategy.reduce_boolean_decision(FAILURE in batch, all=False):
        return None
    if not (dist.is_available() and dist.is_initialized()):
        return batch[FAILURE]
    reasons = [None] * dist.get_world_size()
    dist.all_gather_object(reasons, batch.get(FAILURE))
    rank = next(rank for rank, reason in enumerate(reasons) if reason is not None)
    return f"rank {rank}: {reasons[rank]}"
