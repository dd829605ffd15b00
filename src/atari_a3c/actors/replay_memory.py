"""Experience replay for `algo=dqn`: the rollout stream goes into a memory of recent rollouts,
and the learner trains on sequences sampled from it (R2D2-style: each sequence is one env's
`unroll` steps with the LSTM state its actor started them from). Frame stacks are held as one
new frame per step (`FrameStacks`)."""

from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Iterator

import torch
from torch import Tensor
from torch.utils.data import IterableDataset

from atari_a3c.actors.rollouts import ENV_MAJOR, FAILURE, RolloutDataset

SEQUENCE_KEYS = ("obs", "done", "action", "reward")  # time-major; h0 and c0 env-major
COUNTED = ("steps", "game_return", "game_length", "version")  # what the fresh rollout brings


class FrameStacks:
    """A rollout's frame stacks `[T+1, N, S, ...]` (S frames, oldest first) held as the newest
    frame of each step, plus the whole stack where it is not the step before's shifted by one
    frame (each env's first step, a game's start): about (T+S)/(S*(T+1)) of the memory."""

    def __init__(self, obs: Tensor):
        self.newest = obs[:, :, -1].clone()  # a copy, so the whole stacks can be freed
        shifted = (obs[1:, :, :-1] == obs[:-1, :, 1:]).flatten(2).all(-1)
        starts = [(0, j) for j in range(obs.shape[1])]
        starts += [(t + 1, j) for t, j in (~shifted).nonzero().tolist()]
        self.starts = {(t, j): obs[t, j].clone() for t, j in starts}

    def column(self, j: int) -> Tensor:
        """Env `j`'s stacks, `[T+1, S, ...]`, as they were."""
        stacks = []
        for t, frame in enumerate(self.newest[:, j]):
            start = self.starts.get((t, j))
            stacks.append(start if start is not None else torch.cat([stacks[-1][1:], frame[None]]))
        return torch.stack(stacks)


def stored_obs_bytes(obs_shape: tuple[int, ...], itemsize: int, unroll: int) -> float:
    """Bytes the memory holds per transition's observation (and its share of each rollout's
    bootstrap one), games' starts aside."""
    size = itemsize * math.prod(obs_shape)
    if len(obs_shape) < 2:  # vectors: whole
        return size * (unroll + 1) / unroll
    return size / obs_shape[0] * (unroll + 1 + obs_shape[0]) / unroll


def column(obs: Tensor | FrameStacks, j: int) -> Tensor:
    return obs.column(j) if isinstance(obs, FrameStacks) else obs[:, j]


class ReplayMemory:
    """The newest rollouts, at most `capacity` transitions; samples env columns uniformly."""

    def __init__(self, capacity: int, seed: int):
        self.capacity = capacity
        self.rollouts: deque[dict[str, Tensor]] = deque()
        self.transitions = 0
        self.rng = random.Random(seed)

    def add(self, batch: dict[str, Tensor]) -> None:
        rollout = {key: batch[key] for key in (*SEQUENCE_KEYS, *ENV_MAJOR)}
        if rollout["obs"].dim() >= 4:  # [T+1, N, stack, ...]
            rollout["obs"] = FrameStacks(rollout["obs"])
        self.rollouts.append(rollout)
        self.transitions += rollout["action"].numel()
        while self.transitions > self.capacity:
            self.transitions -= self.rollouts.popleft()["action"].numel()

    def sample(self, sequences: int) -> dict[str, Tensor]:
        """`sequences` env columns drawn with replacement: `[T, sequences, ...]` batches."""
        picks = []
        for _ in range(sequences):
            rollout = self.rng.choice(self.rollouts)
            picks.append((rollout, self.rng.randrange(rollout["action"].shape[1])))
        batch = {
            key: torch.stack([column(r[key], j) for r, j in picks], 1) for key in SEQUENCE_KEYS
        }
        for key in ENV_MAJOR:
            batch[key] = torch.stack([r[key][j] for r, j in picks])
        return batch


class ReplayDataset(IterableDataset):
    """Each fresh rollout goes into the memory; then come `replay_ratio` sampled transitions per
    fresh one, in batches of `batch_sequences` sequences. The first batch after a rollout
    carries its frames and finished games (the others none); until the memory holds
    `replay_start` transitions, that batch holds no sample, and the learner only counts it."""

    def __init__(self, rollouts: RolloutDataset, algo, seed: int):
        self.rollouts, self.algo, self.seed = rollouts, algo, seed

    def __iter__(self) -> Iterator[dict[str, Tensor]]:
        algo = self.algo
        memory = ReplayMemory(algo.replay_size, self.seed)
        owed = 0.0  # sampled transitions due and not yet trained on
        for batch in self.rollouts:
            if FAILURE in batch:
                yield batch
                continue
            memory.add(batch)
            counted = {key: batch[key] for key in COUNTED}
            if memory.transitions < algo.replay_start:
                yield counted
                continue
            owed += algo.replay_ratio * batch["action"].numel()
            per_batch = algo.batch_sequences * algo.unroll
            while owed >= per_batch:
                owed -= per_batch
                yield {**counted, **memory.sample(algo.batch_sequences)}
                counted = empty_counts(counted)
            if counted["steps"]:  # a ratio too low for a batch this time: count the frames
                yield counted


def empty_counts(counted: dict[str, Tensor]) -> dict[str, Tensor]:
    """The same keys, bringing no frames and no games."""
    return {
        "steps": torch.tensor(0),
        "game_return": counted["game_return"][:0],
        "game_length": counted["game_length"][:0],
        "version": counted["version"],
    }
