"""The learners: a base that every algorithm shares and one sibling per algorithm, each with its
pure loss maths beside it. `algo._target_` in the config names the class a run trains with."""
