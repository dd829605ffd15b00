"""Actor processes: step a batch of envs with a no-grad policy copy and fill rollout slots."""

from __future__ import annotations

import os
import sys
import time
from multiprocessing.connection import Connection

import torch
from omegaconf import OmegaConf
from torch import Tensor

from atari_a3c.actors.child_process import become_child
from atari_a3c.actors.shared import SharedWeights, SlotLayout, Slots
from atari_a3c.config.algo_schema import acts_on_q_values
from atari_a3c.envs.vector import TrainingEnvs
from atari_a3c.models.actor_critic import State, build_model, prepare_inference
from atari_a3c.models.exploration import epsilon, epsilon_greedy

POLL_SECONDS = 0.5


class Actor:
    """One actor process's state: its envs, its policy copy, the current obs and LSTM state."""

    def __init__(self, cfg, layout: SlotLayout, slots: Slots, weights: SharedWeights, seed: int):
        self.envs = TrainingEnvs(cfg, layout.num_envs)
        self.model = build_model(cfg.model, layout.obs_shape, layout.num_actions).eval()
        self.autocast = prepare_inference(self.model)
        self.slots, self.weights, self.unroll = slots, weights, layout.unroll
        self.algo, self.q_values = cfg.algo, acts_on_q_values(cfg.algo)  # read once: hot loop
        self.version = weights.pull(self.model)
        self.obs = torch.from_numpy(self.envs.reset(seed=seed))
        self.done = torch.ones(layout.num_envs, dtype=torch.bool)
        self.state: State = self.model.initial_state(layout.num_envs)
        self.first = True

    @torch.no_grad()
    def fill(self, index: int) -> None:
        """Write `unroll` steps into slot `index`; its last obs starts the next rollout."""
        if self.weights.version != self.version:
            self.version = self.weights.pull(self.model, self.version)
        slot = {key: tensor[index] for key, tensor in self.slots.items()}
        slot["h0"].copy_(self.state[0])
        slot["c0"].copy_(self.state[1])
        returns, lengths = [], []
        for t in range(self.unroll):
            slot["obs"][t].copy_(self.obs)  # frames reordered into the slot's channels-last layout
            slot["done"][t].copy_(self.done)
            with self.autocast:  # the slot's copy: the same values, already in the convs' layout
                logits, _, (h, c) = self.model(slot["obs"][t : t + 1], self.done[None], self.state)
            self.state = (h, c)
            logits = logits[0].float()
            action = self.choose(logits)
            step = self.envs.step(action.numpy())
            slot["action"][t] = action
            slot["logits"][t] = logits
            slot["reward"][t] = torch.from_numpy(step.reward)
            self.obs, self.done = torch.from_numpy(step.obs), torch.from_numpy(step.done)
            returns.extend(step.game_returns)
            lengths.extend(step.game_lengths)
        slot["obs"][self.unroll].copy_(self.obs)
        slot["done"][self.unroll].copy_(self.done)
        slot["version"].fill_(self.version)
        slot["first"].fill_(self.first)
        self.first = False
        slot["num_games"].fill_(len(returns))
        slot["game_return"][: len(returns)] = torch.tensor(returns, dtype=torch.float32)
        slot["game_length"][: len(lengths)] = torch.tensor(lengths, dtype=torch.int64)

    def choose(self, logits: Tensor) -> Tensor:
        """Sampled from the policy; for DQN (Q-values), epsilon-greedy by the frames trained."""
        if self.q_values:
            return epsilon_greedy(logits, epsilon(self.algo, self.weights.frames.value))
        return torch.multinomial(logits.softmax(-1), 1).squeeze(-1)


def actor_main(worker: int, conn: Connection, shared: tuple, seed: int) -> None:
    """Process entry: fill the slots the main process sends over `conn`, send each back filled.

    Stops when told (None), when the parent is gone, or on an exception, which it reports over
    `conn` as one line before exiting with code 1. Pipes, not shared queues: a killed actor can
    never leave a lock held for the others.
    """
    cfg_dict, layout, slots, weights, heartbeat = shared
    parent = become_child()
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    cfg = OmegaConf.create(cfg_dict)
    os.nice(cfg.actors.nice)  # before the envs start their threads, which inherit it
    try:
        actor = Actor(cfg, layout, slots, weights, seed)
        while os.getppid() == parent:
            heartbeat[worker] = time.time()
            if not conn.poll(POLL_SECONDS):
                continue
            index = conn.recv()
            if index is None:
                break
            actor.fill(index)
            conn.send(index)
        actor.envs.close()
    except Exception as error:
        conn.send(f"{type(error).__name__}: {error}")
        sys.exit(1)
