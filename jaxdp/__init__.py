"""jaxdp: batched simulation of differentially private online learning and private optimization in JAX."""
__version__ = "0.1.0"

from .core import (
    Adversary, Learner, Problem, checkpoint_rounds, monte_carlo, sample_categorical, seed_keys, simulate,
)

__all__ = ["Adversary", "Learner", "Problem", "simulate", "monte_carlo", "seed_keys", "checkpoint_rounds",
           "sample_categorical", "__version__"]
