"""What every learner shares: frames and games counted, metrics written, gradients clipped and
non-finite updates skipped, the learning-rate schedule, DDP averages, batches moved to the
learning device, and the checkpoint's own metadata. Each algorithm's update is a sibling module."""

from __future__ import annotations

import logging
import math
import time
from collections import deque

import hydra
import lightning as L
import torch
from omegaconf import DictConfig, OmegaConf
from torch import Tensor
from torch.utils.data import IterableDataset

from atari_a3c.actors.rollouts import failure_of_any_rank
from atari_a3c.errors import ActorFailure, TrainingStopped
from atari_a3c.learners.game_history import GameHistory
from atari_a3c.models.actor_critic import build_model

RECENT_GAMES = 100
ON_HOST = ("game_return", "game_length", "version", "column", "first", "steps")  # bookkeeping
CLIP_EPS = 1e-6  # clip_grad_norm_'s factor is limit / (norm + CLIP_EPS)
log = logging.getLogger(__name__)


class NonFiniteTraining(TrainingStopped):
    """Losses or gradients stayed non-finite for too many updates in a row."""


class Learner(L.LightningModule):
    """A LightningModule training the configured model on the actors' batches; a sibling class
    per algorithm writes `training_step`."""

    def __init__(
        self, cfg: dict, obs_shape: tuple[int, ...], num_actions: int, overrides: list[str] = ()
    ):
        super().__init__()
        self.cfg: DictConfig = OmegaConf.create(cfg)
        self.obs_shape, self.num_actions = tuple(obs_shape), num_actions
        self.model = build_model(self.cfg.model, self.obs_shape, num_actions)
        self.overrides = list(overrides)  # the command line's, stored so a resume reapplies them
        self.frames = 0
        self.skipped_updates = 0
        self.bad_in_a_row = 0
        self.recent_returns: deque[float] = deque(maxlen=RECENT_GAMES)
        self.game_history = GameHistory()  # scores of finished games against frames
        self.eval_history: list[tuple[int, float]] = []  # (frames, mean) of every evaluation
        algo = self.cfg.algo
        num_envs = self.cfg.envs_per_worker * algo.batch_rollouts
        self.frames_per_batch = algo.unroll * num_envs * self.cfg.env.frame_skip
        self.pending_metrics: dict[str, float | Tensor] = {}  # the latest of each, until written
        self._batches_since_write = 0
        self._rate_mark = (time.perf_counter(), 0)  # (time, frames) where charts/fps last started

    @property
    def mean_return(self) -> float:
        return sum(self.recent_returns) / len(self.recent_returns) if self.recent_returns else 0.0

    def batches(self, rollouts: IterableDataset) -> IterableDataset:
        """The stream this learner trains on, made from the actors' rollouts: themselves."""
        return rollouts

    def begin_step(self, batch: dict[str, Tensor]) -> None:
        """What every update starts with: stop if an actor failed, count the batch's frames,
        move the mean frame."""
        self.stop_if_an_actor_failed(batch)
        self.count_frames(batch)
        self.track_observations(batch)

    def track_observations(self, batch: dict[str, Tensor]) -> None:
        """Move the mean frame towards the batch's (all ranks'), where it is tracked."""
        if self.cfg.algo.obs_mean_rate:  # each env's first frame: a cheap, unbiased sample
            mean = self.ranks_mean(self.model.observation_mean(batch["obs"][0]))
            self.model.track_observation_mean(mean, self.cfg.algo.obs_mean_rate)

    def ranks_mean(self, tensor: Tensor) -> Tensor:
        """`tensor` averaged over the DDP ranks (itself on one learner)."""
        return self.trainer.strategy.reduce(tensor, reduce_op="mean")

    def transfer_batch_to_device(self, batch: dict, device: torch.device, dataloader_idx: int):
        """Only what the losses read goes to the learning device, from pinned memory without
        blocking where it is CUDA; the bookkeeping stays on the host, where reading it (frames,
        scores, versions) needs no sync with the device."""
        if device.type == "cpu":
            return batch
        moved = {}
        for key, value in batch.items():
            if isinstance(value, Tensor) and key not in ON_HOST:
                value = value.pin_memory() if device.type == "cuda" else value
                value = value.to(device, non_blocking=True)
            moved[key] = value
        return moved

    def stop_if_an_actor_failed(self, batch: dict) -> None:
        """Any rank's actors failed: log and raise ActorFailure, one reason, on every rank."""
        reason = failure_of_any_rank(self.trainer.strategy, batch)
        if reason is not None:
            log.error("stopping: %s", reason)
            raise ActorFailure(reason)

    def record_games(self, batch) -> None:
        """The games that ended in this batch: their scores, into the history and the logs."""
        scores = batch["game_return"].tolist()
        self.recent_returns.extend(scores)
        self.game_history.add(self.frames, scores)
        metrics = {}
        if self.recent_returns:  # no score before the first game ends
            metrics["charts/mean_return_100"] = self.mean_return
        if len(batch["game_return"]):
            metrics["charts/episode_return"] = batch["game_return"].mean()
            metrics["charts/episode_length"] = batch["game_length"].float().mean()
        self.add_metrics(metrics)

    def add_metrics(self, metrics: dict[str, float | Tensor]) -> None:
        """Keep this update's metrics (the latest value of each) for the next write."""
        for name, value in metrics.items():
            self.pending_metrics[name] = value.detach() if isinstance(value, Tensor) else value

    def on_train_batch_end(self, outputs, batch, batch_idx) -> None:
        """Write the kept metrics every `log_every_n_steps` batches and when training stops.

        The loggers are called directly: `self.log` on every update took about 5% of the
        learner's time (py-spy on a BeamRider run), and one update in `log_every_n_steps` is
        written."""
        self._batches_since_write += 1
        every = self.trainer.log_every_n_steps
        if every and (self._batches_since_write >= every or self.trainer.should_stop):
            self.write_metrics()

    def write_metrics(self) -> None:
        """The kept metrics, and `charts/fps` since the last write that brought frames, to every
        logger at Lightning's own step (the index of the last update), each then saving them to
        its files as after Lightning's own logging."""
        metrics = {name: float(value) for name, value in self.pending_metrics.items()}
        now, (then, frames_then) = time.perf_counter(), self._rate_mark
        if self.frames > frames_then:  # DQN trains on several batches per rollout
            metrics["charts/fps"] = (self.frames - frames_then) / (now - then)
            self._rate_mark = (now, self.frames)
        for logger in self.loggers:
            logger.log_metrics(metrics, step=max(self.global_step - 1, 0))
            logger.save()
        self.pending_metrics.clear()
        self._batches_since_write = 0

    def new_frames(self, batch: dict[str, Tensor]) -> int:
        """Env frames the batch brings, counted on every rank."""
        return int(batch["steps"]) * self.cfg.env.frame_skip * self.trainer.world_size

    def configure_gradient_clipping(
        self, optimizer, gradient_clip_val=None, gradient_clip_algorithm=None
    ):
        """Clip by global norm (bf16 needs no unscaling, so fused optimizers work); skip NaN/inf."""
        norm = clip_gradients(self.parameters(), gradient_clip_val or math.inf)
        if not torch.isfinite(norm):
            optimizer.zero_grad(set_to_none=True)  # parameters without gradients are not stepped
            self.skip_update("gradients")
            return
        self.bad_in_a_row = 0
        self.add_metrics({"losses/grad_norm": norm})

    def skip_update(self, what: str) -> None:
        """Count a non-finite update; too many in a row stop training (last.ckpt stays good)."""
        self.skipped_updates += 1
        self.bad_in_a_row += 1
        log.warning("non-finite %s at update %d: update skipped", what, self.global_step)
        if self.bad_in_a_row > self.cfg.max_nonfinite_updates:
            raise NonFiniteTraining(
                f"{self.bad_in_a_row} non-finite updates in a row (last: {what}); "
                "training stopped, the last good checkpoint is kept"
            )

    def on_train_start(self) -> None:
        self._rate_mark = (time.perf_counter(), self.frames)

    def count_frames(self, batch: dict[str, Tensor]) -> None:
        """Add the batch's frames (before any callback looks); stop at the budget."""
        self.frames += self.new_frames(batch)
        if self.frames >= self.cfg.frames:
            self.trainer.should_stop = True

    def configure_optimizers(self):
        optimizer = hydra.utils.instantiate(self.cfg.optim)(self.model.parameters())
        algo, per_frame = self.cfg.algo, self.updates_per_frame()
        warmup = algo.get("lr_warmup_frames", 0) * per_frame
        total = self.cfg.frames * per_frame
        cooldown = algo.lr_cooldown * total
        if not (warmup or cooldown):
            return optimizer
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: lr_factor(step, warmup, total, cooldown)
        )
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": schedule, "interval": "step"}}

    def updates_per_frame(self) -> float:
        """Each rank's optimizer steps per env frame trained on (by all ranks)."""
        return 1 / (self.frames_per_batch * self.trainer.world_size)

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["atari_a3c"] = {
            "frames": self.frames,
            "updates": self.global_step,
            "config": OmegaConf.to_container(self.cfg),
            "env_id": self.cfg.env.id,
            "num_actions": self.num_actions,
            "obs_shape": list(self.obs_shape),
            "recent_returns": list(self.recent_returns),
            "game_history": self.game_history.points,
            "eval_history": self.eval_history,
            "overrides": list(self.overrides),
            "wandb_id": getattr(self.logger, "version", None) if self.logger else None,
        }

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        meta = checkpoint["atari_a3c"]
        self.frames = meta["frames"]
        self.recent_returns.extend(meta["recent_returns"])
        self.game_history = GameHistory(meta["game_history"])
        self.eval_history = [tuple(point) for point in meta["eval_history"]]


def clip_gradients(parameters, limit: float) -> Tensor:
    """`clip_grad_norm_`, returning the global norm, except that gradients under the limit are
    left as they are rather than multiplied by 1.0: that pass over every gradient changes no
    value, and the norm is far below 40 on most updates."""
    params = [p for p in parameters if p.grad is not None]
    norm = torch.nn.utils.get_total_norm([p.grad for p in params])
    if norm + CLIP_EPS > limit:  # where clip_grad_norm_'s factor falls below 1
        torch.nn.utils.clip_grads_with_norm_(params, limit, norm)
    return norm


def lr_factor(
    step: int, warmup_updates: float, total_updates: float, cooldown_updates: float
) -> float:
    """The learning rate's multiplier at optimizer step `step`: a linear rise over the first
    `warmup_updates` (0: none), times a linear fall to zero over the last `cooldown_updates` of
    the `total_updates` (0: none)."""
    rise = min(1.0, (step + 1) / warmup_updates) if warmup_updates else 1.0
    fall = (
        min(1.0, max(0.0, (total_updates - step) / cooldown_updates)) if cooldown_updates else 1.0
    )
    return rise * fall
