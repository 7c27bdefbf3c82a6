"""The engine: learners, adversaries, problems, ``simulate`` and ``monte_carlo``.

Knows nothing about any paper (DESIGN.md layer 1)."""
from .types import Adversary, Learner, Problem
from .simulate import checkpoint_rounds, monte_carlo, seed_keys, shard_seeds, simulate
from .random import bernoulli_bits, bernoulli_half, log_uniform, sample_categorical, sample_categorical_gumbel
from . import validation

__all__ = [
    "Adversary", "Learner", "Problem",
    "simulate", "monte_carlo", "checkpoint_rounds", "seed_keys", "shard_seeds",
    "sample_categorical", "sample_categorical_gumbel", "bernoulli_half", "bernoulli_bits", "log_uniform",
    "validation",
]
