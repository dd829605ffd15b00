"""Actor processes: step a batch of envs with a no-grad policy copy and fill rollout slots."""

from __future__ import annotations

import os
import queue
import signal

import torch
import torch.multiprocessing as mp
from omegaconf import OmegaConf

from atari_a3c.buffers import SharedWeights, SlotLayout, Slots, allocate_slots
from atari_a3c.envs import TrainingEnvs
from atari_a3c.models import State, build_model, inference_context

POLL_SECONDS = 0.5


class Actor:
    """One actor process's state: its envs, its policy copy, the current obs and LSTM state."""

    def __init__(self, cfg, layout: SlotLayout, slots: Slots, weights: SharedWeights, seed: int):
        self.envs = TrainingEnvs(cfg, layout.num_envs)
        self.model = build_model(cfg.model, layout.obs_shape, layout.num_actions).eval()
        self.autocast = inference_context(self.model)
        self.slots, self.weights, self.unroll = slots, weights, layout.unroll
        self.version = weights.pull(self.model)
        self.obs = torch.from_numpy(self.envs.reset(seed=seed))
        self.done = torch.ones(layout.num_envs, dtype=torch.bool)
        self.state: State = self.model.initial_state(layout.num_envs)

    @torch.no_grad()
    def fill(self, index: int) -> None:
        """Write `unroll` steps into slot `index`; its last obs starts the next rollout."""
        if self.weights.version.value != self.version:
            self.version = self.weights.pull(self.model)
        slot = {key: tensor[index] for key, tensor in self.slots.items()}
        slot["h0"].copy_(self.state[0])
        slot["c0"].copy_(self.state[1])
        returns, lengths = [], []
        for t in range(self.unroll):
            slot["obs"][t].copy_(self.obs)
            slot["done"][t].copy_(self.done)
            with self.autocast:
                logits, value, (h, c) = self.model(self.obs[None], self.done[None], self.state)
            self.state = (h.float(), c.float())
            logits = logits[0].float()
            action = torch.multinomial(logits.softmax(-1), 1).squeeze(-1)
            step = self.envs.step(action.numpy())
            slot["action"][t] = action
            slot["logits"][t] = logits
            slot["value"][t] = value[0]
            slot["reward"][t] = torch.from_numpy(step.reward)
            self.obs, self.done = torch.from_numpy(step.obs), torch.from_numpy(step.done)
            returns.extend(step.game_returns)
            lengths.extend(step.game_lengths)
        slot["obs"][self.unroll].copy_(self.obs)
        slot["done"][self.unroll].copy_(self.done)
        slot["version"].fill_(self.version)
        slot["num_games"].fill_(len(returns))
        slot["game_return"][: len(returns)] = torch.tensor(returns, dtype=torch.float32)
        slot["game_length"][: len(lengths)] = torch.tensor(lengths, dtype=torch.int64)


def actor_main(cfg_dict, layout, slots, weights, free_q, full_q, stop, seed: int) -> None:
    """Process entry: fill free slots until told to stop or the parent process is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    parent = os.getppid()
    actor = Actor(OmegaConf.create(cfg_dict), layout, slots, weights, seed)
    try:
        while not stop.is_set() and os.getppid() == parent:
            try:
                index = free_q.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            actor.fill(index)
            full_q.put(index)
    finally:
        actor.envs.close()


class ActorPool:
    """Starts, watches and stops the actor processes and owns the slots and their queues."""

    def __init__(self, cfg_dict: dict, layout: SlotLayout, weights: SharedWeights, seed: int):
        self.cfg_dict, self.layout, self.weights, self.seed = cfg_dict, layout, weights, seed
        self.num_workers = int(cfg_dict["workers"])
        num_slots = 2 * self.num_workers + int(cfg_dict["algo"]["batch_rollouts"])
        self.slots = allocate_slots(num_slots, layout)
        self.ctx = mp.get_context("spawn")
        self.free_q, self.full_q = self.ctx.Queue(), self.ctx.Queue()
        for index in range(num_slots):
            self.free_q.put(index)
        self.stop_event = self.ctx.Event()
        self.processes: list[mp.Process] = []

    def start(self) -> None:
        for worker in range(self.num_workers):
            seed = self.seed + worker * self.layout.num_envs
            args = (self.cfg_dict, self.layout, self.slots, self.weights)
            args += (self.free_q, self.full_q, self.stop_event, seed)
            process = self.ctx.Process(target=actor_main, args=args, name=f"actor-{worker}")
            process.daemon = True
            process.start()
            self.processes.append(process)

    def check(self) -> None:
        """Raise if an actor died: a silent stall of the learner is never an option."""
        if not self.processes:
            raise RuntimeError("the actors are not running")
        for process in self.processes:
            if not process.is_alive():
                raise RuntimeError(f"{process.name} died (exit code {process.exitcode})")

    def next_full(self) -> int:
        """Index of the next filled slot, checking actor health while waiting."""
        while True:
            try:
                return self.full_q.get(timeout=POLL_SECONDS)
            except queue.Empty:
                self.check()

    def release(self, index: int) -> None:
        self.free_q.put(index)

    def stop(self, timeout: float = 5.0) -> None:
        """Tell actors to stop, wait for them, terminate stragglers; safe to call twice."""
        self.stop_event.set()
        for process in self.processes:
            process.join(timeout)
            if process.is_alive():
                process.kill()
                process.join()
        self.processes.clear()
