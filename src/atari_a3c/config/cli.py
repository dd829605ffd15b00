"""Checks of the command line before Hydra runs anything: bad groups or values exit 2 at once."""

from __future__ import annotations

import logging
import math
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.hydra_config import HydraConfig
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from hydra.types import RunMode
from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

from atari_a3c.config import schema  # noqa: F401  (registers the config's types and games)
from atari_a3c.config.composition import composition_error, known_config
from atari_a3c.config.help import help_text
from atari_a3c.config.hints import (
    accepted_forms,
    bare_word,
    check_switches,
    refuse_argparse_flags,
)
from atari_a3c.errors import BadInput, RunFinished, TrainingStopped, fail

log = logging.getLogger(__name__)


def _override_combinations(args: list[str], multirun: bool) -> list[list[str]]:
    """Each job's overrides: every combination of a `-m` sweep, or the one run's."""
    if not multirun:
        return [args]
    parsed = OverridesParser.create().parse_overrides(args)
    try:
        return [job for batch in BasicSweeper.split_arguments(parsed, None) for job in batch]
    except HydraException:  # a sweep a search plugin expands (ranges, intervals)
        return [[str(o.input_line) for o in parsed if not o.is_sweep_override()]]


Check = Callable[[DictConfig, list], object]
INFO_FLAGS = {"--cfg", "-c", "--info", "-i", "--help", "-h", "--hydra-help", "--shell-completion"}
INFO_FLAGS |= {"-sc"}
COMPLETION_FLAGS = {"--shell-completion", "-sc"}  # their values (`install=bash`) are not settings
VALUE_FLAGS = {"--package", "-p", "--config-path", "-cp", "--config-name", "-cn"}
VALUE_FLAGS |= {"--config-dir", "-cd", "--experimental-rerun"}
INFO_VALUES = {"job", "hydra", "all", "config", "defaults"}  # what --cfg and --info take
INFO_VALUES |= {"defaults-tree", "plugins", "searchpath"}
HELP_FLAGS = {"--help", "-h"}  # ours: every key with its description
HYDRA_FLAGS = INFO_FLAGS | VALUE_FLAGS | {"-m", "--multirun"}


def _overrides(argv: list[str]) -> list[str]:
    """The command line without Hydra's flags and their values (`--cfg job`, `--info plugins`)."""
    args, flag = [], None
    for arg in argv:
        value = flag in VALUE_FLAGS or (flag in INFO_FLAGS and arg in INFO_VALUES)
        if not value and not arg.startswith("-"):
            args.append(arg)
        flag = arg
    return args


def _settings(argv: list[str], config_dir: Path, config_name: str) -> list[str]:
    """The command line's settings; BadInput for a word among them without `=` (`pong`)."""
    args = _overrides(argv)
    if words := [arg for arg in args if "=" not in arg and not arg.startswith("~")]:
        known = known_config(config_dir, config_name)
        raise BadInput(bare_word(words[0], known, config_dir, f"{config_name}.py"))
    return args


def check_command_line(
    config_dir: Path, config_name: str, check: Check, argv: list[str]
) -> list[str]:
    """Compose the config for every job of `argv` and run `check(cfg, overrides)` on it.

    Returns `argv` with the forms meant as Hydra's rewritten (`frames=1e6` -> `frames=1000000`).
    Raises BadInput with a one-line message for anything wrong, before any work starts.
    """
    refuse_argparse_flags(argv, HYDRA_FLAGS)
    argv = accepted_forms(argv, config_dir)
    if COMPLETION_FLAGS.intersection(argv):
        return argv
    args = _settings(argv, config_dir, config_name)
    multirun = "-m" in argv or "--multirun" in argv
    try:
        with initialize_config_dir(str(config_dir.resolve()), version_base="1.3"):
            jobs = _override_combinations(args, multirun)
            first = compose(config_name, jobs[0], return_hydra_config=True)
            if INFO_FLAGS.intersection(argv):
                return argv  # the settings compose; Hydra prints them and exits: nothing runs
            _check_hydra(first, multirun)
            with open_dict(first):
                del first["hydra"]
            for i, overrides in enumerate(jobs):
                cfg = compose(config_name, overrides=overrides) if i else first
                check_switches(cfg, overrides)
                try:
                    check(cfg, overrides)
                except RunFinished:
                    if not multirun:
                        raise  # a sweep's finished job says so when its turn comes
    except BadInput:
        raise
    except (HydraException, OmegaConfBaseException, ValueError) as error:  # `evaluate=1`
        raise composition_error(error, config_dir, config_name) from None
    return argv


def unwritable(path: Path) -> str | None:
    """Why no directory can be made at `path` and written into, or None when one can."""
    path = path.absolute()
    existing = next(p for p in [path, *path.parents] if p.exists())
    if not existing.is_dir():
        return f"{existing} is a file, not a directory"
    try:
        os.rmdir(tempfile.mkdtemp(dir=existing))
    except OSError as error:
        return error.strerror
    return None


def _check_hydra(cfg: DictConfig, multirun: bool) -> None:
    """Hydra's own settings for this launch: a run (or sweep) dir that can be made and written,
    and a search sweeper (Optuna) asked for one trial or more."""
    trials = OmegaConf.select(cfg, "hydra.sweeper.n_trials")
    if multirun and trials is not None and not (isinstance(trials, int) and trials >= 1):
        raise BadInput(f"hydra.sweeper.n_trials must be a positive integer, got {trials!r}")
    if cfg.hydra.output_subdir is None:
        return  # Hydra writes nothing there (evaluate.py)
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    out = Path(OmegaConf.select(cfg, key))
    if problem := unwritable(out):
        raise BadInput(f"{key}={out}: {problem}")


def precheck(config_dir: Path, config_name: str, check: Check) -> None:
    """`--help`, or the command line's checks: anything wrong exits 2 with one line, a finished
    run exits 0 saying so."""
    try:
        if HELP_FLAGS.intersection(sys.argv[1:]):
            try:
                args = _settings(sys.argv[1:], config_dir, config_name)
                print(help_text(config_dir, config_name, args))
            except (HydraException, OmegaConfBaseException) as error:  # overrides with --help
                raise composition_error(error, config_dir, config_name) from None
            sys.exit(0)
        sys.argv[1:] = check_command_line(config_dir, config_name, check, sys.argv[1:])
    except BadInput as error:
        fail(str(error).strip().splitlines()[0])
    except RunFinished as finished:
        print(finished)
        sys.exit(0)


def run_dir_of(ckpt_path: str | None) -> str | None:
    """`<run>/checkpoints/last.ckpt` -> `<run>`: a resumed run continues in its own dir."""
    return str(Path(ckpt_path).resolve().parent.parent) if ckpt_path else None


if not OmegaConf.has_resolver("run_dir_of"):  # conf/hydra/default.yaml's run dir
    OmegaConf.register_new_resolver("run_dir_of", lambda ckpt, default: run_dir_of(ckpt) or default)


def run_or_exit(task: Callable[[DictConfig], float], cfg: DictConfig) -> float:
    """Run a Hydra task; a bad value it finds becomes one line and exit code 2.

    A resumed run already finished says so and returns its last evaluation mean. Training
    that had to stop exits with code 1, except in a multirun: there the job is logged
    as failed and returns NaN (a failed trial to Optuna), and the sweep goes on.
    """
    try:
        return task(cfg)
    except BadInput as error:
        fail(str(error))
    except RunFinished as finished:
        log.info("%s", finished)
        return finished.metric
    except TrainingStopped as error:
        hydra_cfg = HydraConfig.get()
        if hydra_cfg.mode != RunMode.MULTIRUN:
            fail(str(error), code=1)
        log.error("job %s failed: %s", hydra_cfg.job.num, error)
        return math.nan
