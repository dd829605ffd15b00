"""One environment from an env config (evaluation, the gymnasium backend, the env spec), and
what an env config allows (game, observation type, mode, difficulty)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

import ale_py
import gymnasium as gym
import numpy as np
import torch
from gymnasium.wrappers import (
    AtariPreprocessing,
    FrameStackObservation,
    RecordEpisodeStatistics,
    RecordVideo,
    TransformObservation,
)
from omegaconf import DictConfig

from atari_a3c.errors import ConfigError

gym.register_envs(ale_py)
ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)  # no banner on every env start


OBS_TYPES = ("grayscale", "rgb", "ram")


def is_atari(env_id: str) -> bool:
    return env_id.startswith("ALE/")


def v5_id_of(env_id: str) -> str | None:
    """`PongNoFrameskip-v4` (an older gym id of an Atari game) -> `ALE/Pong-v5`; None for an id
    that is not an older Atari one."""
    spec = gym.registry.get(env_id)
    if is_atari(env_id) or spec is None or spec.entry_point != "ale_py.env:AtariEnv":
        return None
    game = spec.kwargs["game"]
    return next(i for i, s in gym.registry.items() if is_atari(i) and s.kwargs["game"] == game)


def obs_type(env_cfg: DictConfig) -> str:
    """What an Atari env observes; configs older than `obs_type` say `grayscale: true/false`."""
    if env_cfg.get("obs_type") is not None:
        return str(env_cfg.obs_type)
    return "grayscale" if env_cfg.get("grayscale", True) else "rgb"


def runs_natively(env_cfg: DictConfig) -> bool:
    """Whether ale-py's native vector env can play this config: pixels, default mode and
    difficulty. Anything else goes through gymnasium."""
    return (
        env_cfg.backend == "ale_vector"
        and is_atari(env_cfg.id)
        and obs_type(env_cfg) != "ram"
        and env_cfg.get("mode") is None
        and env_cfg.get("difficulty") is None
    )


def is_registered(env_id: str) -> bool:
    """Whether gymnasium can make `env_id`; `module:Name-v0` ids import their module first."""
    module, _, name = env_id.rpartition(":")
    if module:
        try:
            importlib.import_module(module)
        except ImportError:
            return False
    return name in gym.registry


def known_env_ids() -> list[str]:
    return sorted(gym.registry)


def rom_name(env_id: str) -> str:
    """`ALE/SpaceInvaders-v5` -> `space_invaders`, the ROM name the native vector env takes."""
    return gym.registry[env_id].kwargs["game"]


def game_options(env_id: str) -> tuple[list[int], list[int], str]:
    """The game modes and difficulties an Atari ROM offers, and the first of its own actions."""
    ale = ale_py.ALEInterface()
    ale.loadROM(ale_py.roms.get_rom_path(rom_name(env_id)))
    first = ale.getMinimalActionSet()[0].name
    return list(ale.getAvailableModes()), list(ale.getAvailableDifficulties()), first


def observation_settings(cfg: DictConfig) -> tuple[int, int]:
    """Screen side and frame stack: a model with a fixed input (a3c_lstm) overrides the env's."""
    screen = cfg.model.get("screen_size") or cfg.env.get("screen_size", 84)
    stack = cfg.model.get("frame_stack") or cfg.env.get("frame_stack", 4)
    return int(screen), int(stack)


def make_env(
    cfg: DictConfig, render_mode: str | None = None, video_dir: Path | None = None
) -> gym.Env:
    """One gymnasium env playing the full game: evaluation, rendering, the gymnasium backend.

    With `video_dir`, every game is recorded there as mp4, one frame per agent step.
    """
    env_cfg = cfg.env
    if video_dir is not None:
        render_mode = "rgb_array"
    if not is_atari(env_cfg.id):
        env = gym.make(env_cfg.id, render_mode=render_mode)
        return RecordEpisodeStatistics(_record(env, video_dir) if video_dir else env)
    screen, stack = observation_settings(cfg)
    env = gym.make(
        env_cfg.id,
        obs_type="ram",  # see _screen_shaped: the preprocessing grabs the screens it keeps
        frameskip=1,
        repeat_action_probability=env_cfg.sticky_action_prob,
        full_action_space=env_cfg.full_action_space,
        max_num_frames_per_episode=env_cfg.max_episode_frames,
        mode=env_cfg.get("mode"),
        difficulty=env_cfg.get("difficulty"),
        render_mode=render_mode,
    )
    kind = obs_type(env_cfg)
    env = AtariPreprocessing(
        _screen_shaped(env, kind),
        noop_max=env_cfg.noop_max,
        frame_skip=env_cfg.frame_skip,
        screen_size=screen,
        grayscale_obs=kind == "grayscale",
    )
    if kind == "ram":
        env = _ram_observations(env)
    if video_dir is not None:
        env = _record(env, video_dir, fps=60 // env_cfg.frame_skip)
    return RecordEpisodeStatistics(FrameStackObservation(env, stack, padding_type="zero"))


def _screen_shaped(env: gym.Env, kind: str) -> gym.Env:
    """The emulator env declaring the screen's shape, which AtariPreprocessing sizes its
    buffers from. The env itself observes the 128 bytes of RAM: the preprocessing grabs the
    screens it keeps from the emulator, so a screen copied on every skipped frame is waste."""
    height, width = env.unwrapped.ale.getScreenDims()
    shape = (height, width) if kind == "grayscale" else (height, width, 3)
    env.observation_space = gym.spaces.Box(0, 255, shape, np.uint8)
    return env


def _ram_observations(env: gym.Env) -> gym.Env:
    """The console's 128 bytes of RAM after each (frame-skipped, no-op-started) step."""
    ale = env.unwrapped.ale
    space = gym.spaces.Box(0, 255, (len(ale.getRAM()),), np.uint8)
    return TransformObservation(env, lambda _: ale.getRAM(), space)


def _record(env: gym.Env, video_dir: Path, fps: int | None = None) -> gym.Env:
    return RecordVideo(
        env, str(video_dir), episode_trigger=lambda _: True, name_prefix="game", fps=fps
    )


@dataclass(frozen=True)
class EnvSpec:
    obs_shape: tuple[int, ...]
    obs_dtype: np.dtype
    num_actions: int

    @property
    def torch_dtype(self) -> torch.dtype:
        return torch.from_numpy(np.zeros(0, self.obs_dtype)).dtype


def env_spec(cfg: DictConfig) -> EnvSpec:
    """Observation shape and dtype and action count, read off one env (both backends agree).

    Raises ConfigError for an env whose package is missing or whose actions are not discrete.
    """
    try:
        env = make_env(cfg)
    except gym.error.DependencyNotInstalled as error:
        raise ConfigError(f"env.id={cfg.env.id}: {str(error).splitlines()[0]}") from None
    try:
        actions = env.action_space
        if not isinstance(actions, gym.spaces.Discrete):
            raise ConfigError(
                f"env.id={cfg.env.id} has {type(actions).__name__} actions; "
                "the policies here choose among discrete actions"
            )
        space = env.observation_space
        return EnvSpec(tuple(space.shape), space.dtype, int(actions.n))
    finally:
        env.close()
