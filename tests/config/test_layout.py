"""The default layout: actors, emulator threads and learner threads sized from the cores."""

import ctypes
import subprocess
import sys

import pytest
import torch
from helpers.runs import compose

from atari_a3c.config.job import size_from_cores
from atari_a3c.envs.make import env_spec
from atari_a3c.hardware import actor_layout, cores, learner_threads
from atari_a3c.models.actor_critic import build_model


@pytest.mark.parametrize(
    ("num_cores", "expected"), [(1, (1, 1)), (2, (1, 2)), (8, (2, 2)), (16, (4, 2))]
)
def test_actor_layout_grows_with_the_cores(num_cores, expected):
    assert actor_layout(num_cores) == expected


def test_learner_gets_the_cores_the_emulators_leave():
    assert learner_threads(2, 1, 2) == 1
    assert learner_threads(16, 4, 2) == 8


def test_null_layout_keys_are_filled_and_set_ones_kept():
    cfg = compose("env=pong")
    size_from_cores(cfg)
    workers, env_threads = actor_layout(cores())
    assert (cfg.workers, cfg.env.env_threads) == (workers, env_threads)
    assert cfg.learner_threads == learner_threads(cores(), workers, env_threads)
    pinned = compose("env=pong", "workers=3", "env.env_threads=1", "learner_threads=5")
    size_from_cores(pinned)
    assert (pinned.workers, pinned.env.env_threads, pinned.learner_threads) == (3, 1, 5)


def test_conv_nets_are_channels_last():
    cfg = compose("env=pong")
    spec = env_spec(cfg)
    model = build_model(cfg.model, spec.obs_shape, spec.num_actions)
    conv = model.encoder[0].weight
    assert conv.is_contiguous(memory_format=torch.channels_last) and not conv.is_contiguous()


MALLINFO = """
import ctypes, sys, torch
from atari_a3c.hardware import keep_freed_memory
names = "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()
fields = [(name, ctypes.c_size_t) for name in names]
MallInfo2 = type("MallInfo2", (ctypes.Structure,), {"_fields_": fields})
libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = MallInfo2
if sys.argv[1] == "keep":
    assert keep_freed_memory()
before = libc.mallinfo2().hblkhd  # bytes in blocks mapped outside the heap
tensor = torch.ones(40 * 2**20, dtype=torch.uint8)  # as large as the A3C net's first activations
print(libc.mallinfo2().hblkhd - before)
"""


@pytest.mark.skipif(not hasattr(ctypes.CDLL(None), "mallinfo2"), reason="needs glibc >= 2.33")
def test_keep_freed_memory_serves_large_tensors_from_the_heap():
    """After it, a 40 MB tensor comes from malloc's heap (kept for the next update when freed),
    where by default glibc maps it fresh from the OS."""

    def newly_mapped_bytes(mode: str) -> int:
        run = subprocess.run([sys.executable, "-c", MALLINFO, mode], capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        return int(run.stdout)

    assert newly_mapped_bytes("default") >= 40 * 2**20
    assert newly_mapped_bytes("keep") == 0
