"""A multirun ends with a table of its jobs, read from the `report.json` each job's run wrote
(no Lightning here: Hydra loads this callback before any job starts)."""

from __future__ import annotations

import json
from pathlib import Path

from hydra.experimental.callback import Callback
from omegaconf import DictConfig, OmegaConf

REPORT = "report.json"  # in each run dir


def best_evaluation(evals: list) -> tuple | None:
    """The (frames, mean) of the best evaluation, the later of equal means (as `best.ckpt`)."""
    return max(reversed(evals), key=lambda point: point[1]) if evals else None


def write_report(job_dir: Path, run_dir: Path | str, frames: int, evals: list) -> None:
    """`report.json` in `job_dir`: the run's dir and frames, its evaluation mean at those
    frames and its best one."""
    best = best_evaluation(evals)
    record = {"run_dir": str(run_dir), "frames": frames, "final_eval_mean": dict(evals).get(frames)}
    record["best_eval_mean"] = best[1] if best else None
    (Path(job_dir) / REPORT).write_text(json.dumps(record))


def _mean(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


class JobTable(Callback):
    """At the end of a multirun, one row per job: its own overrides (those all jobs share
    aside), frames, final and best
    evaluation means and run dir (from each job's `report.json`; none: the job failed; a job
    that found its run finished shows that run's)."""

    def on_multirun_end(self, config: DictConfig, **kwargs) -> None:
        sweep = Path(config.hydra.sweep.dir)
        rows = []
        job_dirs = sorted(
            (path.parents[1] for path in sweep.glob("*/.hydra/overrides.yaml")), key=_job_number
        )
        each = {d: OmegaConf.load(d / ".hydra" / "overrides.yaml") for d in job_dirs}
        shared = set.intersection(*(set(o) for o in each.values())) if each else set()
        for job_dir in job_dirs:
            overrides = " ".join(o for o in each[job_dir] if o not in shared)
            report = job_dir / REPORT
            if not report.exists():  # the job failed (its train.log says why)
                rows.append((overrides, "failed", "-", "-", str(job_dir.resolve())))
                continue
            job = json.loads(report.read_text())
            row = (overrides, f"{job['frames']:,}", _mean(job["final_eval_mean"]))
            rows.append((*row, _mean(job["best_eval_mean"]), job["run_dir"]))
        if not rows:
            return
        header = ("overrides", "frames", "final eval", "best eval", "run dir")
        widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
        print(f"multirun of {len(rows)} jobs in {sweep}:")
        for row in [header, *rows]:
            cells = (str(cell).ljust(width) for cell, width in zip(row, widths, strict=True))
            print("  " + "  ".join(cells).rstrip())


def _job_number(path: Path) -> tuple[int, str]:
    return (int(path.name), "") if path.name.isdigit() else (1 << 30, path.name)
