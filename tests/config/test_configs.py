"""Every option of every config group composes and passes the checks a launch runs; the schema
declares each key once, with the values it allows."""

import re

import pytest
from helpers.runs import ROOT, compose

from atari_a3c.config.checks import validate
from atari_a3c.config.help import schema_docs
from atari_a3c.config.job import size_from_cores
from atari_a3c.config.schema import EvaluateConfig, TrainConfig
from atari_a3c.errors import ConfigError

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


@pytest.mark.parametrize("schema", [TrainConfig, EvaluateConfig])
def test_every_schema_key_has_a_description(schema):
    docs = schema_docs(schema)
    assert len(docs) >= 8 and all(doc.strip() for doc in docs.values()), docs


FREE_FORM = ("optim", "logger", "trainer")  # keywords of the classes they instantiate


def test_every_key_of_the_free_form_groups_is_described_where_it_is_set():
    for path in (p for group in FREE_FORM for p in (CONF / group).glob("*.yaml")):
        for line in path.read_text().splitlines():
            bare = line.strip()
            if ":" in bare and not bare.startswith(("#", "-")) and not bare.endswith(":"):
                assert "#" in line, f"{path.relative_to(ROOT)}: {line!r} has no comment"


@pytest.mark.parametrize("experiment", ["pong_fast", "spaceinvaders", "cartpole"])
def test_pinned_experiments_keep_the_bonus_they_were_measured_with(experiment):
    assert compose().algo.entropy_coef == 0.015
    assert compose(f"experiment={experiment}").algo.entropy_coef == 0.01


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (("algo=dqn", "algo.n_step=null"), "algo.n_step must be a positive integer, got None"),
        (("algo=ppo", "algo.clip_value=null"), "algo.clip_value must be true or false, got None"),
        (("env.screen_size=null",), "env.screen_size must be an integer >= 36, got None"),
        (("algo=impala", "algo.clip_rho=-1"), "algo.clip_rho must be > 0, got -1.0"),
    ],
)
def test_the_schema_refuses_a_value_out_of_its_range_or_a_needed_key_left_null(overrides, message):
    cfg = compose(*overrides)
    size_from_cores(cfg)
    with pytest.raises(ConfigError, match=re.escape(message)):
        validate(cfg)


def test_a_key_only_other_algorithms_need_may_be_null():
    cfg = compose("algo=a3c", "algo.n_step=null", "algo.epochs=null")
    size_from_cores(cfg)
    validate(cfg)
