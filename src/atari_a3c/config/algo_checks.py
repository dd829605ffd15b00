"""The checks that span keys, per algorithm (the schema checks each key alone), and of what an
algorithm needs from the env."""

from __future__ import annotations

import math

from omegaconf import DictConfig

from atari_a3c.envs.make import is_atari
from atari_a3c.errors import ConfigError


def validate_algo(cfg: DictConfig) -> None:
    algo = cfg.algo
    if algo.get("advantage_rms_rate") and algo.name not in ("a3c", "impala"):
        raise ConfigError(
            f"algo.advantage_rms_rate is for algo=a3c or impala (algo={algo.name} "
            + ("normalizes its advantages per minibatch)" if algo.name == "ppo" else "has none)")
        )
    if algo.name == "dqn":
        rollout = algo.unroll * cfg.envs_per_worker * algo.batch_rollouts
        if algo.replay_size < rollout:
            raise ConfigError(
                f"algo.replay_size={algo.replay_size} holds less than one batch of rollouts "
                f"({rollout} transitions)"
            )
        if algo.replay_start > algo.replay_size:
            raise ConfigError(
                f"algo.replay_start={algo.replay_start} exceeds algo.replay_size="
                f"{algo.replay_size}: the first update would never come"
            )
        _check_dqn_budget(cfg)
        return
    if cfg.model.get("dueling"):
        raise ConfigError(f"model.dueling makes Q-values, for algo=dqn (not algo={algo.name})")
    if algo.name == "reinforce":
        _check_reinforce(cfg)
    if algo.name == "ppo":
        envs = cfg.envs_per_worker * algo.batch_rollouts
        if algo.minibatches > envs:
            raise ConfigError(
                f"algo.minibatches={algo.minibatches} exceeds the {envs} envs of a batch "
                "(envs_per_worker x algo.batch_rollouts): each minibatch holds whole envs"
            )


def _check_dqn_budget(cfg: DictConfig) -> None:
    """A budget that ends before DQN's first update (the replay filled to `replay_start`, then
    `replay_ratio` samples per fresh transition due for one batch) is refused, naming the
    smallest that makes one."""
    algo = cfg.algo
    rollout = algo.unroll * cfg.envs_per_worker * algo.batch_rollouts  # transitions per batch
    started = max(1, math.ceil(algo.replay_start / rollout))  # the batch that starts the replay
    due = math.ceil(algo.batch_sequences * algo.unroll / (algo.replay_ratio * rollout))
    devices = cfg.trainer.devices if isinstance(cfg.trainer.devices, int) else 1
    per_batch = rollout * cfg.env.frame_skip * devices * cfg.trainer.num_nodes  # frames
    first = (started + due - 1) * per_batch
    if cfg.frames <= first - per_batch:
        raise ConfigError(
            f"frames={cfg.frames} ends before DQN's first update, which comes at {first:,} frames "
            f"(algo.replay_start={algo.replay_start} transitions, then one batch of samples); "
            f"use frames>={first - per_batch + 1} or a smaller algo.replay_start"
        )


def _check_reinforce(cfg: DictConfig) -> None:
    """REINFORCE keeps each env's episode under way in memory and updates only when episodes
    end: short-episode envs, one learner process (DDP ranks would wait for each other)."""
    if is_atari(cfg.env.id):
        raise ConfigError(
            f"algo=reinforce holds whole episodes in memory; {cfg.env.id}'s are too long "
            "(use it with env=cartpole, or algo=a3c or impala)"
        )
    if cfg.trainer.devices != 1 or cfg.trainer.num_nodes != 1:
        raise ConfigError("algo=reinforce runs on one device (trainer.devices=1)")
