"""LSTM state handling: resets exactly at episode starts; stored rollout states replay exactly."""

import copy

import pytest
import torch
from helpers.runs import compose
from omegaconf import OmegaConf

from atari_a3c.actors.actor import Actor
from atari_a3c.actors.shared import SharedWeights, SlotLayout, allocate_slots, new_obs
from atari_a3c.envs.make import env_spec
from atari_a3c.hardware import bf16_supported
from atari_a3c.models.actor_critic import ActorCritic, build_model, prepare_inference
from atari_a3c.models.encoders import ResidualBlock


def test_state_resets_exactly_where_episodes_start():
    torch.manual_seed(0)
    model = ActorCritic((4,), 3, "mlp", 16)
    obs = torch.randn(6, 2, 4)
    done = torch.zeros(6, 2, dtype=torch.bool)
    done[3, 0] = True
    state = (torch.randn(2, 16), torch.randn(2, 16))
    logits, values, _ = model(obs, done, state)
    fresh_logits, fresh_values, _ = model(obs[3:, :1], done[3:, :1], model.initial_state(1))
    torch.testing.assert_close(values[3:, 0], fresh_values[:, 0])
    torch.testing.assert_close(logits[3:, 0], fresh_logits[:, 0])
    carried = model(obs[3:, 1:], done[3:, 1:], model.initial_state(1))[1]
    assert not torch.allclose(values[3:, 1], carried[:, 0]), "env 1 must keep its state"


def test_non_recurrent_ablation_forgets_every_step():
    torch.manual_seed(0)
    model = ActorCritic((4,), 3, "mlp", 16, recurrent=False)
    obs = torch.randn(5, 1, 4)
    _, values, _ = model(obs, torch.zeros(5, 1, dtype=torch.bool), model.initial_state(1))
    for t in range(5):
        single = model(obs[t : t + 1], torch.ones(1, 1, dtype=torch.bool), model.initial_state(1))
        torch.testing.assert_close(values[t], single[1][0])


def test_stored_rollout_state_reproduces_actor_logits():
    cfg = compose("experiment=cartpole", "envs_per_worker=3", "algo.unroll=40")
    spec = env_spec(cfg)
    layout = SlotLayout(40, 3, spec.obs_shape, spec.torch_dtype, spec.num_actions, 128)
    slots = allocate_slots(2, layout)
    torch.manual_seed(0)
    learner_model = ActorCritic(spec.obs_shape, spec.num_actions, "mlp", 128)
    learner_model.track_value_targets(torch.randn(100) * 3 - 5, 0.5)  # actors mirror the stats
    weights = SharedWeights(learner_model)
    actor = Actor(OmegaConf.create(OmegaConf.to_container(cfg)), layout, slots, weights, seed=1)
    actor.fill(0)
    actor.fill(1)  # starts mid-episode: its stored initial state is not zero
    assert slots["done"][1, 1:].any(), "episodes should end inside the rollout"
    assert slots["h0"][1].abs().sum() > 0
    for index in (0, 1):
        slot = {key: tensor[index] for key, tensor in slots.items()}
        with torch.no_grad():
            logits, _, _ = learner_model(slot["obs"], slot["done"], (slot["h0"], slot["c0"]))
        torch.testing.assert_close(logits[:-1], slot["logits"], atol=1e-5, rtol=0)
    torch.testing.assert_close(slots["obs"][0, -1], slots["obs"][1, 0])  # overlap by one step


def test_popart_tracks_target_statistics_and_keeps_the_values():
    torch.manual_seed(0)
    model = ActorCritic((4,), 3, "mlp", 16)
    obs, done = torch.randn(5, 2, 4), torch.zeros(5, 2, dtype=torch.bool)
    untrained = model(obs, done, model.initial_state(2))[1]
    model.track_value_targets(torch.full((64,), 5.0), 0.05)  # the first targets set the mean
    after_first = model(obs, done, model.initial_state(2))[1]
    torch.testing.assert_close(after_first, untrained * model.value_std + 5.0)
    for _ in range(300):
        model.track_value_targets(torch.randn(64) * 0.5 - 2, 0.05)
    assert abs(model.value_mean.item() + 2) < 0.1
    assert abs(model.value_std.item() - 0.5) < 0.1
    torch.testing.assert_close(model(obs, done, model.initial_state(2))[1], after_first)


def test_observation_mean_is_set_then_tracked_and_subtracted():
    torch.manual_seed(0)
    model = ActorCritic((4,), 3, "mlp", 16)
    plain = copy.deepcopy(model)
    model.track_observations(torch.full((8, 4), 3.0), 0.1)  # the first batch sets the mean
    torch.testing.assert_close(model.obs_mean, torch.full((4,), 3.0))
    model.track_observations(torch.full((8, 4), 13.0), 0.1)
    torch.testing.assert_close(model.obs_mean, torch.full((4,), 4.0))
    obs, done = torch.randn(5, 2, 4), torch.zeros(5, 2, dtype=torch.bool)
    given = obs.clone()
    values = model(obs, done, model.initial_state(2))[1]
    assert torch.equal(obs, given), "the caller's observations must not change"
    torch.testing.assert_close(values, plain(obs - 4.0, done, plain.initial_state(2))[1])
    image = ActorCritic((4, 84, 84), 6, "nature", 32)
    frames = torch.randint(0, 256, (8, 4, 84, 84), dtype=torch.uint8)
    image.track_observations(frames, 0.1)
    torch.testing.assert_close(image.obs_mean, frames.float().mean(0) / 255)


def test_weights_saved_before_the_statistics_load_with_neutral_ones():
    saved = ActorCritic((4,), 3, "mlp", 16)
    saved.track_value_targets(torch.full((8,), 5.0), 0.5)
    saved.track_observations(torch.ones(8, 4), 0.5)
    old_weights = {
        k: v for k, v in saved.state_dict().items() if not k.startswith(("value_", "obs_"))
    }
    model = ActorCritic((4,), 3, "mlp", 16)
    model.load_state_dict(old_weights)  # strict: every other key must still match
    assert (model.value_mean.item(), model.value_std.item()) == (0.0, 1.0)
    assert not model.obs_mean.any()
    torch.testing.assert_close(model.value.weight, saved.value.weight)


def test_shared_weights_copy_without_aliasing_and_keep_layouts():
    learner, actor = (
        ActorCritic((4, 84, 84), 6, "nature", 32),
        ActorCritic((4, 84, 84), 6, "nature", 32),
    )
    actor.to(memory_format=torch.channels_last)
    weights = SharedWeights(learner)
    weights.pull(actor)
    for mine, theirs in zip(actor.parameters(), learner.parameters(), strict=True):
        torch.testing.assert_close(mine, theirs)
    conv = actor.encoder[0].weight
    assert conv.is_contiguous(memory_format=torch.channels_last)
    before = conv.clone()
    weights.flat.add_(1.0)  # the learner publishing again must not change a pulled copy
    torch.testing.assert_close(conv, before)


@pytest.mark.parametrize("bf16", [False, True])
def test_unrolled_core_matches_lstm_cell_steps_in_outputs_and_gradients(bf16):
    """The core's unroll and its hand-written backward against autograd through `LSTMCell`
    steps, with an episode starting mid-rollout and a loss on the final state too."""
    torch.manual_seed(0)
    model = ActorCritic((4,), 3, "mlp", 16)
    obs, done = torch.randn(6, 2, 4), torch.zeros(6, 2, dtype=torch.bool)
    done[2, 1] = True
    h0, c0 = (torch.randn(2, 16, requires_grad=True) for _ in range(2))
    weights = torch.randn(6, 2, 4)

    def outputs_and_gradients(unroll):
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits, values, (h, c) = unroll()
        outputs = torch.cat([logits.float(), values.float().unsqueeze(-1)], dim=-1)
        loss = (outputs * weights).sum() + (h * c).sum()
        return [outputs, h, c, *torch.autograd.grad(loss, [h0, c0, *model.parameters()])]

    def by_model():
        return model(obs, done, (h0, c0))

    def by_cell_steps():
        state, logits, values = (h0, c0), [], []
        for t in range(6):
            keep = (~done[t]).float().unsqueeze(-1)
            state = model.core(model.encoder(obs[t]), (state[0] * keep, state[1] * keep))
            logits.append(model.policy(state[0]))
            values.append(model.value(state[0]).squeeze(-1))
        return torch.stack(logits), torch.stack(values), state

    tolerance = {"rtol": 0.05, "atol": 0.02} if bf16 else {}
    ours, reference = outputs_and_gradients(by_model), outputs_and_gradients(by_cell_steps)
    for mine, theirs in zip(ours, reference, strict=True):
        torch.testing.assert_close(mine.float(), theirs.float(), **tolerance)


def test_bootstrap_step_is_encoded_without_gradient_and_the_update_is_unchanged():
    torch.manual_seed(0)
    model = ActorCritic((4, 84, 84), 6, "nature", 32)
    obs = torch.randint(0, 255, (4, 3, 4, 84, 84), dtype=torch.uint8)
    done, state = torch.zeros(4, 3, dtype=torch.bool), model.initial_state(3)
    grads, outputs = [], []
    for last_bootstraps in (False, True):
        model.zero_grad()
        logits, values, _ = model(obs, done, state, last_bootstraps=last_bootstraps)
        (logits[:-1].sum() + values[:-1].sum()).backward()  # the last step only bootstraps
        grads.append([p.grad.clone() for p in model.parameters()])
        outputs.append((logits, values))
    torch.testing.assert_close(outputs[0], outputs[1])
    torch.testing.assert_close(grads[0], grads[1])
    with_grad = []  # frames the encoder's backward will run over, per call
    model.encoder.register_forward_hook(
        lambda _, args, out: with_grad.append(len(out) if out.requires_grad else 0)
    )
    model(obs, done, state, last_bootstraps=True)
    assert sum(with_grad) == 3 * 3, "only the first 3 steps of 3 envs take gradient"


@pytest.mark.parametrize(
    "bf16",
    [False, pytest.param(True, marks=pytest.mark.skipif(not bf16_supported(), reason="bf16"))],
)
def test_channels_last_frames_give_the_same_outputs_and_gradients_as_contiguous_ones(bf16):
    torch.manual_seed(0)
    model = build_model(compose().model, (4, 84, 84), 6)  # the learner's model, channels_last
    obs = torch.randint(0, 255, (4, 3, 4, 84, 84), dtype=torch.uint8)
    model.track_observations(obs[0], 0.01)
    stored = new_obs((4, 3), (4, 84, 84), torch.uint8).copy_(obs)  # as the slots hold frames
    assert stored.flatten(0, 1).is_contiguous(memory_format=torch.channels_last)
    done, state = torch.zeros(4, 3, dtype=torch.bool), model.initial_state(3)
    results = []
    for frames in (obs, stored):
        model.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            logits, values, _ = model(frames, done, state, last_bootstraps=True)
        (logits[:-1].float().sum() + values[:-1].float().sum()).backward()
        results.append([logits, values, *(p.grad.clone() for p in model.parameters())])
    assert all(torch.equal(a, b) for a, b in zip(*results, strict=True))


@pytest.mark.skipif(not bf16_supported(), reason="acting in bf16 needs a CPU that does bf16")
def test_bf16_acting_stores_bf16_weights_and_acts_as_autocast_of_float32():
    torch.manual_seed(0)
    cfg = OmegaConf.create({"encoder": "nature", "hidden_size": 32})
    learner, actor = build_model(cfg, (4, 84, 84), 6), build_model(cfg, (4, 84, 84), 6)
    obs = torch.randint(0, 255, (3, 5, 4, 84, 84), dtype=torch.uint8)
    learner.track_observations(obs.flatten(0, 1), 0.5)
    learner.track_value_targets(torch.randn(100) * 3 - 5, 0.5)
    context = prepare_inference(actor)
    SharedWeights(learner).pull(actor)
    assert actor.core.weight_hh.dtype == actor.encoder[0].weight.dtype == torch.bfloat16
    assert actor.obs_mean.dtype == actor.value_std.dtype == torch.float32
    done, state = torch.zeros(3, 5, dtype=torch.bool), learner.initial_state(5)
    with torch.no_grad(), context:
        expected, acted = learner(obs, done, state), actor(obs, done, state)
    torch.testing.assert_close(acted, expected, atol=0, rtol=0)


def test_the_impala_encoder_stacks_three_residual_stages_into_256_features():
    cfg = compose("model=impala_resnet")
    model = build_model(cfg.model, (4, 84, 84), 6)
    stages = [m for m in model.encoder if isinstance(m, torch.nn.Conv2d)]
    assert [conv.out_channels for conv in stages] == [16, 32, 32]
    assert sum(isinstance(m, ResidualBlock) for m in model.encoder) == 6
    frames = torch.randint(0, 255, (2, 4, 84, 84), dtype=torch.uint8)
    assert model.encoder(model._prepare(frames)).shape == (2, 256)
    block = model.encoder[2]
    x = torch.randn(1, 16, 42, 42)
    torch.nn.init.zeros_(block.convs[-1].weight), torch.nn.init.zeros_(block.convs[-1].bias)
    assert torch.equal(block(x), x)  # the skip: a block whose last conv is zero is the identity
