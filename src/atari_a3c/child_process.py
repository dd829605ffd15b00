"""What every child process (actor, evaluator) does first: leave signals and shutdown to the
main process, and die with it."""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def become_child(parent: int) -> None:
    """Ignore the terminal's and the scheduler's signals (the main process owns shutdown), and
    ask Linux to SIGKILL this process when `parent` dies, even by SIGKILL."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
