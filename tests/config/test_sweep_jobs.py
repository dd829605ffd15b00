"""The command line's check sees each job of a sweep as Hydra's basic sweeper makes them: this
pins `hydra._internal`'s `BasicSweeper.split_arguments`, the one private Hydra API used."""

from atari_a3c.config.cli import _override_combinations


def test_a_sweep_splits_into_every_combination_in_hydras_order():
    jobs = _override_combinations(["env=pong,breakout", "seed=1,2", "frames=4000"], True)
    assert jobs == [
        ["env=pong", "seed=1", "frames=4000"],
        ["env=pong", "seed=2", "frames=4000"],
        ["env=breakout", "seed=1", "frames=4000"],
        ["env=breakout", "seed=2", "frames=4000"],
    ]
    assert _override_combinations(["seed=1,2"], False) == [["seed=1,2"]]  # one run: as given


def test_a_sweep_a_search_plugin_expands_keeps_only_its_fixed_overrides():
    jobs = _override_combinations(["optim.lr=interval(1e-4,1e-3)", "frames=4000"], True)
    assert jobs == [["frames=4000"]]
