"""Full games in a background process every so many frames; keeps the best checkpoint."""

from __future__ import annotations

import json
import logging
import os
import queue
import statistics
from collections.abc import Callable
from pathlib import Path

import torch.multiprocessing as mp
from lightning.pytorch.callbacks import Callback

from atari_a3c.actors.child_process import (
    START_ERRORS,
    context,
    restart_fork_server,
    start_fork_server,
)
from atari_a3c.evaluation.play import score_checkpoint
from atari_a3c.evaluation.scores import human_normalized

log = logging.getLogger(__name__)


class PeriodicEvaluation(Callback):
    """Every `every_frames` frames, snapshot a checkpoint and score it in its own process, with
    greedy (argmax) actions or, with `greedy` false, actions sampled from the policy.

    Logs `eval/return_mean` (and std, and for the 57 games of the standard tables
    `eval/human_normalized`) at the snapshot's frame count when the games are done, keeps
    `best.ckpt` by that mean (the later of equal ones), and scores the final weights once more when
    training ends.

    Each result is also appended to `evaluations.jsonl` beside the checkpoints: an evaluation
    finishes after the `last.ckpt` written at its snapshot, so a run resumed from that file learns
    the result (and `best.ckpt`'s score, which a worse one must not replace) from the record.
    """

    def __init__(
        self,
        dirpath: Path,
        env_id: str,
        every_frames: int,
        episodes: int,
        seed: int,
        at_end: bool,
        greedy: bool = True,
        stopping: Callable[[], bool] = lambda: False,
    ):
        self.dir, self.env_id = Path(dirpath), env_id
        self.stopping = stopping  # a signal asked to stop: end a running evaluation, start none
        self.every_frames, self.episodes, self.seed = every_frames, episodes, seed
        self.at_end, self.greedy = at_end, greedy
        self.ctx = context()
        self.results = self.ctx.Queue()
        self.process: mp.Process | None = None
        self.snapshot_frames = 0
        self.next_eval = every_frames
        self.best = float("-inf")

    @property
    def candidate(self) -> Path:
        return self.dir / "eval-candidate.ckpt"

    @property
    def record(self) -> Path:
        return self.dir / "evaluations.jsonl"

    def on_train_start(self, trainer, pl_module) -> None:
        self.next_eval = (pl_module.frames // self.every_frames + 1) * self.every_frames
        if trainer.is_global_zero:
            self._recall(pl_module)

    def _recall(self, pl_module) -> None:
        """A resumed run's evaluations from the record, those after its `last.ckpt` included; a
        new run (no frames yet) starts the record afresh."""
        if pl_module.frames == 0:
            self.record.unlink(missing_ok=True)
            return
        recorded = self._recorded()
        history = dict(pl_module.eval_history)
        for frames, mean in recorded:
            if frames <= pl_module.frames:  # later ones belong to the steps being redone
                history.setdefault(frames, mean)
        pl_module.eval_history = sorted(history.items())
        means = [mean for _, mean in recorded + pl_module.eval_history]
        self.best = max(means, default=float("-inf"))

    def _recorded(self) -> list[tuple[int, float]]:
        """(frames, mean) of every evaluation in the record; a line cut short by a kill is
        skipped."""
        if not self.record.exists():
            return []
        points = []
        for line in self.record.read_text().splitlines():
            try:
                point = json.loads(line)
                points.append((int(point["frames"]), float(point["mean"])))
            except (ValueError, KeyError, TypeError):
                log.warning("skipping an unreadable line of %s", self.record)
        return points

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx) -> None:
        self._collect(trainer, pl_module, block=False)
        if pl_module.frames < self.next_eval:  # frames count every rank: the same on all
            return
        if trainer.strategy.broadcast(self.process is None, src=0):  # rank 0's evaluator is free
            self.next_eval = (pl_module.frames // self.every_frames + 1) * self.every_frames
            self._launch(trainer, pl_module)

    def on_train_end(self, trainer, pl_module) -> None:
        self._collect(trainer, pl_module, block=True)
        stop = trainer.strategy.reduce_boolean_decision(self.stopping(), all=False)
        if self.at_end and not stop and self.snapshot_frames != pl_module.frames:
            self._launch(trainer, pl_module)
            self._collect(trainer, pl_module, block=True)

    def on_exception(self, trainer, pl_module, exception) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.join()
            self.process = None

    def _launch(self, trainer, pl_module) -> None:
        self.snapshot_frames = pl_module.frames  # on every rank: on_train_end decides by it
        trainer.save_checkpoint(
            self.candidate, weights_only=False
        )  # every rank takes part; rank 0 writes
        if trainer.is_global_zero:
            self._score_candidate()

    def _score_candidate(self) -> None:
        args = (str(self.candidate), self.episodes, self.seed, self.greedy, self.results)
        process = self.ctx.Process(target=score_checkpoint, args=args, daemon=True)
        try:
            start_fork_server()  # a new one if the last died
            process.start()
        except START_ERRORS as error:  # like a dead evaluation: the next one gets a fresh server
            log.warning("evaluation process did not start (%r); training goes on", error)
            self.candidate.unlink(missing_ok=True)
            restart_fork_server()
            return
        self.process = process

    def _scores(self, block: bool) -> list[float] | None:
        """The running evaluation's scores; [] if its process died or a signal ended it, None if
        it is still playing."""
        while True:
            if self.stopping():
                self.process.kill()
                return []
            alive = self.process.is_alive()
            try:
                return self.results.get(timeout=0.5 if block else 0.001)
            except queue.Empty:
                if not alive:
                    code = self.process.exitcode
                    log.warning("evaluation process died (exit code %s); training goes on", code)
                    return []
                if not block:
                    return None

    def _collect(self, trainer, pl_module, block: bool) -> None:
        """Take the running evaluation's scores if they are in (waiting for them if `block`)."""
        if self.process is None:
            return
        scores = self._scores(block)
        if scores is None:
            return
        self.process.join()
        self.process = None
        if not scores:
            self.candidate.unlink(missing_ok=True)
            return
        mean, std = statistics.fmean(scores), statistics.pstdev(scores)
        pl_module.eval_history.append((self.snapshot_frames, mean))
        point = {"frames": self.snapshot_frames, "mean": mean, "std": std}
        with self.record.open("a") as record:  # before best.ckpt moves: a resume never forgets it
            record.write(json.dumps(point) + "\n")
        if trainer.logger:
            metrics = {"eval/return_mean": mean, "eval/return_std": std}
            if (normalized := human_normalized(self.env_id, mean)) is not None:
                metrics["eval/human_normalized"] = normalized
            metrics["charts/frames"] = self.snapshot_frames
            trainer.logger.log_metrics(metrics, trainer.global_step)
        if mean >= self.best:  # a tie: the weights trained longer
            self.best = mean
            os.replace(self.candidate, self.dir / "best.ckpt")
        else:
            self.candidate.unlink()
