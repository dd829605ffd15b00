"""Run-time detection of what this machine does fast: the CPU's bf16, the device that learns,
the cores, and the layout of actors and learner threads that follows from them."""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

import torch

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


def learner_device(accelerator: str) -> str:
    """The kind of device Lightning's `accelerator` trains on here: cuda, mps or cpu."""
    if accelerator in ("auto", "gpu", "cuda") and torch.cuda.is_available():
        return "cuda"
    if accelerator in ("auto", "gpu", "mps") and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def gpu_capability() -> tuple[int, int]:
    """The current CUDA device's compute capability, (major, minor)."""
    return torch.cuda.get_device_capability()


def resolve_precision(precision: str, device: str = "cpu") -> str:
    """`auto` -> the precision the learning device does natively: bf16-mixed on CUDA GPUs of
    compute capability 8.0+ and on CPUs with AMX or AVX512-BF16, else 32-true (on CUDA with
    TF32 matrix products). Never fp16: its loss scaling would need clipping inside the plugin."""
    if device == "cuda":
        # TF32 matrix products (cuDNN's convolutions use TF32 by default). Not the per-backend
        # `fp32_precision`: set alone, it makes the getter Lightning's CUDA accelerator reads raise.
        torch.set_float32_matmul_precision("high")
    if precision != "auto":
        return precision
    if device == "cuda":
        return "bf16-mixed" if gpu_capability() >= (8, 0) else "32-true"
    if device == "cpu" and bf16_supported():
        return "bf16-mixed"
    return "32-true"


def learner_processes(devices, accelerator: str) -> int:
    """The learner processes (DDP ranks) Lightning starts on this machine for `devices`: a
    count, a list of device ids (also as "0,1" or "0,"), or all of them (`auto`, -1)."""
    if isinstance(devices, str) and "," in devices:
        devices = [d for d in devices.split(",") if d.strip()]
    if isinstance(devices, list | tuple):
        return len(devices)
    if str(devices) not in ("auto", "-1"):
        return int(devices)
    device = learner_device(accelerator)
    return torch.cuda.device_count() if device == "cuda" else 1


def cores() -> int:
    """The cores this process may run on (its affinity mask where the OS has one, so `taskset`
    is respected; macOS has none)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


GPU_LEARNER_THREADS = 2  # a GPU learner's host work: batches in, weights out


def actor_layout(num_cores: int, gpu_learner: bool = False) -> tuple[int, int]:
    """(actor processes, emulator threads each) for one learner's share of the cores.

    A CPU learner: one actor per 4 cores, two emulator threads; on 2 cores one actor stepping
    all its envs on two threads, beside a one-thread learner, is the fastest layout measured
    (docs/findings.md). A GPU learner keeps `GPU_LEARNER_THREADS` cores and the actors, two
    emulator threads each, take the rest.
    """
    env_threads = min(2, num_cores)
    if gpu_learner:
        return max(1, (num_cores - GPU_LEARNER_THREADS) // env_threads), env_threads
    return max(1, num_cores // 4), env_threads


def learner_threads(num_cores: int, workers: int, env_threads: int, gpu_learner=False) -> int:
    """The cores the actors' emulator threads leave free, at least one (a GPU learner's: at
    most `GPU_LEARNER_THREADS`)."""
    free = max(1, num_cores - workers * env_threads)
    return min(free, GPU_LEARNER_THREADS) if gpu_learner else free


M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # glibc's mallopt parameters (malloc.h)


def keep_freed_memory() -> bool:
    """Have glibc's malloc serve every block from its heap and keep what is freed there for the
    next allocation, instead of mapping blocks over 32 MB fresh from the OS each time.

    A learner update of the A3C port's net allocates several 39 MB tensors (its first layer's
    activations, pool indices and gradient); mapped afresh, their page faults cost as much as
    the layer's arithmetic (docs/findings.md). False where the C library is not glibc.
    """
    libc = ctypes.CDLL(None)  # the symbols this process has loaded, its C library's among them
    if not hasattr(libc, "gnu_get_libc_version"):
        return False
    return bool(libc.mallopt(M_MMAP_MAX, 0)) and bool(libc.mallopt(M_TRIM_THRESHOLD, 2**30))
