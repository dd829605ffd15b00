"""A training job from the command line's config: checked, its actors launched before Lightning
is imported, so that they make their envs while the main process imports it and builds the
learner (seconds of start-up on a small machine)."""

from __future__ import annotations

import logging
from pathlib import Path

from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from atari_a3c.actors.pool import ActorPool, slot_layout
from atari_a3c.actors.shared import SharedWeights
from atari_a3c.config.job import CHECKED, check, job_key
from atari_a3c.config.recipe import recipe_line
from atari_a3c.config.schema import CONF_ENV
from atari_a3c.envs.make import EnvSpec
from atari_a3c.errors import RunFinished
from atari_a3c.hardware import learner_processes
from atari_a3c.models.actor_critic import build_model
from atari_a3c.training.job_table import write_report

log = logging.getLogger(__name__)


def build_pool(cfg: DictConfig, spec: EnvSpec) -> ActorPool:
    """The actor pool of this config. Its weights are placeholders until the learner publishes
    its own, which the actors take before their first rollout."""
    model = build_model(cfg.model, spec.obs_shape, spec.num_actions)
    plain = OmegaConf.to_container(cfg, resolve=True)
    return ActorPool(plain, slot_layout(cfg, spec), SharedWeights(model), seed=cfg.seed)


def one_learner_process(cfg: DictConfig) -> bool:
    """Whether the run has a single learner (no DDP ranks, whose seeds the launch needs)."""
    ranks = learner_processes(cfg.trainer.devices, cfg.trainer.accelerator)
    return ranks == 1 and cfg.trainer.num_nodes == 1


def run_training(cfg: DictConfig) -> float:
    """Check the job, launch its actors, then train; returns the sweep metric."""
    overrides = list(HydraConfig.get().overrides.task)
    checked = CHECKED.pop(job_key(overrides), None)
    try:
        cfg, overrides, spec, checkpoints = check(cfg, overrides, checked)
    except RunFinished as finished:  # a sweep's job: its row in the job table is the run's
        job_dir = Path(HydraConfig.get().runtime.output_dir).resolve()
        if job_dir != Path(finished.run_dir):
            write_report(job_dir, finished.run_dir, finished.frames, finished.evals)
        raise
    log.info("%s", recipe_line(HydraConfig.get().runtime.choices, overrides, CONF_ENV.parent))
    pool = build_pool(cfg, spec)
    if one_learner_process(cfg):
        pool.launch()
    try:
        from atari_a3c.training.task import train  # imports Lightning while the actors make envs

        return train(cfg, overrides, spec, checkpoints, pool)
    finally:
        pool.stop()
