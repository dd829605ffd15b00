"""`--help` of the entry points: the groups and their options, then every key with its value and
its one-line description (the schema's; for the free-form groups' keys, the comment of the YAML
line that sets it), then where checkpoints can come from."""

from __future__ import annotations

import dataclasses
import re
import textwrap
import typing
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.core.global_hydra import GlobalHydra
from omegaconf import DictConfig, OmegaConf, open_dict

from atari_a3c.checkpoints.sources import shipped_agents
from atari_a3c.config import schema  # noqa: F401  (registers the config's types and games)

LINE = re.compile(r"(?P<indent> *)(?P<key>[\w-]+):(?P<value>[^#]*)(#\s*(?P<doc>.*))?")
HIDDEN = {"hydra", "evaluate"}  # Hydra's own settings; evaluate.py's config
SOURCES = (
    "checkpoints: a file (a run's checkpoints/last.ckpt or best.ckpt), a shipped agent "
    "({agents}) or a W&B model artifact (wandb:<entity>/<project>/model-<run id>:<alias>)"
)


def descriptions(path: Path, prefix: str = "") -> dict[str, str]:
    """Dotted key -> the comment on its line, for one YAML file (nesting from indentation)."""
    docs, parents = {}, []  # parents: (indent, key) of the enclosing mappings
    global_package = "@package _global_" in path.read_text()
    for line in path.read_text().splitlines():
        match = LINE.fullmatch(line.rstrip())
        if not match or match["key"] == "defaults":
            continue
        indent = len(match["indent"])
        parents = [(i, k) for i, k in parents if i < indent]
        key = ".".join([k for _, k in parents] + [match["key"]])
        if match["doc"]:
            docs[("" if global_package else prefix) + key] = match["doc"]
        if not match["value"].strip():
            parents.append((indent, match["key"]))
    return docs


def schema_docs(node_type: type, prefix: str = "") -> dict[str, str]:
    """Dotted key -> its description, for every key a schema declares."""
    docs, types = {}, typing.get_type_hints(node_type)
    for field in dataclasses.fields(node_type):
        docs[prefix + field.name] = field.metadata["doc"]
        if dataclasses.is_dataclass(types[field.name]):
            docs |= schema_docs(types[field.name], f"{prefix}{field.name}.")
    return docs


def _option_files(config_dir: Path, group: str, option: str) -> list[Path]:
    """An option's file and the files of its group it builds on (`env/pong` on `env/_atari`)."""
    path = config_dir / group / f"{option}.yaml"
    if not path.is_file():
        return []
    bases = [d for d in OmegaConf.load(path).get("defaults", []) if isinstance(d, str)]
    return [
        p for base in bases if base != "_self_" for p in _option_files(config_dir, group, base)
    ] + [path]


def _leaves(cfg: DictConfig, prefix: str = "") -> list[tuple[str, object]]:
    leaves = []
    for key, value in cfg.items_ex(resolve=False):
        if isinstance(value, DictConfig):
            leaves += _leaves(value, f"{prefix}{key}.")
        else:
            leaves.append((f"{prefix}{key}", value))
    return leaves


def _text(value) -> str:
    """A value as the command line writes it (null, true; 0 stays 0)."""
    if value is None:
        return "null"
    return str(value).lower() if isinstance(value, bool) else str(value)


def help_text(config_dir: Path, config_name: str, overrides: list[str]) -> str:
    """The help of the config `config_name` as `overrides` compose it."""
    with initialize_config_dir(str(config_dir.resolve()), version_base="1.3"):
        cfg = compose(config_name, overrides, return_hydra_config=True)
        loader = GlobalHydra.instance().config_loader()
        groups = sorted(p.name for p in config_dir.iterdir() if p.is_dir() and p.name not in HIDDEN)
        options = {
            g: [o for o in loader.get_group_options(g) if not o.startswith("_")] for g in groups
        }
    choices = {g: o for g, o in cfg.hydra.runtime.choices.items() if not g.startswith("hydra")}
    docs = descriptions(config_dir / f"{config_name}.yaml")
    for group, option in choices.items():
        for path in _option_files(config_dir, group, str(option)):
            docs |= descriptions(path, f"{group}.")
    docs |= schema_docs(OmegaConf.get_type(cfg))
    with open_dict(cfg):
        del cfg["hydra"]
    lines = [f"python {config_name}.py [key=value ...]"]
    if groups:
        lines[0] += " [group=option ...]  (-m: a sweep over comma-separated values)"
        lines.append("\ngroups (group=option):")
    for group in groups:
        listed = textwrap.fill(", ".join(options[group]), 96, subsequent_indent="    ")
        lines.append(f"  {group}: {listed}  (now: {_text(choices.get(group))})")
    lines.append("\nkeys (key=value):")
    for key, value in _leaves(cfg):
        if not key.rpartition(".")[2].startswith("_"):
            doc = docs.get(key, "")
            lines.append(f"  {key}={_text(value)}" + (f"  # {doc}" if doc else ""))
    lines.append("\n" + SOURCES.format(agents=", ".join(shipped_agents())))
    return "\n".join(lines)
