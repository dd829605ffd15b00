"""The DQN learner: Q-learning updates on replayed sequences with a target network."""

from __future__ import annotations

import copy

import torch
from torch import Tensor
from torch.utils.data import IterableDataset

from atari_a3c.actors.replay_memory import ReplayDataset
from atari_a3c.learners.base import Learner
from atari_a3c.learners.q_loss import q_losses
from atari_a3c.models.exploration import epsilon


class QLearner(Learner):
    """DQN updates on replayed sequences (`replay_memory.ReplayDataset`), with a target network
    copied from the online one every `algo.target_every` updates."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.target_model = copy.deepcopy(self.model).requires_grad_(False)

    def batches(self, rollouts: IterableDataset) -> IterableDataset:
        """Sequences replayed from a memory the rollouts fill."""
        return ReplayDataset(rollouts, self.cfg.algo, self.cfg.seed)

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor | None:
        """A Q-learning update on the replayed sequences; a batch without any only counts."""
        self.stop_if_an_actor_failed(batch)
        self.count_frames(batch)
        self.record_games(batch)
        if "obs" not in batch:
            return None
        algo = self.cfg.algo
        self.track_observations(batch)
        state = (batch["h0"], batch["c0"])
        q = self.model(batch["obs"], batch["done"], state)[0].float()
        with torch.no_grad():
            target_q = self.target_model(batch["obs"], batch["done"], state)[0].float()
        loss, targets = q_losses(q, target_q, batch, algo)
        metrics = {"losses/total": loss, "losses/q_target": targets.mean()}
        metrics["charts/epsilon"] = epsilon(algo, self.frames)  # the actors' exploration rate
        self.add_metrics(metrics | {"charts/frames": float(self.frames)})
        return loss

    def on_train_start(self) -> None:
        super().on_train_start()
        if self.global_step == 0:  # a fresh run, or one started from other weights (init_from)
            self.sync_target()

    def optimizer_step(self, *args, **kwargs) -> None:
        super().optimizer_step(*args, **kwargs)
        if self.global_step % self.cfg.algo.target_every == 0:
            self.sync_target()

    def updates_per_frame(self) -> float:
        algo = self.cfg.algo
        transitions = 1 / (self.cfg.env.frame_skip * self.trainer.world_size)
        return transitions * algo.replay_ratio / (algo.batch_sequences * algo.unroll)

    def sync_target(self) -> None:
        self.target_model.load_state_dict(self.model.state_dict())
