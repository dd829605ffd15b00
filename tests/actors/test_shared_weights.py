"""The seqlock of the shared weights: a process killed at any moment wedges no other one."""

import multiprocessing
import random
import signal
import time

import torch
from omegaconf import OmegaConf

from atari_a3c.actors.shared import SharedWeights
from atari_a3c.models.actor_critic import ActorCritic, build_model


def big_model(seed: int) -> ActorCritic:
    torch.manual_seed(seed)
    return ActorCritic((4, 84, 84), 6, "nature", 512)


def publish_forever(weights: SharedWeights) -> None:
    model = big_model(1)
    while True:
        weights.publish(model)


def pull_forever(weights: SharedWeights) -> None:
    model = big_model(2)
    while True:
        weights.pull(model)


def kill_at_random(target, weights: SharedWeights, rng: random.Random) -> None:
    process = multiprocessing.get_context("spawn").Process(target=target, args=(weights,))
    process.start()
    time.sleep(2 + rng.uniform(0, 0.5))  # past its start-up, somewhere inside a copy
    process.kill()
    process.join()


def within(seconds: int):
    """Fail (instead of hanging) when the body takes longer than `seconds`."""

    def alarm(signum, frame):
        raise TimeoutError(f"blocked for {seconds} s")

    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)


def test_writer_killed_mid_publish_blocks_no_reader():
    rng = random.Random(0)
    weights = SharedWeights(big_model(0))
    reader = big_model(3)
    for _ in range(3):
        kill_at_random(publish_forever, weights, rng)
        before = [p.clone() for p in reader.parameters()]
        within(10)
        version = weights.pull(reader, current=-1)
        signal.alarm(0)
        if version == -1:  # killed inside a publish: the reader keeps its own weights
            assert weights.sequence.value % 2 == 1
            for mine, old in zip(reader.parameters(), before, strict=True):
                assert torch.equal(mine, old)
            weights.sequence.value += 1  # a new learner would start from an even sequence
        else:
            assert version == weights.version


def test_reader_killed_mid_pull_blocks_no_writer():
    rng = random.Random(1)
    learner = big_model(0)
    weights = SharedWeights(learner)
    for _ in range(3):
        kill_at_random(pull_forever, weights, rng)
        version = weights.version
        within(10)
        weights.publish(learner)
        signal.alarm(0)
        assert weights.version == version + 1
    reader = big_model(4)
    assert weights.pull(reader) == weights.version
    for mine, theirs in zip(reader.parameters(), learner.parameters(), strict=True):
        assert torch.equal(mine, theirs)


def test_a_devices_weights_are_staged_in_the_shared_vectors_order():
    """The one-transfer path of a GPU learner, gathered on the CPU here: the staged vector is
    what the parameter-by-parameter copy writes, channels_last convs included."""
    model = build_model(OmegaConf.create({"encoder": "nature", "hidden_size": 32}), (4, 84, 84), 6)
    model.track_value_targets(torch.randn(8) * 3 + 1, 0.5)  # buffers too, value_updates an int
    weights = SharedWeights(model)
    staged = weights.staged([*model.parameters(), *model.buffers()])
    assert torch.equal(staged, weights.flat)
    assert weights._staging is not None and weights.__getstate__()["_staging"] is None  # not sent
