"""Ctrl-C and SIGTERM: the first finishes cleanly (last.ckpt, actors stopped, evaluation ended,
W&B closed), the second kills every child process and exits at once."""

from __future__ import annotations

import contextlib
import logging
import os
import signal

import psutil
from lightning.pytorch.callbacks import Callback
from tqdm.auto import tqdm

log = logging.getLogger(__name__)


class GracefulShutdown(Callback):
    """Owns SIGINT and SIGTERM during training (installed after Lightning's own handlers)."""

    def __init__(self):
        self.signum: int | None = None

    def on_train_start(self, trainer, pl_module) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame) -> None:
        if self.signum is not None:
            for child in psutil.Process().children(recursive=True):  # actors, evaluation, W&B
                with contextlib.suppress(psutil.NoSuchProcess):
                    child.kill()
            os._exit(128 + signum)
        self.signum = signum
        with tqdm.external_write_mode():  # on a line of its own, not the progress bar's
            log.warning(
                "%s: saving last.ckpt and stopping (send it again to exit at once)",
                self.signal_name(),
            )

    def requested(self) -> bool:
        """A signal asked training to stop."""
        return self.signum is not None

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        stop = self.requested()
        if trainer.strategy.reduce_boolean_decision(stop, all=False):  # any rank's signal stops all
            trainer.should_stop = True

    def signal_name(self) -> str | None:
        """SIGINT or SIGTERM when one stopped training."""
        return None if self.signum is None else signal.Signals(self.signum).name

    def exit_code(self) -> int | None:
        """128 + the signal number when a signal stopped training (what shells report)."""
        return None if self.signum is None else 128 + self.signum
