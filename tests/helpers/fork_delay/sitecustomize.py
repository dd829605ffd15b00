"""Test-only: with this folder on a run's PYTHONPATH, Python imports this module at the start of
every process of the run. In the fork server alone, the first fork after the file named by
FORK_DELAY_ARM appears is held: the file is renamed to `<name>.forking` and the server waits (up to
30 s, or until its parent is gone) before forking, so a test can kill it mid-start."""

import os
import time

ARM = os.environ.get("FORK_DELAY_ARM")


def _in_fork_server() -> bool:
    with open("/proc/self/cmdline", "rb") as cmdline:
        return b"multiprocessing.forkserver" in cmdline.read()


if ARM and _in_fork_server():
    _fork = os.fork

    def _held_fork() -> int:
        try:
            os.rename(ARM, ARM + ".forking")
        except FileNotFoundError:  # not armed, or already used
            return _fork()
        parent, deadline = os.getppid(), time.monotonic() + 30
        while os.getppid() == parent and time.monotonic() < deadline:
            time.sleep(0.05)
        return _fork()

    os.fork = _held_fork
