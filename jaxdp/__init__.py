"""jaxdp: batched simulation of differentially private online learning and private optimization in JAX."""
__version__ = "0.1.0"

from .core import (
    Adversary, Learner, Problem, checkpoint_rounds, monte_carlo, process_local, rollout, sample_categorical, seed_keys,
    simulate,
)

__all__ = ["Adversary", "Learner", "Problem", "rollout", "simulate", "monte_carlo", "process_local", "seed_keys", "checkpoint_rounds",
           "sample_categorical", "__version__"]


def __getattr__(name):
    # ``jaxdp.compare`` (the function) is imported on first use, so ``import jaxdp`` stays light
    if name == "compare":
        from .compare import compare

        globals()["compare"] = compare   # importing the submodule set jaxdp.compare to the module
        return compare
    raise AttributeError(f"module 'jaxdp' has no attribute {name!r}")
