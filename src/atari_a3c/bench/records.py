"""Records: one JSON file a game and seed (`<game>-seed<s>.json`) with its scores and provenance
(command, recipe, commits, evaluation protocol, machine), written from a finished run dir and
read back, older records' missing fields inferred."""

from __future__ import annotations

import json
import shlex
from datetime import date
from pathlib import Path

from atari_a3c.bench.runs import (
    SCORES,
    START_FILE,
    checkpoint_meta,
    commit,
    final_score,
    git,
    median_fps,
    wall_seconds,
)
from atari_a3c.evaluation.scores import game_name
from atari_a3c.hardware import bf16_supported, cpu_model

# evaluation protocols: how evaluate.py carried the policy's LSTM memory across a lost life
LIFE_RESTARTS_MEMORY = "the LSTM memory restarted at each lost life"  # as training cut episodes
ONE_MEMORY_PER_GAME = "one LSTM memory per game"  # every record scored before LIFE_MEMORY_COMMIT
LIFE_MEMORY_COMMIT = "d65600d"  # evaluate.py restarts the memory at a lost life from here on


def record_of(
    run_dir: Path, command: list[str], overrides: list[str], episodes: int, evals: Path | None
) -> dict:
    """The record of a trained run dir, scored by `SCORES` (evaluations under `evals`, default
    the run dir) at this commit."""
    meta = checkpoint_meta(run_dir)
    config = meta["config"]
    wall = wall_seconds(run_dir)
    start_file = run_dir / START_FILE
    start = json.loads(start_file.read_text()) if start_file.exists() else {}
    episodic_life = config["env"].get("episodic_life")
    return {
        "game": game_name(meta["env_id"]),
        "env_id": meta["env_id"],
        "algo": config["algo"].get("name"),
        "encoder": config["model"].get("encoder"),
        "overrides": list(overrides),
        "seed": config["seed"],
        "command": shlex.join(command),
        "train_commit": start.get("commit"),  # None: the run was started outside the bench
        "train_dirty": start.get("dirty"),
        "resumed": start.get("resumed", []),
        "commit": commit(),  # the commit it was scored at
        "eval_protocol": LIFE_RESTARTS_MEMORY if episodic_life else ONE_MEMORY_PER_GAME,
        "date": date.today().isoformat(),
        "cpu": cpu_model(),
        "bf16": bf16_supported(),
        "sticky_actions": config["env"]["sticky_action_prob"],
        "frames": meta["frames"],
        "wall_clock_minutes": wall / 60,
        "frames_per_second": meta["frames"] / wall,
        "median_logged_fps": median_fps(run_dir),
        "eval_curve": [{"frames": f, "mean": m} for f, m in meta["eval_history"]],
        **{key: final_score(run_dir, key, episodes, evals) for key in SCORES},
    }


def missing_scores(result: dict) -> list[str]:
    """The `SCORES` keys a record lacks (one made before those scores were kept)."""
    return [key for key in SCORES if key not in result]


def load_records(out: Path) -> list[dict]:
    """The records under `out`, by game, then by seed in numeric order."""
    records = [json.loads(p.read_text()) for p in out.glob("*-seed*.json")]
    return sorted(records, key=lambda r: (r["game"], r["seed"]))


def overrides_of(record: dict) -> list[str]:
    """The record's train.py overrides; older records hold them only in their command."""
    if "overrides" in record:
        return record["overrides"]
    words = shlex.split(record.get("command", ""))[5:]  # after python train.py env= seed= frames=
    return [w for w in words if w != "logger=csv"]


def protocol_of(record: dict) -> str:
    """The record's evaluation protocol; a record older than the field used the newer one only if
    it was scored at a commit that descends from `LIFE_MEMORY_COMMIT`."""
    if "eval_protocol" in record:
        return record["eval_protocol"]
    scored = record.get("commit", "")
    later = bool(scored) and git("merge-base", "--is-ancestor", LIFE_MEMORY_COMMIT, scored)
    return LIFE_RESTARTS_MEMORY if later and later.returncode == 0 else ONE_MEMORY_PER_GAME
