"""The bench: `python -m atari_a3c.bench` trains games with a recipe and records them, or
summarizes records and a sweep's own runs. Its data path: `runs` (train.py and evaluate.py in
subprocesses) -> `records` (one JSON a game and seed, with provenance) or `sources` (run dirs,
multirun dirs, results.json) -> `scores` (per game, human-normalized) -> `tables`, `aggregates`
(rliable, Atari-5) and `plots` -> `summary` (`summary.md`, `curves.png`, `profile.png`)."""
