"""The project's exceptions and how the entry points report them: one line, an exit code."""

from __future__ import annotations

import sys
from typing import NoReturn


class BadInput(ValueError):
    """Something the user gave is wrong; reported in one line with exit code 2."""


class ConfigError(BadInput):
    """A config value outside its allowed range; the message names the key."""


class CheckpointError(BadInput):
    """A checkpoint file that is missing, unreadable, foreign, unsafe or for another env."""


class TrainingStopped(RuntimeError):
    """Training had to stop (an actor kept failing, losses stayed non-finite); exit code 1."""


class RunFinished(Exception):
    """A resumed run whose frame budget is already spent: said in one line, exit code 0."""

    def __init__(self, message: str, metric: float, run_dir: str, frames: int, evals: list):
        super().__init__(message)
        self.metric = metric  # the run's last evaluation mean (a sweep's metric)
        self.run_dir, self.frames, self.evals = run_dir, frames, evals  # for a sweep's job table


class ActorFailure(TrainingStopped):
    """An actor kept failing: training stops (after saving a checkpoint)."""


def fail(message: str, code: int = 2) -> NoReturn:
    print(f"error: {message}", file=sys.stderr)
    sys.exit(code)
