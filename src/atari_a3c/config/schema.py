"""The configs' schema, as Hydra structured configs: every key of train.py and evaluate.py once,
with its type, the values it allows and its one-line description (`--help` shows it). A value
of the wrong type (a misspelled boolean, a word for a number) is refused while the config is
composed; `checks.check_values` refuses one outside its range.

The YAML files under `conf/` hold the values (and, in a comment, why a value was chosen). A key
that only some algorithms use names them (`algos`); one that Atari envs need says so (`atari`):
there it may not be null. The free-form groups (`optim`, `logger`, `trainer`) take the keywords
of the class they instantiate, described where their values are set. Importing this module
registers the schemas.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore

from atari_a3c.config.algo_schema import AlgoConfig
from atari_a3c.config.keys import (
    COUNT,
    POSITIVE,
    PROBABILITY,
    SCREEN,
    SECONDS,
    key,
    one_of,
    whole,
)
from atari_a3c.envs.games import GAMES
from atari_a3c.models.encoders import ENCODERS

BACKENDS = ("ale_vector", "gymnasium")
CONF_ENV = Path(__file__).resolve().parents[3] / "conf" / "env"  # the checkout's env group


@dataclass
class EnvConfig:
    id: str = key(doc="gymnasium id of the game (ALE/<Game>-v5 names the native env's ROM)")
    backend: str = key(
        one_of(BACKENDS),
        doc="ale_vector (ale-py's native multi-threaded vector env) or gymnasium (any env; "
        "Atari's ram, mode and difficulty)",
    )
    frame_skip: int = key(POSITIVE, doc="emulator frames per agent step (the last two max-pooled)")
    clip_rewards: bool = key(
        doc="train on rewards clipped to [-1, 1]; the logged scores stay raw game scores"
    )
    episodic_life: bool = key(doc="a lost life ends the training episode (the game goes on)")
    max_episode_frames: int = key(POSITIVE, doc="emulator frames after which a game is cut")
    screen_size: int | None = key(SCREEN, None, atari=True, doc="square screen side in pixels")
    obs_type: str | None = key(
        default=None,
        doc="grayscale or rgb screens, or ram (the console's 128 bytes, into model=mlp_lstm)",
    )
    mode: int | None = key(
        None, None, doc="game mode (null: the game's default; a wrong one names the valid)"
    )
    difficulty: int | None = key(None, None, doc="game difficulty (null: the game's default)")
    frame_stack: int | None = key(POSITIVE, None, atari=True, doc="latest screens stacked")
    noop_max: int | None = key(COUNT, None, atari=True, doc="up to this many no-ops after reset")
    sticky_action_prob: float | None = key(
        PROBABILITY, None, atari=True, doc="chance the emulator repeats the previous action"
    )
    full_action_space: bool | None = key(
        None, None, doc="all 18 actions instead of the game's own set"
    )
    fire_reset: bool | None = key(
        None,
        None,
        doc="press FIRE when a game starts in games that need it (evaluation: also after each "
        "lost life)",
    )
    env_threads: int | None = key(
        POSITIVE, None, doc="emulator threads per actor's native env (null: from the cores)"
    )


@dataclass
class ModelConfig:
    encoder: str = key(one_of(ENCODERS), doc="the net the screens (or vectors) go through")
    hidden_size: int = key(POSITIVE, doc="LSTM core width")
    recurrent: bool = key(doc="false zeroes the LSTM state at every step: no memory")
    dueling: bool = key(default=False, doc="Q-values as a value plus centred advantages (dqn)")
    screen_size: int | None = key(SCREEN, None, doc="a net with a fixed input side sets it")
    frame_stack: int | None = key(POSITIVE, None, doc="a net with a fixed input depth sets it")


@dataclass
class EvalConfig:
    every_frames: int = key(POSITIVE, doc="play games in a background process this often")
    episodes: int = key(POSITIVE, doc="games per evaluation (eval/return_mean; keeps best.ckpt)")
    at_end: bool = key(doc="score the final weights too (a sweep's metric)")
    greedy: bool = key(
        doc="argmax actions; false: actions sampled from the policy (DQN: epsilon-greedy at its "
        "final epsilon), the peers' protocol"
    )


@dataclass
class CallbacksConfig:
    checkpoint_every_frames: int = key(
        POSITIVE, doc="save <run dir>/checkpoints/last.ckpt (and returns.png) this often"
    )
    wandb_artifacts: bool = key(
        doc="with logger=wandb: last.ckpt and best.ckpt become W&B model artifacts (aliases "
        "latest, best) when training ends"
    )
    eval: EvalConfig = key(doc="evaluations during training")
    stop_at_score: float | None = key(
        None, None, doc="end training once the mean score of the last 100 games reaches this"
    )


@dataclass
class ActorsConfig:
    timeout: float = key(
        SECONDS, doc="seconds without a finished rollout before an actor is replaced"
    )
    max_failures: int = key(
        COUNT, doc="an actor's failures within `window` seconds before training stops"
    )
    window: float = key(SECONDS, doc="seconds")
    nice: int = key(
        (lambda v: whole(v) and 0 <= v <= 19, "an integer from 0 to 19"),
        doc="niceness added to the actors and their emulator threads: the learner goes first",
    )


@dataclass
class TrainConfig:
    frames: int = key(POSITIVE, doc="total environment-frame budget (agent steps x frame skip)")
    seed: int = key(COUNT, doc="seeds envs, actions and weights")
    workers: int | None = key(
        POSITIVE,
        doc="actor processes (null: from the cores: 1 per 4, at least 1; beside a GPU learner, 1 "
        "per 2 of the cores it leaves)",
    )
    envs_per_worker: int = key(POSITIVE, doc="envs each actor steps as one batch")
    learner_threads: int = key(
        COUNT,
        doc="torch threads of the learner (0: the cores the emulator threads leave, at least 1; a "
        "GPU learner keeps 2)",
    )
    ckpt_path: str | None = key(
        doc="a run's last.ckpt to resume it from (counters, optimizer, W&B run)"
    )
    init_from: str | None = key(
        doc="weights that start a new run: a checkpoint, pretrained/<game> or wandb:<artifact>",
    )
    actors: ActorsConfig = key(doc="actor processes' supervision")
    max_nonfinite_updates: int = key(
        COUNT, doc="non-finite losses or gradients in a row before training stops"
    )
    env: EnvConfig = key(doc="the game")
    model: ModelConfig = key(doc="the net")
    algo: AlgoConfig = key(doc="the algorithm and its learner")
    callbacks: CallbacksConfig = key(doc="checkpoints, evaluations and artifacts")
    optim: Any = key(default=None, doc="the optimizer: any keyword of its class (`lr` is checked)")
    logger: Any = key(default=None, doc="the Lightning logger")
    trainer: Any = key(default=None, doc="the Lightning Trainer's keywords")


RENDER = (False, True, "human")


@dataclass
class EvaluateConfig:
    ckpt: Any = key(
        doc="a run's last.ckpt or best.ckpt, a shipped agent (pretrained/pong) or a W&B "
        "artifact (wandb:<entity>/<project>/model-<run id>:best); a list [a.ckpt,b.ckpt] "
        "compares them on identical games"
    )
    episodes: int = key(POSITIVE, doc="full games to play")
    greedy: bool = key(
        doc="argmax actions; false samples from the policy (dqn: epsilon-greedy at its "
        "algo.epsilon_final), the peers' protocol"
    )
    seed: int = key(COUNT, doc="game i is reset with seed + i")
    env: str | None = key(
        doc="another game to play (a game's name such as asterix, or a gymnasium id), same "
        "observations and actions"
    )
    render: Any = key(
        (lambda v: v in RENDER, "one of false, true, human"),
        doc="true: an mp4 of every game and a GIF of the first, in output_dir/videos; human: "
        "a window",
    )
    output_dir: str | None = key(
        doc="writes results.json, results.csv and replays/game-<i>.npz (and videos) here; "
        "render=true defaults it"
    )
    replay: str | None = key(
        doc="a recorded game (output_dir/replays/game-3.npz) to play again, action for action"
    )


ConfigStore.instance().store(name="train_schema", node=TrainConfig)
ConfigStore.instance().store(name="evaluate_schema", node=EvaluateConfig)


def register_games(env_dir: Path) -> None:
    """`env=<game>` for every game ale-py ships: the shared Atari settings (`_atari.yaml`) with
    the game's id. A game with a file of its own in `env_dir` (its recipe, say) keeps that file."""
    own = {path.stem for path in env_dir.glob("*.yaml")}
    for name, env_id in GAMES.items():
        if name not in own:
            node = {"defaults": ["_atari", "_self_"], "id": env_id}
            ConfigStore.instance().store(group="env", name=name, node=node)


def unregister_games() -> None:
    """For evaluate.py, whose `env` is a plain key: with the games' nodes in the ConfigStore,
    which every app's search path holds, Hydra would read `env=breakout` as a group choice."""
    ConfigStore.instance().repo.pop("env", None)


register_games(CONF_ENV)
