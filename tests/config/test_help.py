"""`--help` of both entry points: the groups, every key with its one-line description, and where
checkpoints can come from."""

from helpers.runs import ROOT, run_script

from atari_a3c.config.help import help_text


def test_train_help_describes_every_key_and_hides_internal_options():
    result = run_script("train.py", "--help", timeout=60)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "  frames=10000000  # total environment-frame budget" in text
    assert "  optim.lr=0.00025  # learning rate" in text
    assert "  env.frame_skip=4  # emulator frames per agent step" in text  # from the schema
    assert "  learner_threads=0  # torch threads" in text and "  algo.batch_rollouts=1  #" in text
    assert "  env: adventure, airraid, alien," in text and "(now: pong)" in text
    assert " battlezone, " in text and " cartpole, " in text  # every game ale-py ships, and ours
    assert "_atari" not in text and "evaluate:" not in text and "_target_" not in text
    assert "a shipped agent (pretrained/pong) or a W&B model artifact (wandb:" in text


def test_help_follows_the_options_chosen():
    text = help_text(ROOT / "conf", "train", ["algo=dqn"])
    assert "  algo.replay_start=10000  # transitions collected before the first update" in text


def test_evaluate_help_describes_its_keys_and_the_checkpoint_sources():
    text = help_text(ROOT / "conf" / "evaluate", "evaluate", [])
    assert text.startswith("python evaluate.py [key=value ...]\n")
    assert "  greedy=false  # argmax actions; false samples from the policy" in text
    assert "pretrained/pong" in text and "wandb:<entity>/<project>/model-<run id>" in text


def test_a_slip_beside_help_gets_the_same_hint_and_exit_2():
    result = run_script("train.py", "lr=1e-4", "--help", timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: lr: unknown key; did you mean optim.lr?"
    result = run_script("train.py", "algo=ppx", "--help", timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: algo=ppx: unknown option; choose from a3c,")
    result = run_script("train.py", "--help", "pong", timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == "error: pong: settings are key=value; did you mean env=pong?"
