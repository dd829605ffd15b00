"""The pieces every schema is made of: a value's test and its words, and a field that carries
them with its one-line description."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, field
from typing import Any


def number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


Allowed = tuple[Callable[[object], bool], str]  # a test of the value, and what passes in words
POSITIVE: Allowed = (lambda v: whole(v) and v > 0, "a positive integer")
COUNT: Allowed = (lambda v: whole(v) and v >= 0, "an integer >= 0")
PROBABILITY: Allowed = (lambda v: number(v) and 0 <= v <= 1, "in [0, 1]")
RATE: Allowed = (lambda v: number(v) and 0 <= v < 1, "in [0, 1)")
NON_NEGATIVE: Allowed = (lambda v: number(v) and v >= 0, ">= 0")
GREATER_THAN_ZERO: Allowed = (lambda v: number(v) and v > 0, "> 0")
SCREEN: Allowed = (lambda v: whole(v) and v >= 36, "an integer >= 36")
SECONDS: Allowed = (GREATER_THAN_ZERO[0], "> 0 seconds")


def one_of(options: tuple[str, ...]) -> Allowed:
    return (lambda v: v in options, f"one of {', '.join(options)}")


def key(allowed: Allowed | None = None, default=MISSING, algos=(), atari=False, *, doc: str) -> Any:
    """A field whose value must pass `allowed` (None: any value of its type); `algos` or `atari`:
    where it may not be null."""
    metadata = {"allowed": allowed, "algos": algos, "atari": atari, "doc": doc}
    return field(default=default, metadata=metadata)
