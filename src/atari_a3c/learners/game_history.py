"""The learner's record of finished training games: scores against env frames, kept in
checkpoints and drawn by `evaluation.curves`."""

from __future__ import annotations

import numpy as np

MAX_POINTS = 4096


class GameHistory:
    """Every finished training game's score against frames, in bounded memory: when the list
    holds `max_points`, neighbours merge pairwise into their mean (weighted by games)."""

    def __init__(self, points=(), max_points: int = MAX_POINTS):
        self.max_points = max_points
        self.points = [(*point, 1)[:3] for point in points]  # (frames, mean score, games)

    def add(self, frames: int, scores: list[float]) -> None:
        self.points.extend((frames, score, 1) for score in scores)
        if len(self.points) >= self.max_points:
            self.points = [_merge(*self.points[i : i + 2]) for i in range(0, len(self.points), 2)]


def _merge(*points: tuple[float, float, int]) -> tuple[float, float, int]:
    frames, scores, games = np.array(points, dtype=float).T
    return (
        float(np.average(frames, weights=games)),
        float(np.average(scores, weights=games)),
        int(games.sum()),
    )
