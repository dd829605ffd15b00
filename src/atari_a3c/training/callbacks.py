"""Callbacks: actor lifecycle, frame-based checkpoints, stopping when solved, W&B checkpoint
artifacts and a progress bar in env frames."""

from __future__ import annotations

import time
from pathlib import Path

import lightning as L
import psutil
from lightning.pytorch.callbacks import Callback, ProgressBar
from lightning.pytorch.loggers import WandbLogger
from tqdm.auto import tqdm

from atari_a3c.actors.pool import ActorPool
from atari_a3c.errors import ActorFailure
from atari_a3c.evaluation.curves import plot_returns


class ActorSync(Callback):
    """The one owner of the running actor pool: starts it (or sets the actors the training job
    launched to work) with the learner's (possibly restored) weights, publishes the weights
    after every update, logs policy lag and restarts (and once the seconds from the process's
    start to its first update), stops it."""

    def __init__(self, pool: ActorPool):
        self.pool = pool
        self.updated = False

    def on_fit_start(self, trainer, pl_module) -> None:
        self.pool.weights.publish(pl_module.model, pl_module.frames)
        self.pool.start(rank=trainer.global_rank)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        lag = self.pool.weights.version - batch["version"].float().mean()
        self.pool.weights.publish(pl_module.model, pl_module.frames)
        metrics = {"perf/policy_lag": lag, "perf/actor_restarts": float(self.pool.restarts)}
        if not self.updated:
            self.updated = True
            metrics["perf/startup_s"] = time.time() - psutil.Process().create_time()
        pl_module.add_metrics(metrics)

    def on_fit_end(self, trainer, pl_module) -> None:
        self.pool.stop()

    def on_exception(self, trainer, pl_module, exception) -> None:
        self.pool.stop()


class LastCheckpoint(Callback):
    """Writes `checkpoints/last.ckpt` and `returns.png` every `every_frames`, when training ends
    and once more after the final evaluations."""

    def __init__(self, run_dir: Path, every_frames: int):
        self.path = Path(run_dir) / "checkpoints" / "last.ckpt"
        self.curve = Path(run_dir) / "returns.png"
        self.every_frames = every_frames
        self.next_save = every_frames
        self.saved_frames: int | None = None  # the frames of the weights in last.ckpt

    def on_train_start(self, trainer, pl_module) -> None:
        self.next_save = (pl_module.frames // self.every_frames + 1) * self.every_frames
        if self.path.exists():  # resumed from it
            self.saved_frames = pl_module.frames

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if pl_module.frames >= self.next_save:
            self.next_save += self.every_frames
            self.save(trainer, pl_module)

    def on_train_end(self, trainer, pl_module) -> None:
        self.save(trainer, pl_module)  # before any final evaluation, which a signal may cut short

    def on_fit_end(self, trainer, pl_module) -> None:
        self.save(trainer, pl_module)  # again, with the scores of the final evaluations

    def on_exception(self, trainer, pl_module, exception) -> None:
        if isinstance(exception, ActorFailure):  # the learner itself is sound: keep its progress
            self.save(trainer, pl_module)

    def save(self, trainer, pl_module) -> None:
        trainer.save_checkpoint(self.path, weights_only=False)
        self.saved_frames = pl_module.frames
        if trainer.is_global_zero:
            history, evals = pl_module.game_history, pl_module.eval_history
            cfg = pl_module.cfg
            plot_returns(self.curve, history, evals, cfg.env.id, cfg.callbacks.eval.greedy)


class StopWhenSolved(Callback):
    """Ends training once the mean score of the last 100 games reaches `score` (a solved task,
    such as CartPole's 195), on every rank at once; the final evaluation and saves still run."""

    def __init__(self, score: float):
        self.score = score

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        games = pl_module.recent_returns
        solved = len(games) == games.maxlen and pl_module.mean_return >= self.score
        if trainer.strategy.reduce_boolean_decision(solved, all=False):
            trainer.should_stop = True


class CheckpointArtifacts(Callback):
    """When training ends, logs `last.ckpt` (alias `latest`) and `best.ckpt` (alias `best`) as
    versions of the W&B model artifact `model-<run id>`, with frames, evaluation mean, env and
    model as metadata. Offline runs keep them for `wandb sync`."""

    def __init__(self, dirpath: Path):
        self.dir = Path(dirpath)

    def on_fit_end(self, trainer, pl_module) -> None:
        if not (trainer.is_global_zero and isinstance(trainer.logger, WandbLogger)):
            return
        import wandb

        run = trainer.logger.experiment
        evals = pl_module.eval_history
        best = max(evals, key=lambda entry: entry[1], default=None)
        final = evals[-1] if evals and evals[-1][0] == pl_module.frames else None
        for name, alias, scored in (("last", "latest", final), ("best", "best", best)):
            path = self.dir / f"{name}.ckpt"
            if not path.exists():
                continue
            meta = {
                "env_id": pl_module.cfg.env.id,
                "model": pl_module.cfg.model.encoder,
                "frames": scored[0] if scored else pl_module.frames,
                "eval_mean": scored[1] if scored else None,
            }
            artifact = wandb.Artifact(f"model-{run.id}", type="model", metadata=meta)
            artifact.add_file(str(path), name=path.name)
            run.log_artifact(artifact, aliases=[alias])


class FrameProgressBar(ProgressBar):
    """One bar in env frames: done / budget, frames per second, recent mean game score."""

    def __init__(self):
        super().__init__()
        self.bar: tqdm | None = None
        self.enabled = True

    def disable(self) -> None:
        self.enabled = False

    def enable(self) -> None:
        self.enabled = True

    def on_train_start(self, trainer: L.Trainer, pl_module) -> None:
        if self.enabled and trainer.is_global_zero:
            self.bar = tqdm(
                total=pl_module.cfg.frames,
                initial=pl_module.frames,
                unit="frame",
                unit_scale=True,
                dynamic_ncols=True,
                desc="train",
            )

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        if self.bar is not None:
            self.bar.total = max(self.bar.total, pl_module.frames)  # the last batch may overshoot
            self.bar.update(pl_module.frames - self.bar.n)
            self.bar.set_postfix(mean_return=f"{pl_module.mean_return:.1f}", refresh=False)

    def on_train_end(self, trainer, pl_module) -> None:
        if self.bar is not None:
            self.bar.close()
