"""The actors' batch of training envs: ale-py's native vector env where it runs the game,
gymnasium's otherwise; gymnasium's vector wrappers record the true game scores and clip the
rewards the learner sees; episodic life on top."""

from __future__ import annotations

from dataclasses import dataclass

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from gymnasium.wrappers.vector import RecordEpisodeStatistics, TransformReward
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
        reward_clipping=False,  # scores are recorded raw; TrainingEnvs clips what the learner sees
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

    A lost life ends the training episode but not the game, so the recorded games are whole
    games with their true scores. Auto-reset happens in the same step (the returned obs starts
    the next episode).
    """

    def __init__(self, cfg: DictConfig, num_envs: int):
        env_cfg = cfg.env
        if runs_natively(env_cfg):
            env = _native_vector_env(cfg, num_envs)
        else:
            env = SyncVectorEnv(
                [lambda: make_env(cfg) for _ in range(num_envs)],
                autoreset_mode=AutoresetMode.SAME_STEP,
            )
        env = RecordEpisodeStatistics(env, stats_key="game")  # raw scores: before any clipping
        if env_cfg.clip_rewards:
            env = TransformReward(env, lambda reward: np.clip(reward, -1, 1))
        self.env = env
        self.episodic_life = bool(env_cfg.get("episodic_life", False))
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
        done = terminated | truncated
        lives = info.get("lives")
        if self.episodic_life and lives is not None:
            done = done | (lives < self.lives)
        self.lives = lives
        games, ended = info.get("game"), info.get("_game")
        return Transition(
            obs=obs,
            reward=reward,
            done=done,
            game_returns=games["r"][ended] if games else np.zeros(0),
            game_lengths=games["l"][ended] if games else np.zeros(0, np.int64),
        )

    def close(self) -> None:
        self.env.close()
