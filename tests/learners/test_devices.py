"""The learner's code on any device, checked without one: on the `meta` device a tensor made
on the CPU beside the batch raises, as it does beside a CUDA batch; with bf16 weights and no
autocast (as in a custom autograd Function's backward on CUDA) a product of mismatched dtypes
raises on the CPU. Also the precision and layout chosen for a GPU learner, checkpoints written
from CUDA tensors, and W&B's finish never hiding a run's error."""

import shutil
import sys

import hydra
import pytest
import torch
from helpers.runs import compose, run_script, train
from omegaconf import OmegaConf

from atari_a3c import hardware
from atari_a3c.config.job import size_from_cores
from atari_a3c.learners.actor_critic import ActorCriticLearner
from atari_a3c.learners.ppo_loss import ppo_loss
from atari_a3c.learners.q_loss import q_losses
from atari_a3c.learners.reinforce import Episode, reinforce_losses
from atari_a3c.models.actor_critic import build_model
from atari_a3c.models.lstm import LSTMUnroll
from atari_a3c.training.job import one_learner_process
from atari_a3c.training.task import finish_wandb

STEPS, ENVS = 3, 2
META = torch.device("meta")
DEVICES = ["meta", "cpu"]  # wrong devices raise on the first, mismatched dtypes on the second


def bf16_model(cfg, obs_shape, device, num_actions=4):
    """The configured model with bf16 weights on `device`."""
    model = build_model(cfg.model, obs_shape, num_actions)
    return model.to(device=device, dtype=torch.bfloat16)


def zeros(*shape, device, dtype=torch.float32):
    return torch.zeros(*shape, dtype=dtype, device=device)


def rollout_batch(obs_shape, device, num_actions=4, hidden=512) -> dict:
    """A rollout batch `[T + 1, B]` as the dataset yields it, on `device`."""

    def empty(*shape, dtype=torch.float32):
        return zeros(*shape, dtype=dtype, device=device)

    obs_dtype = torch.uint8 if len(obs_shape) == 3 else torch.float32
    return {
        "obs": empty(STEPS + 1, ENVS, *obs_shape, dtype=obs_dtype),
        "done": empty(STEPS + 1, ENVS, dtype=torch.bool),
        "action": empty(STEPS, ENVS, dtype=torch.int64),
        "reward": empty(STEPS, ENVS),
        "logits": empty(STEPS, ENVS, num_actions),
        "h0": empty(ENVS, hidden),
        "c0": empty(ENVS, hidden),
    }


@pytest.mark.parametrize("device", DEVICES)
def test_the_lstm_unroll_runs_forward_and_backward_in_bf16_without_autocast(device):
    hidden, bf16 = 8, torch.bfloat16
    gates_in = zeros(STEPS, ENVS, 4 * hidden, dtype=bf16, device=device)
    keep = zeros(STEPS, ENVS, 1, device=device)
    h0, c0 = (zeros(ENVS, hidden, device=device) for _ in range(2))
    weight_hh = zeros(4 * hidden, hidden, dtype=bf16, device=device)
    bias_hh = zeros(4 * hidden, device=device)
    inputs = [gates_in, h0, c0, weight_hh, bias_hh]
    for tensor in inputs:
        tensor.requires_grad_(True)
    hidden_states, c = LSTMUnroll.apply(gates_in, keep, h0, c0, weight_hh, bias_hh)
    assert hidden_states.dtype == c.dtype == torch.float32
    grads = torch.autograd.grad((hidden_states.sum() + c.sum()), inputs)
    assert [g.dtype for g in grads] == [t.dtype for t in inputs]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("overrides", "obs_shape"),
    [
        (("algo=impala",), (4, 84, 84)),
        (("algo=a3c", "model=a3c_lstm"), (1, 80, 80)),
        (("algo=impala", "model=impala_resnet"), (4, 84, 84)),
        (("algo=a3c", "env=cartpole", "model=mlp_lstm"), (4,)),
    ],
)
def test_actor_critic_losses_run_forward_and_backward_in_bf16(overrides, obs_shape, device):
    cfg = compose(*overrides)
    plain = OmegaConf.to_container(cfg, resolve=True)
    learner = hydra.utils.get_class(cfg.algo._target_)(plain, obs_shape, 4)
    model = learner.model.to(device=device, dtype=torch.bfloat16)
    batch = rollout_batch(obs_shape, device, hidden=cfg.model.hidden_size)
    logits, values, _ = model(batch["obs"], batch["done"], (batch["h0"], batch["c0"]), True)
    losses, _ = learner.losses(batch, logits.float(), values.float())
    losses.total.backward()
    assert all(p.grad is not None and p.grad.device.type == device for p in model.parameters())


@pytest.mark.parametrize("device", DEVICES)
def test_ppo_loss_runs_forward_and_backward_in_bf16(device):
    cfg = compose("algo=ppo")
    model = bf16_model(cfg, (4, 84, 84), device)
    batch = rollout_batch((4, 84, 84), device, hidden=cfg.model.hidden_size)
    logits, values, _ = model(batch["obs"], batch["done"], (batch["h0"], batch["c0"]), True)
    values = values[:-1].float()
    behaviour = batch["logits"].log_softmax(-1)[..., 0]
    losses = ppo_loss(
        logits[:-1].float(), batch["action"], behaviour, values, values.detach(),
        batch["reward"], batch["reward"], 0.1, True, 0.01, 0.5,
    )  # fmt: skip
    losses.total.backward()


@pytest.mark.parametrize("device", DEVICES)
def test_reinforce_loss_runs_forward_and_backward_in_bf16(device):
    cfg = compose("algo=reinforce", "env=cartpole", "model=mlp_lstm")
    model = bf16_model(cfg, (4,), device, num_actions=2)

    def episode(length):
        return Episode(
            zeros(length, 4, device=device),
            zeros(length, dtype=torch.int64, device=device),
            zeros(length, device=device),
        )

    losses, targets, values = reinforce_losses(model, [episode(5), episode(2)], cfg.algo)
    assert targets.shape == values.shape == (1, 7)
    losses.total.backward()


@pytest.mark.parametrize("device", DEVICES)
def test_dqn_loss_runs_forward_and_backward_in_bf16(device):
    cfg = compose("algo=dqn")
    model = bf16_model(cfg, (4, 84, 84), device)
    batch = rollout_batch((4, 84, 84), device, hidden=cfg.model.hidden_size)
    state = (batch["h0"], batch["c0"])
    q = model(batch["obs"], batch["done"], state)[0].float()
    with torch.no_grad():
        target_q = model(batch["obs"], batch["done"], state)[0].float()
    loss, _ = q_losses(q, target_q, batch, cfg.algo)
    loss.backward()


def test_only_what_the_losses_read_goes_to_the_device_and_the_bookkeeping_stays():
    cfg = OmegaConf.to_container(compose("experiment=cartpole"), resolve=True)
    learner = ActorCriticLearner(cfg, (4,), 2)
    batch = rollout_batch((4,), "cpu", num_actions=2, hidden=128)
    batch |= {"game_return": torch.ones(3), "steps": torch.tensor(32), "version": torch.ones(1)}
    moved = learner.transfer_batch_to_device(batch, META, 0)
    assert {key for key, value in moved.items() if value.device == META} == {
        "obs", "done", "action", "reward", "logits", "h0", "c0"
    }  # fmt: skip
    assert learner.transfer_batch_to_device(batch, torch.device("cpu"), 0) is batch


@pytest.fixture
def matmul_precision():
    """The default fp32 matmul precision for the test, the process's own restored after it."""
    saved = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("highest")
    yield
    torch.set_float32_matmul_precision(saved)


@pytest.mark.parametrize(
    ("capability", "expected"),
    [((9, 0), "bf16-mixed"), ((8, 0), "bf16-mixed"), ((7, 5), "32-true")],
)
def test_auto_precision_follows_the_gpus_compute_capability(
    monkeypatch, matmul_precision, capability, expected
):
    monkeypatch.setattr(hardware, "gpu_capability", lambda: capability)
    assert hardware.resolve_precision("auto", "cuda") == expected
    assert torch.get_float32_matmul_precision() == "high"  # fp32 products in TF32 where they remain
    assert hardware.resolve_precision("32-true", "cuda") == "32-true"  # a choice is kept


def test_auto_precision_on_the_cpu_follows_its_bf16_units(monkeypatch):
    monkeypatch.setattr(hardware, "bf16_supported", lambda: True)
    assert hardware.resolve_precision("auto", "cpu") == "bf16-mixed"
    monkeypatch.setattr(hardware, "bf16_supported", lambda: False)
    assert hardware.resolve_precision("auto", "cpu") == "32-true"
    assert hardware.resolve_precision("auto", "mps") == "32-true"


def with_gpus(monkeypatch, count: int, num_cores: int = 16) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: count > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: count)
    monkeypatch.setattr(hardware, "cores", lambda: num_cores)
    monkeypatch.setattr("atari_a3c.config.job.cores", lambda: num_cores)


def test_a_gpu_learner_keeps_two_threads_and_the_actors_take_the_other_cores(monkeypatch):
    with_gpus(monkeypatch, 1)
    cfg = compose("env=pong", "trainer.accelerator=auto")
    size_from_cores(cfg)
    assert (cfg.workers, cfg.env.env_threads, cfg.learner_threads) == (7, 2, 2)
    assert one_learner_process(cfg)
    cpu = compose("env=pong", "trainer.accelerator=cpu")
    size_from_cores(cpu)
    assert (cpu.workers, cpu.env.env_threads, cpu.learner_threads) == (4, 2, 8)


def test_devices_auto_counts_every_gpu_and_divides_the_cores_among_the_ranks(monkeypatch):
    with_gpus(monkeypatch, 2)
    cfg = compose("env=pong", "trainer.accelerator=gpu", "trainer.devices=auto")
    assert not one_learner_process(cfg)  # DDP: each rank launches and seeds its own actors
    size_from_cores(cfg)
    assert (cfg.workers, cfg.env.env_threads, cfg.learner_threads) == (3, 2, 2)  # 8 cores each
    with_gpus(monkeypatch, 0)
    assert one_learner_process(compose("trainer.devices=auto"))


@pytest.mark.parametrize(
    ("devices", "ranks"), [(1, 1), ("2", 2), ("0,1", 2), ("0,", 1), ([0, 2, 3], 3), (-1, 4)]
)
def test_every_form_of_trainer_devices_counts_the_ranks_lightning_starts(
    monkeypatch, devices, ranks
):
    with_gpus(monkeypatch, 4)
    assert hardware.learner_processes(devices, "gpu") == ranks


def test_the_default_accelerator_is_lightnings_auto():
    assert compose().trainer.accelerator == "auto"


def test_finish_wandb_lets_the_runs_own_error_through(monkeypatch):
    monkeypatch.setitem(sys.modules, "wandb", None)  # W&B not installed: importing it fails
    with pytest.raises(ValueError, match="the run's own error"):
        try:
            raise ValueError("the run's own error")
        finally:
            finish_wandb()


def save_as_from_cuda(checkpoint: dict, path) -> None:
    """`torch.save` recording every storage on `cuda:0`, as a save from a GPU learner does."""
    registry = list(torch.serialization._package_registry)
    torch.serialization.register_package(0, lambda storage: "cuda:0", lambda obj, location: None)
    try:
        torch.save(checkpoint, path)
    finally:
        torch.serialization._package_registry[:] = registry


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="shows loading where CUDA is missing")
def test_a_checkpoint_from_a_gpu_loads_for_evaluation_resume_and_init_from(tmp_path):
    common = ("env=cartpole", "experiment=cartpole", "debug=tiny", "logger=csv")
    first = tmp_path / "first"
    train(first, *common)
    last = first / "checkpoints" / "last.ckpt"
    save_as_from_cuda(torch.load(last, map_location="cpu", weights_only=True), last)
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(last, weights_only=True)  # the file holds CUDA storages
    shutil.copy(last, tmp_path / "from_gpu.ckpt")
    played = run_script("evaluate.py", f"ckpt={last}", "episodes=1", f"output_dir={tmp_path}/e")
    assert played.returncode == 0, played.stderr[-3000:]
    train(first, *common, f"ckpt_path={last}", "frames=8000")
    train(tmp_path / "second", *common, f"init_from={tmp_path / 'from_gpu.ckpt'}")
