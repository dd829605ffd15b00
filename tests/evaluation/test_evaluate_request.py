"""evaluate.py's command line: the checkpoints it names (files, shipped agents, W&B artifacts) and
its values, checked before any game starts."""

import re

import pytest
from helpers.runs import ROOT, run_script

from atari_a3c.checkpoints.sources import locate, shipped_agents
from atari_a3c.config.cli import check_command_line
from atari_a3c.errors import BadInput, CheckpointError


def evaluate_check(cfg, overrides):
    from atari_a3c.evaluation.task import check_request

    check_request(cfg)


def test_a_shipped_agent_is_found_by_its_game():
    assert "pretrained/pong" in shipped_agents()
    path = locate("pretrained/pong")
    assert path.is_file() and path.suffix == ".ckpt"


def test_an_unknown_shipped_agent_lists_the_shipped_ones():
    with pytest.raises(CheckpointError, match="no shipped agent pretrained/tetris; shipped: "):
        locate("pretrained/tetris")


def test_a_wandb_artifact_without_a_server_is_one_line(monkeypatch):
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    ref = "ckpt=wandb:someone/atari-a3c/model-abc123:best"
    with pytest.raises(BadInput, match="W&B artifact 'someone/atari-a3c/model-abc123:best' not"):
        check_command_line(ROOT / "conf" / "evaluate", "evaluate", evaluate_check, [ref])


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("episodes=0", "episodes must be a positive integer"),
        ("seed=-1", "seed must be an integer"),
        ("render=human", "render=human needs a display (DISPLAY is not set)"),
        ("render=true", "render plays one checkpoint; compare checkpoints without it"),
        ("replay=game-1.npz", "replay plays recorded actions: it takes no ckpt"),
        ("greedy=2", "greedy must be true or false, got 2"),
        ("greedy=yes", "greedy must be true or false, got 'yes'"),
    ],
)
def test_nonsense_values_are_one_line(monkeypatch, override, message):
    monkeypatch.delenv("DISPLAY", raising=False)
    with pytest.raises(BadInput, match=re.escape(message)):
        check_command_line(
            ROOT / "conf" / "evaluate", "evaluate", evaluate_check, ["ckpt=[a,b]", override]
        )


@pytest.mark.parametrize("where", ["a-file", "a-file/sub"])
def test_an_output_dir_that_cannot_be_written_is_one_line(tmp_path, where):
    (tmp_path / "a-file").write_text("results of another run")
    out = f"output_dir={tmp_path / where}"
    with pytest.raises(BadInput, match="a-file is a file, not a directory"):
        check_command_line(
            ROOT / "conf" / "evaluate", "evaluate", evaluate_check, ["ckpt=pretrained/pong", out]
        )
    assert (tmp_path / "a-file").read_text() == "results of another run"


def test_neither_a_checkpoint_nor_a_replay_is_one_line():
    with pytest.raises(BadInput, match=r"ckpt= \(a checkpoint to play\) or replay= \(a recorded"):
        check_command_line(ROOT / "conf" / "evaluate", "evaluate", evaluate_check, [])


def test_an_unknown_key_is_one_line_naming_the_closest_known_one():
    result = run_script("evaluate.py", "ckpt=pretrained/pong", "+episodez=3", timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: episodez: unknown key; did you mean episodes?"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["ckpt=pretrained/pong", "episode=3"], "episode: unknown key; did you mean episodes?"),
        (["ckpt=pretrained/pong", "--episodes", "3"], "without dashes: episodes=3"),
        (["ckpt=pretrained/pong", "env.id=Pong-v4"], "env.id: env holds one value, not keys"),
        (["pretrained/pong"], "pretrained/pong: settings are key=value; did you mean ckpt="),
        (["ckpt=pretrained/pong", "render"], "render: settings are key=value; did you mean ren"),
        (["ckpt=a.ckpt,b.ckpt"], "several values are a list here: ckpt=[a.ckpt,b.ckpt]"),
        ([f"ckpt={ROOT / 'src'}"], f"checkpoint is a directory: {ROOT / 'src'} (no .ckpt in it)"),
    ],
)
def test_a_slip_gets_a_hint(args, message):
    with pytest.raises(BadInput, match=re.escape(message)):
        check_command_line(ROOT / "conf" / "evaluate", "evaluate", evaluate_check, args)


def test_a_run_dir_as_ckpt_names_its_checkpoints(tmp_path):
    (tmp_path / "checkpoints").mkdir()
    (tmp_path / "checkpoints" / "last.ckpt").write_bytes(b"")
    with pytest.raises(BadInput, match=re.escape(f"its checkpoints: {tmp_path}/checkpoints/last")):
        check_command_line(
            ROOT / "conf" / "evaluate", "evaluate", evaluate_check, [f"ckpt={tmp_path}"]
        )


def test_a_whole_number_in_scientific_notation_is_accepted():
    argv = ["ckpt=pretrained/pong", "episodes=1e1"]
    accepted = check_command_line(ROOT / "conf" / "evaluate", "evaluate", evaluate_check, argv)
    assert accepted == ["ckpt=pretrained/pong", "episodes=10"]


def test_a_game_without_a_file_of_its_own_is_named_by_env():
    result = run_script("evaluate.py", "ckpt=pretrained/pong", "env=asterix", timeout=60)
    assert result.returncode == 2
    expected = "checkpoint was trained on ALE/Pong-v5 (6 actions); ALE/Asterix-v5 has 9"
    assert result.stderr.strip() == f"error: {expected}"
