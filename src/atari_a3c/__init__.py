"""Recurrent actor-critic (A3C-LSTM, IMPALA V-trace) on Atari with Lightning and Hydra."""
