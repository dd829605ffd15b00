"""Helpers shared by the tests, and the test envs the runs import (on their PYTHONPATH)."""
