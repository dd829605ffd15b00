"""Returns, GAE and V-trace against slow, obvious references, with episode ends inside rollouts."""

import torch

from atari_a3c.learners import returns as R

T, B = 7, 3
GAMMA, LAM = 0.9, 0.8


def batch(seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    rewards = torch.randn(T, B, generator=g)
    values = torch.randn(T, B, generator=g)
    bootstrap = torch.randn(B, generator=g)
    done_next = torch.zeros(T, B, dtype=torch.bool)  # episode ended after step t
    done_next[2, 0] = done_next[5, 1] = done_next[6, 2] = True
    return rewards, values, bootstrap, GAMMA * (~done_next).float(), done_next


def reference_returns(rewards, values, bootstrap, done_next, lam):
    """Per env, per step: the lambda-return by its definition, walking forward to the end."""
    out = torch.zeros(T, B)
    for b in range(B):
        for t in range(T):
            total, weight = 0.0, 1.0
            for k in range(t, T):
                next_value = bootstrap[b] if k == T - 1 else values[k + 1, b]
                if done_next[k, b]:
                    next_value = 0.0
                delta = rewards[k, b] + GAMMA * next_value - values[k, b]
                total += weight * delta
                if done_next[k, b]:
                    break
                weight *= GAMMA * lam
            out[t, b] = total + values[t, b]
    return out


def test_discounted_returns_stop_at_episode_ends():
    rewards, _, bootstrap, discounts, done_next = batch()
    got = R.discounted_returns(rewards, discounts, bootstrap)
    for b in range(B):
        for t in range(T):
            expected, scale = 0.0, 1.0
            for k in range(t, T):
                expected += scale * rewards[k, b]
                if done_next[k, b]:
                    break
                scale *= GAMMA
            else:
                expected += scale * bootstrap[b]
            assert torch.isclose(got[t, b], torch.tensor(float(expected)), atol=1e-5)


def test_gae_matches_lambda_return_definition():
    rewards, values, bootstrap, discounts, done_next = batch(1)
    advantages, targets = R.gae(rewards, values, bootstrap, discounts, LAM)
    expected = reference_returns(rewards, values, bootstrap, done_next, LAM)
    torch.testing.assert_close(targets, expected, atol=1e-5, rtol=0)
    torch.testing.assert_close(advantages, expected - values, atol=1e-5, rtol=0)


def test_gae_with_lambda_one_is_n_step_return():
    rewards, values, bootstrap, discounts, _ = batch(2)
    _, targets = R.gae(rewards, values, bootstrap, discounts, 1.0)
    torch.testing.assert_close(targets, R.discounted_returns(rewards, discounts, bootstrap))


def reference_vtrace(log_rhos, rewards, values, bootstrap, done_next, clip_rho, clip_c):
    """v_s from its definition (Espeholt et al. 2018, eq. 1), one sum per s."""
    rhos = log_rhos.exp()
    vs = torch.zeros(T, B)
    for b in range(B):
        for s in range(T):
            total = values[s, b].item()
            c_prod = 1.0
            for t in range(s, T):
                next_value = bootstrap[b] if t == T - 1 else values[t + 1, b]
                discount = 0.0 if done_next[t, b] else GAMMA
                delta = min(clip_rho, rhos[t, b]) * (
                    rewards[t, b] + discount * next_value - values[t, b]
                )
                total += (GAMMA ** (t - s)) * c_prod * delta
                if done_next[t, b]:
                    break
                c_prod *= min(clip_c, rhos[t, b].item())
            vs[s, b] = total
    return vs


def test_vtrace_matches_definition():
    rewards, values, bootstrap, discounts, done_next = batch(3)
    g = torch.Generator().manual_seed(4)
    behaviour, target = torch.randn(T, B, generator=g), torch.randn(T, B, generator=g)
    out = R.vtrace(behaviour, target, rewards, values, bootstrap, discounts, 1.0, 1.0, 1.0)
    expected = reference_vtrace(target - behaviour, rewards, values, bootstrap, done_next, 1, 1)
    torch.testing.assert_close(out.targets, expected, atol=1e-5, rtol=0)
    next_vs = torch.cat([expected[1:], bootstrap[None]])
    rhos = (target - behaviour).exp().clamp(max=1.0)
    pg = rhos * (rewards + discounts * next_vs - values)
    torch.testing.assert_close(out.advantages, pg, atol=1e-5, rtol=0)


def test_vtrace_on_policy_equals_n_step_returns():
    rewards, values, bootstrap, discounts, _ = batch(5)
    logp = torch.randn(T, B)
    out = R.vtrace(logp, logp, rewards, values, bootstrap, discounts)
    torch.testing.assert_close(out.targets, R.discounted_returns(rewards, discounts, bootstrap))


def test_loss_terms():
    logits = torch.tensor([[[0.0, 0.0]]], requires_grad=True)
    actions = torch.tensor([[1]])
    values = torch.tensor([[0.5]], requires_grad=True)
    losses = R.actor_critic_loss(
        logits, actions, values, torch.tensor([[2.0]]), torch.tensor([[1.5]]), 0.01, 0.5
    )
    log_half = torch.log(torch.tensor(0.5))
    torch.testing.assert_close(losses.policy, -2.0 * log_half)
    torch.testing.assert_close(losses.value, torch.tensor(0.5))
    torch.testing.assert_close(losses.entropy, -log_half)
    torch.testing.assert_close(losses.total, losses.policy + 0.25 - 0.01 * losses.entropy)
