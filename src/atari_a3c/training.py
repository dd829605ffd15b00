"""The training task: config -> env spec, learner, actors, Trainer.fit -> sweep metric."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import hydra
import lightning as L
import torch
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf
from torch.utils.data import DataLoader

from atari_a3c.actors import ActorPool
from atari_a3c.buffers import SharedWeights, SlotLayout
from atari_a3c.callbacks import ActorLifecycle, FrameProgressBar, LastCheckpoint
from atari_a3c.checkpoint import check_compatible, load_checkpoint
from atari_a3c.config import ConfigError, validate
from atari_a3c.data import RolloutDataset
from atari_a3c.envs import EnvSpec, env_spec
from atari_a3c.evaluation import policy_from_checkpoint
from atari_a3c.hardware import resolve_precision
from atari_a3c.module import ActorCriticLearner
from atari_a3c.periodic_eval import PeriodicEvaluation

# Hydra's handlers already print and file Lightning's messages; its own would print each twice.
logging.getLogger("lightning").handlers.clear()


def check_model_fits(cfg: DictConfig, spec: EnvSpec) -> None:
    image = len(spec.obs_shape) >= 3
    if (cfg.model.encoder == "mlp") == image:
        kind, fit = ("image", "nature_lstm") if image else ("vector", "mlp_lstm")
        raise ConfigError(
            f"model.encoder={cfg.model.encoder} does not take {kind} observations "
            f"{spec.obs_shape} from {cfg.env.id}; use model={fit}"
        )


def make_logger(cfg: DictConfig):
    if not cfg.get("logger") or "_target_" not in cfg.logger:
        return False
    return hydra.utils.instantiate(cfg.logger)


def finish_wandb() -> None:
    """Close the W&B run, if any, so the next multirun job starts a fresh one."""
    import wandb

    if wandb.run is not None:
        wandb.finish()


def check(cfg: DictConfig) -> tuple[EnvSpec, dict[str, dict]]:
    """Every check that needs no process: values, env, model fit, checkpoints named."""
    validate(cfg)
    spec = env_spec(cfg)
    check_model_fits(cfg, spec)
    checkpoints = {key: load_checkpoint(cfg[key]) for key in ("ckpt_path", "init_from") if cfg[key]}
    for checkpoint in checkpoints.values():
        check_compatible(checkpoint, cfg.env.id, spec.obs_shape, spec.num_actions)
    return spec, checkpoints


def train(cfg: DictConfig) -> float:
    """Train until the frame budget is spent; returns the final evaluation mean (sweep metric)."""
    spec, checkpoints = check(cfg)
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    plain = OmegaConf.to_container(cfg, resolve=True)
    OmegaConf.save(plain, run_dir / "config.yaml")
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    torch.set_num_threads(cfg.learner_threads or max(1, (os.cpu_count() or 1) - cfg.workers))

    learner = ActorCriticLearner(plain, spec.obs_shape, spec.num_actions)
    if "init_from" in checkpoints:
        learner.model.load_state_dict(
            policy_from_checkpoint(checkpoints["init_from"])[1].state_dict()
        )
    weights = SharedWeights(learner.model)
    layout = SlotLayout(
        unroll=cfg.algo.unroll,
        num_envs=cfg.envs_per_worker,
        obs_shape=spec.obs_shape,
        obs_dtype=spec.torch_dtype,
        num_actions=spec.num_actions,
        hidden_size=cfg.model.hidden_size,
    )
    pool = ActorPool(plain, layout, weights, seed=cfg.seed)
    callbacks = [
        ActorLifecycle(pool, weights),
        PeriodicEvaluation(run_dir / "checkpoints", seed=cfg.seed, **cfg.callbacks.eval),
        LastCheckpoint(run_dir, cfg.callbacks.checkpoint_every_frames),
        FrameProgressBar(),
    ]
    trainer_cfg = OmegaConf.to_container(cfg.trainer)
    trainer_cfg["precision"] = resolve_precision(str(trainer_cfg["precision"]))
    trainer: L.Trainer = hydra.utils.instantiate(
        trainer_cfg, logger=make_logger(cfg), callbacks=callbacks, default_root_dir=run_dir
    )
    loader = DataLoader(RolloutDataset(pool, cfg.algo.batch_rollouts), batch_size=None)
    try:
        trainer.fit(learner, loader, ckpt_path=cfg.ckpt_path, weights_only=True)
    finally:
        pool.stop()
        finish_wandb()
    return learner.eval_history[-1][1] if learner.eval_history else learner.mean_return
