"""Config rules: a key, a test of its value, and the allowed values in words for the one-line
error that names them."""

from __future__ import annotations

from collections.abc import Callable

from omegaconf import DictConfig, OmegaConf

from atari_a3c.errors import ConfigError

Rule = tuple[str, Callable[[object], bool], str]


def number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def positive_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def one_of(options: tuple) -> Callable:
    return lambda value: value in options


def check(cfg: DictConfig, rules: list[Rule]) -> None:
    """ConfigError naming the first key whose value breaks its rule."""
    for key, ok, allowed in rules:
        value = OmegaConf.select(cfg, key)
        if not ok(value):
            raise ConfigError(f"{key} must be {allowed}, got {value!r}")
