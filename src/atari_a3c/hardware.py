"""Run-time detection of what this CPU does fast."""

from __future__ import annotations

import functools
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


def bf16_supported() -> bool:
    """True on CPUs with native bf16 matrix units (AMX or AVX512-BF16), where autocast pays."""
    return bool(BF16_FLAGS & cpu_flags())


def resolve_precision(precision: str) -> str:
    """`auto` -> `bf16-mixed` where the CPU does bf16 natively, else `32-true`."""
    if precision != "auto":
        return precision
    return "bf16-mixed" if bf16_supported() else "32-true"
