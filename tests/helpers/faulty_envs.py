"""CartPole variants that fail, for the reliability tests (`env.id=faulty_envs:<Name>-v0`).

Most fail once, at the Nth step of the first process to get there: a marker file named by the
environment variable FAULT_MARKER makes it happen once per test, not once per process.
RankRaisingCartPole fails every time, in the DDP rank named by FAULT_RANK alone.
"""

import math
import os
import time
from pathlib import Path

import gymnasium as gym
from gymnasium.envs.classic_control import CartPoleEnv

FAIL_AT_STEP = 300


class FaultOnce(CartPoleEnv):
    def __init__(self, render_mode=None):
        super().__init__(render_mode=render_mode)
        self.steps = 0

    def step(self, action):
        self.steps += 1
        obs, reward, terminated, truncated, info = super().step(action)
        if self.steps == FAIL_AT_STEP and self._first():
            reward = self.fault(reward)
        return obs, reward, terminated, truncated, info

    @staticmethod
    def _first() -> bool:
        try:
            Path(os.environ["FAULT_MARKER"]).touch(exist_ok=False)
        except FileExistsError:
            return False
        return True


class RaisingCartPole(FaultOnce):
    def fault(self, reward):
        raise ValueError(f"env broke at step {self.steps}")


class HangingCartPole(FaultOnce):
    def fault(self, reward):
        time.sleep(3600)


class NanRewardCartPole(FaultOnce):
    def fault(self, reward):
        return math.nan


class RankRaisingCartPole(CartPoleEnv):
    """Raises at its 50th step in every process of DDP rank FAULT_RANK (LOCAL_RANK, which
    Lightning sets for the ranks it launches and their actors inherit); sound elsewhere."""

    def __init__(self, render_mode=None):
        super().__init__(render_mode=render_mode)
        self.steps = 0
        self.broken = os.environ.get("LOCAL_RANK", "0") == os.environ.get("FAULT_RANK")

    def step(self, action):
        self.steps += 1
        if self.broken and self.steps == 50:
            raise ValueError(f"env of rank {os.environ['FAULT_RANK']} broke")
        return super().step(action)


for cls in (RaisingCartPole, HangingCartPole, NanRewardCartPole, RankRaisingCartPole):
    gym.register(f"{cls.__name__}-v0", entry_point=cls, max_episode_steps=500)
