"""The actor pool: starts the actor processes, hands them slots, replaces dead or hung ones,
and stops them."""

from __future__ import annotations

import contextlib
import logging
import time
from collections import deque
from multiprocessing.connection import Connection, wait

import torch
import torch.multiprocessing as mp

from atari_a3c.actors.actor import POLL_SECONDS, actor_main
from atari_a3c.actors.child_process import (
    START_ERRORS,
    context,
    restart_fork_server,
    start_fork_server,
)
from atari_a3c.actors.shared import SharedWeights, SlotLayout, allocate_slots
from atari_a3c.errors import ActorFailure

log = logging.getLogger(__name__)


def slot_layout(cfg, spec) -> SlotLayout:
    """One actor's rollout slot for this config (a DictConfig or a plain dict) and env spec."""
    return SlotLayout(
        unroll=cfg["algo"]["unroll"],
        num_envs=cfg["envs_per_worker"],
        obs_shape=spec.obs_shape,
        obs_dtype=spec.torch_dtype,
        num_actions=spec.num_actions,
        hidden_size=cfg["model"]["hidden_size"],
    )


def slots_per_worker(cfg) -> int:
    """Each actor's slots: two to write while the learner reads its share of a batch."""
    return 2 + -(-int(cfg["algo"]["batch_rollouts"]) // int(cfg["workers"]))


def slots_nbytes(cfg, spec) -> int:
    """Shared memory that the pool's slots take."""
    return int(cfg["workers"]) * slots_per_worker(cfg) * slot_layout(cfg, spec).nbytes


class ActorPool:
    """Starts, watches, replaces and stops the actor processes; owns the slots.

    `launch` starts the actors, which make their envs and then wait; `start` hands them their
    slots (launching them first if need be), and they fill them with the newest weights.

    Each actor owns a fixed set of slots, passed back and forth as indices over its own pipe.
    A dead actor, or one that finished no rollout for `timeout` seconds, is replaced by a new
    process with fresh envs, which gets every slot the old one held (half-written ones are simply
    written again); a start that fails (its fork server died), at launch or of a replacement, is
    one more failure, and the next try gets a fresh fork server. More than `max_failures`
    failures of one actor within `window` seconds raise ActorFailure.
    """

    def __init__(self, cfg_dict: dict, layout: SlotLayout, weights: SharedWeights, seed: int):
        self.cfg_dict, self.layout, self.weights, self.seed = cfg_dict, layout, weights, seed
        self.num_workers = int(cfg_dict["workers"])
        limits = cfg_dict["actors"]
        self.timeout, self.max_failures = limits["timeout"], limits["max_failures"]
        self.window = limits["window"]
        self.slots_per_worker = slots_per_worker(cfg_dict)
        self.slots = allocate_slots(self.num_workers * self.slots_per_worker, layout)
        self.heartbeat = torch.zeros(self.num_workers, dtype=torch.float64).share_memory_()
        self.ctx = context()
        self.processes: list[mp.Process] = []
        self.conns: list[Connection] = []
        self.outstanding: list[set[int]] = [set() for _ in range(self.num_workers)]
        self.ready: deque[int] = deque()
        self.last_words: dict[int, str] = {}
        self.failures: list[deque[float]] = [deque() for _ in range(self.num_workers)]
        self.restarts = 0

    def _start_actor(self, worker: int) -> tuple[mp.Process, Connection]:
        """Start actor `worker` (a new seed per restart: fresh envs) and hand it its slots. A start
        that fails raises one of START_ERRORS and leaves nothing of it running."""
        seed = self.seed + worker * self.layout.num_envs + 7919 * len(self.failures[worker])
        self.heartbeat[worker] = time.time()
        ours, theirs = self.ctx.Pipe()
        shared = (self.cfg_dict, self.layout, self.slots, self.weights, self.heartbeat)
        process = self.ctx.Process(
            target=actor_main, args=(worker, theirs, shared, seed), name=f"actor-{worker}"
        )
        process.daemon = True
        try:
            start_fork_server()  # a new one if the last died, ignoring the signals it must
            process.start()
            theirs.close()
            for index in sorted(self.outstanding[worker]):
                ours.send(index)
        except START_ERRORS:
            theirs.close()
            ours.close()
            if process.pid is not None:
                process.kill()
                process.join()
            raise
        return process, ours

    def launch(self, rank: int = 0) -> None:
        """Start the actors without work: they make their envs and wait for their slots.
        Each learner process (DDP rank) seeds its own differently. Does nothing if running."""
        if self.processes:
            return
        self.seed += rank * 100_003
        for worker in range(self.num_workers):
            process, conn = self._start_counted(worker, "it")
            self.processes.append(process)
            self.conns.append(conn)

    def start(self, rank: int = 0) -> None:
        """Hand each actor its slots, launching the actors first if they are not running."""
        self.launch(rank)
        for worker in range(self.num_workers):
            first = worker * self.slots_per_worker
            self.outstanding[worker] = set(range(first, first + self.slots_per_worker))
            for index in sorted(self.outstanding[worker]):
                self._send(worker, index)

    def check(self) -> None:
        """Replace dead or hung actors; never let the learner stall silently."""
        if not self.processes:
            raise RuntimeError("the actors are not running")
        for worker, process in enumerate(self.processes):
            if not process.is_alive():
                self._replace(worker, self._cause(worker, process.exitcode))
            elif time.time() - float(self.heartbeat[worker]) > self.timeout:
                process.kill()
                process.join()
                self._replace(worker, f"no rollout for {self.timeout:g} s (hung)")

    def _cause(self, worker: int, exitcode: int | None) -> str:
        """The actor's own last words if it sent any, else how it ended."""
        conn = self.conns[worker]
        with contextlib.suppress(EOFError, OSError):
            while conn.poll():
                self._receive(worker, conn.recv())
        if worker in self.last_words:
            return self.last_words.pop(worker)
        if exitcode is not None and exitcode < 0:
            return f"killed by signal {-exitcode}"
        return f"exited with code {exitcode}"

    def _replace(self, worker: int, cause: str) -> None:
        """Start a new actor `worker` after one more failure of it."""
        self._count_failure(worker, cause)
        log.warning("actor-%d failed (%s); starting a replacement with fresh envs", worker, cause)
        self.restarts += 1
        self.conns[worker].close()
        self.processes[worker], self.conns[worker] = self._start_counted(worker, "its replacement")

    def _start_counted(self, worker: int, which: str) -> tuple[mp.Process, Connection]:
        """Start actor `worker` (`which`: "it" at launch, "its replacement" later); each start
        that fails is one more failure of it, and the next try gets a fresh fork server."""
        while True:
            try:
                return self._start_actor(worker)
            except START_ERRORS as error:
                cause = f"{which} did not start: {type(error).__name__}: {error}"
            restart_fork_server()
            self._count_failure(worker, cause)
            log.warning(
                "actor-%d failed (%s); starting a replacement with fresh envs", worker, cause
            )
            self.restarts += 1

    def _count_failure(self, worker: int, cause: str) -> None:
        """Raise ActorFailure if this failure is one more than the window allows."""
        now = time.time()
        failures = self.failures[worker]
        failures.append(now)
        while failures and now - failures[0] > self.window:
            failures.popleft()
        if len(failures) > self.max_failures:
            raise ActorFailure(
                f"actor-{worker} failed {len(failures)} times in {self.window:g} s; last: {cause}"
            )

    def _receive(self, worker: int, message: int | str) -> None:
        """A filled slot's index, or an actor's last words before it exits."""
        if isinstance(message, str):
            self.last_words[worker] = message
        else:
            self.outstanding[worker].discard(message)
            self.ready.append(message)

    def next_full(self) -> int:
        """Index of the next filled slot, checking actor health while waiting."""
        while not self.ready:
            self.check()
            for conn in wait(self.conns, timeout=POLL_SECONDS):
                worker = self.conns.index(conn)
                try:
                    message = conn.recv()
                except (EOFError, OSError):
                    continue  # it died: check() replaces it
                self._receive(worker, message)
        return self.ready.popleft()

    def release(self, index: int) -> None:
        """Give a consumed slot back to the actor that owns it."""
        worker = index // self.slots_per_worker
        self.outstanding[worker].add(index)
        self._send(worker, index)

    def _send(self, worker: int, index: int) -> None:
        with contextlib.suppress(OSError):  # if it died, its replacement gets every slot it held
            self.conns[worker].send(index)

    def stop(self, timeout: float = 5.0) -> None:
        """Tell actors to stop, wait for them, kill stragglers; safe to call twice."""
        for conn in self.conns:
            with contextlib.suppress(OSError):
                conn.send(None)
        for process in self.processes:
            process.join(timeout)
            if process.is_alive():
                process.kill()
                process.join()
        self._close()

    def _close(self) -> None:
        for conn in self.conns:
            conn.close()
        self.processes, self.conns = [], []
