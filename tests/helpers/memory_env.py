"""A memory task: a cue shown only at the first step decides which action pays at the last one."""

import gymnasium as gym
import numpy as np

DELAY = 6


class CueMemory(gym.Env):
    """Observation `[cue, time]`: cue is +1 or -1 at step 0 and 0 after; episode lasts DELAY steps.

    At the last step action 1 pays +1 if the cue was +1 and action 0 pays +1 if it was -1; the
    wrong action pays -1. Without memory the best mean return is 0; with memory it is 1.
    """

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, render_mode=None):
        self.render_mode = render_mode

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.cue = int(self.np_random.integers(2))
        self.t = 0
        return self._obs(), {}

    def _obs(self) -> np.ndarray:
        cue = (2.0 * self.cue - 1.0) if self.t == 0 else 0.0
        return np.array([cue, self.t / DELAY], np.float32)

    def step(self, action):
        self.t += 1
        done = self.t == DELAY
        reward = (1.0 if int(action) == self.cue else -1.0) if done else 0.0
        return self._obs(), reward, done, False, {}


gym.register("CueMemory-v0", entry_point=CueMemory)
