"""Every option of every config group composes and passes the checks a launch runs."""

from pathlib import Path

import pytest
from helpers.runs import ROOT, compose

from atari_a3c.config.checks import validate
from atari_a3c.config.job import size_from_cores

CONF = ROOT / "conf"
PLUGIN_GROUPS = ("hparams_search",)  # need the sweeper plugins; composed in the sweep tests
OPTIONS = [
    f"{group.name}={option.stem}"
    for group in sorted(CONF.iterdir())
    if group.is_dir() and group.name not in ("hydra", "evaluate", *PLUGIN_GROUPS)
    for option in sorted(group.glob("*.yaml"))
    if not option.stem.startswith("_")
]


COMPANIONS = {  # options meant for another env than Pong, or for another algo
    "algo=reinforce": ("env=cartpole",),
    "model=dueling_nature": ("algo=dqn",),
}


@pytest.mark.parametrize("override", OPTIONS)
def test_option_composes_and_validates(override):
    cfg = compose(override, *COMPANIONS.get(override, ()))
    size_from_cores(cfg)
    validate(cfg)


def test_every_group_is_covered():
    groups = {option.split("=")[0] for option in OPTIONS}
    assert groups >= {"algo", "callbacks", "debug", "env", "experiment", "logger", "model"}
    assert groups >= {"optim", "trainer"} and len(OPTIONS) >= 25, OPTIONS


def test_every_key_has_a_comment():
    for path in Path(CONF).rglob("*.yaml"):
        for line in path.read_text().splitlines():
            bare = line.strip()
            if ":" in bare and not bare.startswith(("#", "-")) and not bare.endswith(":"):
                assert "#" in line, f"{path.relative_to(ROOT)}: {line!r} has no comment"


@pytest.mark.parametrize("experiment", ["pong_fast", "spaceinvaders", "cartpole"])
def test_pinned_experiments_keep_the_bonus_they_were_measured_with(experiment):
    assert compose().algo.entropy_coef == 0.015
    assert compose(f"experiment={experiment}").algo.entropy_coef == 0.01
