"""Hydra's errors composing a command line, as one line each with a hint where one helps."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.errors import MissingConfigException
from omegaconf import DictConfig

from atari_a3c.config.hints import not_whole, removed_key, sweep_without_m, unknown_key
from atari_a3c.errors import BadInput

PLUGIN_PACKAGES = {
    "hydra/launcher/submitit_local": "hydra-submitit-launcher",
    "hydra/launcher/submitit_slurm": "hydra-submitit-launcher",
    "hydra/launcher/slurm": "hydra-submitit-launcher",
    "hydra/sweeper/optuna": "hydra-optuna-sweeper",
    "hparams_search/pong_optuna": "hydra-optuna-sweeper",
}


def missing_option_message(error: MissingConfigException) -> str:
    group, _, option = str(error.missing_cfg_file).rpartition("/")
    package = PLUGIN_PACKAGES.get(f"{group}/{option}")
    if package:
        return f"{group}={option} needs the {package} package: pip install {package}"
    options = [o for o in error.options or [] if not o.startswith("_")]
    if group == "env":  # a hundred games: the closest names, and where all are listed
        close = difflib.get_close_matches(option.replace("_", "").lower(), options, n=3)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        return f"env={option}: unknown game; {hint}(`python -m atari_a3c.envs.games` lists them)"
    return f"{group}={option}: unknown option; choose from {', '.join(options)}"


def composition_error(error: Exception, config_dir: Path, config_name: str) -> BadInput:
    """Hydra's error composing the command line, as one line with a hint where one helps."""
    if isinstance(error, MissingConfigException):
        return BadInput(missing_option_message(error))
    script = f"{config_name}.py"
    if deleted := re.match(r"Error merging override ~([\w.]+)", str(error)):  # `~algo.gamma`
        return BadInput(removed_key(deleted[1]))
    if key := re.match(r"Could not override '([^']+)'", str(error)):
        return BadInput(unknown_key(key[1], known_config(config_dir, config_name), script))
    if setting := re.match(r"Ambiguous value for argument '([^']+)'", str(error)):
        return BadInput(sweep_without_m(setting[1], script))
    if key := re.search(r"An item is already at '([^']+)'", str(error)):  # `+frames=10`
        return BadInput(f"+{key[1]}: {key[1]} is already a key; set it without the +")
    if override := re.match(r"Error merging override ([\w.]+)=(\S*)", str(error)):
        key, value = override.groups()
        cause = str(error.__cause__)
        if "'dict'" in cause:  # `env.id=` where env holds one value
            parent = key.rpartition(".")[0]
            return BadInput(f"{key}: {parent} holds one value, not keys: {parent}={value}")
        if "converted to Integer" in cause:  # `seed=1.5`, `frames=10M`
            return BadInput(not_whole(key, value))
    return BadInput(_one_line(error))


def known_config(config_dir: Path, config_name: str) -> DictConfig:
    """The config without overrides: the keys a slip is compared with."""
    with initialize_config_dir(str(config_dir.resolve()), version_base="1.3"):
        return compose(config_name)


def _one_line(error: Exception) -> str:
    """The error's first line, and its cause's (a schema's type error behind a Hydra error)."""
    line = str(error).strip().splitlines()[0]
    cause = str(error.__cause__ or "").strip()
    return f"{line} ({cause.splitlines()[0]})" if cause else line
