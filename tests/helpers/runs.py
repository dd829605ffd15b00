"""The tests' helpers: run the real entry points in subprocesses, each in its own temp dir;
compose configs as train.py does; real actor pools."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HELPERS = Path(__file__).resolve().parent  # on the PYTHONPATH of the runs: test envs


def run_script(script: str, *overrides: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(HELPERS), "WANDB_SILENT": "true"}
    env.pop("DISPLAY", None)  # a window never opens from the tests
    return subprocess.run(
        [sys.executable, str(ROOT / script), *overrides],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


def train(run_dir: Path, *overrides: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python train.py` with the run dir in `run_dir`; fails the test on a non-zero exit."""
    result = run_script("train.py", f"hydra.run.dir={run_dir}", *overrides, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def read_metrics(run_dir: Path) -> list[dict[str, float]]:
    """Rows of the CSV logger's metrics file, values as floats (missing ones dropped)."""
    (path,) = run_dir.glob("csv/version_*/metrics.csv")
    with path.open() as f:
        return [{k: float(v) for k, v in row.items() if v != ""} for row in csv.DictReader(f)]


def hydra_context():
    """Hydra initialized on the training configs, as inside `python train.py`."""
    from hydra import initialize_config_dir

    from atari_a3c.config import schema  # noqa: F401  (registers the config's types and games)

    return initialize_config_dir(str(ROOT / "conf"), version_base="1.3")


def compose(*overrides: str):
    """The training config as train.py would compose it (no Hydra run dir, no logger)."""
    from hydra import compose as hydra_compose

    with hydra_context():
        return hydra_compose("train", overrides=["logger=none", *overrides])


def make_pool(*overrides: str):
    """A real actor pool for the composed config, not started, and its slots' layout."""
    from atari_a3c.config.job import size_from_cores
    from atari_a3c.envs.make import env_spec
    from atari_a3c.training.job import build_pool

    cfg = compose(*overrides)
    size_from_cores(cfg)
    pool = build_pool(cfg, env_spec(cfg))
    return pool, pool.layout


def collect_rollouts(*overrides: str, batches: int, batch_rollouts: int = 1) -> list[dict]:
    """`batches` batches from a real actor pool of the composed config, then the pool stops."""
    from atari_a3c.actors.rollouts import RolloutDataset

    pool, _ = make_pool(*overrides)
    pool.start()
    try:
        stream = iter(RolloutDataset(pool, batch_rollouts=batch_rollouts))
        return [next(stream) for _ in range(batches)]
    finally:
        pool.stop()
