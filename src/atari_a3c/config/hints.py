"""Hints for common command-line slips: a flag in argparse form, a word without `=`, a whole
number in scientific notation or with a suffix (`10M`), a gymnasium id given to the `env` group,
a number given to a true-or-false key, a list without `-m`, a misspelled or misplaced key."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import DictConfig, OmegaConf

from atari_a3c.envs.games import GAMES
from atari_a3c.errors import BadInput

SCIENTIFIC = re.compile(r"[+-]?\d+(\.\d*)?[eE]\+?\d+")
NUMBER = re.compile(r"[+-]?\d+(\.\d*)?([eE][+-]?\d+)?")
FLAG = re.compile(r"--?([A-Za-z][\w.-]*)(=(.*))?")


def refuse_argparse_flags(argv: list[str], hydra_flags: set[str]) -> None:
    """BadInput for `--frames 20000` or `--frames=20000`, naming the Hydra form `frames=20000`."""
    for i, arg in enumerate(argv):
        match = FLAG.fullmatch(arg)
        if not match or arg.partition("=")[0] in hydra_flags:
            continue
        key, value = match[1].replace("-", "_"), match[3]
        following = argv[i + 1] if i + 1 < len(argv) else None
        if value is None and following is not None and "=" not in following:
            arg, value = f"{arg} {following}", following
        raise BadInput(f"{arg}: settings are key=value, without dashes: {key}={value or '<value>'}")


def accepted_forms(argv: list[str], config_dir: Path) -> list[str]:
    """`argv` with the forms meant as another rewritten: `frames=1e6` -> `frames=1000000`, and
    `env=<gymnasium id>` -> `env=<the option with that id>` (BadInput naming `env.id=` when no
    option has it)."""
    return [_env_option(_whole_numbers(arg), config_dir) for arg in argv]


def _whole_numbers(arg: str) -> str:
    key, eq, value = arg.partition("=")
    if not eq or key.startswith(("hydra.", "hydra/")):
        return arg
    parts = value.split(",")  # a sweep's values too
    if not all(NUMBER.fullmatch(p) for p in parts) or not any(
        SCIENTIFIC.fullmatch(p) for p in parts
    ):
        return arg
    if not all(float(p).is_integer() for p in parts):
        return arg
    return f"{key}={','.join(str(int(float(p))) for p in parts)}"


def _env_option(arg: str, config_dir: Path) -> str:
    key, eq, value = arg.partition("=")
    if key != "env" or not (config_dir / "env").is_dir() or "/" not in value and "-v" not in value:
        return arg
    options = {env_id: name for name, env_id in GAMES.items()}
    for path in sorted((config_dir / "env").glob("[!_]*.yaml")):
        options[OmegaConf.load(path).get("id")] = path.stem
    if value in options:
        return f"env={options[value]}"
    raise BadInput(
        f"env={value}: env= takes a game's name (env=asterix) or a config name (env=cartpole); "
        f"for another gymnasium id write env.id={value}"
    )


def check_switches(cfg: DictConfig, overrides: list[str]) -> None:
    """BadInput for `greedy=2` or `greedy=yes`: OmegaConf reads any number, `yes` or `on` as
    a boolean, so on the command line a true-or-false key takes only true or false."""
    for override in OverridesParser.create().parse_overrides(overrides):
        if override.is_delete() or override.is_sweep_override():
            continue
        key, value = override.key_or_group, override.value()
        if not isinstance(value, bool) and isinstance(OmegaConf.select(cfg, key), bool):
            raise BadInput(f"{key} must be true or false, got {value!r}")


SUFFIXES = {"k": 10**3, "K": 10**3, "M": 10**6, "G": 10**9, "B": 10**9}


def not_whole(key: str, value: str) -> str:
    """The one line for `seed=1.5`, or `frames=10M` with the whole number it means."""
    line = f"{key}={value}: {key} takes a whole number"
    if number := re.fullmatch(r"(\d+(?:\.\d+)?)([kKMGB])", value):
        line += f"; write {key}={round(float(number[1]) * SUFFIXES[number[2]])}"
    return line


def removed_key(key: str) -> str:
    """The one line for `~frames` or `~algo.gamma`: a key every run reads cannot be removed."""
    return f"~{key}: every run reads it; set it instead"


def keys_of(cfg: DictConfig, prefix: str = "") -> list[str]:
    """Every key of `cfg` as a dotted path, internal ones (`_target_`) aside."""
    keys = []
    for key, child in cfg.items_ex(resolve=False):
        if str(key).startswith("_"):
            continue
        keys.append(f"{prefix}{key}")
        if isinstance(child, DictConfig):
            keys += keys_of(child, f"{prefix}{key}.")
    return keys


def closest_keys(key: str, known: list[str]) -> list[str]:
    """Known keys `key` was probably meant as: the same name elsewhere (`lr` -> `optim.lr`), a
    sibling it abbreviates or resembles (`optim.learning_rate` -> `optim.lr`), a close
    spelling of the whole path."""
    parent, _, name = key.rpartition(".")
    moved = [k for k in known if k.rpartition(".")[2] == name]
    if moved:
        return moved
    siblings = {k.rpartition(".")[2]: k for k in known if k.rpartition(".")[0] == parent}
    initials = "".join(word[0] for word in name.split("_") if word)
    if "_" in name and initials in siblings:
        return [siblings[initials]]
    if close := difflib.get_close_matches(name, list(siblings), n=2):
        return [siblings[c] for c in close]
    return difflib.get_close_matches(key, known, n=2)


PPO_ONLY = "with algo=ppo"
# what CleanRL, Stable-Baselines3 and Lightning call a setting -> its name here
OTHER_TOOLS_NAMES = {
    "total_timesteps": "frames (emulator frames, 4 per agent step)",
    "n_timesteps": "frames (emulator frames, 4 per agent step)",
    "max_steps": "frames (emulator frames, 4 per agent step)",
    "max_time": "frames (emulator frames, 4 per agent step)",
    "num_envs": "envs_per_worker (envs each of the `workers` actors steps)",
    "n_envs": "envs_per_worker (envs each of the `workers` actors steps)",
    "learning_rate": "optim.lr",
    "num_steps": "algo.unroll (agent steps per rollout)",
    "n_steps": "algo.unroll (agent steps per rollout)",
    "update_epochs": f"algo.epochs ({PPO_ONLY})",
    "n_epochs": f"algo.epochs ({PPO_ONLY})",
    "num_minibatches": f"algo.minibatches ({PPO_ONLY})",
    "clip_range": f"algo.clip_coef ({PPO_ONLY})",
    "vf_coef": "algo.value_coef",
    "anneal_lr": "algo.lr_cooldown (1.0: down to zero over the whole budget)",
    "gpus": "trainer.accelerator=gpu trainer.devices=<count>",
    "device": "trainer.accelerator (auto, cpu or gpu)",
    "env_id": "env (a config name: env=breakout)",
}


def unknown_key(key: str, cfg: DictConfig, script: str) -> str:
    """The one line for a key the config lacks: its name here if other tools use it, else the
    closest known keys."""
    if ours := OTHER_TOOLS_NAMES.get(key.rpartition(".")[2]):
        return f"{key}: unknown key; did you mean {ours}?"
    close = closest_keys(key, keys_of(cfg))
    if close:
        return f"{key}: unknown key; did you mean {' or '.join(close)}?"
    return f"{key}: unknown key (`python {script} --cfg job` lists every key)"


def bare_word(word: str, cfg: DictConfig, config_dir: Path, script: str) -> str:
    """The one line for a word without `=` (`python train.py pong`): the setting it likely is."""
    envs = config_dir.parent / "env" if script == "evaluate.py" else config_dir / "env"
    groups = [d.name for d in sorted(config_dir.iterdir()) if (d / f"{word}.yaml").is_file()]
    if word in GAMES or (envs / f"{word}.yaml").is_file():
        guess = f"env={word}"
    elif groups:
        guess = f"{groups[0]}={word}"
    elif word in keys_of(cfg):
        guess = f"{word}=<value>"
    elif script == "evaluate.py" and ("/" in word or word.endswith(".ckpt")):
        guess = f"ckpt={word}"
    elif word.endswith(".ckpt"):
        guess = f"ckpt_path={word} (resume) or init_from={word}"
    else:
        return f"{word}: settings are key=value (`python {script} --help` lists them)"
    return f"{word}: settings are key=value; did you mean {guess}?"


def sweep_without_m(setting: str, script: str) -> str:
    """The one line for `env=pong,breakout` without `-m`."""
    if script == "evaluate.py":
        key, _, values = setting.partition("=")
        return f"{setting}: several values are a list here: {key}=[{values}]"
    return f"{setting}: several values make a sweep; run it with -m: python {script} -m {setting}"
