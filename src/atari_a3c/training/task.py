"""The training task: a checked job and its actors -> learner, Trainer.fit -> sweep metric."""

from __future__ import annotations

import logging
import sys
import warnings
from pathlib import Path

import hydra
import lightning as L
import torch
from hydra.core.hydra_config import HydraConfig
from hydra.errors import InstantiationException
from lightning.pytorch.loggers import WandbLogger
from lightning.pytorch.plugins.io import TorchCheckpointIO
from omegaconf import DictConfig, OmegaConf
from torch.utils.data import DataLoader

from atari_a3c.actors.pool import ActorPool
from atari_a3c.actors.rollouts import RolloutDataset
from atari_a3c.checkpoints.files import (
    KEY,
    policy_from_checkpoint,
    save_atomically,
)
from atari_a3c.envs.make import EnvSpec
from atari_a3c.errors import ConfigError
from atari_a3c.evaluation.periodic import PeriodicEvaluation
from atari_a3c.hardware import keep_freed_memory, learner_device, resolve_precision
from atari_a3c.training.callbacks import (
    ActorSync,
    CheckpointArtifacts,
    FrameProgressBar,
    LastCheckpoint,
    StopWhenSolved,
)
from atari_a3c.training.report import RunClock, run_report
from atari_a3c.training.shutdown import GracefulShutdown

log = logging.getLogger(__name__)
# Hydra's handlers already print and file Lightning's messages; its own would print each twice.
logging.getLogger("lightning").handlers.clear()
# Not the user's to act on: Lightning's product tips and a torch deprecation its code triggers.
logging.getLogger("lightning.pytorch.utilities.rank_zero").addFilter(
    lambda record: not record.getMessage().startswith("💡 Tip")
)
warnings.filterwarnings("ignore", r"`isinstance\(treespec, LeafSpec\)`", FutureWarning)


class AtomicCheckpointIO(TorchCheckpointIO):
    """Lightning's checkpoint writer, writing atomically. A write that fails (a full disk)
    keeps the previous file and warns; training goes on and the next save tries again."""

    def save_checkpoint(self, checkpoint: dict, path, storage_options=None) -> None:
        try:
            save_atomically(checkpoint, path)
        except OSError as error:
            log.warning("could not write %s (%s); the previous one stands", path, error.strerror)


def make_logger(cfg: DictConfig, wandb_id: str | None):
    """The configured Lightning logger; a resumed W&B run keeps its run id."""
    if not cfg.get("logger") or "_target_" not in cfg.logger:
        return False
    extra = (
        {"id": wandb_id, "resume": "allow"} if wandb_id and "Wandb" in cfg.logger._target_ else {}
    )
    logger = hydra.utils.instantiate(cfg.logger, **extra)
    if isinstance(logger, WandbLogger):  # Lightning passes W&B its deprecated `anonymous`
        logger._wandb_init.pop("anonymous", None)
    return logger


def finish_wandb() -> None:
    """Close the W&B run, if any, so the next multirun job starts a fresh one. Called in a
    `finally`, it never raises: a run that failed shows its own error."""
    wandb = sys.modules.get("wandb")  # a run that logged to W&B imported it
    if wandb is None or wandb.run is None:
        return
    try:
        wandb.finish()
    except Exception as error:  # the error in flight, if any, matters more
        log.warning("could not finish the W&B run: %s", error)


def make_trainer(
    cfg: DictConfig, logger, callbacks: list, run_dir: Path, clips: bool = True
) -> L.Trainer:
    """The Lightning Trainer; a value it refuses (`trainer.precision=fp8`) is a ConfigError.
    `clips`: whether it clips gradients (a learner that steps its optimizer itself clips)."""
    trainer_cfg = OmegaConf.to_container(cfg.trainer)
    if not clips:
        trainer_cfg["gradient_clip_val"] = None
    device = learner_device(str(trainer_cfg["accelerator"]))
    trainer_cfg["precision"] = resolve_precision(str(trainer_cfg["precision"]), device)
    try:
        return hydra.utils.instantiate(
            trainer_cfg,
            logger=logger,
            callbacks=callbacks,
            plugins=[AtomicCheckpointIO()],
            default_root_dir=run_dir,
        )
    except InstantiationException as error:
        raise ConfigError(f"trainer: {error.__cause__ or error}") from error


def build_learner(cfg: DictConfig, spec: EnvSpec, checkpoints: dict, overrides: list[str]):
    plain = OmegaConf.to_container(cfg, resolve=True)
    learner_class = hydra.utils.get_class(cfg.algo._target_)  # the algorithm's sibling learner
    learner = learner_class(plain, spec.obs_shape, spec.num_actions, overrides)
    if "init_from" in checkpoints:
        _, model = policy_from_checkpoint(checkpoints["init_from"])
        learner.model.load_state_dict(model.state_dict())
    return learner


def train(
    cfg: DictConfig, overrides: list[str], spec: EnvSpec, checkpoints: dict, pool: ActorPool
) -> float:
    """Train the checked job until the frame budget is spent, its actors from `pool`; returns
    the final evaluation mean (the sweep metric)."""
    run_dir = Path(HydraConfig.get().runtime.output_dir)
    L.seed_everything(cfg.seed, workers=True, verbose=False)
    torch.set_num_threads(cfg.learner_threads)
    keep_freed_memory()  # the update's large tensors reuse the last update's memory
    learner = build_learner(cfg, spec, checkpoints, overrides)
    shutdown = GracefulShutdown()
    clock = RunClock()
    saves = LastCheckpoint(run_dir, cfg.callbacks.checkpoint_every_frames)
    callbacks = [
        clock,
        ActorSync(pool),
        shutdown,
        saves,  # saved before any evaluation
        PeriodicEvaluation(
            run_dir / "checkpoints",
            env_id=cfg.env.id,
            seed=cfg.seed,
            stopping=shutdown.requested,  # a signal ends a running evaluation
            **cfg.callbacks.eval,
        ),
        FrameProgressBar(),
    ]
    if cfg.callbacks.stop_at_score is not None:
        callbacks.append(StopWhenSolved(cfg.callbacks.stop_at_score))
    if cfg.callbacks.wandb_artifacts:
        callbacks.append(CheckpointArtifacts(run_dir / "checkpoints"))
    wandb_id = checkpoints["ckpt_path"][KEY]["wandb_id"] if "ckpt_path" in checkpoints else None
    logger = make_logger(cfg, wandb_id)
    trainer = make_trainer(cfg, logger, callbacks, run_dir, learner.automatic_optimization)
    OmegaConf.save(cfg, run_dir / "config.yaml", resolve=True)
    loader = DataLoader(
        learner.batches(RolloutDataset(pool, cfg.algo.batch_rollouts)), batch_size=None
    )
    stopped_by = None
    try:
        trainer.fit(learner, loader, ckpt_path=cfg.ckpt_path, weights_only=True)
    except Exception:
        stopped_by = "an error"  # whose line follows the report
        raise
    finally:
        finish_wandb()
        if trainer.is_global_zero:
            stopped_by = stopped_by or shutdown.signal_name()
            print(run_report(run_dir, learner, clock, cfg.frames, saves.saved_frames, stopped_by))
    if shutdown.exit_code() is not None:
        sys.exit(shutdown.exit_code())
    return learner.eval_history[-1][1] if learner.eval_history else learner.mean_return
