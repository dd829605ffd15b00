"""Learning, for real: CartPole is solved (actor-critic, REINFORCE and DQN), and a memory task
needs the LSTM's memory."""

import pytest
from helpers.runs import read_metrics, train

pytestmark = pytest.mark.slow

MEMORY = ("env=cartpole", "env.id=memory_env:CueMemory-v0", "model=mlp_lstm", "optim.lr=1e-3")
MEMORY += ("workers=1", "envs_per_worker=16", "algo.batch_rollouts=1", "algo.unroll=12")
MEMORY += ("algo=a3c", "algo.gae_lambda=1.0", "algo.popart_rate=0", "algo.obs_mean_rate=0")
MEMORY += ("algo.lr_cooldown=1.0",)  # as for CartPole: at a constant 1e-3 the policy can collapse
MEMORY += ("algo.lr_warmup_frames=0",)  # as for CartPole: the run is shorter than the warmup
MEMORY += ("callbacks.eval.at_end=false",)
SOLVED = "callbacks.stop_at_score=195"  # CartPole is solved at a mean of 195 over 100 games


def metric(run_dir, name: str) -> float:
    """The last value logged of `name`."""
    return [row for row in read_metrics(run_dir) if name in row][-1][name]


def final_mean_return(run_dir) -> float:
    """The mean score of the last 100 training games when training ended."""
    return metric(run_dir, "charts/mean_return_100")


def test_cartpole_mean_return_reaches_195_and_training_stops_there(run_dir):
    train(run_dir, "experiment=cartpole", "logger=csv", SOLVED, timeout=400)
    assert final_mean_return(run_dir) >= 195
    assert metric(run_dir, "charts/frames") < 800_000  # the experiment's budget: stopped early
    assert any("eval/return_mean" in row for row in read_metrics(run_dir))  # and scored at the end


def test_reinforce_cartpole_mean_return_reaches_195(run_dir):
    train(run_dir, "experiment=cartpole", "algo=reinforce", "logger=csv", SOLVED, timeout=1200)
    assert final_mean_return(run_dir) >= 195


def test_dqn_cartpole_mean_return_reaches_195(run_dir):
    train(run_dir, "experiment=cartpole_dqn", "logger=csv", SOLVED, timeout=900)
    assert final_mean_return(run_dir) >= 195


def test_memory_task_needs_the_recurrent_state(tmp_path):
    train(tmp_path / "lstm", *MEMORY, "frames=200000", "logger=csv", "callbacks.stop_at_score=0.9")
    train(tmp_path / "zeroed", *MEMORY, "frames=100000", "logger=csv", "model.recurrent=false")
    assert final_mean_return(tmp_path / "lstm") >= 0.8
    assert final_mean_return(tmp_path / "zeroed") <= 0.4
