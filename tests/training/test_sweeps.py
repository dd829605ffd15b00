"""Sweeps and scale-out: Hydra multirun, Optuna, submitit's local launcher, DDP on CPU."""

import multiprocessing

import psutil
import pytest
import torch
from helpers.runs import run_script
from hydra.errors import MissingConfigException

from atari_a3c.config.composition import missing_option_message

pytestmark = pytest.mark.slow

TINY = (
    "experiment=cartpole",
    "frames=3000",
    "callbacks.eval.episodes=1",
    "trainer.log_every_n_steps=1",
)


def sweep(sweep_dir, *overrides: str):
    result = run_script(
        "train.py", "-m", f"hydra.sweep.dir={sweep_dir}", *TINY, *overrides, timeout=600
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return sorted(p for p in sweep_dir.iterdir() if p.is_dir() and p.name.isdigit())


def assert_jobs(jobs, count: int) -> None:
    assert [j.name for j in jobs] == [str(i) for i in range(count)]
    for job in jobs:
        torch.load(job / "checkpoints" / "last.ckpt", weights_only=True)
    ids = {next(job.glob("wandb/offline-run-*")).name.rsplit("-", 1)[1] for job in jobs}
    assert len(ids) == count, "each job has its own W&B run"


def test_multirun_gives_each_job_its_own_dir_run_and_checkpoint(tmp_path):
    jobs = sweep(tmp_path, "optim=adam,rmsprop")
    assert_jobs(jobs, 2)
    assert multiprocessing.active_children() == []
    assert not [
        p
        for p in psutil.process_iter(["cmdline"])
        if str(tmp_path) in " ".join(p.info["cmdline"] or [])
    ]


def test_a_multirun_ends_with_a_table_of_its_jobs(tmp_path):
    result = run_script(
        "train.py", "-m", f"hydra.sweep.dir={tmp_path}", *TINY, "logger=csv", "seed=1,2"
    )
    assert result.returncode == 0, result.stderr[-3000:]
    table = result.stdout[result.stdout.index("multirun of 2 jobs") :].splitlines()
    assert table[1].split() == [
        "overrides",
        "frames",
        "final",
        "eval",
        "best",
        "eval",
        "run",
        "dir",
    ]
    for job, row in enumerate(table[2:4]):
        assert row.split()[0] == f"seed={job + 1}" and row.endswith(str(tmp_path / str(job)))


def test_optuna_search_runs_trials(tmp_path):
    jobs = sweep(tmp_path, "hparams_search=pong_optuna", "hydra.sweeper.n_trials=2")
    assert len(jobs) == 2
    assert "best_value" in (tmp_path / "optimization_results.yaml").read_text()


def test_submitit_local_runs_jobs(tmp_path):
    jobs = sweep(tmp_path, "hydra/launcher=submitit_local", "seed=1,2")
    assert_jobs(jobs, 2)


def test_ddp_on_cpu_counts_every_rank_and_writes_one_checkpoint(run_dir):
    overrides = ("trainer.strategy=ddp", "trainer.devices=2", "callbacks.eval.at_end=false")
    result = run_script("train.py", f"hydra.run.dir={run_dir}", *TINY, *overrides, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    (ckpt,) = (run_dir / "checkpoints").glob("*.ckpt")
    meta = torch.load(ckpt, weights_only=True)
    frames_per_update = 16 * 20 * 2  # envs x unroll x ranks
    assert meta["atari_a3c"]["frames"] == meta["global_step"] * frames_per_update >= 3000
    assert len(list(run_dir.glob("wandb/offline-run-*"))) == 1, "only rank 0 logs"


def test_unknown_launcher_exits_2_with_the_options():
    result = run_script("train.py", "-m", "hydra/launcher=submitit_nonexistent", timeout=60)
    assert result.returncode == 2 and "unknown option; choose from basic" in result.stderr


def test_missing_plugin_message_names_the_package():
    missing = MissingConfigException("", "hydra/launcher/submitit_slurm", options=["basic"])
    expected = "needs the hydra-submitit-launcher package: pip install hydra-submitit-launcher"
    assert expected in missing_option_message(missing)


def test_a_diverging_job_fails_alone_and_the_sweep_goes_on(tmp_path):
    jobs = sweep(tmp_path, "optim.lr=1e-3,1e30,1e-3", "max_nonfinite_updates=3")
    assert len(jobs) == 3
    for job in (jobs[0], jobs[2]):
        meta = torch.load(job / "checkpoints" / "last.ckpt", weights_only=True)["atari_a3c"]
        assert meta["frames"] >= 3000
    assert "job 1 failed: 4 non-finite updates in a row" in (jobs[1] / "train.log").read_text()
