"""How actor and evaluation processes start, and what each does first: leave signals and
shutdown to the main process, and die with it.

Where the platform has one, they are forked from a fork server that imported their modules once,
so a new actor (a start, or a replacement after a crash) runs in milliseconds instead of paying
seconds of imports; `start_fork_server()` starts it early, to import while the main process
imports Lightning. A start that fails (START_ERRORS: the server died while forking, the child's
pipe closed) is the caller's to count; `restart_fork_server()` then readies a fresh server.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from multiprocessing import forkserver

PR_SET_PDEATHSIG = 1
PRELOAD = [
    "__main__",
    "atari_a3c.actors.actor",
    "atari_a3c.evaluation.play",
]  # the script and what its children run
HAS_FORK_SERVER = "forkserver" in mp.get_all_start_methods()
START_ERRORS = (EOFError, OSError)  # OSError: BrokenPipeError, ConnectionRefusedError and kin


def context() -> mp.context.BaseContext:
    """The context every child process starts from: the preloaded fork server, else spawn."""
    start_fork_server()
    return mp.get_context("forkserver" if HAS_FORK_SERVER else "spawn")


def start_fork_server() -> None:
    """Start the fork server if it is not running. It ignores SIGTERM and SIGINT, as its children
    do (a signal to the process group is the main process's to handle), and exits when the main
    process does."""
    if not HAS_FORK_SERVER:
        return
    forkserver.set_forkserver_preload(PRELOAD)
    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()
        return
    handlers = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        forkserver.ensure_running()  # the server inherits the ignored dispositions
    finally:
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def restart_fork_server(wait: float = 1.0) -> None:
    """After a failed start: give a dying fork server up to `wait` seconds to exit, then start a
    fresh one if it has. The stdlib relaunches a server it sees exited (`ensure_running`); one
    still running is kept, as stopping it would kill its children, the running actors."""
    pid = forkserver._forkserver._forkserver_pid
    deadline = time.monotonic() + wait
    while pid is not None and time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT):  # exited: not reaped
            break
        time.sleep(0.01)
    start_fork_server()


def become_child() -> int:
    """Ignore the terminal's and the scheduler's signals (the main process owns shutdown), and
    ask Linux to SIGKILL this process when its parent (the main process or the fork server, which
    exits with it) dies, even by SIGKILL. Returns the parent's pid; exits if it is already gone."""
    parent = os.getppid()
    release_fork_server()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
    return parent


def release_fork_server() -> None:
    """Close the fork server's liveness pipe that each of its children inherits. The server exits
    once every holder has closed it; held by a child too, a SIGKILLed main process would leave
    the server, and this child, running until the child's work ended on its own."""
    server = forkserver._forkserver
    if server._forkserver_alive_fd is not None:
        os.close(server._forkserver_alive_fd)
        server._forkserver_alive_fd = None
