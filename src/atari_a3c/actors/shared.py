"""Shared-memory rollout slots and the versioned weights the learner publishes to actors."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from atari_a3c.actors.child_process import context

Slots = dict[str, Tensor]
WRITER_WAIT_SECONDS = 0.0005


@dataclass(frozen=True)
class SlotLayout:
    """Sizes of one rollout slot: `unroll` steps of `num_envs` envs (one actor's batch)."""

    unroll: int
    num_envs: int
    obs_shape: tuple[int, ...]
    obs_dtype: torch.dtype
    num_actions: int
    hidden_size: int

    def fields(self) -> dict[str, tuple[tuple[int, ...], torch.dtype]]:
        """Shape and dtype of each tensor of one slot.

        `obs` and `done` hold `unroll + 1` steps: the last one bootstraps and starts the next
        rollout. `first` marks an actor's first rollout (fresh envs).
        """
        T, N, A, H = self.unroll, self.num_envs, self.num_actions, self.hidden_size
        return {
            "obs": ((T + 1, N, *self.obs_shape), self.obs_dtype),
            "done": ((T + 1, N), torch.bool),
            "action": ((T, N), torch.int64),
            "reward": ((T, N), torch.float32),
            "logits": ((T, N, A), torch.float32),
            "h0": ((N, H), torch.float32),
            "c0": ((N, H), torch.float32),
            "version": ((), torch.int64),
            "first": ((), torch.bool),
            "num_games": ((), torch.int64),
            "game_return": ((T * N,), torch.float32),
            "game_length": ((T * N,), torch.int64),
        }

    @property
    def nbytes(self) -> int:
        """Bytes of one slot."""
        return sum(math.prod(shape) * dtype.itemsize for shape, dtype in self.fields().values())


def allocate_slots(num_slots: int, layout: SlotLayout) -> Slots:
    """Preallocated shared tensors `[num_slots, ...]`; floats start as NaN so unwritten data
    shows."""
    slots = {}
    for name, (shape, dtype) in layout.fields().items():
        fill = float("nan") if dtype.is_floating_point else 0
        if name == "obs":
            tensor = new_obs((num_slots, *shape[:2]), layout.obs_shape, dtype).fill_(fill)
        else:
            tensor = torch.full((num_slots, *shape), fill, dtype=dtype)
        slots[name] = tensor.share_memory_()
    return slots


def new_obs(lead: tuple[int, ...], obs_shape: tuple[int, ...], dtype: torch.dtype) -> Tensor:
    """An empty `[*lead, *obs_shape]` tensor of observations. Frame stacks `[C, H, W]` are
    stored channels-last (C innermost), the layout the conv encoders compute in: the actor's
    copy into a slot reorders each step's frames, so the learner's batch needs no reordering
    (the convs would reorder it in their forward and again in their backward)."""
    if len(obs_shape) != 3:
        return torch.empty((*lead, *obs_shape), dtype=dtype)
    channels, height, width = obs_shape
    return torch.empty((*lead, height, width, channels), dtype=dtype).movedim(-1, -3)


def _tensors(model: nn.Module) -> Iterator[Tensor]:
    """The parameters, then the buffers (the value statistics): everything an actor mirrors."""
    yield from model.parameters()
    yield from model.buffers()


class SharedWeights:
    """The newest policy weights as one flat shared vector behind a seqlock, with a version
    and the env frames trained on when they were published (DQN's actors explore by them).

    The one writer (the learner) makes the sequence odd, copies, and makes it even again;
    a reader copies and keeps the copy only if the sequence was even and unchanged throughout.
    No lock is held across processes, so a process killed at any moment wedges no other one.
    Weights are copied parameter by parameter, so each side keeps its own memory layout
    (channels_last convs) and a reader never aliases the buffer the learner writes. A model on
    an accelerator is first gathered into one vector there and copied to the host in one
    transfer (into pinned memory on CUDA), before the sequence turns odd.
    """

    def __init__(self, model: nn.Module):
        self.flat = torch.zeros(sum(t.numel() for t in _tensors(model))).share_memory_()
        self.sequence = context().Value("q", 0, lock=False)
        self.frames = context().Value("q", 0, lock=False)
        self._staging: Tensor | None = None  # the learner's host copy of a device's weights
        self.publish(model)

    def __getstate__(self) -> dict:
        return self.__dict__ | {"_staging": None}  # the learner's own; actors never need it

    @property
    def version(self) -> int:
        """How many times weights were published (a publish under way is not counted yet)."""
        return self.sequence.value // 2

    def _pairs(self, model: nn.Module) -> Iterator[tuple[Tensor, Tensor]]:
        """Each parameter and buffer with its slice of the shared vector."""
        start = 0
        for param in _tensors(model):
            yield param, self.flat[start : start + param.numel()].view(param.shape)
            start += param.numel()

    @torch.no_grad()
    def publish(self, model: nn.Module, frames: int = 0) -> None:
        tensors = list(_tensors(model))
        staged = None if tensors[0].device.type == "cpu" else self.staged(tensors)
        self.frames.value = frames
        self.sequence.value += 1
        if staged is None:
            for param, shared in self._pairs(model):
                shared.copy_(param)
        else:
            self.flat.copy_(staged)
        self.sequence.value += 1

    @torch.no_grad()
    def staged(self, tensors: list[Tensor]) -> Tensor:
        """The tensors as one float32 vector on the host, in the shared vector's order: one
        gather where they are and one copy out, into pinned memory where it is CUDA's."""
        gathered = torch.cat([t.reshape(-1).float() for t in tensors])
        if self._staging is None:
            self._staging = torch.empty(gathered.shape, pin_memory=gathered.is_cuda)
        return self._staging.copy_(gathered)

    @torch.no_grad()
    def pull(self, model: nn.Module, current: int = -1) -> int:
        """Copy the newest weights into `model`; returns their version.

        While a publish is under way (or its writer died in one), `model` keeps its weights and
        `current`, its version, is returned: the caller tries again later. A copy that a publish
        overlapped is done again once that publish ends, so `model` never keeps torn weights.
        """
        torn = False
        while True:
            before = self.sequence.value
            if before % 2:
                if not torn:
                    return current
                time.sleep(WRITER_WAIT_SECONDS)
                continue
            for param, shared in self._pairs(model):
                param.copy_(shared)
            if self.sequence.value == before:
                return before // 2
            torn = True
