"""evaluate.py on checkpoints made by real training runs; the eval callback; init_from."""

import json
import shutil

import imageio.v3 as iio
import pytest
import torch
from helpers.runs import ROOT, read_metrics, run_script, train

pytestmark = pytest.mark.slow

TINY_PONG = ("debug=tiny", "logger=none", "callbacks.eval.at_end=false")
CARTPOLE = (
    "experiment=cartpole",
    "frames=30000",
    "logger=csv",
    "callbacks.eval.every_frames=10000",
)
CARTPOLE += ("callbacks.eval.episodes=2",)


@pytest.fixture(scope="module")
def pong_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("pong") / "run"
    train(run_dir, *TINY_PONG)
    return run_dir


@pytest.fixture(scope="module")
def cartpole_run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("cartpole") / "run"
    train(run_dir, *CARTPOLE)
    return run_dir


def evaluate(*args: str):
    return run_script("evaluate.py", *args, timeout=300)


def test_results_json_and_csv_hold_every_game(cartpole_run, tmp_path):
    ckpt = cartpole_run / "checkpoints" / "last.ckpt"
    result = evaluate(f"ckpt={ckpt}", "episodes=4", f"output_dir={tmp_path}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("game ") >= 4 and "median" in result.stdout
    report = json.loads((tmp_path / "results.json").read_text())
    assert len(report["games"]) == 4 and report["summary"]["episodes"] == 4
    assert [g["seed"] for g in report["games"]] == [0, 1, 2, 3]
    assert report["env_id"] == "CartPole-v1" and report["frames_trained"] >= 30000
    assert report["actions"] == "sampled"  # the peers' protocol, by default
    assert len((tmp_path / "results.csv").read_text().splitlines()) == 5


def test_a_reused_output_dir_keeps_no_stale_games_and_the_mode_is_said(cartpole_run, tmp_path):
    ckpt = cartpole_run / "checkpoints" / "last.ckpt"
    assert evaluate(f"ckpt={ckpt}", "episodes=3", f"output_dir={tmp_path}").returncode == 0
    result = evaluate(f"ckpt={ckpt}", "episodes=1", "greedy=true", f"output_dir={tmp_path}")
    assert result.returncode == 0, result.stderr
    assert "CartPole-v1: 1 games, greedy (argmax) actions, seeds from 0" in result.stdout
    assert [p.name for p in (tmp_path / "replays").iterdir()] == ["game-1.npz"]


def test_render_writes_game_sized_mp4_gif_and_wandb_run(pong_run, tmp_path):
    ckpt = pong_run / "checkpoints" / "last.ckpt"
    result = evaluate(f"ckpt={ckpt}", "episodes=1", "render=true", f"output_dir={tmp_path}")
    assert result.returncode == 0, result.stderr
    (video,) = (tmp_path / "videos").glob("*.mp4")
    assert video.name == "game-1.mp4" and (tmp_path / "replays" / "game-1.npz").exists()
    frames = iio.imread(video)
    assert frames.shape[1:] == (210, 160, 3) and len(frames) > 100
    assert iio.imread(tmp_path / "game-1.gif").shape[1:3] == (210, 160)
    assert list(tmp_path.glob("wandb/offline-run-*/run-*.wandb"))


def test_eval_callback_logs_mean_and_keeps_best_checkpoint(cartpole_run):
    evals = [
        row["eval/return_mean"] for row in read_metrics(cartpole_run) if "eval/return_mean" in row
    ]
    assert len(evals) >= 2  # from 10k frames on (one at a time) and the final weights
    best = torch.load(cartpole_run / "checkpoints" / "best.ckpt", weights_only=True)
    last = torch.load(cartpole_run / "checkpoints" / "last.ckpt", weights_only=True)
    history = last["atari_a3c"]["eval_history"]
    best_frames, best_mean = max(reversed(history), key=lambda p: p[1])  # the later of equals
    assert best_mean == max(evals) and best["atari_a3c"]["frames"] == best_frames
    assert (cartpole_run / "returns.png").stat().st_size > 0


def test_resumed_run_remembers_evaluations_that_finished_after_its_last_checkpoint(
    cartpole_run, tmp_path
):
    run = tmp_path / "run"
    shutil.copytree(cartpole_run, run)
    last = run / "checkpoints" / "last.ckpt"
    checkpoint = torch.load(last, weights_only=True)
    history = [tuple(point) for point in checkpoint["atari_a3c"]["eval_history"]]
    best_point = max(history, key=lambda point: point[1])
    recorded = [json.loads(line) for line in (run / "checkpoints" / "evaluations.jsonl").open()]
    assert [(p["frames"], p["mean"]) for p in recorded] == history
    # last.ckpt as written at the best evaluation's snapshot, before its games were done
    checkpoint["atari_a3c"]["eval_history"] = [p for p in history if p != best_point]
    torch.save(checkpoint, last)
    with (run / "checkpoints" / "evaluations.jsonl").open("a") as record:
        record.write('{"frames": 400')  # a line cut short by a kill

    train(run, *CARTPOLE, f"ckpt_path={last}", "frames=40000")
    resumed = torch.load(last, weights_only=True)["atari_a3c"]["eval_history"]
    assert best_point in [tuple(point) for point in resumed]
    best = torch.load(run / "checkpoints" / "best.ckpt", weights_only=True)["atari_a3c"]
    assert best["frames"] == max(reversed(resumed), key=lambda point: point[1])[0]


def test_init_from_starts_a_new_run_from_the_weights(cartpole_run, tmp_path):
    source = cartpole_run / "checkpoints" / "last.ckpt"
    train(tmp_path / "run", *CARTPOLE, "frames=5000", f"init_from={source}")
    new = torch.load(tmp_path / "run" / "checkpoints" / "last.ckpt", weights_only=True)
    assert 5000 <= new["atari_a3c"]["frames"] < 30000, "a fresh budget, not a resumed one"


def test_truncated_checkpoint_exits_2_with_one_line(pong_run, tmp_path):
    """The exit-2 contract end to end; tests/test_bad_checkpoints.py checks every kind of file."""
    truncated = tmp_path / "t.ckpt"
    truncated.write_bytes((pong_run / "checkpoints" / "last.ckpt").read_bytes()[:5000])
    for script, key in (("evaluate.py", "ckpt"), ("train.py", "init_from")):
        args = (f"{key}={truncated}", f"hydra.run.dir={tmp_path / 'r'}")
        result = run_script(script, *args, timeout=60)
        assert result.returncode == 2, result.stderr
        assert (
            result.stderr.strip()
            == f"error: checkpoint is truncated or not a torch file: {truncated}"
        )


def test_checkpoint_for_another_game_names_both(pong_run):
    ckpt = pong_run / "checkpoints" / "last.ckpt"
    result = evaluate(f"ckpt={ckpt}", "env=breakout")
    assert result.returncode == 2
    expected = "checkpoint was trained on ALE/Pong-v5 (6 actions); ALE/Breakout-v5 has 4"
    assert result.stderr.strip() == f"error: {expected}"


def test_checkpoint_older_than_later_options_plays_on_a_named_game(pong_run, tmp_path):
    """A stored config without keys added since (PopArt, the mean frame, ...) still plays."""
    checkpoint = torch.load(pong_run / "checkpoints" / "last.ckpt", weights_only=True)
    config = checkpoint["atari_a3c"]["config"]
    for key in ("popart_rate", "obs_mean_rate"):
        del config["algo"][key]
    for key in ("obs_mean", "obs_updates", "value_mean", "value_std", "value_updates"):
        del checkpoint["state_dict"][f"model.{key}"]
    old = tmp_path / "old.ckpt"
    torch.save(checkpoint, old)
    result = evaluate(f"ckpt={old}", "env=pong", "episodes=1", f"hydra.run.dir={tmp_path}/eval")
    assert result.returncode == 0, result.stderr


def test_exported_weights_are_small_play_and_start_a_run(cartpole_run, tmp_path):
    source, small = cartpole_run / "checkpoints" / "last.ckpt", tmp_path / "small.ckpt"
    result = run_script("src/atari_a3c/checkpoints/export.py", str(source), str(small))
    assert result.returncode == 0, result.stderr
    assert small.stat().st_size < source.stat().st_size / 2
    weights = torch.load(source, weights_only=True)["state_dict"]
    exported = torch.load(small, weights_only=True)["state_dict"]
    assert exported["model.policy.weight"].dtype == torch.bfloat16
    assert torch.equal(exported["model.policy.weight"], weights["model.policy.weight"].bfloat16())
    assert torch.equal(exported["model.obs_mean"], weights["model.obs_mean"])  # statistics kept
    result = evaluate(f"ckpt={small}", "episodes=2")
    assert result.returncode == 0, result.stderr
    train(tmp_path / "finetune", "experiment=cartpole", "frames=2000", f"init_from={small}")


def test_checkpoints_compared_on_identical_games(cartpole_run, tmp_path):
    last, best = (cartpole_run / "checkpoints" / f"{n}.ckpt" for n in ("last", "best"))
    result = evaluate(f"ckpt=[{last},{best},{last}]", "episodes=4", f"output_dir={tmp_path}")
    assert result.returncode == 0, result.stderr
    report = json.loads((tmp_path / "comparison.json").read_text())
    first, _, again = (
        [(g["seed"], g["score"], g["length"]) for g in games] for games in report["games"]
    )
    assert first == again and [seed for seed, _, _ in first] == [0, 1, 2, 3]
    row = report["checkpoints"][2]  # the first checkpoint again: every game the same
    assert (row["diff"], row["won"], row["tied"], row["lost"]) == (0.0, 0, 4, 0)
    assert "vs first" in result.stdout and "0/4/0" in result.stdout


def test_the_shipped_pong_agent_wins(tmp_path):
    result = evaluate("ckpt=pretrained/pong", "episodes=1", "render=true", f"output_dir={tmp_path}")
    assert result.returncode == 0, result.stderr
    assert json.loads((tmp_path / "results.json").read_text())["summary"]["mean"] > 0
    assert (tmp_path / "game-1.gif").stat().st_size > 0
    again = evaluate(f"replay={tmp_path / 'replays' / 'game-1.npz'}")
    assert again.returncode == 0 and not again.stderr, again.stderr
    assert again.stdout.count(f"score {result_score(tmp_path):.1f}") == 2, again.stdout


def result_score(out) -> float:
    return json.loads((out / "results.json").read_text())["games"][0]["score"]


def test_evaluation_plays_on_one_thread():
    """Beside a training run that keeps the cores busy, a second torch thread made each game 8x
    slower (its threads wait for each other); evaluate.py acts on one, as the actors do."""
    from hydra import compose, initialize_config_dir

    from atari_a3c.evaluation.task import evaluate

    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with initialize_config_dir(str(ROOT / "conf" / "evaluate"), version_base="1.3"):
            cfg = compose("evaluate", overrides=["ckpt=pretrained/pong", "episodes=1"])
        assert evaluate(cfg) > 0
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(threads)
