"""Faults tried for real: dead, raising and hung actors, a fork server killed mid-start, signals,
kills mid-save, resume, NaN."""

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
import torch
from helpers.runs import HELPERS, ROOT, read_metrics, run_script

pytestmark = pytest.mark.slow

CARTPOLE = ("experiment=cartpole", "logger=csv", "callbacks.eval.at_end=false")
CARTPOLE += ("callbacks.eval.every_frames=100000000",)
STARTED: list[subprocess.Popen] = []


@pytest.fixture(autouse=True)
def end_what_the_test_started():
    """A failed test's training is killed and reaped, so it leaves no process to the next."""
    yield
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            process.kill()
        process.wait()


def start(
    run_dir: Path,
    *overrides: str,
    marker: Path | None = None,
    new_group: bool = False,
    stdout: int = subprocess.DEVNULL,
    extra_env: dict[str, str] | None = None,
) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(HELPERS), "FAULT_MARKER": str(marker or "")}
    env |= extra_env or {}
    args = [sys.executable, str(ROOT / "train.py"), f"hydra.run.dir={run_dir}", *overrides]
    process = subprocess.Popen(
        args,
        env=env,
        cwd=ROOT,
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=new_group,
    )
    STARTED.append(process)
    return process


def wait_for_training(run_dir: Path, process: subprocess.Popen, timeout: float = 60) -> None:
    """Until the learner has logged a few updates."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert process.poll() is None, process.stderr.read()
        metrics = list(run_dir.glob("csv/version_*/metrics.csv"))
        if metrics and len(metrics[0].read_text().splitlines()) > 2:
            return
        time.sleep(0.2)
    raise TimeoutError("training did not start")


def actor_pids(pid: int) -> list[int]:
    """The actor and evaluation processes under `pid`: forked by its fork server."""
    return [c.pid for c in children(pid) if c.ppid() != pid]


def children(pid: int) -> list[psutil.Process]:
    """The fork server and what it forked (the resource tracker is Python's own)."""
    found = psutil.Process(pid).children(recursive=True)
    return [c for c in found if "forkserver" in command_line(c)]


def command_line(process: psutil.Process) -> str:
    """Empty for a process that has exited since it was listed."""
    try:
        return " ".join(process.cmdline())
    except psutil.NoSuchProcess:  # ZombieProcess included
        return ""


def child_pids(pid: int) -> list[int]:
    return [c.pid for c in children(pid)]


def alive(pids: list[int], within: float = 5.0) -> list[int]:
    """Those of `pids` still running after `within` seconds (a few: the fork server exits when
    it sees its parent gone)."""
    deadline = time.time() + within
    while True:
        running = [p for p in pids if psutil.pid_exists(p) and not zombie(p)]
        if not running or time.time() > deadline:
            return running
        time.sleep(0.1)


def zombie(pid: int) -> bool:
    return psutil.Process(pid).status() == "zombie"


def restarts(run_dir: Path) -> float:
    return max(row.get("perf/actor_restarts", 0) for row in read_metrics(run_dir))


def test_killed_actor_is_replaced_and_training_finishes(run_dir):
    process = start(run_dir, *CARTPOLE, "frames=120000")
    wait_for_training(run_dir, process)
    os.kill(actor_pids(process.pid)[0], signal.SIGKILL)
    assert process.wait(timeout=120) == 0, process.stderr.read()
    assert restarts(run_dir) == 1
    log = (run_dir / "train.log").read_text()
    assert log.count("actor-0 failed (killed by signal 9)") == 1


def frames_logged(run_dir: Path) -> float:
    return max((row.get("charts/frames", 0) for row in read_metrics(run_dir)), default=0)


def start_with_a_held_fork(run_dir: Path, tmp_path: Path, *overrides: str) -> tuple:
    """A run whose fork server, once armed (`arm.touch()`), holds its next fork until it is
    killed (helpers/fork_delay)."""
    arm = tmp_path / "arm"
    hook = {"PYTHONPATH": f"{HELPERS}:{HELPERS / 'fork_delay'}", "FORK_DELAY_ARM": str(arm)}
    process = start(run_dir, *CARTPOLE, *overrides, new_group=True, extra_env=hook)
    wait_for_training(run_dir, process)
    return process, arm


def kill_the_fork_server_when_it_forks(process: subprocess.Popen, arm: Path) -> None:
    deadline = time.time() + 30
    while not Path(f"{arm}.forking").exists():  # the held fork has begun
        assert time.time() < deadline and process.poll() is None
        time.sleep(0.05)
    (server,) = [c for c in children(process.pid) if c.ppid() == process.pid]
    server.kill()


def test_fork_server_killed_while_forking_a_replacement_is_one_more_failure(run_dir, tmp_path):
    process, arm = start_with_a_held_fork(run_dir, tmp_path, "frames=10000000")
    arm.touch()
    os.kill(actor_pids(process.pid)[0], signal.SIGKILL)  # its replacement's fork is held
    kill_the_fork_server_when_it_forks(process, arm)
    killed_at = frames_logged(run_dir)
    deadline = time.time() + 60
    while frames_logged(run_dir) < killed_at + 10000:
        assert process.poll() is None, process.stderr.read()
        assert time.time() < deadline, "no frames after the fork server died"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGTERM)
    assert process.wait(timeout=15) == 143
    assert "(its replacement did not start: " in (run_dir / "train.log").read_text()
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    assert checkpoint["atari_a3c"]["frames"] > killed_at


def test_replacement_that_fails_to_start_past_the_budget_stops_with_a_checkpoint(run_dir, tmp_path):
    process, arm = start_with_a_held_fork(
        run_dir, tmp_path, "frames=10000000", "actors.max_failures=1"
    )
    arm.touch()
    os.kill(actor_pids(process.pid)[0], signal.SIGKILL)
    kill_the_fork_server_when_it_forks(process, arm)
    assert process.wait(timeout=60) == 1
    error = "error: actor-0 failed 2 times in 300 s; last: its replacement did not start: "
    assert error in process.stderr.read()
    torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)


def test_evaluation_that_fails_to_start_is_one_warning(run_dir, tmp_path):
    evals = ("callbacks.eval.every_frames=20000", "callbacks.eval.episodes=20", "frames=60000")
    process, arm = start_with_a_held_fork(run_dir, tmp_path, *evals)
    arm.touch()  # the next fork: the first evaluation's
    kill_the_fork_server_when_it_forks(process, arm)
    assert process.wait(timeout=300) == 0, process.stderr.read()
    assert "evaluation process did not start (" in (run_dir / "train.log").read_text()
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    assert [frames for frames, _ in checkpoint["atari_a3c"]["eval_history"]][0] >= 40000


@pytest.mark.parametrize(
    ("env_id", "cause"),
    [("RaisingCartPole", "ValueError: env broke at step 300"), ("HangingCartPole", "hung")],
)
def test_failing_env_is_replaced(run_dir, tmp_path, env_id, cause):
    env = (f"env.id=faulty_envs:{env_id}-v0", "actors.timeout=5", "frames=40000")
    process = start(run_dir, *CARTPOLE, *env, marker=tmp_path / "fault")
    assert process.wait(timeout=120) == 0, process.stderr.read()
    assert restarts(run_dir) == 1
    assert (run_dir / "train.log").read_text().count(cause) == 1


def test_repeated_failures_stop_with_a_checkpoint_and_the_report(run_dir, tmp_path):
    env = ("env.id=faulty_envs:RaisingCartPole-v0", "actors.max_failures=0", "frames=100000")
    process = start(run_dir, *CARTPOLE, *env, marker=tmp_path / "fault", stdout=subprocess.PIPE)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 1
    assert "error: actor-0 failed 1 times in 300 s; last: ValueError" in stderr
    last = run_dir / "checkpoints" / "last.ckpt"
    frames = torch.load(last, weights_only=True)["atari_a3c"]["frames"]
    assert f"run stopped by an error at {frames:,} of 100,000 frames" in stdout
    assert f"  last:    {last} ({frames:,} frames, not evaluated)" in stdout
    assert f"  resume:  python train.py ckpt_path={last}\n" in stdout


def test_diverging_training_reports_that_nothing_was_saved(run_dir):
    diverging = ("optim.lr=1e30", "max_nonfinite_updates=3", "frames=100000")
    process = start(run_dir, *CARTPOLE, *diverging, stdout=subprocess.PIPE)
    stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 1
    assert "error: 4 non-finite updates in a row" in stderr
    assert "run stopped by an error at " in stdout
    assert f"  last:    {run_dir / 'checkpoints' / 'last.ckpt'} (not saved)" in stdout
    assert "resume:" not in stdout


def leftover_shm(before: set[str]) -> set[str]:
    """Entries of /dev/shm made since `before` that no living process maps: left behind. Those
    of a test running beside this one (its semaphores) are mapped by its processes."""
    new = set(os.listdir("/dev/shm")) - before
    mapped = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        with contextlib.suppress(OSError):
            mapped |= {int(line.split()[4]) for line in maps.open() if "/dev/shm/" in line}
    left = set()
    for name in new:
        with contextlib.suppress(FileNotFoundError):  # released meanwhile
            if Path("/dev/shm", name).stat().st_ino not in mapped:
                left.add(name)
    return left


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_saves_and_exits_cleanly(run_dir, signum):
    shm_before = set(os.listdir("/dev/shm"))
    process = start(run_dir, *CARTPOLE, "frames=10000000")
    wait_for_training(run_dir, process)
    pids = child_pids(process.pid)
    sent = time.time()
    process.send_signal(signum)
    assert process.wait(timeout=15) == 128 + signum
    assert time.time() - sent < 15
    assert alive(pids) == []
    assert leftover_shm(shm_before) == set()
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    assert 0 < checkpoint["atari_a3c"]["frames"] < 10000000


def test_sigterm_ends_with_the_report_and_the_command_that_resumes(run_dir):
    command = [sys.executable, str(ROOT / "train.py"), f"hydra.run.dir={run_dir}", *CARTPOLE]
    env = {**os.environ, "PYTHONPATH": str(HELPERS)}
    process = subprocess.Popen(
        [*command, "frames=10000000"], env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    STARTED.append(process)
    wait_for_training(run_dir, process)
    process.send_signal(signal.SIGTERM)
    stdout, _ = process.communicate(timeout=30)
    assert process.returncode == 143
    last = run_dir / "checkpoints" / "last.ckpt"
    frames = torch.load(last, weights_only=True)["atari_a3c"]["frames"]
    assert f"run stopped by SIGTERM at {frames:,} of 10,000,000 frames" in stdout
    assert f"  resume:  python train.py ckpt_path={last}\n" in stdout


def test_second_ctrl_c_exits_at_once_without_orphans(run_dir):
    process = start(run_dir, *CARTPOLE, "frames=10000000")
    wait_for_training(run_dir, process)
    pids = child_pids(process.pid)
    sent = time.time()
    process.send_signal(signal.SIGINT)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=15) == 130
    assert time.time() - sent < 10
    time.sleep(1)
    assert alive(pids) == []


def test_sigterm_to_the_process_group_respawns_nothing(run_dir):
    process = start(run_dir, *CARTPOLE, "frames=10000000", new_group=True)
    wait_for_training(run_dir, process)
    pids = child_pids(process.pid)
    os.killpg(process.pid, signal.SIGTERM)
    assert process.wait(timeout=15) == 143
    time.sleep(1)
    assert alive(pids) == [] and psutil.Process().children(recursive=True) == []
    assert "failed" not in (run_dir / "train.log").read_text()


def test_sigterm_during_the_final_evaluation_ends_it_and_keeps_last_ckpt(run_dir):
    endless = ("callbacks.eval.at_end=true", "callbacks.eval.episodes=10000000")
    process = start(run_dir, *CARTPOLE, *endless, "frames=3000")
    candidate = run_dir / "checkpoints" / "eval-candidate.ckpt"  # the final games' snapshot
    deadline = time.time() + 60
    while not candidate.exists() and time.time() < deadline:
        assert process.poll() is None, process.stderr.read()
        time.sleep(0.2)
    time.sleep(1)  # the evaluation process starts playing
    pids = child_pids(process.pid)
    sent = time.time()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=15) == 143
    assert time.time() - sent < 10
    assert alive(pids) == []
    assert (
        torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)["atari_a3c"]["frames"]
        >= 3000
    )


def test_kill_at_any_moment_leaves_a_loadable_checkpoint(tmp_path):
    rng = random.Random(0)
    for attempt in range(3):
        run_dir = tmp_path / f"run{attempt}"
        process = start(
            run_dir, *CARTPOLE, "frames=10000000", "callbacks.checkpoint_every_frames=640"
        )
        last = run_dir / "checkpoints" / "last.ckpt"
        wait_for_training(run_dir, process)
        time.sleep(rng.uniform(0.5, 2.0))
        pids = child_pids(process.pid)
        process.kill()
        process.wait()
        torch.load(last, weights_only=True)
        assert alive(pids, within=10) == []  # actors and the fork server die with their parent


def test_dead_evaluation_process_is_one_warning(run_dir):
    evals = ("callbacks.eval.every_frames=20000", "callbacks.eval.episodes=200")
    process = start(run_dir, *CARTPOLE, *evals, "frames=60000")
    wait_for_training(run_dir, process)
    actors = set(actor_pids(process.pid))
    deadline = time.time() + 60
    while not (evaluators := set(actor_pids(process.pid)) - actors) and time.time() < deadline:
        time.sleep(0.05)
    os.kill(evaluators.pop(), signal.SIGKILL)
    assert process.wait(timeout=300) == 0, process.stderr.read()
    assert (
        "evaluation process died (exit code -9); training goes on"
        in (run_dir / "train.log").read_text()
    )
    checkpoint = torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
    assert [frames for frames, _ in checkpoint["atari_a3c"]["eval_history"]][0] >= 40000


def test_resume_continues_counters_budget_and_wandb_run(run_dir):
    budget = ("frames=60000", "logger=wandb", "callbacks.checkpoint_every_frames=6400")
    process = start(run_dir, *CARTPOLE, *budget)
    last = run_dir / "checkpoints" / "last.ckpt"
    deadline = time.time() + 60
    while not last.exists() and time.time() < deadline:
        time.sleep(0.1)
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=15) == 130
    first = torch.load(last, weights_only=True)
    assert first["atari_a3c"]["frames"] < 60000
    result = run_script("train.py", f"ckpt_path={last}", timeout=300)  # same run dir, same config
    assert result.returncode == 0, result.stderr[-2000:]
    final = torch.load(last, weights_only=True)
    assert 60000 <= final["atari_a3c"]["frames"] < 60000 + 320
    assert (
        final["global_step"]
        == first["global_step"]
        + (final["atari_a3c"]["frames"] - first["atari_a3c"]["frames"]) // 320
    )
    assert final["atari_a3c"]["wandb_id"] == first["atari_a3c"]["wandb_id"]
    assert len(list(run_dir.glob("wandb/offline-run-*"))) == 2
    # CartPole's lr cools down over the whole budget: partway when stopped, zero at the end
    assert 0 < learning_rate(first) < first["atari_a3c"]["config"]["optim"]["lr"]
    assert learning_rate(final) == 0


def learning_rate(checkpoint: dict) -> float:
    return checkpoint["optimizer_states"][0]["param_groups"][0]["lr"]


def test_nan_loss_is_skipped_and_counted(run_dir, tmp_path):
    env = ("env.id=faulty_envs:NanRewardCartPole-v0", "frames=30000")
    process = start(run_dir, *CARTPOLE, *env, marker=tmp_path / "fault")
    assert process.wait(timeout=120) == 0, process.stderr.read()
    assert max(row.get("perf/skipped_updates", 0) for row in read_metrics(run_dir)) >= 1


def test_fine_tuned_run_resumes(tmp_path):
    base, tuned = tmp_path / "base", tmp_path / "tuned"
    run_script("train.py", f"hydra.run.dir={base}", *CARTPOLE, "frames=3000", timeout=120)
    start_from = f"init_from={base / 'checkpoints' / 'last.ckpt'}"
    first = run_script(
        "train.py", f"hydra.run.dir={tuned}", *CARTPOLE, start_from, "frames=3000", timeout=120
    )
    assert first.returncode == 0, first.stderr[-2000:]
    last = tuned / "checkpoints" / "last.ckpt"
    resumed = run_script("train.py", f"ckpt_path={last}", "frames=6000", timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert torch.load(last, weights_only=True)["atari_a3c"]["frames"] >= 6000


DDP = ("trainer.strategy=ddp", "trainer.devices=2")


def test_ddp_nan_on_one_rank_is_skipped_by_every_rank(run_dir, tmp_path):
    env = ("env.id=faulty_envs:NanRewardCartPole-v0", "frames=30000", *DDP)
    process = start(run_dir, *CARTPOLE, *env, marker=tmp_path / "fault")
    assert process.wait(timeout=300) == 0, process.stderr.read()
    assert max(row.get("perf/skipped_updates", 0) for row in read_metrics(run_dir)) >= 1


def test_ddp_actor_failure_on_one_rank_stops_every_rank(run_dir, tmp_path):
    env = ("env.id=faulty_envs:RaisingCartPole-v0", "actors.max_failures=0", *DDP)
    process = start(run_dir, *CARTPOLE, *env, "frames=10000000", marker=tmp_path / "fault")
    assert process.wait(timeout=120) == 1
    assert "actor-0 failed 1 times" in process.stderr.read()
    time.sleep(2)
    assert psutil.Process().children(recursive=True) == []
    torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)


def test_ddp_ctrl_c_stops_every_rank(run_dir):
    process = start(run_dir, *CARTPOLE, "frames=10000000", *DDP, new_group=True)
    wait_for_training(run_dir, process, timeout=120)
    os.killpg(process.pid, signal.SIGINT)
    assert process.wait(timeout=30) == 130
    time.sleep(2)
    assert psutil.Process().children(recursive=True) == []
    torch.load(run_dir / "checkpoints" / "last.ckpt", weights_only=True)
