"""Sources: what a summary reads besides the bench's records: train.py run dirs, Hydra multirun
dirs and their jobs, and evaluate.py's `results.json`. Each run's checkpoints are scored as the
records are (`runs.SCORES`) unless it holds those evaluations already, of the checkpoints as they
are now (an evaluation of an earlier one, as a run that trained on leaves it, is played again);
the evaluations are written under the summary's own dir and nothing in a run dir changes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from omegaconf import OmegaConf

from atari_a3c.bench.records import load_records, record_of
from atari_a3c.bench.runs import checkpoint_meta
from atari_a3c.evaluation.scores import game_name

RESULTS = "results.json"  # what evaluate.py writes in its output_dir
RESULTS_PROTOCOL = "as evaluate.py played it (a results.json)"  # its memory rule is not stored
# a run's train.py overrides that the records keep apart from the recipe
RUN_KEYS = ("env=", "seed=", "frames=", "logger=", "hydra.", "ckpt_path=")


def is_run_dir(path: Path) -> bool:
    return (path / ".hydra" / "config.yaml").exists() or (path / "checkpoints").is_dir()


def run_dirs(path: Path) -> list[Path]:
    """`path` if it is a run dir, else the run dirs in it (a multirun's jobs, in job order)."""
    if is_run_dir(path):
        return [path]
    jobs = [p for p in path.iterdir() if p.is_dir() and is_run_dir(p)]
    return sorted(jobs, key=job_order)


def job_order(path: Path) -> tuple[int, int, str]:
    """Hydra's numbered jobs in their order, then other run dirs by name."""
    return (0, int(path.name), "") if path.name.isdigit() else (1, 0, path.name)


def evaluations_dir(evals: Path, run_dir: Path) -> Path:
    """A run's own dir under `evals`, named for the run and where it is."""
    where = hashlib.sha1(str(run_dir.resolve()).encode()).hexdigest()[:8]
    return evals / f"{run_dir.name}-{where}"


def run_record(run_dir: Path, episodes: int, evals: Path) -> dict:
    """The record of a run trained outside the bench, scored under `evals`."""
    overrides = checkpoint_meta(run_dir).get("overrides", [])
    recipe = [o for o in overrides if not o.startswith(RUN_KEYS)]
    command = ["python", "train.py", *overrides]
    return record_of(run_dir, command, recipe, episodes, evaluations_dir(evals, run_dir))


def seed_of(results: Path) -> int | None:
    """The training seed of the run dir a `results.json` lies in, if it lies in one."""
    for parent in results.parents[:3]:
        if (config := parent / ".hydra" / "config.yaml").exists():
            return OmegaConf.load(config).get("seed")
    return None


def results_record(results: Path) -> dict:
    """A record of one evaluate.py summary: greedy or sampled by how it played (a summary that
    does not say counts as greedy); its seed is that of the run dir it lies in, if any."""
    report = json.loads(results.read_text())
    key = "final_sampled" if report.get("actions") == "sampled" else "final"
    return {
        "game": game_name(report["env_id"]),
        "env_id": report["env_id"],
        "seed": seed_of(results),
        key: report["summary"],
        "frames": report["frames_trained"],
        "eval_protocol": RESULTS_PROTOCOL,
        "source": str(results),
    }


def gather(sources: list[Path], episodes: int, evals: Path) -> list[dict]:
    """The records of `sources` (records dirs, run dirs, multirun dirs, results.json files), by
    game and seed; a run without a checkpoint is named and skipped."""
    records: list[dict] = []
    for source in sources:
        if source.is_file():
            record = results_record(source)
            if record["seed"] is None:  # numbered in turn among its game's
                record["seed"] = 1 + sum(r["game"] == record["game"] for r in records)
            records.append(record)
        elif any(source.glob("*-seed*.json")):
            records += load_records(source)
        elif not (found := run_dirs(source)):
            print(f"{source}: no records, run dirs or {RESULTS}, skipped")
        else:
            for run_dir in found:
                if not (run_dir / "checkpoints" / "last.ckpt").exists():
                    print(f"{run_dir}: no checkpoints/last.ckpt, skipped")
                    continue
                records.append(run_record(run_dir, episodes, evals))
    return sorted(records, key=lambda r: (r["game"], r["seed"]))
