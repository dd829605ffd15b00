"""The LSTM core and the actor-critic heads over an encoder, behind one `ActorCritic` interface."""

from __future__ import annotations

import math
from contextlib import nullcontext

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from atari_a3c.hardware import bf16_supported
from atari_a3c.models.encoders import build_encoder
from atari_a3c.models.lstm import lstm_unroll

State = tuple[Tensor, Tensor]
MIN_VALUE_STD = 1e-2  # floor of the PopArt scale, so near-constant returns do not blow it up


class ActorCritic(nn.Module):
    """Encoder -> LSTMCell -> policy logits and value, unrolled over `[T, B]` with episode resets.

    Image observations are uint8 `[stack, H, W]` (or `[stack, H, W, 3]` for RGB); vector
    observations are float. `done[t]` marks that `obs[t]` starts a new episode: the LSTM state
    is zeroed there before the step, and at every step when `recurrent` is false (an ablation
    that keeps the architecture but removes its memory). The value head's output is scaled by
    `value_std` and shifted by `value_mean` (PopArt statistics; 1 and 0 unless tracked), and
    the inputs are shifted by `obs_mean` (0 unless tracked). With `dueling` (for DQN), the
    policy head's outputs are advantages and the first output is the Q-values built from them.
    """

    def __init__(
        self,
        obs_shape: tuple[int, ...],
        num_actions: int,
        encoder: str,
        hidden_size: int,
        recurrent: bool = True,
        dueling: bool = False,
    ):
        super().__init__()
        self.recurrent, self.dueling = recurrent, dueling
        self.obs_shape = tuple(obs_shape)
        self.is_image = encoder != "mlp"
        self.encoder = build_encoder(encoder, self.obs_shape, hidden_size)
        input_shape = self._scale(torch.zeros(1, *obs_shape)).shape[1:]
        self.register_buffer("obs_mean", torch.zeros(input_shape))
        self.register_buffer("obs_updates", torch.zeros((), dtype=torch.int64))
        with torch.no_grad():
            features = self.encoder(self._prepare(torch.zeros(1, *obs_shape))).shape[-1]
        self.core = nn.LSTMCell(features, hidden_size)
        self.policy = nn.Linear(hidden_size, num_actions)
        self.value = nn.Linear(hidden_size, 1)
        self.register_buffer("value_mean", torch.zeros(()))
        self.register_buffer("value_std", torch.ones(()))
        self.register_buffer("value_updates", torch.zeros((), dtype=torch.int64))
        self._init_weights()

    def _init_weights(self) -> None:
        for module in self.modules():
            if isinstance(module, nn.Conv2d | nn.Linear):
                nn.init.orthogonal_(module.weight, math.sqrt(2))
                nn.init.zeros_(module.bias)
        nn.init.orthogonal_(self.policy.weight, 0.01)
        nn.init.orthogonal_(self.value.weight, 1.0)
        nn.init.zeros_(self.core.bias_ih)
        nn.init.zeros_(self.core.bias_hh)

    @property
    def hidden_size(self) -> int:
        return self.core.hidden_size

    def initial_state(self, batch: int, device: torch.device | str = "cpu") -> State:
        zeros = torch.zeros(batch, self.hidden_size, device=device)
        return zeros, zeros.clone()

    def _scale(self, obs: Tensor) -> Tensor:
        """`[N, *obs_shape]` -> float: RGB stacks folded into channels, bytes (pixels, RAM)
        in [0, 1]."""
        if not self.is_image:
            flat = obs.flatten(1).float()
            return flat.div_(255.0) if obs.dtype == torch.uint8 else flat
        if obs.dim() == 5:
            obs = obs.permute(0, 1, 4, 2, 3).flatten(1, 2)
        return obs.float().div_(255.0)

    def _prepare(self, obs: Tensor) -> Tensor:
        """The encoder's input: scaled observations minus their running mean (0 unless tracked).

        Channels-last frames (the learner's batches, `buffers.new_obs`) stay channels-last, the
        convs' layout, and their mean is laid out as they are, so that the subtraction is one
        pass over memory."""
        frames, mean = self._scale(obs), self.obs_mean
        if frames.dim() == 4 and frames.is_contiguous(memory_format=torch.channels_last):
            mean = mean.permute(1, 2, 0).contiguous().permute(2, 0, 1)
        centred = frames.sub_(mean) if self.is_image else frames - mean  # images: a new tensor
        return centred.to(next(self.encoder.parameters()).dtype)  # as autocast would cast

    def forward(
        self, obs: Tensor, done: Tensor, state: State, last_bootstraps: bool = False
    ) -> tuple[Tensor, Tensor, State]:
        """`obs [T, B, ...]`, `done [T, B]` -> logits `[T, B, A]`, values `[T, B]`, final state.

        `last_bootstraps`: the last step's outputs serve only as detached targets, so its frames
        are encoded without gradient (a sixth less encoder backward for 5-step rollouts)."""
        features = self._encode(obs, last_bootstraps and torch.is_grad_enabled())
        keep = (~done & self.recurrent).unsqueeze(-1).float()
        core = self.core
        gates_in = F.linear(features, core.weight_ih, core.bias_ih)  # one matmul for all steps
        weight_hh = core.weight_hh.to(gates_in.dtype)  # cast once, not at every step (autocast)
        hidden, state = lstm_unroll(gates_in, keep, state, weight_hh, core.bias_hh)
        heads_in = hidden.to(self.value.weight.dtype)  # float32 from the core; as autocast casts
        values = self.value(heads_in).squeeze(-1) * self.value_std + self.value_mean
        logits = self.policy(heads_in)
        if self.dueling:  # Q-values: the value plus the advantages minus their mean
            logits = values.unsqueeze(-1) + logits - logits.mean(-1, keepdim=True)
        return logits, values, state

    def _encode(self, obs: Tensor, last_without_grad: bool) -> Tensor:
        """`obs [T, B, ...]` -> features `[T, B, F]`."""
        steps, batch = obs.shape[:2]
        if not last_without_grad:
            return self.encoder(self._prepare(obs.flatten(0, 1))).view(steps, batch, -1)
        with torch.no_grad():
            last = self.encoder(self._prepare(obs[-1]))
        head = self.encoder(self._prepare(obs[:-1].flatten(0, 1)))
        return torch.cat([head, last]).view(steps, batch, -1)

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs) -> None:
        """Checkpoints saved before PopArt or the observation mean load with neutral statistics."""
        state_dict.setdefault(prefix + "value_mean", torch.zeros(()))
        state_dict.setdefault(prefix + "value_std", torch.ones(()))
        state_dict.setdefault(prefix + "value_updates", torch.zeros((), dtype=torch.int64))
        state_dict.setdefault(prefix + "obs_mean", torch.zeros_like(self.obs_mean))
        state_dict.setdefault(prefix + "obs_updates", torch.zeros((), dtype=torch.int64))
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    @torch.no_grad()
    def track_value_targets(self, targets: Tensor, rate: float) -> None:
        """PopArt's update from a batch of value targets; see `track_value_moments`."""
        self.track_value_moments(targets.mean(), targets.pow(2).mean(), rate)

    @torch.no_grad()
    def track_value_moments(self, mean: Tensor, second_moment: Tensor, rate: float) -> None:
        """PopArt (van Hasselt et al. 2016): move the value statistics towards the targets'
        `mean` and `second_moment`, rescaling the value head so that its outputs stay the same.

        The head then only learns returns relative to their running mean, instead of every
        trunk unit being pushed the same way while the mean return drifts (which kills ReLUs).
        The first update only sets the mean, keeping nothing of the untrained head: values start
        at the targets' mean, and the std (whose first estimate is poor) moves from 1 by `rate`.
        """
        self.value_updates += 1
        if self.value_updates == 1:
            self.value_mean.copy_(mean)
            return
        old_mean, old_std = self.value_mean.clone(), self.value_std.clone()
        second = (old_std**2 + old_mean**2).lerp(second_moment, rate)
        self.value_mean.lerp_(mean, rate)
        self.value_std.copy_((second - self.value_mean**2).clamp(min=MIN_VALUE_STD**2).sqrt())
        self.value.weight.mul_(old_std / self.value_std)
        self.value.bias.mul_(old_std).add_(old_mean - self.value_mean).div_(self.value_std)

    @torch.no_grad()
    def observation_mean(self, obs: Tensor) -> Tensor:
        """The mean of `obs` `[N, *obs_shape]` as the encoder sees them, before centring."""
        return self._scale(obs).mean(0)

    def track_observations(self, obs: Tensor, rate: float) -> None:
        """Move the mean subtracted from the inputs towards that of `obs` `[N, *obs_shape]`."""
        self.track_observation_mean(self.observation_mean(obs), rate)

    @torch.no_grad()
    def track_observation_mean(self, mean: Tensor, rate: float) -> None:
        """Move the mean subtracted from the inputs towards `mean` (`observation_mean` of a
        batch, or its average over DDP ranks).

        Atari frames are mostly a constant background: without this, it dominates every
        feature and the encoder's units barely tell states apart. The first call sets the mean.
        """
        self.obs_updates += 1
        self.obs_mean.lerp_(mean, 1.0 if self.obs_updates == 1 else rate)


def prepare_inference(model: ActorCritic):
    """Ready `model` for no-grad acting; returns the context its steps run in.

    On CPUs that do bf16 natively, conv policies act in bf16 autocast, and their conv, linear
    and LSTM weights are stored in bf16 so that autocast does not cast every weight again at
    every step: copies into them (weights pulled, checkpoints loaded) round as that cast does,
    so the outputs are the same. The buffers (observation mean, value statistics) stay float32.
    Elsewhere: float32 and no context.
    """
    if not (model.is_image and bf16_supported()):
        return nullcontext()
    for module in model.modules():
        if isinstance(module, nn.Conv2d | nn.Linear | nn.LSTMCell):
            module.to(torch.bfloat16)
    return torch.autocast("cpu", dtype=torch.bfloat16)


def build_model(model_cfg, obs_shape: tuple[int, ...], num_actions: int) -> ActorCritic:
    """The configured ActorCritic; conv nets in channels_last, the faster layout on every CPU."""
    model = ActorCritic(
        obs_shape,
        num_actions,
        model_cfg.encoder,
        model_cfg.hidden_size,
        recurrent=model_cfg.get("recurrent", True),
        dueling=model_cfg.get("dueling", False),
    )
    if model.is_image:
        model.to(memory_format=torch.channels_last)
    return model
