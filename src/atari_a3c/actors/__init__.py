"""The actors: their process, the pool that starts, watches and replaces them, the shared-memory
slots and weights, and the rollout (and DQN replay) datasets the learner reads."""
