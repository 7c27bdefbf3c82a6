"""Learning with label differential privacy (LABEL = Label DP: theoretical limits; docs/algorithms/label-dp.md).

* :mod:`.generators` — distributions with known η on ``[0,1]^d`` (smooth, margin, minimax-hard bumps,
  heavy tails) and exact excess risk by quadrature.
* :mod:`.estimators` — local (vector / K-ary randomized response + bins, Laplace + kNN) and central
  (exponential mechanism per bin, Laplace bin means) label-DP learners and their non-private versions.
* :mod:`.experiment` — pure ``fn(key, N, params, h0)`` estimators batched over seeds and grids.
* :mod:`.planners` — bin width / k / clipping level from LABEL Theorems 2, 4, 6, 8, 10, 12.
* :mod:`.rates` — LABEL Table 1 exponents.
"""
import importlib

from .generators import *  # noqa: F401,F403
from .estimators import *  # noqa: F401,F403
from .experiment import *  # noqa: F401,F403
from .rates import *  # noqa: F401,F403
from . import planners  # noqa: F401  (registers the planners)

__all__ = [n for m in ("generators", "estimators", "experiment", "rates")
           for n in importlib.import_module(f".{m}", __name__).__all__] + ["planners"]

from . import audits  # noqa: F401,E402  (registers the audits)
