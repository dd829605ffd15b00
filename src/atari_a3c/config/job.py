"""The config a training job runs, checked once per launch: a resumed run's own overrides, the
model for the observations, the layout from the cores, then every check that needs no process."""

from __future__ import annotations

from hydra import compose
from omegaconf import DictConfig

from atari_a3c.checkpoints.files import (
    check_compatible,
    check_same_model,
    load_checkpoint,
    stored_overrides,
)
from atari_a3c.checkpoints.sources import locate
from atari_a3c.config.checks import check_model_fits, validate
from atari_a3c.config.preflight import check_machine
from atari_a3c.config.resume import check_newest, check_unfinished
from atari_a3c.envs.make import EnvSpec, env_spec, obs_type
from atari_a3c.hardware import (
    actor_layout,
    cores,
    learner_device,
    learner_processes,
    learner_threads,
)


def size_from_cores(cfg: DictConfig) -> None:
    """Fill the layout keys left null (actors, emulator threads, learner threads) from each
    learner process's share of the cores and the device it learns on."""
    share = max(1, cores() // learner_processes(cfg.trainer.devices, cfg.trainer.accelerator))
    gpu = learner_device(cfg.trainer.accelerator) != "cpu"
    workers, env_threads = actor_layout(share, gpu)
    if cfg.workers is None:
        cfg.workers = workers
    if "env_threads" in cfg.env and cfg.env.env_threads is None:
        cfg.env.env_threads = env_threads
    if not cfg.learner_threads:
        used = cfg.env.get("env_threads", 1)
        cfg.learner_threads = learner_threads(share, cfg.workers, used, gpu)


def resume_config(
    cfg: DictConfig, overrides: list[str], checkpoint: dict | None
) -> tuple[DictConfig, list[str]]:
    """Resuming: the checkpoint's own overrides, then this command line's on top."""
    if checkpoint is None:
        return cfg, overrides
    stored = stored_overrides(checkpoint, cfg)
    merged = {item.split("=", 1)[0]: item for item in [*stored, *overrides]}  # later ones win
    overrides = list(merged.values())
    return compose("train", overrides=overrides), overrides


def model_for_observations(cfg: DictConfig, overrides: list[str]) -> tuple[DictConfig, list[str]]:
    """RAM observations go into `model=mlp_lstm`, as CartPole's vectors do, unless a model
    was chosen on the command line."""
    if (
        obs_type(cfg.env) != "ram"
        or cfg.model.encoder == "mlp"
        or any(o.startswith("model=") for o in overrides)
    ):
        return cfg, overrides
    overrides = [*overrides, "model=mlp_lstm"]
    return compose("train", overrides=overrides), overrides


def effective_config(
    cfg: DictConfig, overrides: list[str], resumed: dict | None
) -> tuple[DictConfig, list[str]]:
    """The config a job runs: a resumed run's own overrides, the model for the observations,
    the layout from the cores."""
    cfg, overrides = resume_config(cfg, overrides, resumed)
    cfg, overrides = model_for_observations(cfg, overrides)
    size_from_cores(cfg)
    return cfg, overrides


def check(cfg: DictConfig, overrides: list[str], checked: tuple | None = None):
    """Every check that needs no process: values, env, model fit, the checkpoints named (a
    resume only from the run's newest, RunFinished if its budget is spent).

    Returns the effective config and overrides (a resumed run's own, updated), the env spec
    and the checkpoints loaded. `checked` (the env spec and checkpoints the command line's
    check found for this job) skips what was already done.
    """
    if checked is not None:
        spec, checkpoints = checked
        cfg, overrides = effective_config(cfg, overrides, checkpoints.get("ckpt_path"))
        return cfg, overrides, spec, checkpoints
    checkpoints = {}
    if cfg.ckpt_path:
        checkpoints["ckpt_path"] = load_checkpoint(cfg.ckpt_path)
    if cfg.init_from:  # also a shipped agent or a W&B artifact
        checkpoints["init_from"] = load_checkpoint(locate(cfg.init_from))
    cfg, overrides = effective_config(cfg, overrides, checkpoints.get("ckpt_path"))
    validate(cfg)
    spec = env_spec(cfg)
    check_model_fits(cfg, spec)
    check_machine(cfg, spec)
    for checkpoint in checkpoints.values():
        check_compatible(checkpoint, cfg.env.id, spec.obs_shape, spec.num_actions)
        check_same_model(checkpoint, cfg.model, spec.obs_shape, spec.num_actions)
    if cfg.ckpt_path:
        check_newest(cfg.ckpt_path, checkpoints["ckpt_path"])
        check_unfinished(cfg.ckpt_path, checkpoints["ckpt_path"], cfg.frames)
    return cfg, overrides, spec, checkpoints


CHECKED: dict[tuple[str, ...], tuple[EnvSpec, dict]] = {}  # what precheck_job found, per job


def job_key(overrides: list[str]) -> tuple[str, ...]:
    return tuple(o for o in overrides if not o.startswith(("hydra.", "hydra/")))


def precheck_job(cfg: DictConfig, overrides: list[str]) -> None:
    """The command line's check of one job; its env spec and checkpoints wait for the task,
    so a launch in this process checks its config once."""
    _, _, spec, checkpoints = check(cfg, overrides)
    CHECKED[job_key(overrides)] = (spec, checkpoints)
