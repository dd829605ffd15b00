"""A training's process tree watched from outside (the speed and fault benchmarks): its memory,
and what is left of it killed."""

from __future__ import annotations

import contextlib

import psutil

GIB = 2**30
NO_EVAL = ("callbacks.eval.at_end=false", "callbacks.eval.every_frames=1000000000000")


def process_memory(proc: psutil.Process) -> int:
    """PSS of one process where readable, else RSS; 0 once it is gone."""
    try:
        try:
            info = proc.memory_full_info()
        except psutil.AccessDenied:
            info = proc.memory_info()
    except psutil.NoSuchProcess:
        return 0
    return getattr(info, "pss", info.rss)


def tree_memory(root: psutil.Process) -> int:
    """Bytes used by a process and all its recursive children."""
    try:
        return sum(map(process_memory, [root, *root.children(recursive=True)]))
    except psutil.NoSuchProcess:
        return 0


def kill_tree(root: psutil.Process) -> None:
    """Kill what is left of a process and its descendants, so no actor outlives the bench."""
    try:
        procs = [*root.children(recursive=True), root]
    except psutil.NoSuchProcess:
        return
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
