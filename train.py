"""Train a recurrent actor-critic on Atari: `python train.py env=spaceinvaders optim=adam`."""

from pathlib import Path

import hydra
from omegaconf import DictConfig

from atari_a3c.config.cli import precheck, run_or_exit

CONFIG_DIR = Path(__file__).parent / "conf"


@hydra.main(version_base="1.3", config_path="conf", config_name="train")
def main(cfg: DictConfig) -> float:
    from atari_a3c.training.job import run_training

    return run_or_exit(run_training, cfg)


if __name__ == "__main__":
    from atari_a3c.actors.child_process import start_fork_server

    start_fork_server()  # imports the actors' modules while this process checks the command line
    from atari_a3c.config.job import precheck_job

    precheck(CONFIG_DIR, "train", precheck_job)
    main()
