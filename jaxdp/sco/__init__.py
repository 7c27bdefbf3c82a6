"""Private stochastic convex optimization under κ-growth (GROWTH; docs/algorithms/growth.md).

Instances with exact excess loss (GROWTH Thms 4-6; docs/algorithms/growth.md#instances), a certified ERM solver
(GROWTH Alg. 1; docs/algorithms/growth.md#localization), Algorithm 1 ``localization_sco``, Algorithm 2
``epoch_growth_sco``, the inverse-sensitivity mechanisms of Theorem 1 and the Proposition 3 reduction, planners, and
one-shot estimators for ``jaxdp.core.monte_carlo``. Most displays of the paper are RECONSTRUCTED
(docs/algorithms/growth.md#corrections); the notes sit in each module's docstring.
"""
import importlib

from .instances import *  # noqa: F401,F403
from .erm import *  # noqa: F401,F403
from .localization import *  # noqa: F401,F403
from .inverse_sensitivity import *  # noqa: F401,F403
from .planners import *  # noqa: F401,F403
from .estimators import *  # noqa: F401,F403
from .prox_path import *  # noqa: F401,F403

__all__ = [n for m in ("instances", "erm", "localization", "inverse_sensitivity", "planners", "estimators", "prox_path")
           for n in importlib.import_module(f".{m}", __name__).__all__]
