"""The encoders an ActorCritic can put before its LSTM core."""

from __future__ import annotations

import math

from torch import nn


def nature_encoder(in_channels: int) -> nn.Module:
    """The Nature-DQN conv stack, for 84x84 inputs, ending in a 512-unit layer."""
    return nn.Sequential(
        nn.Conv2d(in_channels, 32, 8, stride=4),
        nn.ReLU(),
        nn.Conv2d(32, 64, 4, stride=2),
        nn.ReLU(),
        nn.Conv2d(64, 64, 3, stride=1),
        nn.ReLU(),
        nn.Flatten(),
        nn.LazyLinear(512),
        nn.ReLU(),
    )


def a3c_encoder(in_channels: int) -> nn.Module:
    """The A3C port's four conv + 2x2 max-pool layers: 1x80x80 in, 1024 features out."""
    layers: list[nn.Module] = []
    for c_in, c_out, kernel, pad in [
        (in_channels, 32, 5, 2),
        (32, 32, 5, 1),
        (32, 64, 4, 1),
        (64, 64, 3, 1),
    ]:
        layers += [nn.Conv2d(c_in, c_out, kernel, padding=pad), nn.MaxPool2d(2), nn.ReLU()]
    return nn.Sequential(*layers, nn.Flatten())


def mlp_encoder(in_features: int, width: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(in_features, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh()
    )


ENCODERS = ("nature", "a3c", "mlp")


def build_encoder(encoder: str, obs_shape: tuple[int, ...], width: int) -> nn.Module:
    """`encoder` for observations of `obs_shape`: vectors into the MLP, image stacks (RGB
    stacks folded into channels) into a conv net."""
    if encoder == "mlp":
        return mlp_encoder(math.prod(obs_shape), width)
    channels = obs_shape[0] * (obs_shape[3] if len(obs_shape) == 4 else 1)
    return (nature_encoder if encoder == "nature" else a3c_encoder)(channels)
