"""jaxdp: batched simulation of differentially private online learning and private optimization in JAX."""
import importlib as _importlib
from typing import TYPE_CHECKING as _TYPE_CHECKING

from ._version import __version__
from . import _moved as _moved
from ._cache import enable_compilation_cache

_moved.install()

__all__ = ["AdaptiveAdversary", "Adversary", "Learner", "Problem", "rollout", "simulate", "monte_carlo", "process_local", "seed_keys", "checkpoint_rounds",
           "sample_categorical", "enable_compilation_cache", "__version__"]

if _TYPE_CHECKING:   # pragma: no cover
    from .core import (
        AdaptiveAdversary, Adversary, Learner, Problem, checkpoint_rounds, monte_carlo, process_local, rollout, sample_categorical,
        seed_keys, simulate,
    )


def __getattr__(name):
    # The engine (and with it JAX) is imported on first use, so ``import jaxdp`` stays light and
    # the command line catches Ctrl-C from its first instant; ``jaxdp.compare`` (the function) too.
    if name in __all__:
        value = getattr(_importlib.import_module(".core", __name__), name)
        globals()[name] = value
        return value
    if name == "compare":
        from .compare import compare

        globals()["compare"] = compare   # importing the submodule set jaxdp.compare to the module
        return compare
    if name == "core":
        return _importlib.import_module(".core", __name__)
    raise AttributeError(f"module 'jaxdp' has no attribute {name!r}")


def __dir__():
    return sorted({k for k in globals() if not k.startswith("_")} | set(__all__) | {"compare", "core"})
