"""The engine: learners, adversaries, problems, ``simulate`` and ``monte_carlo``.

Knows nothing about any paper (the engine layer)."""
from .types import AdaptiveAdversary, Adversary, Learner, Problem
from .simulate import (
    carry_bytes, checkpoint_rounds, monte_carlo, process_local, rollout, seed_keys, seed_tile, shard_seeds, simulate,
    tile_budget,
)
from .accumulate import Compensated, comp_add, comp_total, comp_zeros, kahan_add
from .random import bernoulli_bits, bernoulli_half, log_uniform, sample_categorical, sample_categorical_gumbel
from . import validation

__all__ = [
    "AdaptiveAdversary", "Adversary", "Learner", "Problem",
    "rollout", "simulate", "monte_carlo", "process_local", "checkpoint_rounds", "seed_keys", "shard_seeds",
    "carry_bytes", "seed_tile", "tile_budget", "Compensated", "comp_add", "comp_total", "comp_zeros", "kahan_add",
    "sample_categorical", "sample_categorical_gumbel", "bernoulli_half", "bernoulli_bits", "log_uniform",
    "validation",
]
