"""What the machine must offer a launch, checked before anything starts: the accelerator asked
for, a W&B login for an online logger, the game's ROM, and memory and /dev/shm for the rollout
slots (and DQN's replay)."""

from __future__ import annotations

import netrc
import os
import shutil
from pathlib import Path
from urllib.parse import urlparse

import psutil
import torch
from omegaconf import DictConfig

from atari_a3c.actors.pool import slots_nbytes
from atari_a3c.actors.replay_memory import stored_obs_bytes
from atari_a3c.envs.make import EnvSpec, rom_name
from atari_a3c.errors import ConfigError

MEMORY_SHARE = 0.5  # of the machine's memory the rollout slots, or DQN's replay, may take


def check_machine(cfg: DictConfig, spec: EnvSpec) -> None:
    """ConfigError naming the first thing this machine lacks for the run `cfg` asks for."""
    _check_accelerator(cfg.trainer.accelerator)
    _check_logger(cfg.get("logger"))
    _check_replay_fits(cfg, spec)
    _check_slots_fit(cfg, spec)


def check_rom(env_id: str) -> None:
    from ale_py import roms

    if rom_name(env_id) not in roms.get_all_rom_ids():
        raise ConfigError(f"env.id: no ROM for {env_id} in ale-py")


def _check_accelerator(name: str) -> None:
    available = {
        "auto": True,
        "cpu": True,
        "gpu": torch.cuda.is_available() or torch.backends.mps.is_available(),
        "cuda": torch.cuda.is_available(),
        "mps": torch.backends.mps.is_available(),
    }
    if name not in available:
        listed = ", ".join(available)
        raise ConfigError(f"trainer.accelerator must be one of {listed}, got {name!r}")
    if not available[name]:
        raise ConfigError(
            f"trainer.accelerator={name}: torch finds no such device; use trainer.accelerator=cpu"
        )


def _check_logger(logger: DictConfig | None) -> None:
    """An online W&B logger needs a login: found before training, not after the first update."""
    online = (
        logger
        and "Wandb" in str(logger.get("_target_"))
        and not logger.get("offline")
        and os.environ.get("WANDB_MODE") not in ("offline", "disabled")
    )
    if online and not wandb_login_found():
        raise ConfigError(
            "logger.offline=false needs a W&B login (`wandb login` or WANDB_API_KEY); "
            "offline runs upload later with `wandb sync`"
        )


def wandb_login_found() -> bool:
    """An API key in the environment or in ~/.netrc for the W&B host (`wandb login` saves it)."""
    if os.environ.get("WANDB_API_KEY") or os.environ.get("WANDB_IDENTITY_TOKEN_FILE"):
        return True
    host = urlparse(os.environ.get("WANDB_BASE_URL", "https://api.wandb.ai")).hostname
    try:
        return netrc.netrc(os.environ.get("NETRC")).authenticators(host) is not None
    except (OSError, netrc.NetrcParseError):
        return False


def _check_replay_fits(cfg: DictConfig, spec: EnvSpec) -> None:
    """DQN's replay holds `replay_size` observations: it must fit in half the machine's
    memory."""
    if cfg.algo.name != "dqn":
        return
    algo = cfg.algo
    need = algo.replay_size * stored_obs_bytes(spec.obs_shape, spec.obs_dtype.itemsize, algo.unroll)
    have = psutil.virtual_memory().total
    if need > MEMORY_SHARE * have:
        raise ConfigError(
            f"algo.replay_size={algo.replay_size} needs {need / 2**30:.1f} GiB of observations; "
            f"this machine has {have / 2**30:.1f} GiB (at most half of it goes to the replay)"
        )


def _check_slots_fit(cfg: DictConfig, spec: EnvSpec) -> None:
    """The actors' rollout slots live in shared memory (/dev/shm): they must fit there, and in
    half the machine's memory."""
    need = slots_nbytes(cfg, spec)
    limits = {"half this machine's memory": MEMORY_SHARE * psutil.virtual_memory().total}
    if Path("/dev/shm").is_dir():
        limits["the free space of /dev/shm"] = shutil.disk_usage("/dev/shm").free
    where, have = min(limits.items(), key=lambda item: item[1])
    if need > have:
        raise ConfigError(
            f"workers={cfg.workers} x envs_per_worker={cfg.envs_per_worker} x "
            f"algo.unroll={cfg.algo.unroll}: the rollout slots need {need / 2**30:.1f} GiB of "
            f"shared memory, more than {where} ({have / 2**30:.1f} GiB)"
        )
