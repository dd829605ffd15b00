"""Pure functions for the actor-critic maths: returns, GAE, V-trace and the loss.

Shapes are time-major `[T, B]`. `discounts[t]` is `gamma * (1 - done[t + 1])`: zero where the
episode ended after step t, so nothing is bootstrapped across an episode boundary.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import Tensor


def discounted_returns(rewards: Tensor, discounts: Tensor, bootstrap: Tensor) -> Tensor:
    """n-step returns `G_t = r_t + discount_t * G_{t+1}`, with `G_T = bootstrap`."""
    returns = torch.empty_like(rewards)
    acc = bootstrap
    for t in reversed(range(rewards.shape[0])):
        acc = rewards[t] + discounts[t] * acc
        returns[t] = acc
    return returns


def gae(
    rewards: Tensor, values: Tensor, bootstrap: Tensor, discounts: Tensor, lam: float
) -> tuple[Tensor, Tensor]:
    """Generalized advantage estimates and the value targets `advantages + values`."""
    next_values = torch.cat([values[1:], bootstrap.unsqueeze(0)])
    deltas = rewards + discounts * next_values - values
    advantages = discounted_returns(deltas, discounts * lam, torch.zeros_like(bootstrap))
    return advantages, advantages + values


class VTrace(NamedTuple):
    targets: Tensor  # v_s, the value targets
    advantages: Tensor  # rho_t * (r_t + discount_t * v_{t+1} - V(x_t)), for the policy gradient


def vtrace(
    behaviour_logp: Tensor,
    target_logp: Tensor,
    rewards: Tensor,
    values: Tensor,
    bootstrap: Tensor,
    discounts: Tensor,
    lam: float = 1.0,
    clip_rho: float = 1.0,
    clip_pg_rho: float = 1.0,
) -> VTrace:
    """V-trace targets (Espeholt et al. 2018) from log-probabilities of the taken actions."""
    ratios = torch.exp(target_logp - behaviour_logp)
    rhos = ratios.clamp(max=clip_rho)
    cs = lam * ratios.clamp(max=1.0)
    next_values = torch.cat([values[1:], bootstrap.unsqueeze(0)])
    deltas = rhos * (rewards + discounts * next_values - values)
    corrections = discounted_returns(deltas, discounts * cs, torch.zeros_like(bootstrap))
    targets = values + corrections
    next_targets = torch.cat([targets[1:], bootstrap.unsqueeze(0)])
    pg_rhos = ratios.clamp(max=clip_pg_rho)
    return VTrace(targets, pg_rhos * (rewards + discounts * next_targets - values))


class Losses(NamedTuple):
    total: Tensor
    policy: Tensor
    value: Tensor
    entropy: Tensor


def actor_critic_loss(
    logits: Tensor,
    actions: Tensor,
    values: Tensor,
    advantages: Tensor,
    targets: Tensor,
    entropy_coef: float,
    value_coef: float,
) -> Losses:
    """Policy-gradient, value and entropy terms, averaged over `[T, B]`; targets are constants."""
    policy = -(action_log_probs(logits, actions) * advantages.detach()).mean()
    value = 0.5 * (targets.detach() - values).pow(2).mean()
    entropy = policy_entropy(logits).mean()
    total = policy + value_coef * value - entropy_coef * entropy
    return Losses(total, policy, value, entropy)


def policy_entropy(logits: Tensor) -> Tensor:
    """The entropy (nats) of the softmax policy over the last dim of `logits`."""
    log_probs = F.log_softmax(logits, dim=-1)
    return -(log_probs.exp() * log_probs).sum(-1)


def action_log_probs(logits: Tensor, actions: Tensor) -> Tensor:
    return F.log_softmax(logits, dim=-1).gather(-1, actions.unsqueeze(-1)).squeeze(-1)
