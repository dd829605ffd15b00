"""The peers' training frames/s on this machine (Stable-Baselines3 A2C and sb3-contrib
RecurrentPPO on Pong), measured by `peer_sb3.py` in a throwaway venv of theirs; used by
`throughput.py --peers`."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

PEER_SCRIPT = Path(__file__).resolve().parents[3] / "shared" / "bench" / "peer_sb3.py"


def peers_missing(python: str) -> str | None:
    """Why the peers cannot run with `python`, or None when they can."""
    if not PEER_SCRIPT.exists():
        return f"{PEER_SCRIPT} not found"
    check = [python, "-c", "import stable_baselines3, sb3_contrib"]
    try:
        out = subprocess.run(check, capture_output=True, text=True)
    except OSError as error:
        return f"{python}: {error}"
    lines = out.stderr.strip().splitlines()
    return None if out.returncode == 0 else f"{python}: {lines[-1] if lines else 'import failed'}"


def peer_rates(python: str, steps: int) -> dict[str, float]:
    """Env frames/s of each SB3 peer, from peer_sb3.py's `peer=<name> frames_per_s=<int>` lines."""
    cmd = [python, str(PEER_SCRIPT), "--algo", "both", "--steps", str(steps)]
    cmd += ["--envs", "8", "--threads", "2"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return {m[1]: float(m[2]) for m in re.finditer(r"peer=(\S+) frames_per_s=(\d+)", out)}
