"""The actors' batch of training envs: ale-py's native vector env where it runs the game,
gymnasium's otherwise, with episodic life, reward clipping and true game scores on top."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from omegaconf import DictConfig

from atari_a3c.envs.make import make_env, obs_type, observation_settings, rom_name, runs_natively


def _native_vector_env(cfg: DictConfig, num_envs: int) -> gym.vector.VectorEnv:
    from ale_py.vector_env import AtariVectorEnv

    env_cfg = cfg.env
    screen, stack = observation_settings(cfg)
    return AtariVectorEnv(
        rom_name(env_cfg.id),
        num_envs,
        num_threads=env_cfg.env_threads,
        max_num_frames_per_episode=env_cfg.max_episode_frames,
        repeat_action_probability=env_cfg.sticky_action_prob,
        full_action_space=env_cfg.full_action_space,
        autoreset_mode=AutoresetMode.SAME_STEP,
        img_height=screen,
        img_width=screen,
        grayscale=obs_type(env_cfg) == "grayscale",
        stack_num=stack,
        frameskip=env_cfg.frame_skip,
        noop_max=env_cfg.noop_max,
        episodic_life=False,  # it restarts the game at each lost life; TrainingEnvs cuts episodes
        reward_clipping=False,  # returns are logged raw; TrainingEnvs clips what the learner sees
        use_fire_reset=env_cfg.fire_reset,
    )


@dataclass
class Transition:
    """One batched step: what the learner trains on plus the games that ended in it."""

    obs: np.ndarray
    reward: np.ndarray  # float32, clipped to [-1, 1] when the env config says so
    done: np.ndarray  # bool: the training episode ended (game over, truncation or a lost life)
    game_returns: np.ndarray  # raw scores of the games that ended at this step
    game_lengths: np.ndarray  # their lengths in agent steps


class TrainingEnvs:
    """A batch of envs for an actor, from either backend, with DeepMind-style episodic life.

    A lost life ends the training episode but not the game, so logged returns are true game
    scores. Auto-reset happens in the same step (the returned obs starts the next episode).
    """

    def __init__(self, cfg: DictConfig, num_envs: int):
        env_cfg = cfg.env
        if runs_natively(env_cfg):
            self.env = _native_vector_env(cfg, num_envs)
        else:
            self.env = SyncVectorEnv(
                [lambda: make_env(cfg) for _ in range(num_envs)],
                autoreset_mode=AutoresetMode.SAME_STEP,
            )
        self.num_envs = num_envs
        self.clip_rewards = bool(env_cfg.clip_rewards)
        self.episodic_life = bool(env_cfg.get("episodic_life", False))
        self.returns = np.zeros(num_envs, np.float64)
        self.lengths = np.zeros(num_envs, np.int64)
        self.lives: np.ndarray | None = None

    @property
    def num_actions(self) -> int:
        return int(self.env.single_action_space.n)

    def reset(self, seed: int) -> np.ndarray:
        obs, info = self.env.reset(seed=seed)
        self.lives = info.get("lives")
        return obs

    def step(self, actions: np.ndarray) -> Transition:
        obs, reward, terminated, truncated, info = self.env.step(actions)
        game_over = terminated | truncated
        self.returns += reward
        self.lengths += 1
        done = game_over
        lives = info.get("lives")
        if self.episodic_life and lives is not None:
            done = game_over | (lives < self.lives)
        self.lives = lives
        ended = np.flatnonzero(game_over)
        step = Transition(
            obs=obs,
            reward=np.clip(reward, -1, 1) if self.clip_rewards else reward,
            done=done,
            game_returns=self.returns[ended].copy(),
            game_lengths=self.lengths[ended].copy(),
        )
        self.returns[ended] = 0
        self.lengths[ended] = 0
        return step

    def close(self) -> None:
        self.env.close()
