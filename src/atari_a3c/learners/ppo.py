"""The PPO learner: several epochs of clipped-surrogate updates on each rollout batch."""

from __future__ import annotations

import torch
from torch import Tensor

from atari_a3c.learners import returns as R
from atari_a3c.learners.actor_critic import ActorCriticLearner
from atari_a3c.learners.ppo_loss import normalized, ppo_loss


def columns(tensor: Tensor, index: Tensor, dim: int = 1) -> Tensor:
    """The envs `index` of a batch tensor (`dim` 1 for time-major, 0 for env-major). Frame
    stacks stay channels-last, the layout the convs compute in."""
    if tensor.dim() == 5:  # [T, B, C, H, W] laid out channels-last
        return tensor.movedim(2, -1).index_select(dim, index).movedim(-1, 2)
    return tensor.index_select(dim, index)


class PPOLearner(ActorCriticLearner):
    """PPO (`algo=ppo`) on the actors' rollouts: GAE targets from the values at the start of
    the update, then `algo.epochs` passes over the batch in `algo.minibatches` minibatches of
    whole envs, each unrolled from its rollout's stored LSTM state. The probability ratio is
    taken against the policy the actors acted with (their logits travel with the rollout), so
    the policy lag of asynchronous actors is corrected as the ratio's clipping allows. Frames,
    games, checkpoints, clipping and logging are the actor-critic learner's."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.automatic_optimization = False  # several optimizer steps per batch

    def training_step(self, batch: dict[str, Tensor], batch_idx: int) -> None:
        self.begin_step(batch)
        algo, model = self.cfg.algo, self.model
        state = (batch["h0"], batch["c0"])
        with torch.no_grad():
            values = model(batch["obs"], batch["done"], state)[1].float()
        advantages, targets = self.targets(batch, None, values)
        behaviour_logp = R.action_log_probs(batch["logits"].float(), batch["action"])
        optimizer, schedule = self.optimizers(), self.lr_schedulers()
        envs = batch["action"].shape[1]
        mean, std = model.value_mean, model.value_std  # PopArt's; identity unless tracked
        clip_fractions, kls = [], []
        for _ in range(algo.epochs):
            for index in torch.randperm(envs, device=values.device).chunk(algo.minibatches):
                h0, c0 = columns(state[0], index, 0), columns(state[1], index, 0)
                obs, done = columns(batch["obs"], index), columns(batch["done"], index)
                logits, new_values, _ = model(obs, done, (h0, c0), last_bootstraps=True)
                losses = ppo_loss(
                    logits[:-1].float(),
                    columns(batch["action"], index),
                    columns(behaviour_logp, index),
                    (new_values[:-1].float() - mean) / std,
                    (columns(values[:-1], index) - mean) / std,
                    normalized(columns(advantages, index)),
                    (columns(targets, index) - mean) / std,
                    algo.clip_coef,
                    algo.clip_value,
                    algo.entropy_coef,
                    algo.value_coef,
                )
                optimizer.zero_grad(set_to_none=True)
                self.manual_backward(losses.total)
                self.configure_gradient_clipping(optimizer, algo.max_grad_norm)
                optimizer.step()
                if schedule is not None:
                    schedule.step()
                clip_fractions.append(losses.clip_fraction)
                kls.append(losses.approx_kl)
        self.log_step(batch, losses, targets, values[:-1])
        self.add_metrics(
            {
                "losses/clip_fraction": torch.stack(clip_fractions).mean(),
                "losses/approx_kl": torch.stack(kls).mean(),
            }
        )
        self.keep_moments(targets)
        self.track_moments()

    def updates_per_frame(self) -> float:
        """Each rank's optimizer steps per env frame trained on (by all ranks)."""
        return self.cfg.algo.epochs * self.cfg.algo.minibatches * super().updates_per_frame()
