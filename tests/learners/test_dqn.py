"""DQN's pieces against slow, obvious references: n-step double-Q targets, exploration, the
replay memory, and the dueling head."""

import pytest
import torch
from helpers.runs import collect_rollouts, compose, read_metrics, train

from atari_a3c.actors.replay_memory import FrameStacks, ReplayMemory
from atari_a3c.checkpoints.files import policy_from_checkpoint
from atari_a3c.evaluation.play import action_rule
from atari_a3c.learners.q_loss import n_step_targets, q_losses
from atari_a3c.models.actor_critic import build_model
from atari_a3c.models.exploration import epsilon, epsilon_greedy

T, B, N, GAMMA = 7, 3, 3, 0.9


def reference_targets(rewards, done_next, bootstrap, n):
    """Per env and step: rewards summed forward until n steps, an episode end or the rollout's
    end, then the discounted bootstrap unless the episode ended."""
    out = torch.zeros(T, B)
    for b in range(B):
        for t in range(T):
            total, weight, k = 0.0, 1.0, t
            while k < min(t + n, T):
                total += weight * rewards[k, b]
                if done_next[k, b]:
                    weight = 0.0
                    break
                weight *= GAMMA
                k += 1
            out[t, b] = total + weight * bootstrap[min(t + n, T), b]
    return out


def test_n_step_targets_match_their_definition():
    g = torch.Generator().manual_seed(0)
    rewards, bootstrap = torch.randn(T, B, generator=g), torch.randn(T + 1, B, generator=g)
    done_next = torch.zeros(T, B, dtype=torch.bool)
    done_next[1, 0] = done_next[5, 1] = done_next[6, 2] = True
    discounts = GAMMA * (~done_next).float()
    for n in (1, N, T + 2):
        expected = reference_targets(rewards, done_next, bootstrap, n)
        torch.testing.assert_close(n_step_targets(rewards, discounts, bootstrap, n), expected)


def test_double_q_lets_the_online_net_pick_and_the_target_net_value():
    algo = compose("algo=dqn").algo
    batch = {
        "done": torch.zeros(2, 1, dtype=torch.bool),
        "action": torch.zeros(1, 1, dtype=torch.int64),
        "reward": torch.zeros(1, 1),
    }
    online = torch.tensor([[[0.0, 0.0]], [[1.0, 0.0]]])  # prefers action 0 at the next state
    target = torch.tensor([[[0.0, 0.0]], [[5.0, 9.0]]])  # would prefer action 1
    algo.n_step, algo.double = 1, True
    assert q_losses(online, target, batch, algo)[1].item() == pytest.approx(algo.gamma * 5.0)
    algo.double = False
    assert q_losses(online, target, batch, algo)[1].item() == pytest.approx(algo.gamma * 9.0)


def test_epsilon_falls_linearly_then_stays():
    algo = compose("algo=dqn", "algo.epsilon_frames=1000").algo
    rates = [epsilon(algo, f) for f in (0, 500, 1000, 10**6)]
    assert rates == pytest.approx([1.0, 0.505, 0.01, 0.01])
    q = torch.tensor([[0.0, 1.0, 0.0]]).repeat(4000, 1)
    assert (epsilon_greedy(q, 0.0) == 1).all()
    explored = (epsilon_greedy(q, 0.3) != 1).float().mean().item()
    assert abs(explored - 0.3 * 2 / 3) < 0.03, (
        "a random action is the greedy one a third of the time"
    )


def test_sampled_evaluation_of_dqn_is_epsilon_greedy_and_of_a_policy_samples_it():
    q = torch.tensor([[0.0, 0.0, 1.0]]).repeat(4000, 1)  # as logits, softmax gives 2 a 0.58
    dqn = action_rule(compose("algo=dqn", "algo.epsilon_final=0.05"), greedy=False, seed=0)
    assert abs((dqn(q) != 2).float().mean().item() - 0.05 * 2 / 3) < 0.015
    policy = action_rule(compose("algo=a3c"), greedy=False, seed=0)
    assert abs((policy(q) == 2).float().mean().item() - q[0].softmax(-1)[2].item()) < 0.03
    assert (action_rule(compose("algo=dqn"), greedy=True, seed=0)(q) == 2).all()


def rollout(value: float, steps: int = 4, envs: int = 2) -> dict:
    return {
        "obs": torch.full((steps + 1, envs, 3), value),
        "done": torch.zeros(steps + 1, envs, dtype=torch.bool),
        "action": torch.zeros(steps, envs, dtype=torch.int64),
        "reward": torch.full((steps, envs), value),
        "h0": torch.full((envs, 5), value),
        "c0": torch.full((envs, 5), value),
    }


def test_replay_keeps_the_newest_rollouts_and_samples_whole_sequences():
    memory = ReplayMemory(capacity=20, seed=0)
    for value in range(5):
        memory.add(rollout(float(value)))
    assert memory.transitions == 16, "rollouts of 8 transitions: the oldest go past 20"
    sample = memory.sample(50)
    assert sample["obs"].shape == (5, 50, 3) and sample["h0"].shape == (50, 5)
    first = sample["obs"][0, :, 0]
    assert set(first.tolist()) == {3.0, 4.0}, "only the two newest rollouts are left"
    for key in ("obs", "reward"):  # every sequence is one env's, with its own start state
        assert (sample[key] == first.view(1, -1, *[1] * (sample[key].dim() - 2))).all()
    assert (sample["h0"][:, 0] == first).all()


def test_frame_stacks_are_held_once_and_come_back_exactly():
    """Real Breakout rollouts with games ending inside them (100-step games)."""
    batches = collect_rollouts(
        "env=breakout", "workers=1", "envs_per_worker=3", "algo.unroll=40",
        "env.max_episode_frames=400", batches=4,
    )  # fmt: skip
    game_starts = 0
    for batch in batches:
        stacks = FrameStacks(batch["obs"])
        for j in range(3):
            assert torch.equal(stacks.column(j), batch["obs"][:, j])
        game_starts += len(stacks.starts) - 3
        held = stacks.newest.numel() + sum(s.numel() for s in stacks.starts.values())
        assert held < batch["obs"].numel() / 3
    assert game_starts >= 3, "games start inside rollouts, and their stacks are kept whole"


def test_dueling_q_values_are_the_value_plus_centred_advantages():
    cfg = compose("env=cartpole", "algo=dqn", "model.dueling=true")
    model = build_model(cfg.model, (4,), 2)
    obs, done = torch.randn(3, 5, 4), torch.zeros(3, 5, dtype=torch.bool)
    q, values, _ = model(obs, done, model.initial_state(5))
    torch.testing.assert_close(q.mean(-1), values)


@pytest.mark.slow
def test_dqn_trains_through_processes_replay_and_target_net_and_its_checkpoint_plays(run_dir):
    train(run_dir, "debug=tiny", "algo=dqn", "model=dueling_nature", "algo.replay_start=400",
          "algo.epsilon_frames=2000", "algo.target_every=1000", "logger=csv",
          "trainer.log_every_n_steps=1", "callbacks.eval.at_end=false")  # fmt: skip
    rows = [row for row in read_metrics(run_dir) if "losses/q_target" in row]
    assert rows[0]["charts/frames"] >= 400 * 4, "no update before replay_start transitions"
    assert rows[-1]["charts/epsilon"] == pytest.approx(0.01)
    rates = [row["charts/fps"] for row in read_metrics(run_dir) if "charts/fps" in row]
    assert rates and min(rates) > 0, "the rate is measured across rollouts, not bare updates"
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    weights = checkpoint["state_dict"]
    assert 0 < checkpoint["atari_a3c"]["updates"] < 1000, "the target net was copied only once"
    assert not torch.equal(weights["model.policy.weight"], weights["target_model.policy.weight"])
    _, model = policy_from_checkpoint(checkpoint)
    assert model.dueling and torch.equal(model.policy.weight, weights["model.policy.weight"])
