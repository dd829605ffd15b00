"""Playing full games with a policy: one implementation for evaluate.py and training."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np
import torch
from omegaconf import DictConfig, OmegaConf
from torch import Tensor

from atari_a3c.actors.child_process import become_child
from atari_a3c.checkpoints.files import load_checkpoint, policy_from_checkpoint
from atari_a3c.config.algo_schema import acts_on_q_values
from atari_a3c.envs.make import make_env
from atari_a3c.evaluation.recorded import Recording, emulator_state
from atari_a3c.learners.returns import policy_entropy
from atari_a3c.models.actor_critic import ActorCritic, prepare_inference
from atari_a3c.models.exploration import epsilon_greedy


@dataclass
class Game:
    score: float  # the true game score: raw rewards, no life cuts
    length: int  # agent steps
    seed: int  # the reset seed that replays this game
    seconds: float  # wall-clock time it took
    entropy: float | None = None  # the policy's mean entropy over its steps (nats; uniform:
    # ln of the action count); None for Q-values, which are no distribution
    recording: Recording | None = None  # its seed, start state and actions, when asked for


PARALLEL_GAMES = 8  # games played at once, their policy steps batched


def play(
    cfg: DictConfig,
    model: ActorCritic,
    episodes: int,
    seed: int,
    greedy: bool = True,
    render_mode: str | None = None,
    video_dir: Path | None = None,
    on_game: Callable[[int, Game], None] | None = None,
    record: bool = False,
) -> list[Game]:
    """Play `episodes` full games, game i reset with seed `seed + i`; returned in that order.

    Up to PARALLEL_GAMES games run at once in their own envs, one batched policy step for all
    of them; one at a time when rendering or recording, so every video holds one whole game.
    `on_game(i, game)` is called as each game ends. With `record`, each game carries the
    recording that replays it. With `env.fire_reset`, games that need FIRE to go on get it as
    their first action and as the next one after each lost life (as the older systems scored):
    a greedy policy that does not press it would otherwise wait out the time limit. With
    `env.episodic_life`, the policy's memory starts over at each lost life, as in training.
    """
    width = 1 if render_mode or video_dir else min(PARALLEL_GAMES, episodes)
    envs = [make_env(cfg, render_mode=render_mode, video_dir=video_dir) for _ in range(width)]
    try:
        config = OmegaConf.to_container(cfg, resolve=True) if record else None
        fire = fire_action(envs[0]) if cfg.env.get("fire_reset") else None
        table = Games(envs, seed, episodes, on_game, config, fire, cfg.env.episodic_life)
        play_batched(table, model, action_rule(cfg, greedy, seed), not acts_on_q_values(cfg.algo))
    finally:
        for env in envs:
            env.close()
    return [table.done[i] for i in range(episodes)]


def fire_action(env) -> int | None:
    """The index of FIRE in an Atari game that has it next to NOOP (the games that need it
    to launch a ball or a round), else None."""
    meanings = getattr(env.unwrapped, "get_action_meanings", lambda: [])()
    return 1 if meanings[1:2] == ["FIRE"] else None


class Games:
    """Which game each env plays, its current observation, and the games that have ended.
    With a `record` config, also each game's start state and actions. With a `fire` action,
    it replaces the policy's at the start of a game and after each lost life. With
    `episodic_life`, a lost life starts the policy's memory over, as it did in training."""

    def __init__(
        self,
        envs: list,
        seed: int,
        episodes: int,
        on_game,
        record=None,
        fire=None,
        episodic_life=False,
    ):
        self.envs, self.seed, self.episodes, self.on_game = envs, seed, episodes, on_game
        self.record, self.fire, self.episodic_life = record, fire, episodic_life
        self.index: list[int | None] = [None] * len(envs)
        self.obs: list[np.ndarray | None] = [None] * len(envs)
        self.lives = [0] * len(envs)
        self.forced: list[int | None] = [None] * len(envs)
        self.started = [0.0] * len(envs)
        self.start_states = [b""] * len(envs)
        self.actions: list[list[int]] = [[] for _ in envs]
        self.entropy = [0.0] * len(envs)  # summed over the game's steps so far
        self.done: dict[int, Game] = {}
        self.next = 0
        for slot in range(len(envs)):
            self.start(slot)

    def start(self, slot: int) -> None:
        """Reset env `slot` for the next game not yet played, or leave it idle."""
        if self.next == self.episodes:
            self.index[slot] = None
            return
        self.index[slot], self.next = self.next, self.next + 1
        self.obs[slot], info = self.envs[slot].reset(seed=self.seed + self.index[slot])
        self.lives[slot], self.forced[slot] = info.get("lives", 0), self.fire
        self.started[slot], self.entropy[slot] = time.perf_counter(), 0.0
        if self.record is not None:
            self.start_states[slot], self.actions[slot] = emulator_state(self.envs[slot]), []

    def active(self) -> list[int]:
        return [slot for slot, index in enumerate(self.index) if index is not None]

    def step(self, slot: int, action: int, entropy: float | None = None) -> bool:
        """Step env `slot` with `action`, or with the action forced on it (`entropy`: the
        policy's at this step); when its game ends, record it and start the next. True if the
        policy's next step starts with fresh memory: a new game, or a new life with
        `episodic_life`."""
        if entropy is not None:
            self.entropy[slot] += entropy
        if self.forced[slot] is not None:
            action, self.forced[slot] = self.forced[slot], None
        self.obs[slot], _, terminated, truncated, info = self.envs[slot].step(action)
        if self.record is not None:
            self.actions[slot].append(action)
        if not (terminated or truncated):
            lives, self.lives[slot] = self.lives[slot], info.get("lives", 0)
            lost = self.lives[slot] < lives
            if lost:
                self.forced[slot] = self.fire
            return lost and self.episodic_life
        index, episode = self.index[slot], info["episode"]
        seconds = time.perf_counter() - self.started[slot]
        game = Game(float(episode["r"]), int(episode["l"]), self.seed + index, seconds)
        if entropy is not None:
            game.entropy = self.entropy[slot] / game.length
        if self.record is not None:
            state, actions = self.start_states[slot], self.actions[slot]
            game.recording = Recording(
                self.record, game.seed, state, actions, game.score, game.length
            )
        self.done[index] = game
        if self.on_game is not None:
            self.on_game(index, game)
        self.start(slot)
        return True


def action_rule(cfg: DictConfig, greedy: bool, seed: int) -> Callable[[Tensor], Tensor]:
    """How games pick actions from the policy head's `[B, A]` outputs: the argmax when
    `greedy`; else sampled from the policy, or for DQN (Q-values) epsilon-greedy at its final
    exploration rate, the policy it acted with at the end of training. Seeded by `seed`."""
    if greedy:
        return lambda outputs: outputs.argmax(-1)
    generator = torch.Generator().manual_seed(seed)
    if acts_on_q_values(cfg.algo):
        return lambda q_values: epsilon_greedy(q_values, cfg.algo.epsilon_final, generator)
    return lambda logits: torch.multinomial(logits.softmax(-1), 1, generator=generator)[:, 0]


@torch.no_grad()
def play_batched(
    games: Games, model: ActorCritic, choose: Callable[[Tensor], Tensor], policy: bool = False
) -> None:
    """Step every running game with one batched policy step until all games have ended
    (`model` is readied for acting by `prepare_inference`). With `policy` (outputs are logits,
    not Q-values) each game keeps the policy's mean entropy."""
    autocast = prepare_inference(model)
    h, c = model.initial_state(len(games.envs))
    first = torch.ones(len(games.envs), dtype=torch.bool)  # a game starts: zero its state
    while active := games.active():
        obs = torch.as_tensor(np.stack([games.obs[slot] for slot in active]))
        with autocast:
            logits, _, (h_new, c_new) = model(
                obs[None], first[active][None], (h[active], c[active])
            )
        h[active], c[active] = h_new, c_new
        outputs = logits[0].float()
        actions = choose(outputs).tolist()
        entropies = policy_entropy(outputs).tolist() if policy else [None] * len(active)
        for slot, action, entropy in zip(active, actions, entropies, strict=True):
            first[slot] = games.step(slot, action, entropy)


def score_checkpoint(path: str, episodes: int, seed: int, greedy: bool, results) -> None:
    """Evaluation process entry: play `episodes` games (greedy or sampled) with the checkpoint's
    policy and put their scores on `results`. Imports no Lightning: the fork server has its
    modules loaded."""
    become_child()
    torch.set_num_threads(1)
    cfg, model = policy_from_checkpoint(load_checkpoint(path))
    results.put([game.score for game in play(cfg, model, episodes, seed, greedy)])


def summarize(games: list[Game]) -> dict[str, float]:
    scores = [g.score for g in games]
    return {
        "episodes": len(games),
        "mean": statistics.fmean(scores),
        "std": statistics.pstdev(scores),
        "min": min(scores),
        "median": statistics.median(scores),
        "max": max(scores),
        "mean_length": statistics.fmean(g.length for g in games),
    } | mean_entropy(games)


def mean_entropy(games: list[Game]) -> dict[str, float]:
    """The policy's entropy over all the games' steps, when it is a policy: near ln(actions),
    argmax play picks among near-ties and can repeat one loop."""
    if any(g.entropy is None for g in games):
        return {}
    steps = sum(g.length for g in games)
    return {"mean_entropy": sum(g.entropy * g.length for g in games) / steps}


def one_game_repeated(games: list[Game]) -> str | None:
    """A note when every game scored the same in nearly the same steps (within 2%: the no-op
    starts shift them): argmax play in a deterministic emulator can repeat one game from every
    start, whatever sampled play scores."""
    lengths = [g.length for g in games]
    if len(games) < 2 or len({g.score for g in games}) > 1:
        return None
    if max(lengths) - min(lengths) > 0.02 * statistics.fmean(lengths):
        return None
    steps = f"{min(lengths)}-{max(lengths)}" if max(lengths) > min(lengths) else min(lengths)
    return (
        f"note: all {len(games)} games scored {games[0].score:.1f} in {steps} steps: the argmax "
        "policy repeats one game; greedy=false plays actions sampled from the policy"
    )


def as_rows(games: list[Game]) -> list[dict]:
    return [{f.name: getattr(g, f.name) for f in fields(g) if f.name != "recording"} for g in games]
