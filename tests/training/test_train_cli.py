"""`python train.py` as a user runs it: real emulator, real Trainer, real files; bad input is
refused in one line before anything starts."""

import os
import re
import subprocess
import sys
import time

import pytest
import torch
from helpers.runs import HELPERS, ROOT, compose, read_metrics, run_script, train

from atari_a3c.config.cli import check_command_line
from atari_a3c.config.job import check
from atari_a3c.errors import BadInput
from atari_a3c.evaluation.scores import RANDOM_AND_HUMAN
from atari_a3c.training.task import make_logger, make_trainer

PONG = ROOT / "src" / "atari_a3c" / "pretrained" / "pong.ckpt"


def assert_run_outputs(run_dir, env_id: str) -> None:
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    meta = checkpoint["atari_a3c"]
    assert meta["env_id"] == env_id and meta["frames"] >= 4000
    assert meta["config"]["env"]["id"] == env_id and meta["num_actions"] > 0
    (wandb_run,) = run_dir.glob("wandb/offline-run-*/run-*.wandb")
    records = wandb_run.read_bytes()  # the offline run's log, which `wandb sync` uploads
    for name in (
        b"last.ckpt",
        b"best.ckpt",
        b'"eval_mean"',
        b"model-" + wandb_run.stem[4:].encode(),
    ):
        assert name in records, f"no {name} among the run's checkpoint artifacts"
    assert (run_dir / "config.yaml").exists() and (run_dir / "train.log").exists()


@pytest.mark.slow
def test_default_pong(run_dir):
    train(run_dir, "debug=tiny")
    assert_run_outputs(run_dir, "ALE/Pong-v5")


def test_default_learner_tracks_its_statistics_and_writes_metrics_every_n_updates(run_dir):
    launched = time.time()
    train(run_dir, "debug=tiny", "logger=csv", "trainer.log_every_n_steps=7")
    elapsed = time.time() - launched
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    weights, updates = checkpoint["state_dict"], checkpoint["atari_a3c"]["updates"]
    assert weights["model.obs_updates"] == weights["model.value_updates"] == updates > 0
    newest_frame = weights["model.obs_mean"][-1]  # older stack slots still hold reset frames
    assert abs(newest_frame.flatten().mode().values - 87 / 255) < 0.02  # Pong's gray background
    rows = read_metrics(run_dir)  # 4,000 frames: no Pong game is over yet
    written = [row for row in rows if "losses/total" in row]
    steps = [int(row["step"]) + 1 for row in written]  # the logged step is an update's index
    assert steps[:-1] == list(range(7, 7 * len(steps), 7)) and steps[-1] == updates  # + the last
    assert written[-1]["charts/frames"] == 4000 and written[-1]["charts/fps"] > 0
    assert not any("charts/mean_return_100" in row for row in rows)
    lags = [row["perf/policy_lag"] for row in rows if "perf/policy_lag" in row]
    assert lags and all(0 <= lag < 10 for lag in lags)
    startups = {row["perf/startup_s"] for row in rows if "perf/startup_s" in row}
    assert len(startups) == 1 and 0 < startups.pop() < elapsed  # once: the first update
    (scored,) = [row for row in rows if "eval/return_mean" in row]  # the final evaluation
    random, human = RANDOM_AND_HUMAN["pong"]
    normalized = (scored["eval/return_mean"] - random) / (human - random)
    assert scored["eval/human_normalized"] == pytest.approx(normalized)


def test_a_run_ends_with_its_report_and_prints_no_library_tips(run_dir):
    result = train(run_dir, "debug=tiny", "logger=csv", "callbacks.eval.at_end=false")
    output = result.stdout + result.stderr
    assert "GPU available" in output  # Lightning's own messages still reach the console
    assert "Tip:" not in output and "is deprecated" not in output
    frames = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)["atari_a3c"]
    report = result.stdout[result.stdout.index("run finished") :].splitlines()
    assert report[:3] == [
        f"run finished: {frames['frames']:,} frames",
        f"  run dir: {run_dir}",
        f"  last:    {run_dir}/checkpoints/last.ckpt ({frames['frames']:,} frames, not evaluated)",
    ]
    assert re.fullmatch(r"  time:    \d+ s, [\d,]+ frames at [\d,]+ frames/s", report[3])
    last = run_dir / "checkpoints" / "last.ckpt"
    assert report[4] == f"  extend:  python train.py ckpt_path={last} frames=8000"
    assert report[5] == f"  watch:   python evaluate.py ckpt={last} render=true"
    assert f"{frames['frames'] / 1000:.2f}k/{frames['frames'] / 1000:.2f}k" in result.stderr


def test_the_metrics_file_is_written_while_training_runs(run_dir):
    """Each write of the metrics reaches the file: a user watches it during the run."""
    command = [sys.executable, str(ROOT / "train.py"), f"hydra.run.dir={run_dir}", "debug=tiny"]
    command += ["frames=8000", "logger=csv", "callbacks.eval.at_end=false"]  # 200 updates
    training = subprocess.Popen(command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(HELPERS)})
    try:
        frames = []  # in the file when it first holds any
        while training.poll() is None and not frames:
            time.sleep(0.01)
            if list(run_dir.glob("csv/version_*/metrics.csv")):
                frames = [
                    row["charts/frames"] for row in read_metrics(run_dir) if "charts/frames" in row
                ]
        assert training.wait(timeout=300) == 0
    finally:
        training.kill()
    assert frames and max(frames) < 8000, "metrics.csv appeared only when training ended"
    assert max(row["charts/frames"] for row in read_metrics(run_dir)) == 8000


@pytest.mark.slow
def test_spaceinvaders_adam(run_dir):
    train(run_dir, "env=spaceinvaders", "optim=adam", "debug=tiny")
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
        ("algo.advantage_rms_rate=1", "algo.advantage_rms_rate must be in [0, 1)"),
        (
            "algo=ppo algo.advantage_rms_rate=0.01",
            "algo.advantage_rms_rate is for algo=a3c or impala (algo=ppo normalizes its",
        ),
        ("algo.lr_warmup_frames=-1", "algo.lr_warmup_frames must be an integer >= 0, got -1"),
        ("actors.nice=20", "actors.nice must be an integer from 0 to 19, got 20"),
        ("env.id=ALE/Pongg-v5", "unknown env 'ALE/Pongg-v5'"),
        ("env=pongg", "env=pongg: unknown game; did you mean pong? (`python -m atari_a3c.envs"),
        ("env=space_invaders", "env=space_invaders: unknown game; did you mean spaceinvaders"),
        ("optim=sgdd", "optim=sgdd: unknown option"),
        ("nonsense=1", "nonsense: unknown key (`python train.py --cfg job` lists every key)"),
        (
            "total_timesteps=1",
            "total_timesteps: unknown key; did you mean frames (emulator frames, 4",
        ),
        ("trainer.max_steps=1", "trainer.max_steps: unknown key; did you mean frames (emulator"),
        ("update_epochs=4", "update_epochs: unknown key; did you mean algo.epochs (with algo=ppo)"),
        ("--cfg job frames=10M", "frames=10M: frames takes a whole number; write frames=10000000"),
        ("--info config env=pongg", "env=pongg: unknown game; did you mean pong?"),
        ("--cfg job lr=1e-4", "lr: unknown key; did you mean optim.lr?"),
        ("num_envs=8", "num_envs: unknown key; did you mean envs_per_worker (envs each of the"),
        ("lr=1e-4", "lr: unknown key; did you mean optim.lr?"),
        ("optim.learning_rate=1e-4", "optim.learning_rate: unknown key; did you mean optim.lr?"),
        ("algo.gama=0.9", "algo.gama: unknown key; did you mean algo.gamma?"),
        ("--frames 20000", "--frames 20000: settings are key=value, without dashes: frames=20000"),
        ("--ckpt-path=a.ckpt", "settings are key=value, without dashes: ckpt_path=a.ckpt"),
        ("env=ALE/Astrix-v5", "env= takes a game's name (env=asterix) or a config name"),
        ("env=ALE/Astrix-v5", "; for another gymnasium id write env.id=ALE/Astrix-v5"),
        (
            f"ckpt_path={PONG.parent}",
            f"checkpoint is a directory: {PONG.parent} (its checkpoints: ",
        ),
        ("+nonsense=1", "nonsense: unknown key"),
        ("+algo.entropy_cof=1", "algo.entropy_cof: unknown key; did you mean algo.entropy_coef?"),
        ("algo.lr_cooldown=2", "algo.lr_cooldown must be a fraction in [0, 1], got 2"),
        ("model.recurrent=maybe", "model.recurrent=maybe (Value 'maybe' is not a valid bool"),
        ("callbacks.eval.at_end=0", "callbacks.eval.at_end must be true or false, got 0"),
        ("-m model.recurrent=true,on", "model.recurrent must be true or false, got 'on'"),
        ("seed=abc", "seed=abc: seed takes a whole number"),
        ("frames=10M", "frames=10M: frames takes a whole number; write frames=10000000"),
        ("frames.x=3", "frames.x: frames holds one value, not keys: frames=3"),
        ("pong", "pong: settings are key=value; did you mean env=pong?"),
        ("ppo", "ppo: settings are key=value; did you mean algo=ppo?"),
        ("frames", "frames: settings are key=value; did you mean frames=<value>?"),
        ("a/last.ckpt", "did you mean ckpt_path=a/last.ckpt (resume) or init_from=a/last.ckpt?"),
        ("env=pong,breakout", "several values make a sweep; run it with -m: python train.py -m "),
        ("~frames", "~frames: every run reads it; set it instead"),
        ("~algo.gamma", "~algo.gamma: every run reads it; set it instead"),
        ("+frames=10", "+frames: frames is already a key; set it without the +"),
        ("env.id=PongNoFrameskip-v4", "env.id=PongNoFrameskip-v4: older gym Atari ids are not "),
        ("env.id=Pong-v0", "; env.id=ALE/Pong-v5 plays the game with the env config's frame skip"),
        ("env.obs_type=rbg", "env.obs_type must be one of grayscale, rgb, ram, got 'rbg'"),
        ("env.mode=99", "env.mode=99 is not one of ALE/Pong-v5's: 0, 1"),
        ("env.difficulty=4", "env.difficulty=4 is not one of ALE/Pong-v5's: 0, 1, 2, 3"),
        ("env=backgammon env.noop_max=30", "ALE/Backgammon-v5 has no NOOP action (its first"),
        ("ckpt_path=/nonexistent/last.ckpt", "checkpoint not found: /nonexistent/last.ckpt"),
        (f"ckpt_path={PONG}", "is not in a run's checkpoints/ dir, so there is no run to resume"),
        ("env.id=Pendulum-v1", "Pendulum-v1 has Box actions"),
        ("env.id=Ant-v4", "env.id=Ant-v4: MuJoCo is not installed"),
        ("trainer.accelerator=gpu", "trainer.accelerator=gpu: torch finds no such device"),
        ("trainer.accelerator=tpu", "trainer.accelerator must be one of auto, cpu, gpu"),
        ("algo.name=impla", "algo.name must be one of a3c, impala, ppo, reinforce, dqn, got 'i"),
        ("algo=reinforce", "algo=reinforce holds whole episodes in memory; ALE/Pong-v5's are"),
        ("model=dueling_nature", "model.dueling makes Q-values, for algo=dqn (not algo=impala)"),
        ("algo=dqn algo.replay_start=60000", "algo.replay_start=60000 exceeds algo.replay_size"),
        ("algo=dqn algo.replay_size=100", "algo.replay_size=100 holds less than one batch"),
        ("algo=dqn algo.replay_size=10000000", "algo.replay_size=10000000 needs 98.6 GiB of"),
        ("algo=dqn debug=tiny frames=20000", "frames=20000 ends before DQN's first update, which"),
        ("algo=dqn debug=tiny frames=30000", "comes at 40,000 frames (algo.replay_start=10000 tra"),
        ("algo=dqn debug=tiny frames=20000", "; use frames>=39841 or a smaller algo.replay_start"),
        ("algo=dqn algo.epsilon_final=2", "algo.epsilon_final must be in [0, 1], got 2"),
        ("workers=1 envs_per_worker=10000000", "the rollout slots need 4852.7 GiB of shared mem"),
    ],
)
def test_bad_config_is_one_line(override, message):
    with pytest.raises(BadInput) as error:
        check_command_line(ROOT / "conf", "train", check, override.split())
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize(
    ("argv", "accepted"),
    [
        (["frames=1e6"], ["frames=1000000"]),
        (
            ["optim.lr=1e-4", "algo.replay_start=2.5e4"],
            ["optim.lr=1e-4", "algo.replay_start=25000"],
        ),
        (["-m", "frames=1e4,2e4"], ["-m", "frames=10000,20000"]),
        (["env=ALE/Breakout-v5"], ["env=breakout"]),
    ],
)
def test_forms_meant_as_hydra_ones_are_accepted(argv, accepted):
    assert check_command_line(ROOT / "conf", "train", check, argv) == accepted


def test_a_hint_is_one_line_and_exit_2_without_a_traceback(run_dir):
    result = run_script("train.py", f"hydra.run.dir={run_dir}", "lr=1e-4", timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: lr: unknown key; did you mean optim.lr?"
    assert not run_dir.exists()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("trainer.precision=fp8", "trainer: Precision 'fp8' is invalid. Allowed precision values"),
        ("trainer.strategy=foo", "trainer: You selected an invalid strategy name"),
    ],
)
def test_a_value_the_trainer_refuses_is_one_line(override, message, tmp_path):
    with pytest.raises(BadInput) as error:
        make_trainer(compose(override), logger=False, callbacks=[], run_dir=tmp_path)
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.mark.parametrize("args", [["hydra.run.dir={}"], ["-m", "seed=1,2", "hydra.sweep.dir={}"]])
def test_a_run_dir_that_cannot_be_written_is_one_line(tmp_path, args):
    (tmp_path / "a-file").write_text("results of another run")
    argv = [arg.format(tmp_path / "a-file" / "run") for arg in args]
    with pytest.raises(BadInput, match=f"{tmp_path / 'a-file'} is a file, not a directory"):
        check_command_line(ROOT / "conf", "train", check, argv)
    assert (tmp_path / "a-file").read_text() == "results of another run"


def test_a_search_of_no_trials_is_one_line():
    argv = ["-m", "hparams_search=pong_optuna", "hydra.sweeper.n_trials=0"]
    with pytest.raises(BadInput, match="hydra.sweeper.n_trials must be a positive integer, got 0"):
        check_command_line(ROOT / "conf", "train", check, argv)


def test_bad_value_inside_a_sweep_is_refused_before_any_job():
    with pytest.raises(BadInput, match=r"algo.gamma must be in \(0, 1\]"):
        check_command_line(ROOT / "conf", "train", check, ["-m", "algo.gamma=0.9,2"])


def test_bad_config_exits_2_with_one_line_before_anything_starts(run_dir):
    result = run_script("train.py", f"hydra.run.dir={run_dir}", "algo.gamma=1.5", timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == ["error: algo.gamma must be in (0, 1], got 1.5"]
    assert not run_dir.exists(), "nothing may start before the config is checked"


def test_online_wandb_without_a_login_is_one_line(tmp_path, monkeypatch):
    for name in ("WANDB_API_KEY", "WANDB_IDENTITY_TOKEN_FILE", "WANDB_MODE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "netrc"))
    online = ["logger=wandb", "logger.offline=false"]
    with pytest.raises(BadInput, match=r"^logger.offline=false needs a W&B login"):
        check_command_line(ROOT / "conf", "train", check, online)
    (tmp_path / "netrc").write_text("machine api.wandb.ai login user password " + "k" * 40)
    check_command_line(ROOT / "conf", "train", check, online)


def test_hydra_flags_and_their_values_are_not_overrides():
    check_command_line(ROOT / "conf", "train", check, ["--cfg", "job"])
    check_command_line(ROOT / "conf", "train", check, ["--info", "config"])
    with pytest.raises(BadInput, match="frames must be"):
        check_command_line(ROOT / "conf", "train", check, ["-p", "algo", "frames=0"])
    with pytest.raises(BadInput, match="pong: settings are key=value; did you mean env=pong?"):
        check_command_line(ROOT / "conf", "train", check, ["--cfg", "job", "pong"])
    check_command_line(ROOT / "conf", "train", check, ["-sc", "install=bash"])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("model.hidden_size=256", r"core.weight_ih is \(2048, 512\) there, \(1024, 512\) here"),
        ("model=a3c_lstm", r"with observations \(4, 84, 84\); ALE/Pong-v5 gives \(1, 80, 80\)"),
    ],
)
def test_fine_tuning_a_model_of_another_shape_is_one_line(override, message):
    with pytest.raises(BadInput, match=message):
        check_command_line(ROOT / "conf", "train", check, [f"init_from={PONG}", override])


def test_wandb_is_passed_no_deprecated_setting(tmp_path):
    logger = make_logger(compose("logger=wandb", f"logger.save_dir={tmp_path}"), wandb_id=None)
    assert "anonymous" not in logger._wandb_init  # W&B warns of it in every run
