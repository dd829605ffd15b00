"""Play a checkpoint: `python evaluate.py ckpt=<run dir>/checkpoints/last.ckpt render=true`."""

from pathlib import Path

import hydra
from omegaconf import DictConfig

from atari_a3c.config.cli import precheck, run_or_exit
from atari_a3c.config.schema import unregister_games

CONFIG_DIR = Path(__file__).parent / "conf" / "evaluate"


def check(cfg: DictConfig, overrides: list[str]) -> None:
    from atari_a3c.evaluation.task import check_request

    check_request(cfg)


@hydra.main(version_base="1.3", config_path="conf/evaluate", config_name="evaluate")
def main(cfg: DictConfig) -> float:
    from atari_a3c.evaluation.task import evaluate

    return run_or_exit(evaluate, cfg)


if __name__ == "__main__":
    unregister_games()
    precheck(CONFIG_DIR, "evaluate", check)
    main()
