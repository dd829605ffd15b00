"""`python train.py` as a user runs it: real emulator, real Trainer, real files."""

import pytest
import torch
from conftest import read_metrics, run_script, train

TINY = ("frames=4000", "workers=1", "envs_per_worker=2", "algo.batch_rollouts=1")
TINY += ("callbacks.eval.episodes=1",)


def assert_run_outputs(run_dir, env_id: str) -> None:
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    meta = checkpoint["atari_a3c"]
    assert meta["env_id"] == env_id and meta["frames"] >= 4000
    assert meta["config"]["env"]["id"] == env_id and meta["num_actions"] > 0
    assert list(run_dir.glob("wandb/offline-run-*/run-*.wandb")), "no offline W&B run"
    assert (run_dir / "config.yaml").exists() and (run_dir / "train.log").exists()


@pytest.mark.slow
def test_default_pong(run_dir):
    train(run_dir, *TINY)
    assert_run_outputs(run_dir, "ALE/Pong-v5")


def test_pong_fast_learner_tracks_the_mean_frame_and_value_statistics(run_dir):
    train(run_dir, "experiment=pong_fast", *TINY, "logger=csv", "callbacks.eval.at_end=false")
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    weights, updates = checkpoint["state_dict"], checkpoint["atari_a3c"]["updates"]
    assert weights["model.obs_updates"] == weights["model.value_updates"] == updates > 0
    newest_frame = weights["model.obs_mean"][-1]  # older stack slots still hold reset frames
    assert abs(newest_frame.flatten().mode().values - 87 / 255) < 0.02  # Pong's gray background


def test_no_mean_score_is_logged_before_a_game_ends(run_dir):
    train(
        run_dir, *TINY, "logger=csv", "trainer.log_every_n_steps=1", "callbacks.eval.at_end=false"
    )
    rows = read_metrics(run_dir)  # 4,000 frames: no Pong game is over yet
    assert any("losses/total" in row for row in rows)
    assert not any("charts/mean_return_100" in row for row in rows)


@pytest.mark.slow
def test_spaceinvaders_adam(run_dir):
    train(run_dir, "env=spaceinvaders", "optim=adam", *TINY)
    assert_run_outputs(run_dir, "ALE/SpaceInvaders-v5")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("frames=0", "frames must be a positive integer"),
        ("optim.lr=-1", "optim.lr must be > 0"),
        ("algo.unroll=0", "algo.unroll must be a positive integer"),
        ("algo.gamma=1.5", "algo.gamma must be in (0, 1]"),
        ("workers=0", "workers must be a positive integer"),
        ("algo.popart_rate=1", "algo.popart_rate must be in [0, 1)"),
        ("algo.obs_mean_rate=-0.1", "algo.obs_mean_rate must be in [0, 1)"),
        ("env.id=ALE/Pongg-v5", "unknown env 'ALE/Pongg-v5'"),
        ("env=pongg", "env=pongg: unknown option; choose from beamrider, breakout"),
        ("optim=sgdd", "optim=sgdd: unknown option"),
        ("nonsense=1", "Could not override 'nonsense'"),
    ],
)
def test_bad_config_exits_2_with_one_line(run_dir, override, message):
    result = run_script("train.py", f"hydra.run.dir={run_dir}", override, timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not run_dir.exists(), "nothing may start before the config is checked"


def test_bad_value_inside_a_sweep_exits_2_before_any_job(tmp_path):
    result = run_script("train.py", "-m", f"hydra.sweep.dir={tmp_path}", "algo.gamma=0.9,2")
    assert result.returncode == 2 and "algo.gamma must be in (0, 1]" in result.stderr
