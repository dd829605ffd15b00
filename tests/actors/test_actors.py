"""Actor processes: real envs in real processes writing rollouts into shared memory."""

import multiprocessing
import subprocess
import sys
import time

import psutil
import torch
from helpers.runs import HELPERS, collect_rollouts, compose, make_pool


def test_atari_rollout_shapes_and_dtypes():
    (batch,) = collect_rollouts(
        "env=pong", "workers=2", "envs_per_worker=2", "algo.unroll=5", batches=1, batch_rollouts=2
    )
    assert batch["obs"].shape == (6, 4, 4, 84, 84) and batch["obs"].dtype == torch.uint8
    assert batch["done"].shape == (6, 4) and batch["done"].dtype == torch.bool
    assert batch["action"].shape == (5, 4) and batch["action"].dtype == torch.int64
    assert batch["logits"].shape == (5, 4, 6)
    assert batch["h0"].shape == (4, 512)
    for key in ("reward", "logits", "h0", "c0"):
        assert torch.isfinite(batch[key]).all(), f"{key} has unwritten (NaN) entries"
    assert batch["obs"][:, :, -1].float().mean() > 0, "frames should show the game"
    frames = batch["obs"].flatten(0, 1)  # laid out as the convs compute: no reorder in the update
    assert frames.is_contiguous(memory_format=torch.channels_last)


def test_episode_statistics_are_true_game_results():
    batches = collect_rollouts(
        "experiment=cartpole", "envs_per_worker=4", "algo.unroll=50", batches=4
    )
    assert batches[0]["obs"].is_contiguous()  # vectors as they are
    returns = torch.cat([b["game_return"] for b in batches])
    lengths = torch.cat([b["game_length"] for b in batches])
    dones = sum(int(b["done"][1:].sum()) for b in batches)
    assert len(returns) == dones > 0, "every finished game is reported once"
    torch.testing.assert_close(returns, lengths.float())  # CartPole pays 1 per step


def test_launched_actors_write_nothing_until_started_then_act_with_the_newest_weights():
    from atari_a3c.models.actor_critic import build_model

    overrides = ("env=pong", "envs_per_worker=2", "algo.unroll=5")
    pool, layout = make_pool(*overrides)
    pool.launch()  # as a training job does, before the learner exists
    try:
        assert not pool.conns[0].poll(5.0), "an actor filled a slot before it was given one"
        learner_model = build_model(compose(*overrides).model, layout.obs_shape, layout.num_actions)
        pool.weights.publish(learner_model)  # what the learner publishes as fitting starts
        pool.start()
        index = pool.next_full()
        assert int(pool.slots["version"][index]) == pool.weights.version == 2
    finally:
        pool.stop()


def test_stop_leaves_no_child_process():
    pool, _ = make_pool("env=breakout", "workers=2", "envs_per_worker=2", "algo.unroll=5")
    pool.start()
    pids = [p.pid for p in pool.processes]
    pool.next_full()
    pool.stop()
    assert not any(
        psutil.pid_exists(pid) and psutil.Process(pid).status() != "zombie" for pid in pids
    )
    assert multiprocessing.active_children() == []


def test_actors_and_their_emulator_threads_yield_the_cores_to_the_learner():
    pool, _ = make_pool("env=pong", "envs_per_worker=4", "env.env_threads=2", "actors.nice=7")
    pool.start()
    try:
        pool.next_full()  # the envs, and their threads, exist
        (actor,) = [psutil.Process(p.pid) for p in pool.processes]
        threads = [psutil.Process(t.id) for t in actor.threads()]
        assert len(threads) >= 3, "the actor's thread and two emulator threads"
        assert {t.nice() for t in threads} == {min(19, psutil.Process().nice() + 7)}
    finally:
        pool.stop()


def test_a_busy_child_dies_with_a_killed_main_process():
    main = subprocess.Popen(
        [sys.executable, str(HELPERS / "busy_child.py")], stdout=subprocess.PIPE
    )
    child = psutil.Process(int(main.stdout.readline()))
    server = child.parent()
    time.sleep(0.5)  # the child is past become_child()
    main.kill()
    main.wait()
    _, alive = psutil.wait_procs([child, server], timeout=5)
    alive = [p for p in alive if p.status() != psutil.STATUS_ZOMBIE]
    for process in alive:  # what a failure leaves behind
        process.kill()
    assert alive == []
