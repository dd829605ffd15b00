"""The algorithm's keys (`conf/algo/*.yaml`): the ones every algorithm reads, then each one's own,
which may be null under the others."""

from __future__ import annotations

from dataclasses import dataclass

from atari_a3c.config.keys import (
    COUNT,
    GREATER_THAN_ZERO,
    NON_NEGATIVE,
    POSITIVE,
    PROBABILITY,
    RATE,
    key,
    number,
    one_of,
)

ALGOS = ("a3c", "impala", "ppo", "reinforce", "dqn")
POLICY_GRADIENT = ("a3c", "impala", "ppo", "reinforce")
ACTOR_CRITIC = ("a3c", "impala", "ppo")


@dataclass
class AlgoConfig:
    name: str = key(one_of(ALGOS), doc="the algorithm")
    _target_: str = key(doc="the learner class that runs its updates")
    gamma: float = key((lambda v: number(v) and 0 < v <= 1, "in (0, 1]"), doc="discount")
    obs_mean_rate: float = key(
        RATE, doc="step size of the running mean frame subtracted from observations (0: off)"
    )
    unroll: int = key(POSITIVE, doc="agent steps per rollout")
    batch_rollouts: int = key(POSITIVE, doc="rollouts per learner batch")
    lr_cooldown: float = key(
        (PROBABILITY[0], "a fraction in [0, 1]"),
        doc="the learning rate falls linearly to zero over this last fraction of the budget",
    )
    lr_warmup_frames: int = key(
        COUNT, 0, doc="the learning rate rises linearly from zero over this many frames"
    )
    entropy_coef: float | None = key(
        NON_NEGATIVE, None, POLICY_GRADIENT, doc="weight of the entropy bonus"
    )
    value_coef: float | None = key(
        NON_NEGATIVE, None, POLICY_GRADIENT, doc="weight of the value loss (reinforce: baseline)"
    )
    popart_rate: float = key(
        RATE, 0.0, doc="step size of PopArt's running mean and std of value targets (0: off)"
    )
    advantage_rms_rate: float = key(
        RATE,
        0.0,
        doc="a3c, impala: step size of the advantages' running root mean square, which the "
        "policy gradient divides them by, so entropy_coef weighs the bonus per unit of it (0: off)",
    )
    gae_lambda: float | None = key(
        PROBABILITY, None, ACTOR_CRITIC, doc="GAE lambda; 1 gives plain n-step returns"
    )
    clip_rho: float | None = key(
        GREATER_THAN_ZERO,
        None,
        ("impala",),
        doc="V-trace's truncation of the value targets' importance weights",
    )
    clip_pg_rho: float | None = key(
        GREATER_THAN_ZERO,
        None,
        ("impala",),
        doc="V-trace's truncation of the policy gradient's importance weights",
    )
    n_step: int | None = key(POSITIVE, None, ("dqn",), doc="rewards summed before bootstrapping")
    double: bool | None = key(
        None,
        None,
        ("dqn",),
        doc="Double DQN: the online net picks the next action, the target net values it",
    )
    target_every: int | None = key(
        POSITIVE, None, ("dqn",), doc="updates between copies into the target net"
    )
    epsilon_start: float | None = key(
        PROBABILITY, None, ("dqn",), doc="the actors' chance of a random action at the start"
    )
    epsilon_final: float | None = key(
        PROBABILITY, None, ("dqn",), doc="that chance after epsilon_frames (and in evaluation)"
    )
    epsilon_frames: int | None = key(
        POSITIVE, None, ("dqn",), doc="frames over which the chance falls linearly"
    )
    replay_size: int | None = key(POSITIVE, None, ("dqn",), doc="transitions the replay holds")
    replay_start: int | None = key(
        COUNT, None, ("dqn",), doc="transitions collected before the first update"
    )
    replay_ratio: float | None = key(
        GREATER_THAN_ZERO, None, ("dqn",), doc="transitions trained on per transition collected"
    )
    batch_sequences: int | None = key(
        POSITIVE, None, ("dqn",), doc="replayed sequences of `unroll` steps per update"
    )
    epochs: int | None = key(POSITIVE, None, ("ppo",), doc="passes over each batch")
    minibatches: int | None = key(
        POSITIVE, None, ("ppo",), doc="minibatches per pass, each of whole env columns"
    )
    clip_coef: float | None = key(
        (lambda v: number(v) and 0 < v < 1, "in (0, 1)"),
        None,
        ("ppo",),
        doc="the probability ratio's clipping range, 1 +- clip_coef",
    )
    clip_value: bool | None = key(
        None, None, ("ppo",), doc="clip the value's move from the values its targets came from"
    )
    max_grad_norm: float | None = key(
        GREATER_THAN_ZERO, None, ("ppo",), doc="gradient-norm clip of each minibatch step"
    )


def acts_on_q_values(algo) -> bool:
    """Whether the policy head's outputs are Q-values (`algo=dqn`), acted on epsilon-greedily
    rather than sampled."""
    return algo.name == "dqn"
