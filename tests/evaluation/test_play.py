"""Playing games in parallel, their policy steps batched, changes no game."""

import math

import pytest
import torch
from helpers.runs import compose

from atari_a3c.envs.make import env_spec
from atari_a3c.evaluation import play as play_module
from atari_a3c.models.actor_critic import build_model


def test_parallel_games_are_the_games_played_one_at_a_time(monkeypatch):
    cfg = compose("experiment=cartpole")
    spec = env_spec(cfg)
    torch.manual_seed(0)
    model = build_model(cfg.model, spec.obs_shape, spec.num_actions).eval()
    seen = []
    batched = play_module.play(cfg, model, 11, seed=5, on_game=lambda i, g: seen.append(i))
    monkeypatch.setattr(play_module, "PARALLEL_GAMES", 1)
    serial = play_module.play(cfg, model, 11, seed=5)
    assert [g.seed for g in batched] == list(range(5, 16)) and sorted(seen) == list(range(11))
    assert [(g.score, g.length) for g in batched] == [(g.score, g.length) for g in serial]
    assert len({g.length for g in batched}) > 1, "different seeds give different games"


def noop_policy(cfg):
    """A real model whose greedy choice is always NOOP: it never launches Breakout's ball."""
    spec = env_spec(cfg)
    model = build_model(cfg.model, spec.obs_shape, spec.num_actions).eval()
    with torch.no_grad():
        model.policy.weight.zero_()
        model.policy.bias.copy_(torch.tensor([10.0] + [0.0] * (spec.num_actions - 1)))
    return model


def test_evaluation_presses_fire_after_each_lost_life_in_breakout():
    limit = ("env=breakout", "env.max_episode_frames=2000")  # 500 agent steps
    cfg = compose(*limit)
    [game] = play_module.play(cfg, noop_policy(cfg), 1, seed=0, record=True)
    fires = game.recording.actions.count(1)
    assert game.length < 400 and fires == 5, "five balls launched and lost: the game is over"
    cfg = compose(*limit, "env.fire_reset=false")
    [idle] = play_module.play(cfg, noop_policy(cfg), 1, seed=0)
    assert idle.length > 470 and idle.score == 0, "without FIRE the ball never comes: time's up"


def fresh_starts(cfg) -> list[bool]:
    """Whether each policy step of one greedy game started with zeroed LSTM memory."""
    model, firsts = noop_policy(cfg), []
    forward = model.forward

    def spy(obs, first, state):
        firsts.append(bool(first))
        return forward(obs, first, state)

    model.forward = spy
    play_module.play(cfg, model, 1, seed=0)
    return firsts


def test_a_lost_life_starts_the_policy_memory_over_as_in_training():
    """Training cuts episodes at lost lives (`env.episodic_life`), zeroing the LSTM state, so
    evaluation does too: Breakout's five balls are five fresh starts, one without the cuts."""
    limit = ("env=breakout", "env.max_episode_frames=2000")
    cut = fresh_starts(compose(*limit))
    assert cut[0] and sum(cut) == 5
    whole = fresh_starts(compose(*limit, "env.episodic_life=false"))
    assert whole[0] and sum(whole) == 1


def head_policy(cfg, bias: list[float]):
    """A real model whose policy outputs are `bias` in every state."""
    model = noop_policy(cfg)
    with torch.no_grad():
        model.policy.bias.copy_(torch.tensor(bias))
    return model


def test_games_report_the_policy_entropy_argmax_play_chooses_among():
    cfg = compose("experiment=cartpole")
    uniform = play_module.play(cfg, head_policy(cfg, [0.0, 0.0]), 3, seed=0)
    assert [g.entropy for g in uniform] == pytest.approx([math.log(2)] * 3, abs=1e-6)
    sharp = play_module.play(cfg, head_policy(cfg, [3.0, 0.0]), 3, seed=0)
    p = 1 / (1 + math.exp(-3))
    expected = -(p * math.log(p) + (1 - p) * math.log(1 - p))
    summary = play_module.summarize(sharp)
    assert summary["mean_entropy"] == pytest.approx(expected, abs=1e-6)
    dqn = compose("experiment=cartpole_dqn")
    [game] = play_module.play(dqn, head_policy(dqn, [0.0, 0.0]), 1, seed=0)
    assert game.entropy is None and "mean_entropy" not in play_module.summarize([game])


def test_argmax_play_that_repeats_one_game_is_named():
    cfg = compose("env=breakout", "env.max_episode_frames=2000", "env.noop_max=0")
    games = play_module.play(cfg, noop_policy(cfg), 3, seed=0)
    note = play_module.one_game_repeated(games)
    assert note.startswith(f"note: all 3 games scored 0.0 in {games[0].length} steps")
    cartpole = compose("experiment=cartpole")
    different = play_module.play(cartpole, noop_policy(cartpole), 3, seed=0)
    assert play_module.one_game_repeated(different) is None
    assert play_module.one_game_repeated(games[:1]) is None
    shifted = [play_module.Game(70.0, steps, 0, 1.0) for steps in (525, 529)]  # no-op starts
    assert "scored 70.0 in 525-529 steps" in play_module.one_game_repeated(shifted)
    perfect = [play_module.Game(21.0, steps, 0, 1.0) for steps in (1600, 1700)]
    assert play_module.one_game_repeated(perfect) is None, "same score, other games"
