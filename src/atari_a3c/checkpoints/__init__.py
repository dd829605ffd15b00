"""Checkpoints: atomic save, safe load and compatibility checks, their sources (a file, a shipped
agent, a W&B artifact) and export."""
