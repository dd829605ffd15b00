"""Run-time detection of what this CPU does fast."""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

BF16_FLAGS = {"amx_bf16", "avx512_bf16"}


@functools.cache
def cpu_flags() -> frozenset[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        if line.startswith("flags"):
            return frozenset(line.split(":", 1)[1].split())
    return frozenset()


def cpu_model() -> str:
    """The CPU's model name, as /proc/cpuinfo gives it."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return "unknown"
    return next((ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name")), "?")


def bf16_supported() -> bool:
    """True on CPUs with native bf16 matrix units (AMX or AVX512-BF16), where autocast pays."""
    return bool(BF16_FLAGS & cpu_flags())


def resolve_precision(precision: str) -> str:
    """`auto` -> `bf16-mixed` where the CPU does bf16 natively, else `32-true`."""
    if precision != "auto":
        return precision
    return "bf16-mixed" if bf16_supported() else "32-true"


def cores() -> int:
    """The cores this process may run on (its affinity mask, so `taskset` is respected)."""
    return len(os.sched_getaffinity(0))


def actor_layout(num_cores: int) -> tuple[int, int]:
    """(actor processes, emulator threads each): one actor per 4 cores, two emulator threads.

    On 2 cores one actor stepping all its envs on two threads, beside a one-thread learner, is
    the fastest layout measured (BENCHMARKS.md).
    """
    return max(1, num_cores // 4), min(2, num_cores)


def learner_threads(num_cores: int, workers: int, env_threads: int) -> int:
    """The cores the actors' emulator threads leave free, at least one."""
    return max(1, num_cores - workers * env_threads)


M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's mallopt parameters (malloc.h)


def keep_freed_memory() -> bool:
    """Have glibc's malloc serve every block from its heap and keep what is freed there for the
    next allocation, instead of mapping blocks over 32 MB fresh from the OS each time.

    A learner update of the A3C port's net allocates several 39 MB tensors (its first layer's
    activations, pool indices and gradient); mapped afresh, their page faults cost as much as
    the layer's arithmetic (BENCHMARKS.md). False where the C library is not glibc.
    """
    libc = ctypes.CDLL(None)  # the symbols this process has loaded, its C library's among them
    if not hasattr(libc, "gnu_get_libc_version"):
        return False
    return bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, 2**30))
