"""The evaluate task: checkpoint -> env and model rebuilt from its config -> games -> report."""

from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path

import torch
from omegaconf import DictConfig, OmegaConf

from atari_a3c.checkpoints.files import (
    KEY,
    check_compatible,
    load_checkpoint,
    policy_from_checkpoint,
)
from atari_a3c.checkpoints.sources import locate
from atari_a3c.config.checks import check_known_keys, check_values, validate_env
from atari_a3c.config.cli import unwritable
from atari_a3c.config.schema import CONF_ENV, EnvConfig, EvaluateConfig
from atari_a3c.envs.games import GAMES
from atari_a3c.envs.make import env_spec
from atari_a3c.errors import ConfigError
from atari_a3c.evaluation import recorded
from atari_a3c.evaluation.compare import paired_rows, print_rows
from atari_a3c.evaluation.play import Game, as_rows, one_game_repeated, play, summarize
from atari_a3c.evaluation.scores import RANDOM_AND_HUMAN, game_name, human_normalized
from atari_a3c.evaluation.video import save_videos

OUTPUTS = ("results.*", "comparison.json", "game-*.gif", "replays/game-*.npz", "videos/*.mp4")


def env_id_for(name: str) -> str:
    """A game's name (`breakout`), a conf/env name (`cartpole`) or a gymnasium id
    (`ALE/Breakout-v5`) -> the gymnasium id."""
    if name in GAMES:
        return GAMES[name]
    path = CONF_ENV / f"{name}.yaml"
    return str(OmegaConf.load(path).id) if path.exists() else name


def checkpoint_refs(cfg: DictConfig) -> list[str]:
    """`ckpt=a.ckpt` or `ckpt=[a.ckpt,b.ckpt]` (a comparison)."""
    return [str(ref) for ref in cfg.ckpt] if OmegaConf.is_list(cfg.ckpt) else [str(cfg.ckpt)]


def check_request(cfg: DictConfig) -> list[tuple[dict, DictConfig]]:
    """Validate the command line and the checkpoints; returns each checkpoint and its env config."""
    check_known_keys(cfg)
    check_values(cfg, EvaluateConfig)
    if cfg.render == "human" and not os.environ.get("DISPLAY"):
        raise ConfigError("render=human needs a display (DISPLAY is not set); use render=true")
    if cfg.output_dir:
        check_writable(Path(cfg.output_dir))
    if cfg.replay is not None:
        if cfg.ckpt is not None:
            raise ConfigError("replay plays recorded actions: it takes no ckpt")
        recorded.load(cfg.replay)
        return []
    if cfg.ckpt is None:
        raise ConfigError("ckpt= (a checkpoint to play) or replay= (a recorded game) is needed")
    refs = checkpoint_refs(cfg)
    if len(refs) > 1 and cfg.render:
        raise ConfigError("render plays one checkpoint; compare checkpoints without it")
    loaded = [load_request(cfg, ref) for ref in refs]
    games = sorted({train_cfg.env.id for _, train_cfg in loaded})
    if len(games) > 1:
        raise ConfigError(f"ckpt: the checkpoints play different games ({', '.join(games)})")
    return loaded


def check_writable(out: Path) -> None:
    """`output_dir` is, or can be made, a directory this process writes into."""
    if problem := unwritable(out):
        raise ConfigError(f"output_dir={out}: {problem}")


def load_request(cfg: DictConfig, ref: str) -> tuple[dict, DictConfig]:
    """One checkpoint and the training config it plays with (on `cfg.env` if named)."""
    checkpoint = load_checkpoint(locate(ref))
    train_cfg = OmegaConf.create(checkpoint[KEY]["config"])
    if cfg.env:  # env keys added since the checkpoint was saved take their defaults
        defaults = OmegaConf.to_container(OmegaConf.structured(EnvConfig))
        train_cfg.env = OmegaConf.merge(defaults, train_cfg.env)
        train_cfg.env.id = env_id_for(str(cfg.env))
        validate_env(train_cfg)
        spec = env_spec(train_cfg)
        check_compatible(checkpoint, train_cfg.env.id, spec.obs_shape, spec.num_actions)
    return checkpoint, train_cfg


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes // 60:02d}h {minutes % 60:02d}m {secs:02d}s"


def print_table(summary: dict[str, float]) -> None:
    print("\n" + "  ".join(f"{k:>11}" for k in summary))
    print(
        "  ".join(f"{v:>11.2f}" if isinstance(v, float) else f"{v:>11}" for v in summary.values())
    )


def compare(cfg: DictConfig, loaded: list[tuple[dict, DictConfig]]) -> float:
    """Every checkpoint plays the same `episodes` games; one table with paired differences."""
    results = []
    for ref, (checkpoint, train_cfg) in zip(checkpoint_refs(cfg), loaded, strict=True):
        _, model = policy_from_checkpoint(checkpoint)
        games = play(train_cfg, model, cfg.episodes, cfg.seed, cfg.greedy)
        results.append((ref, games))
        print(f"{ref}: {summarize(games)['mean']:.2f} over {cfg.episodes} games", flush=True)
    rows = paired_rows(results)
    print_rows(rows)
    if cfg.output_dir:
        out = Path(cfg.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        report = {"env_id": loaded[0][1].env.id, "checkpoints": rows}
        report["games"] = [as_rows(games) for _, games in results]
        (out / "comparison.json").write_text(json.dumps(report, indent=2))
        print(f"results: {out / 'comparison.json'}")
    return rows[0]["mean"]


def clear_outputs(out: Path | None) -> None:
    """An earlier evaluation's files in a reused `output_dir` go, so none outlives its results."""
    for pattern in OUTPUTS if out else ():
        for path in out.glob(pattern):
            path.unlink()


def announce(cfg: DictConfig, env_id: str) -> None:
    """What is played: the env, and whether the actions are the policy's greedy or sampled."""
    actions = "greedy (argmax) actions" if cfg.greedy else "actions sampled from the policy"
    print(f"{env_id}: {cfg.episodes} games, {actions}, seeds from {cfg.seed}", flush=True)


def write_results(out: Path, games: list[Game], summary: dict, meta: dict, greedy: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    report = {"env_id": meta["env_id"], "frames_trained": meta["frames"], "summary": summary}
    report["actions"] = "greedy" if greedy else "sampled"
    report["games"] = as_rows(games)
    (out / "results.json").write_text(json.dumps(report, indent=2))
    with (out / "results.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(report["games"][0]))
        writer.writeheader()
        writer.writerows(report["games"])


def output_dir(cfg: DictConfig) -> Path | None:
    """Where results go: `output_dir`, or a dated dir under outputs/evaluate when rendering."""
    if cfg.output_dir:
        return Path(cfg.output_dir)
    return Path("outputs/evaluate") / time.strftime("%Y-%m-%d/%H-%M-%S") if cfg.render else None


def evaluate(cfg: DictConfig) -> float:
    """Play the games, print one line each and a summary; write results, replays and videos if
    asked. Several checkpoints are compared on identical games instead; a replay plays again.
    Plays on one thread, as the actors do: the policy's small batched steps gain little from a
    second one, and with a training run busy on the cores, threads that wait for each other made
    a game 8x slower."""
    loaded = check_request(cfg)
    torch.set_num_threads(1)
    if cfg.replay is not None:
        return recorded.play_recording(cfg.replay, output_dir(cfg), cfg.render)
    out = output_dir(cfg)
    clear_outputs(out)
    announce(cfg, loaded[0][1].env.id)
    if len(loaded) > 1:
        return compare(cfg, loaded)
    checkpoint, train_cfg = loaded[0]
    _, model = policy_from_checkpoint(checkpoint)
    video_dir = out / "videos" if cfg.render is True else None
    scores: list[float] = []
    start = time.perf_counter()

    def report(i: int, game: Game) -> None:
        scores.append(game.score)
        print(
            f"game {i + 1}/{cfg.episodes}  time {clock(time.perf_counter() - start)}  "
            f"score {game.score:.1f}  length {game.length}  mean {sum(scores) / len(scores):.2f}",
            flush=True,
        )

    render_mode = "human" if cfg.render == "human" else None
    games = play(
        train_cfg,
        model,
        cfg.episodes,
        cfg.seed,
        cfg.greedy,
        render_mode,
        video_dir,
        report,
        record=out is not None,
    )
    summary = summarize(games)
    print_table(summary)
    if (normalized := human_normalized(train_cfg.env.id, summary["mean"])) is not None:
        summary["human_normalized"] = normalized
        random, human = RANDOM_AND_HUMAN[game_name(train_cfg.env.id)]
        print(f"human-normalized mean: {normalized:.3f} (random {random:g}, human {human:g})")
    if cfg.greedy and (note := one_game_repeated(games)):
        print(note)
    if out is not None:
        write_results(
            out, games, summary, checkpoint[KEY] | {"env_id": train_cfg.env.id}, cfg.greedy
        )
        for i, game in enumerate(games):
            recorded.save(game.recording, out / "replays" / f"game-{i + 1}.npz")
        print(f"results: {out / 'results.json'}; replays: {out / 'replays'}")
    if video_dir is not None:
        save_videos(video_dir, out, train_cfg.env.id)
    return summary["mean"]
