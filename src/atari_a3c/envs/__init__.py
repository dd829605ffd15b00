"""The envs: one env from a config, and the actors' native vector env with true scores and lost-
life cuts."""
