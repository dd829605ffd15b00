"""Every game ale-py ships by its name: `env=<game>` composes, passes train.py's checks, and its
training env steps; a few games train end to end."""

import numpy as np
import pytest
from helpers.runs import ROOT, compose, run_script

from atari_a3c.config.cli import check_command_line
from atari_a3c.config.job import precheck_job, size_from_cores
from atari_a3c.envs.games import GAMES
from atari_a3c.envs.make import env_spec
from atari_a3c.envs.vector import TrainingEnvs


def test_the_games_are_ale_pys_by_their_short_lower_case_names():
    assert len(GAMES) >= 100
    assert GAMES["asterix"] == "ALE/Asterix-v5"
    assert GAMES["montezumarevenge"] == "ALE/MontezumaRevenge-v5"
    listed = run_script("src/atari_a3c/envs/games.py", timeout=60)
    assert listed.stdout.split()[::2] == list(GAMES)


def test_a_few_games_without_files_of_their_own_train_in_one_sweep(tmp_path):
    games = ("asterix", "montezumarevenge")
    short = ("callbacks.eval.episodes=1", "env.max_episode_frames=2000", "logger=none")
    argv = ("-m", f"hydra.sweep.dir={tmp_path}", f"env={','.join(games)}", "frames=20000", *short)
    result = run_script("train.py", *argv, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    table = result.stdout[result.stdout.index("multirun of 2 jobs") :].splitlines()
    assert [row.split()[:2] for row in table[2:4]] == [[f"env={g}", "20,160"] for g in games]
    assert result.stdout.count("recipe: algo=impala (conf/train.yaml), model=nature_lstm") == 2


@pytest.mark.slow
@pytest.mark.parametrize("game", list(GAMES))
def test_every_game_passes_the_checks_and_its_training_env_steps(game):
    check_command_line(ROOT / "conf", "train", precheck_job, [f"env={game}", "frames=20000"])
    cfg = compose(f"env={game}")
    size_from_cores(cfg)
    spec, envs = env_spec(cfg), TrainingEnvs(cfg, 2)
    try:
        assert envs.reset(seed=0).shape == (2, *spec.obs_shape)
        for action in np.random.default_rng(0).integers(0, spec.num_actions, (50, 2)):
            assert envs.step(action).obs.shape == (2, *spec.obs_shape)
    finally:
        envs.close()
