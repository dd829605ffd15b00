"""Actor-critic updates on rollout batches: A3C's n-step/GAE targets, or IMPALA's V-trace
targets correcting for the actors' policy lag; PopArt-normalized values in either."""

from __future__ import annotations

import torch
from torch import Tensor

from atari_a3c.learners import returns as R
from atari_a3c.learners.base import Learner


class ActorCriticLearner(Learner):
    """A3C (`algo=a3c`): one policy-gradient step per batch, on GAE advantages and targets."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.value_moments = torch.zeros(3)  # the last update's targets' sum, sum of squares, count

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor:
        self.begin_step(batch)
        state = (batch["h0"], batch["c0"])
        logits, values, _ = self.model(batch["obs"], batch["done"], state, last_bootstraps=True)
        losses, targets = self.losses(batch, logits.float(), values.float())
        self.log_step(batch, losses, targets, values[:-1].float())
        self.keep_value_targets(targets)
        # Always backward, even a non-finite loss: its gradients are non-finite on every rank
        # after DDP averages them, so every rank skips the same update while clipping.
        return losses.total

    def losses(self, batch: dict[str, Tensor], logits: Tensor, values: Tensor):
        """The loss on a rollout batch (`[T + 1, B]` outputs, the last step only bootstraps)
        and its value targets; values and targets normalized by PopArt's statistics."""
        algo, model = self.cfg.algo, self.model
        advantages, targets = self.targets(batch, logits[:-1].detach(), values.detach())
        mean, std = model.value_mean, model.value_std  # identity unless PopArt is on
        losses = R.actor_critic_loss(
            logits[:-1],
            batch["action"],
            (values[:-1] - mean) / std,
            advantages,
            (targets - mean) / std,
            algo.entropy_coef,
            algo.value_coef,
        )
        return losses, targets

    def targets(self, batch: dict[str, Tensor], logits: Tensor, values: Tensor):
        """GAE advantages and value targets `[T, B]` from the values `[T + 1, B]`."""
        algo = self.cfg.algo
        discounts = algo.gamma * (~batch["done"][1:]).float()
        return R.gae(batch["reward"], values[:-1], values[-1], discounts, algo.gae_lambda)

    def log_step(self, batch, losses, targets: Tensor, values: Tensor) -> None:
        self.record_games(batch)
        metrics = {
            "losses/total": losses.total,
            "losses/policy": losses.policy,
            "losses/value": losses.value,
            "losses/entropy": losses.entropy,
            "losses/explained_variance": 1 - (targets - values).var() / targets.var().clamp(1e-8),
            "charts/frames": float(self.frames),
            "perf/skipped_updates": float(self.skipped_updates),
        }
        self.add_metrics(metrics)

    def keep_value_targets(self, targets: Tensor) -> None:
        """The moments of the targets PopArt's statistics move towards after this step; none
        (a zero count) if any is non-finite."""
        targets = targets.detach().float()
        count = targets.new_tensor(targets.numel())
        moments = torch.stack([targets.sum(), targets.pow(2).sum(), count])
        self.value_moments = torch.where(torch.isfinite(moments).all(), moments, 0.0)

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None) -> None:
        """The step, then PopArt's statistics move (rescaling the value head to match)."""
        super().optimizer_step(epoch, batch_idx, optimizer, optimizer_closure)
        self.track_value_targets()

    def track_value_targets(self) -> None:
        """Move PopArt's statistics towards the kept targets of every rank, where tracked."""
        if not self.cfg.algo.popart_rate:
            return
        moments = self.trainer.strategy.reduce(self.value_moments, reduce_op="sum")  # all ranks'
        total, squares, count = moments.tolist()  # the update's one host sync
        if count:
            mean, second = moments.new_tensor([total / count, squares / count])
            self.model.track_value_moments(mean, second, self.cfg.algo.popart_rate)
        self.value_moments = torch.zeros_like(moments)


class VTraceLearner(ActorCriticLearner):
    """IMPALA (`algo=impala`): the same loss on V-trace targets (Espeholt et al. 2018)."""

    def targets(self, batch: dict[str, Tensor], logits: Tensor, values: Tensor):
        """V-trace advantages and value targets `[T, B]`, from the behaviour logits the
        actors acted with and the current `logits`."""
        algo, actions = self.cfg.algo, batch["action"]
        discounts = algo.gamma * (~batch["done"][1:]).float()
        vtrace = R.vtrace(
            R.action_log_probs(batch["logits"].float(), actions),
            R.action_log_probs(logits, actions),
            batch["reward"],
            values[:-1],
            values[-1],
            discounts,
            algo.gae_lambda,
            algo.clip_rho,
            algo.clip_pg_rho,
        )
        return vtrace.advantages, vtrace.targets
