"""Config checks that run before any process starts: one line per problem, exit code 2."""

from __future__ import annotations

import dataclasses
import difflib
import typing
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from atari_a3c.config.algo_checks import validate_algo
from atari_a3c.config.hints import removed_key
from atari_a3c.config.keys import number
from atari_a3c.config.preflight import check_rom
from atari_a3c.config.schema import EnvConfig, TrainConfig
from atari_a3c.envs.make import (
    OBS_TYPES,
    EnvSpec,
    game_options,
    is_atari,
    is_registered,
    known_env_ids,
    obs_type,
    v5_id_of,
)
from atari_a3c.errors import ConfigError


def validate(cfg: DictConfig) -> None:
    """Raise ConfigError naming the first bad key and its allowed range or options."""
    check_known_keys(cfg)
    check_values(cfg, TrainConfig, algo=cfg.algo.name, atari=is_atari(str(cfg.env.id)))
    if not (number(cfg.optim.get("lr")) and cfg.optim.lr > 0):  # optim: the optimizer's keywords
        raise ConfigError(f"optim.lr must be > 0, got {cfg.optim.get('lr')!r}")
    validate_algo(cfg)
    if cfg.ckpt_path and cfg.init_from:
        raise ConfigError(
            "ckpt_path (resume this run) and init_from (start a new one) exclude each other"
        )
    if cfg.ckpt_path and Path(cfg.ckpt_path).resolve().parent.name != "checkpoints":
        raise ConfigError(
            f"ckpt_path={cfg.ckpt_path} is not in a run's checkpoints/ dir, so there is no run "
            "to resume; init_from= starts a new run from it"
        )
    validate_env(cfg)


def check_values(node, schema, prefix: str = "", algo: str = "", atari: bool = False) -> None:
    """ConfigError naming the first key whose value `schema` does not allow; a key that the
    algorithm `algo` (or an Atari env) needs may not be null."""
    types = typing.get_type_hints(schema)
    for field in dataclasses.fields(schema):
        if field.name not in node:  # `~frames`
            raise ConfigError(removed_key(f"{prefix}{field.name}"))
        value = OmegaConf.select(node, field.name)
        if dataclasses.is_dataclass(types[field.name]) and isinstance(value, DictConfig):
            check_values(value, types[field.name], f"{prefix}{field.name}.", algo, atari)
            continue
        allowed = field.metadata.get("allowed")
        test, words = allowed or (lambda v: True, "true or false")
        needed = algo in field.metadata.get("algos", ()) or (atari and field.metadata.get("atari"))
        if (value is None and needed) or (value is not None and not test(value)):
            raise ConfigError(f"{prefix}{field.name} must be {words}, got {value!r}")


def check_known_keys(node: DictConfig, prefix: str = "") -> None:
    """Every key the schema declares: a key added with `+` that nothing reads (a typo such as
    `+algo.entropy_cof=0.02`) is refused instead of ignored. Free-form groups (`optim`,
    `trainer`, `logger`) take any keyword of what they instantiate."""
    schema = OmegaConf.get_type(node)
    if not dataclasses.is_dataclass(schema):
        return
    names = [field.name for field in dataclasses.fields(schema)]
    for key, child in node.items_ex(resolve=False):
        if key not in names:
            close = difflib.get_close_matches(str(key), names, n=1)
            hint = f"; did you mean {prefix}{close[0]}?" if close else ""
            raise ConfigError(f"{prefix}{key}: unknown key{hint}")
        if isinstance(child, DictConfig):
            check_known_keys(child, f"{prefix}{key}.")


def validate_env(cfg: DictConfig) -> None:
    """The env checks alone: what a stored training config needs when played on another game
    (its training keys may predate options added since, and were checked when it trained)."""
    env_id = cfg.env.id
    if not is_registered(str(env_id)):
        close = difflib.get_close_matches(str(env_id), known_env_ids(), n=3)
        hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise ConfigError(f"env.id: unknown env {env_id!r} (Atari ids are ALE/<Game>-v5){hint}")
    if v5_id := v5_id_of(str(env_id)):
        env = cfg.env
        raise ConfigError(
            f"env.id={env_id}: older gym Atari ids are not played here; env.id={v5_id} plays "
            f"the game with the env config's frame skip ({env.frame_skip}) and sticky actions "
            f"({env.sticky_action_prob})"
        )
    if is_atari(env_id):
        check_values(cfg.env, EnvConfig, "env.", atari=True)
        check_rom(env_id)
        _check_game_options(cfg.env)


def _check_game_options(env_cfg: DictConfig) -> None:
    """`env.obs_type` one we know; no-op starts only where the game has a NOOP; `env.mode` and
    `env.difficulty` null or one the game offers."""
    if obs_type(env_cfg) not in OBS_TYPES:
        raise ConfigError(
            f"env.obs_type must be one of {', '.join(OBS_TYPES)}, got {obs_type(env_cfg)!r}"
        )
    modes, difficulties, first_action = game_options(env_cfg.id)
    if env_cfg.noop_max and not env_cfg.full_action_space and first_action != "NOOP":
        raise ConfigError(
            f"env.noop_max={env_cfg.noop_max}: {env_cfg.id} has no NOOP action (its first is "
            f"{first_action}) to start games with; set env.noop_max=0 or env.full_action_space=true"
        )
    for key, valid in (("mode", modes), ("difficulty", difficulties)):
        value = env_cfg.get(key)
        if value is not None and value not in valid:
            listed = ", ".join(map(str, valid))
            raise ConfigError(f"env.{key}={value} is not one of {env_cfg.id}'s: {listed}")


def check_model_fits(cfg: DictConfig, spec: EnvSpec) -> None:
    image = len(spec.obs_shape) >= 3
    if (cfg.model.encoder == "mlp") == image:
        kind, fit = ("image", "nature_lstm") if image else ("vector", "mlp_lstm")
        raise ConfigError(
            f"model.encoder={cfg.model.encoder} does not take {kind} observations "
            f"{spec.obs_shape} from {cfg.env.id}; use model={fit}"
        )
