"""A training run around the learner: the job, the Trainer and the task, callbacks, shutdown, the
end-of-run report and a multirun's table."""
