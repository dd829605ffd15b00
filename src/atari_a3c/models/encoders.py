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


class ResidualBlock(nn.Module):
    """`x + conv(relu(conv(relu(x))))`, two 3x3 convs keeping the channels and the size."""

    def __init__(self, channels: int):
        super().__init__()
        self.convs = nn.Sequential(
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, channels, 3, padding=1),
        )

    def forward(self, x):
        return x + self.convs(x)


def impala_encoder(in_channels: int) -> nn.Module:
    """The IMPALA paper's deep encoder: three stages of a 3x3 conv, a 3x3 stride-2 max-pool
    and two residual blocks (16, 32, 32 channels), then a 256-unit layer."""
    layers: list[nn.Module] = []
    for c_in, c_out in [(in_channels, 16), (16, 32), (32, 32)]:
        layers += [
            nn.Conv2d(c_in, c_out, 3, padding=1),
            nn.MaxPool2d(3, stride=2, padding=1),
            ResidualBlock(c_out),
            ResidualBlock(c_out),
        ]
    return nn.Sequential(*layers, nn.ReLU(), nn.Flatten(), nn.LazyLinear(256), nn.ReLU())


def mlp_encoder(in_features: int, width: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(in_features, width), nn.Tanh(), nn.Linear(width, width), nn.Tanh()
    )


ENCODERS = ("nature", "a3c", "impala", "mlp")
CONV_ENCODERS = {"nature": nature_encoder, "a3c": a3c_encoder, "impala": impala_encoder}


def build_encoder(encoder: str, obs_shape: tuple[int, ...], width: int) -> nn.Module:
    """`encoder` for observations of `obs_shape`: vectors into the MLP, image stacks (RGB
    stacks folded into channels) into a conv net."""
    if encoder == "mlp":
        return mlp_encoder(math.prod(obs_shape), width)
    channels = obs_shape[0] * (obs_shape[3] if len(obs_shape) == 4 else 1)
    return CONV_ENCODERS[encoder](channels)
