"""Where a checkpoint named on the command line comes from: a file, an agent shipped with the
package (`pretrained/pong`) or a W&B model artifact (`wandb:<entity>/<project>/<name>:<alias>`)."""

from __future__ import annotations

from pathlib import Path

from atari_a3c.errors import CheckpointError

PRETRAINED = Path(__file__).resolve().parents[1] / "pretrained"
PRETRAINED_PREFIX = "pretrained/"
WANDB_PREFIX = "wandb:"
WANDB_TIMEOUT = 20  # seconds


def shipped_agents() -> list[str]:
    return sorted(f"{PRETRAINED_PREFIX}{path.stem}" for path in PRETRAINED.glob("*.ckpt"))


def locate(ref: str) -> Path:
    """The local file behind `ref`; a W&B artifact is downloaded (W&B caches it)."""
    if ref.startswith(WANDB_PREFIX):
        return _download(ref.removeprefix(WANDB_PREFIX))
    path = Path(ref)
    if ref.startswith(PRETRAINED_PREFIX) and not path.exists():
        shipped = PRETRAINED / f"{ref.removeprefix(PRETRAINED_PREFIX)}.ckpt"
        if not shipped.is_file():
            raise CheckpointError(f"no shipped agent {ref}; shipped: {', '.join(shipped_agents())}")
        return shipped
    return path


def _download(name: str) -> Path:
    """The checkpoint file of the W&B model artifact `name`, or one line saying why not."""
    import wandb

    try:
        directory = Path(wandb.Api(timeout=WANDB_TIMEOUT).artifact(name, type="model").download())
    except Exception as error:  # no login, no network, no such artifact: wandb raises many kinds
        reason = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise CheckpointError(f"W&B artifact {name!r} not available: {reason}") from None
    files = sorted(directory.glob("*.ckpt"))
    if not files:
        raise CheckpointError(f"W&B artifact {name!r} holds no .ckpt file")
    return files[0]
