"""The training config's types, as Hydra structured configs: a value of the wrong type (a
misspelled boolean, a word for a number) is refused while the config is composed.

The YAML files under `conf/` hold the values and their comments; these dataclasses only say what
each key is. Ranges are checked in `config.py`. Importing this module registers the schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hydra.core.config_store import ConfigStore


@dataclass
class EnvConfig:
    id: str
    backend: str
    frame_skip: int
    clip_rewards: bool
    episodic_life: bool
    max_episode_frames: int
    screen_size: int | None = None  # Atari only, like the keys below
    obs_type: str | None = None
    mode: int | None = None
    difficulty: int | None = None
    frame_stack: int | None = None
    noop_max: int | None = None
    sticky_action_prob: float | None = None
    full_action_space: bool | None = None
    fire_reset: bool | None = None
    env_threads: int | None = None


@dataclass
class ModelConfig:
    encoder: str
    hidden_size: int
    recurrent: bool
    dueling: bool = False  # Q-values as value + centred advantages (algo=dqn)
    screen_size: int | None = None  # a net with a fixed input size sets these
    frame_stack: int | None = None


@dataclass
class AlgoConfig:
    name: str
    _target_: str  # the learner class
    gamma: float
    obs_mean_rate: float
    unroll: int
    batch_rollouts: int
    lr_cooldown: float
    lr_warmup_frames: int = 0
    entropy_coef: float | None = None  # the policy-gradient algos (a3c, impala, reinforce)
    value_coef: float | None = None
    popart_rate: float = 0.0
    gae_lambda: float | None = None  # a3c and impala
    clip_rho: float | None = None  # V-trace only
    clip_pg_rho: float | None = None
    n_step: int | None = None  # dqn only, like the keys below
    double: bool | None = None
    target_every: int | None = None
    epsilon_start: float | None = None
    epsilon_final: float | None = None
    epsilon_frames: int | None = None
    replay_size: int | None = None
    replay_start: int | None = None
    replay_ratio: float | None = None
    batch_sequences: int | None = None
    epochs: int | None = None  # ppo only, like the keys below
    minibatches: int | None = None
    clip_coef: float | None = None
    clip_value: bool | None = None
    max_grad_norm: float | None = None


@dataclass
class EvalConfig:
    every_frames: int
    episodes: int
    at_end: bool


@dataclass
class CallbacksConfig:
    checkpoint_every_frames: int
    wandb_artifacts: bool
    eval: EvalConfig
    stop_at_score: float | None = None


@dataclass
class ActorsConfig:
    timeout: float
    max_failures: int
    window: float
    nice: int


@dataclass
class TrainConfig:
    frames: int
    seed: int
    workers: int | None
    envs_per_worker: int
    learner_threads: int
    ckpt_path: str | None
    init_from: str | None
    actors: ActorsConfig
    max_nonfinite_updates: int
    env: EnvConfig
    model: ModelConfig
    algo: AlgoConfig
    callbacks: CallbacksConfig
    optim: Any = None  # instantiated by Hydra: any keyword of the optimizer
    logger: Any = None
    trainer: Any = None


ConfigStore.instance().store(name="train_schema", node=TrainConfig)


def acts_on_q_values(algo) -> bool:
    """Whether the policy head's outputs are Q-values (`algo=dqn`), acted on epsilon-greedily
    rather than sampled."""
    return algo.name == "dqn"
