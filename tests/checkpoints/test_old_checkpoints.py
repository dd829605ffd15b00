"""A checkpoint written before the package took its subpackages and the learners their
`algo._target_` (commit 2d73d13: CartPole, `debug=tiny`, LSTM of 16) still loads, plays,
resumes and starts a new run."""

import shutil

import pytest
from helpers.runs import ROOT, run_script, train

from atari_a3c.checkpoints.files import load_checkpoint, policy_from_checkpoint

OLD = ROOT / "tests" / "data" / "cartpole-2d73d13.ckpt"


def test_an_old_checkpoint_loads_into_todays_model():
    checkpoint = load_checkpoint(OLD)
    cfg, model = policy_from_checkpoint(checkpoint)
    assert "_target_" not in checkpoint["atari_a3c"]["config"]["algo"]  # from before it existed
    assert cfg.env.id == "CartPole-v1" and model.hidden_size == 16


@pytest.mark.slow
def test_an_old_checkpoint_plays_resumes_and_starts_a_new_run(tmp_path):
    played = run_script("evaluate.py", f"ckpt={OLD}", "episodes=1")
    assert played.returncode == 0, played.stderr[-2000:]
    last = tmp_path / "old" / "checkpoints" / "last.ckpt"
    last.parent.mkdir(parents=True)
    shutil.copy(OLD, last)
    train(tmp_path / "old", f"ckpt_path={last}", "frames=8000")  # its stored overrides reapply
    assert load_checkpoint(last)["atari_a3c"]["frames"] >= 8000
    train(tmp_path / "new", "experiment=cartpole", "debug=tiny", "logger=none",
          "model.hidden_size=16", f"init_from={OLD}")  # fmt: skip
