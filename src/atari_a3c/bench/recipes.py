"""Recipes: what a training command trains with, and the records that train what each game's own
command (`python train.py env=<game>`) trains today."""

from __future__ import annotations

import functools
from pathlib import Path

from omegaconf import OmegaConf

from atari_a3c.bench.records import load_records, overrides_of
from atari_a3c.bench.runs import REPO


def compose_config(overrides: list[str]):
    """The config train.py would compose, without a metrics logger."""
    from hydra import compose, initialize_config_dir

    from atari_a3c.config import schema  # noqa: F401  (registers the config's types and games)
    from atari_a3c.config.job import size_from_cores

    with initialize_config_dir(str(REPO / "conf"), version_base="1.3"):
        cfg = compose("train", overrides=[*overrides, "logger=none"])
    size_from_cores(cfg)
    return cfg


def recipe_of(overrides: tuple[str, ...]) -> dict:
    """What a training command trains with: its composed config but for seed and budget."""
    cfg = OmegaConf.to_container(compose_config(list(overrides)), resolve=True)
    return {k: v for k, v in cfg.items() if k not in ("seed", "frames", "logger")}


def own_command_records(games: list[str], sources: list[Path]) -> list[dict]:
    """The records, among `sources`, of each game's own command (`python train.py env=<game>`):
    those whose algorithm and overrides compose, on that game, to what the command trains with
    today."""
    recipes = functools.cache(recipe_of)
    own = []
    for record in (r for source in sources for r in load_records(source)):
        game = record["game"]
        trained = (f"env={game}", f"algo={record.get('algo', 'impala')}", *overrides_of(record))
        if game in games and recipes(trained) == recipes((f"env={game}",)):
            own.append(record)
    return sorted(own, key=lambda r: (r["game"], r["seed"]))
