"""Checkpoints: written atomically, read safely (`weights_only=True`), checked against the env
asked for, turned back into a policy. No Lightning here: evaluation processes import it."""

from __future__ import annotations

import io
import os
import pickle
import warnings
from pathlib import Path

import torch
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.core.override_parser.types import Override, OverrideType
from omegaconf import DictConfig, OmegaConf

from atari_a3c.envs.games import GAMES
from atari_a3c.errors import CheckpointError
from atari_a3c.models.actor_critic import ActorCritic, build_model

KEY = "atari_a3c"


def save_atomically(checkpoint: dict, path: str | Path) -> None:
    """Write to a temp file in the same dir, fsync, rename: a kill at any moment leaves either
    the previous file or the new one, never half of one; the next save removes the temp file
    a killed writer left. A failed write (a full disk) removes its temp file and raises."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = io.BytesIO()  # serialized first: a failed write is then a plain OSError
    torch.save(checkpoint, data)
    try:
        with temp.open("wb") as f:
            f.write(data.getbuffer())
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    os.replace(temp, path)
    for stale in path.parent.glob(f".{path.name}.*.tmp"):  # left by writers killed mid-save
        stale.unlink(missing_ok=True)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def load_checkpoint(path: str | Path) -> dict:
    """The checkpoint dict, or CheckpointError with a one-line reason."""
    path = Path(path)
    if not path.exists():
        raise CheckpointError(f"checkpoint not found: {path}")
    if path.is_dir():
        found = sorted(path.glob("*.ckpt")) or sorted(path.glob("checkpoints/*.ckpt"))
        inside = f"its checkpoints: {', '.join(map(str, found))}" if found else "no .ckpt in it"
        raise CheckpointError(f"checkpoint is a directory: {path} ({inside})")
    if not path.is_file():
        raise CheckpointError(f"checkpoint is not a file: {path}")
    if path.stat().st_size == 0:
        raise CheckpointError(f"checkpoint is empty (0 bytes): {path}")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:
        raise CheckpointError(
            f"checkpoint refused by the safe loader (it holds arbitrary pickled objects): {path}"
        ) from None
    except Exception:  # arbitrary bytes make the unpickler fail in arbitrary ways
        raise CheckpointError(f"checkpoint is truncated or not a torch file: {path}") from None
    if not isinstance(checkpoint, dict) or KEY not in checkpoint:
        raise CheckpointError(f"not a checkpoint of this project (no '{KEY}' entry): {path}")
    return checkpoint


CONF = Path(__file__).resolve().parents[3] / "conf"
RESERVED_KEYS = ("_target_", "_partial_", "_args_", "_recursive_", "_convert_")
PLAIN = str | int | float | bool | type(None)
NOT_STORED = ("init_from", "ckpt_path")  # a resumed run takes its weights from the checkpoint


def stored_overrides(checkpoint: dict, cfg: DictConfig) -> list[str]:
    """A checkpoint's command-line overrides, minus those that named checkpoints.

    Only `key=value` with a key of `cfg` and a plain value, or `group=option` naming one of the
    group's config files, is accepted: anything that could make Hydra instantiate code (a
    `_target_`, an added key, an interpolation) raises CheckpointError.
    """
    accepted = []
    for override in OverridesParser.create().parse_overrides(checkpoint[KEY]["overrides"]):
        key, text = override.key_or_group, override.input_line
        if key in NOT_STORED:
            continue
        if not _plain(override, cfg):
            raise CheckpointError(f"checkpoint holds an override that is not allowed: {text!r}")
        accepted.append(text)
    return accepted


def _plain(override: Override, cfg: DictConfig) -> bool:
    key, value = override.key_or_group, override.value()
    if override.type != OverrideType.CHANGE or override.package or override.is_sweep_override():
        return False
    if any(part in RESERVED_KEYS for part in key.split(".")) or "${" in override.input_line:
        return False
    if (CONF / key).is_dir():  # a group: one of its files, or for `env` a game's name
        named = isinstance(value, str) and (key == "env" and value in GAMES)
        return named or isinstance(value, str) and (CONF / key / f"{value}.yaml").is_file()
    values = value if isinstance(value, list) else [value]
    known = OmegaConf.select(cfg, key, default=_ABSENT) is not _ABSENT
    return known and all(isinstance(v, PLAIN) for v in values)


_ABSENT = object()


def check_compatible(checkpoint: dict, env_id: str, obs_shape, num_actions: int) -> None:
    """CheckpointError naming both sides when the action count or observation shape differ."""
    meta = checkpoint[KEY]
    trained_on = meta["env_id"]
    if meta["num_actions"] != num_actions:
        raise CheckpointError(
            f"checkpoint was trained on {trained_on} ({meta['num_actions']} actions); "
            f"{env_id} has {num_actions}"
        )
    if list(meta["obs_shape"]) != list(obs_shape):
        raise CheckpointError(
            f"checkpoint was trained on {trained_on} with observations {tuple(meta['obs_shape'])}; "
            f"{env_id} gives {tuple(obs_shape)}"
        )


def check_same_model(checkpoint: dict, model_cfg: DictConfig, obs_shape, num_actions: int) -> None:
    """CheckpointError naming the first weight whose shape the config's model does not share."""
    expected = build_model(model_cfg, tuple(obs_shape), num_actions).state_dict()
    stored = model_weights(checkpoint)
    for name, weight in expected.items():
        found = tuple(stored[name].shape) if name in stored else "absent"
        if found != tuple(weight.shape):
            raise CheckpointError(
                f"checkpoint's model differs from this config's: {name} is {found} there, "
                f"{tuple(weight.shape)} here (it was trained with {trained_model(checkpoint)})"
            )


def model_weights(checkpoint: dict) -> dict:
    """The policy's weights in a learner's state dict (not a DQN's target network)."""
    prefix = "model."
    return {
        k.removeprefix(prefix): v
        for k, v in checkpoint["state_dict"].items()
        if k.startswith(prefix)
    }


def trained_model(checkpoint: dict) -> str:
    model = checkpoint[KEY]["config"]["model"]
    return f"model.encoder={model['encoder']} model.hidden_size={model['hidden_size']}"


def policy_from_checkpoint(checkpoint: dict) -> tuple[DictConfig, ActorCritic]:
    """The training config and the trained model, rebuilt from a checkpoint dict."""
    meta = checkpoint[KEY]
    cfg = OmegaConf.create(meta["config"])
    model = build_model(cfg.model, tuple(meta["obs_shape"]), meta["num_actions"])
    model.load_state_dict(model_weights(checkpoint))
    return cfg, model.eval()
