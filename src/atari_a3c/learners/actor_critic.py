"""Actor-critic updates on rollout batches: A3C's n-step/GAE targets, or IMPALA's V-trace
targets correcting for the actors' policy lag; PopArt-normalized values in either."""

from __future__ import annotations

import torch
from torch import Tensor

from atari_a3c.learners import returns as R
from atari_a3c.learners.base import Learner

MIN_ADVANTAGE_RMS = 1e-2  # the most the policy gradient's advantages are scaled up: 100x


class ActorCriticLearner(Learner):
    """A3C (`algo=a3c`): one policy-gradient step per batch, on GAE advantages and targets."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The last update's value targets' sum, sum of squares and count, and its advantages' sum
        # of squares, which PopArt's statistics and the advantages' running RMS move towards.
        self.moments = torch.zeros(4)
        self.advantage_rms: float | None = None  # `algo.advantage_rms_rate`'s; None before any

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> Tensor:
        self.begin_step(batch)
        state = (batch["h0"], batch["c0"])
        logits, values, _ = self.model(batch["obs"], batch["done"], state, last_bootstraps=True)
        losses, targets = self.losses(batch, logits.float(), values.float())
        self.log_step(batch, losses, targets, values[:-1].float())
        # Always backward, even a non-finite loss: its gradients are non-finite on every rank
        # after DDP averages them, so every rank skips the same update while clipping.
        return losses.total

    def losses(self, batch: dict[str, Tensor], logits: Tensor, values: Tensor):
        """The loss on a rollout batch (`[T + 1, B]` outputs, the last step only bootstraps)
        and its value targets; values and targets normalized by PopArt's statistics."""
        algo, model = self.cfg.algo, self.model
        advantages, targets = self.targets(batch, logits[:-1].detach(), values.detach())
        self.keep_moments(targets, advantages)
        mean, std = model.value_mean, model.value_std  # identity unless PopArt is on
        losses = R.actor_critic_loss(
            logits[:-1],
            batch["action"],
            (values[:-1] - mean) / std,
            advantages / self.advantage_scale(advantages),
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

    def advantage_scale(self, advantages: Tensor) -> Tensor | float:
        """What the policy gradient divides the advantages by: their running root mean square
        (this batch's before the first update), so that the policy gradient's scale, and the
        entropy bonus's weight against it, do not depend on how often the game pays; 1 when
        `algo.advantage_rms_rate` is 0."""
        if not self.cfg.algo.get("advantage_rms_rate"):
            return 1.0
        if self.advantage_rms is None:
            return advantages.pow(2).mean().sqrt().clamp(min=MIN_ADVANTAGE_RMS)
        return max(self.advantage_rms, MIN_ADVANTAGE_RMS)

    def keep_moments(self, targets: Tensor, advantages: Tensor | None = None) -> None:
        """The moments PopArt's statistics and the advantages' running RMS move towards after
        this step; none (a zero count) if any is non-finite."""
        targets = targets.detach().float()
        count = targets.new_tensor(targets.numel())
        squares = advantages.detach().float().pow(2).sum() if advantages is not None else 0 * count
        moments = torch.stack([targets.sum(), targets.pow(2).sum(), count, squares])
        self.moments = torch.where(torch.isfinite(moments).all(), moments, 0.0)

    def optimizer_step(self, epoch, batch_idx, optimizer, optimizer_closure=None) -> None:
        """The step, then PopArt's statistics (rescaling the value head to match) and the
        advantages' running RMS move."""
        super().optimizer_step(epoch, batch_idx, optimizer, optimizer_closure)
        self.track_moments()

    def track_moments(self) -> None:
        """Move PopArt's statistics and the advantages' running RMS, where tracked, towards the
        kept moments of every rank."""
        popart_rate = self.cfg.algo.popart_rate
        advantage_rate = self.cfg.algo.get("advantage_rms_rate")
        if not (popart_rate or advantage_rate):
            return
        moments = self.trainer.strategy.reduce(self.moments, reduce_op="sum")  # all ranks'
        total, squares, count, advantage_squares = moments.tolist()  # the update's one host sync
        self.moments = torch.zeros_like(moments)
        if not count:
            return
        if popart_rate:
            mean, second = moments.new_tensor([total / count, squares / count])
            self.model.track_value_moments(mean, second, popart_rate)
        if advantage_rate:
            second = advantage_squares / count
            if self.advantage_rms is not None:
                second += (1 - advantage_rate) * (self.advantage_rms**2 - second)
            self.advantage_rms = second**0.5
            self.add_metrics({"losses/advantage_rms": self.advantage_rms})

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        super().on_save_checkpoint(checkpoint)
        checkpoint["atari_a3c"]["advantage_rms"] = self.advantage_rms

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        super().on_load_checkpoint(checkpoint)
        self.advantage_rms = checkpoint["atari_a3c"].get("advantage_rms")  # absent: not tracked


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
