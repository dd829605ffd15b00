"""A game's file may choose its recipe (Qbert: PPO); the command line wins; each run names where
its algorithm and model were chosen."""

import pytest
from helpers.runs import ROOT, hydra_context

from atari_a3c.config.recipe import recipe_line


def composed(*overrides: str):
    from hydra import compose

    with hydra_context():
        return compose("train", overrides=["logger=none", *overrides], return_hydra_config=True)


@pytest.mark.parametrize(
    ("overrides", "algo", "line"),
    [
        (
            ["env=qbert"],
            "ppo",
            "algo=ppo (conf/env/qbert.yaml), model=nature_lstm (conf/train.yaml)",
        ),
        (
            ["env=qbert", "algo=impala"],
            "impala",
            "algo=impala (the command line), model=nature_lstm",
        ),
        (["env=asterix"], "impala", "algo=impala (conf/train.yaml), model=nature_lstm (conf/train"),
        (["env=pong", "model=impala_resnet"], "impala", "model=impala_resnet (the command line)"),
        (
            ["experiment=cartpole"],
            "a3c",
            "algo=a3c (conf/experiment/cartpole.yaml), model=mlp_lstm (conf/exp",
        ),
    ],
)
def test_the_recipe_is_the_games_choice_unless_the_command_line_names_one(overrides, algo, line):
    cfg = composed(*overrides)
    assert cfg.algo.name == algo
    recipe = recipe_line(cfg.hydra.runtime.choices, overrides, ROOT / "conf")
    assert recipe.startswith("recipe: ") and line in recipe
