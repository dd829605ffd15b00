"""The training config's schema, as Hydra structured configs: every key once, with its type and
the values it allows. A value of the wrong type (a misspelled boolean, a word for a number) is
refused while the config is composed; `checks.check_values` refuses one outside its range.

The YAML files under `conf/` hold the values, each with its one-line description. A key that
only some algorithms use names them (`algos`); one that Atari envs need says so (`atari`): there
it may not be null. Importing this module registers the schema.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, field
from typing import Any

from hydra.core.config_store import ConfigStore

from atari_a3c.models.encoders import ENCODERS

ALGOS = ("a3c", "impala", "ppo", "reinforce", "dqn")
POLICY_GRADIENT = ("a3c", "impala", "ppo", "reinforce")
ACTOR_CRITIC = ("a3c", "impala", "ppo")
BACKENDS = ("ale_vector", "gymnasium")


def number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


Allowed = tuple[Callable[[object], bool], str]  # a test of the value, and what passes in words
POSITIVE: Allowed = (lambda v: whole(v) and v > 0, "a positive integer")
COUNT: Allowed = (lambda v: whole(v) and v >= 0, "an integer >= 0")
PROBABILITY: Allowed = (lambda v: number(v) and 0 <= v <= 1, "in [0, 1]")
RATE: Allowed = (lambda v: number(v) and 0 <= v < 1, "in [0, 1)")
NON_NEGATIVE: Allowed = (lambda v: number(v) and v >= 0, ">= 0")
GREATER_THAN_ZERO: Allowed = (lambda v: number(v) and v > 0, "> 0")
SCREEN: Allowed = (lambda v: whole(v) and v >= 36, "an integer >= 36")


def one_of(options: tuple[str, ...]) -> Allowed:
    return (lambda v: v in options, f"one of {', '.join(options)}")


def key(allowed: Allowed | None = None, default=MISSING, algos=(), atari=False) -> Any:
    """A field whose value must pass `allowed`; `algos` or `atari`: where it may not be null."""
    metadata = {"allowed": allowed, "algos": algos, "atari": atari}
    return field(default=default, metadata=metadata)


@dataclass
class EnvConfig:
    id: str
    backend: str = key(one_of(BACKENDS))
    frame_skip: int = key(POSITIVE)
    clip_rewards: bool = key()
    episodic_life: bool = key()
    max_episode_frames: int = key(POSITIVE)
    screen_size: int | None = key(
        (lambda v: whole(v) and v >= 36, "an integer >= 36"), None, atari=True
    )
    obs_type: str | None = None
    mode: int | None = None
    difficulty: int | None = None
    frame_stack: int | None = key(POSITIVE, None, atari=True)
    noop_max: int | None = key(COUNT, None, atari=True)
    sticky_action_prob: float | None = key(PROBABILITY, None, atari=True)
    full_action_space: bool | None = None
    fire_reset: bool | None = None
    env_threads: int | None = key(POSITIVE, None)  # null: from the machine's cores


@dataclass
class ModelConfig:
    encoder: str = key(one_of(ENCODERS))
    hidden_size: int = key(POSITIVE)
    recurrent: bool = key()
    dueling: bool = False
    screen_size: int | None = None  # a net with a fixed input size sets these
    frame_stack: int | None = None


@dataclass
class AlgoConfig:
    name: str = key(one_of(ALGOS))
    _target_: str = key()  # the learner class
    gamma: float = key((lambda v: number(v) and 0 < v <= 1, "in (0, 1]"))
    obs_mean_rate: float = key(RATE)
    unroll: int = key(POSITIVE)
    batch_rollouts: int = key(POSITIVE)
    lr_cooldown: float = key((PROBABILITY[0], "a fraction in [0, 1]"))
    lr_warmup_frames: int = key(COUNT, 0)
    entropy_coef: float | None = key(NON_NEGATIVE, None, POLICY_GRADIENT)
    value_coef: float | None = key(NON_NEGATIVE, None, POLICY_GRADIENT)
    popart_rate: float = key(RATE, 0.0)
    gae_lambda: float | None = key(PROBABILITY, None, ACTOR_CRITIC)
    clip_rho: float | None = key(GREATER_THAN_ZERO, None, ("impala",))
    clip_pg_rho: float | None = key(GREATER_THAN_ZERO, None, ("impala",))
    n_step: int | None = key(POSITIVE, None, ("dqn",))
    double: bool | None = key(None, None, ("dqn",))
    target_every: int | None = key(POSITIVE, None, ("dqn",))
    epsilon_start: float | None = key(PROBABILITY, None, ("dqn",))
    epsilon_final: float | None = key(PROBABILITY, None, ("dqn",))
    epsilon_frames: int | None = key(POSITIVE, None, ("dqn",))
    replay_size: int | None = key(POSITIVE, None, ("dqn",))
    replay_start: int | None = key(COUNT, None, ("dqn",))
    replay_ratio: float | None = key(GREATER_THAN_ZERO, None, ("dqn",))
    batch_sequences: int | None = key(POSITIVE, None, ("dqn",))
    epochs: int | None = key(POSITIVE, None, ("ppo",))
    minibatches: int | None = key(POSITIVE, None, ("ppo",))
    clip_coef: float | None = key((lambda v: number(v) and 0 < v < 1, "in (0, 1)"), None, ("ppo",))
    clip_value: bool | None = key(None, None, ("ppo",))
    max_grad_norm: float | None = key(GREATER_THAN_ZERO, None, ("ppo",))


@dataclass
class EvalConfig:
    every_frames: int = key(POSITIVE)
    episodes: int = key(POSITIVE)
    at_end: bool = key()


@dataclass
class CallbacksConfig:
    checkpoint_every_frames: int = key(POSITIVE)
    wandb_artifacts: bool = key()
    eval: EvalConfig = key()
    stop_at_score: float | None = None


@dataclass
class ActorsConfig:
    timeout: float = key((GREATER_THAN_ZERO[0], "> 0 seconds"))
    max_failures: int = key(COUNT)
    window: float = key((GREATER_THAN_ZERO[0], "> 0 seconds"))
    nice: int = key((lambda v: whole(v) and 0 <= v <= 19, "an integer from 0 to 19"))


@dataclass
class TrainConfig:
    frames: int = key(POSITIVE)
    seed: int = key(COUNT)
    workers: int | None = key(POSITIVE)  # null: from the machine's cores
    envs_per_worker: int = key(POSITIVE)
    learner_threads: int = key(COUNT)
    ckpt_path: str | None = key()
    init_from: str | None = key()
    actors: ActorsConfig = key()
    max_nonfinite_updates: int = key(COUNT)
    env: EnvConfig = key()
    model: ModelConfig = key()
    algo: AlgoConfig = key()
    callbacks: CallbacksConfig = key()
    optim: Any = None  # instantiated by Hydra: any keyword of the optimizer (`lr` checked)
    logger: Any = None
    trainer: Any = None


ConfigStore.instance().store(name="train_schema", node=TrainConfig)


def acts_on_q_values(algo) -> bool:
    """Whether the policy head's outputs are Q-values (`algo=dqn`), acted on epsilon-greedily
    rather than sampled."""
    return algo.name == "dqn"
