"""Evaluation: playing full games, the periodic evaluator, recorded games, comparisons, video and
curves, and evaluate.py's task."""
