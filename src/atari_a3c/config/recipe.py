"""Which recipe a run trains with (its algorithm and model) and where each was chosen: the
command line, a game's or an experiment's file (conf/env/qbert.yaml picks PPO), or train.yaml."""

from __future__ import annotations

import re
from pathlib import Path

from omegaconf import OmegaConf

RECIPE_GROUPS = ("algo", "model")
CHOOSERS = ("experiment", "env")  # groups whose files may choose the recipe; the first one wins


def _chooses(path: Path, group: str) -> bool:
    """Whether the config file at `path` (or a file of its group it builds on) sets `group`."""
    if not path.is_file():
        return False
    for entry in OmegaConf.load(path).get("defaults") or []:
        if isinstance(entry, str):
            if entry != "_self_" and _chooses(path.with_name(f"{entry}.yaml"), group):
                return True
        elif any(re.fullmatch(rf"(override )?/?{group}(@\S+)?", str(k)) for k in entry):
            return True
    return False


def chosen_by(group: str, choices: dict, overrides: list[str], config_dir: Path) -> str:
    """Where the option of `group` was chosen, as the user would find it."""
    if any(o.partition("=")[0].lstrip("+") == group for o in overrides):
        return "the command line"
    for chooser in CHOOSERS:
        option = choices.get(chooser)
        if option and _chooses(config_dir / chooser / f"{option}.yaml", group):
            return f"conf/{chooser}/{option}.yaml"
    return "conf/train.yaml"


def recipe_line(choices: dict, overrides: list[str], config_dir: Path) -> str:
    """`recipe: algo=ppo (conf/env/qbert.yaml), model=nature_lstm (conf/train.yaml)`."""
    parts = [
        f"{group}={choices[group]} ({chosen_by(group, choices, overrides, config_dir)})"
        for group in RECIPE_GROUPS
    ]
    return f"recipe: {', '.join(parts)}; `{RECIPE_GROUPS[0]}=<name>` on the command line wins"
