"""Q-learning's maths (`algo=dqn`): n-step (double) Q targets and the Huber loss. The policy
head's outputs are the Q-values (with `model.dueling`, the value plus centred advantages).
Shapes are time-major `[T, B]` as in `returns.py`."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor


def n_step_targets(rewards: Tensor, discounts: Tensor, bootstrap: Tensor, n: int) -> Tensor:
    """`G_t = sum_{k<m} (prod_{j<k} d_{t+j}) r_{t+k} + (prod_{j<m} d_{t+j}) bootstrap[t+m]`
    with `m = min(n, T - t)`: n-step returns, shorter at the end of the rollout.

    `rewards`, `discounts` `[T, B]`; `bootstrap` `[T + 1, B]`, the value of each step's state.
    A zero discount (an episode ended) stops both the sum and the bootstrap.
    """
    steps = rewards.shape[0]
    t = torch.arange(steps, device=rewards.device)
    total = torch.zeros_like(rewards)
    scale = torch.ones_like(rewards)
    for k in range(n):
        inside = (t + k < steps)[:, None]
        index = (t + k).clamp(max=steps - 1)
        total = total + torch.where(inside, scale * rewards[index], 0.0)
        scale = torch.where(inside, scale * discounts[index], scale)
    return total + scale * bootstrap[(t + n).clamp(max=steps)]


def q_losses(q: Tensor, target_q: Tensor, batch: dict[str, Tensor], algo) -> tuple[Tensor, Tensor]:
    """The Huber loss of the taken actions' Q-values against n-step targets, and the targets.

    `q` (online net, with gradients) and `target_q` (target net) are `[T + 1, B, A]` over the
    rollout's observations; the last step only bootstraps. With `algo.double`, the online net
    picks the next action and the target net values it (van Hasselt et al. 2016).
    """
    with torch.no_grad():
        pick = q.detach() if algo.double else target_q
        bootstrap = target_q.gather(-1, pick.argmax(-1, keepdim=True)).squeeze(-1)
        discounts = algo.gamma * (~batch["done"][1:]).float()
        targets = n_step_targets(batch["reward"], discounts, bootstrap, algo.n_step)
    taken = q[:-1].gather(-1, batch["action"].unsqueeze(-1)).squeeze(-1)
    return F.smooth_l1_loss(taken, targets), targets
