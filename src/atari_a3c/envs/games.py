"""Every Atari game ale-py ships, by its short lower-case name: `asterix` -> `ALE/Asterix-v5`.

The list is read off gymnasium's registry, where importing ale-py puts its games; the config's
`env` group offers each name (`env=asterix`), and `evaluate.py env=<name>` plays it.
"""

from __future__ import annotations

import ale_py
import gymnasium as gym

gym.register_envs(ale_py)


def _games() -> dict[str, str]:
    ids = (i for i in gym.registry if i.startswith("ALE/") and i.endswith("-v5"))
    return {i.removeprefix("ALE/").removesuffix("-v5").lower(): i for i in sorted(ids)}


GAMES = _games()  # short name -> gymnasium id, one per single-player game ale-py ships


if __name__ == "__main__":  # `python -m atari_a3c.envs.games`: the names `env=` takes
    print("\n".join(f"{name:<20} {env_id}" for name, env_id in GAMES.items()))
