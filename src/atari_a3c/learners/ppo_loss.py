"""PPO's maths (`algo=ppo`, Schulman et al. 2017): the clipped surrogate objective, the
optionally clipped value loss and the entropy bonus on one minibatch. Shapes are time-major
`[T, B]` as in `returns.py`; advantages and targets are constants."""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

from atari_a3c.learners.returns import action_log_probs, policy_entropy

ADVANTAGE_EPS = 1e-8


class PPOLosses(NamedTuple):
    total: Tensor
    policy: Tensor
    value: Tensor
    entropy: Tensor
    clip_fraction: Tensor  # of the steps whose probability ratio left [1 - clip, 1 + clip]
    approx_kl: Tensor  # KL(behaviour || current), the unbiased estimator `(r - 1) - log r`


def normalized(advantages: Tensor) -> Tensor:
    """Advantages with zero mean and unit std over the minibatch."""
    return (advantages - advantages.mean()) / (advantages.std() + ADVANTAGE_EPS)


def ppo_loss(
    logits: Tensor,
    actions: Tensor,
    behaviour_logp: Tensor,
    values: Tensor,
    old_values: Tensor,
    advantages: Tensor,
    targets: Tensor,
    clip: float,
    clip_value: bool,
    entropy_coef: float,
    value_coef: float,
) -> PPOLosses:
    """The loss of the current `logits` and `values` on steps that the behaviour policy
    (log-probability `behaviour_logp` of the taken `actions`) acted on. With `clip_value` the
    values move at most `clip` from `old_values` (the values the targets were computed with)
    before the loss takes the larger of the clipped and unclipped errors."""
    log_ratio = action_log_probs(logits, actions) - behaviour_logp
    ratio = log_ratio.exp()
    advantages = advantages.detach()
    surrogate = torch.min(ratio * advantages, ratio.clamp(1 - clip, 1 + clip) * advantages)
    policy = -surrogate.mean()
    targets = targets.detach()
    errors = (values - targets).pow(2)
    if clip_value:
        clipped = old_values + (values - old_values).clamp(-clip, clip)
        errors = torch.max(errors, (clipped - targets).pow(2))
    value = 0.5 * errors.mean()
    entropy = policy_entropy(logits).mean()
    total = policy + value_coef * value - entropy_coef * entropy
    with torch.no_grad():
        clip_fraction = ((ratio - 1).abs() > clip).float().mean()
        approx_kl = ((ratio - 1) - log_ratio).mean()
    return PPOLosses(total, policy, value, entropy, clip_fraction, approx_kl)
