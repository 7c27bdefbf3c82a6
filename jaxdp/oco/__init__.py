"""Online convex optimization: domains, problems, adversaries and private learners.

Domains: ``Ball``, ``Box``, ``Simplex`` (``jaxdp.core.domains``, the one family the samplers use too). Modules:
``problems``, ``adversaries``, ``dp_ftrl`` (REAL Alg. 3), ``realizable`` (``experts_oco_net``, ``potential_oco``;
REAL Thm 3, Alg. 5) and, from LAZY, ``rmw`` (the RMW measure) and ``l2p_rmw`` (its L2P transformation),
``adaptive`` (adversaries that watch the iterate), each module's ``__all__`` re-exported here; ``conformance``
(the registered learners' test problems, loaded by reference) is not.
"""
import importlib

from ..core.domains import Ball, Box, Domain, Simplex, ball_grid, check_domain, project_simplex
from .problems import *  # noqa: F401,F403
from .adversaries import *  # noqa: F401,F403
from .dp_ftrl import *  # noqa: F401,F403
from .realizable import *  # noqa: F401,F403
from .rmw import *  # noqa: F401,F403
from .l2p_rmw import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403

__all__ = ["Ball", "Box", "Domain", "Simplex", "ball_grid", "check_domain", "project_simplex"] + [
    n for m in ("problems", "adversaries", "dp_ftrl", "realizable", "rmw", "l2p_rmw", "adaptive")
    for n in importlib.import_module(f".{m}", __name__).__all__]
