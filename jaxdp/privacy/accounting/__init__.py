"""Privacy accounting and parameter planning (host-side NumPy float64, never jitted).

Run before a simulation: pick parameters, record what they certify, then pass
them into the algorithm's ``Params``.

* ``composition`` — basic and parallel composition, advanced composition
  (Dwork–Roth Thm 3.20 ``eps_advanced_dr``; Kairouz–Oh–Viswanath ``eps_kov15`` in the
  CORRECTED form of LAZY eq. (4), the printed one kept as ``eps_kov15_printed``;
  the exact optimal homogeneous composition ``eps_optimal_homogeneous``, KOV15 Thm 3.3),
  LAZY's conditional composition (Lemma 3.8) and group privacy (LAZY Lemma A.2).
* ``zcdp`` — ε-DP / Gaussian → ρ-zCDP → (ε, δ) (Bun–Steinke; CKS20; LAZY Lemma A.5) and
  Gaussian σ calibrations: GROWTH Lemma 2.3 CORRECTED (``"paper"``), Dwork–Roth Thm A.1, zCDP.
* ``calibrate`` — ``calibrate`` (bisection on one monotone parameter, safe side) and
  ``grid_search`` (vectorised multi-parameter search), reused by ``l2p_calibrate``.
* ``events`` — ``dp_accounting`` events for the same mechanisms (``gaussian_event``,
  ``laplace_event``, ``pure_dp_event``, ``composed_event``, …) and the PLD / RDP
  accountants' ε (``pld_epsilon``, ``rdp_epsilon``) to cross-check our closed forms.
* ``ledger`` — the privacy ledger of a plan (``Event``, ``Ledger``; constructors ``laplace``,
  ``gaussian``, ``exponential``, ``above_threshold``, ``sequential``, ``parallel``, …);
  ``accountant`` — ``certify(ledger, delta) -> Certificate(eps, delta, bound)``, the one accountant
  every plan's ``eps_certified`` comes from; ``plan`` — ``Plan`` and ``make_plan``
  (docs/guide/privacy-ledger.md).
* ``planners`` — ``jaxdp plan`` entries ``laplace``, ``gaussian``, ``tree_aggregation``,
  ``above_threshold``, ``advanced_composition`` returning ``jaxdp.privacy.accounting.Plan``.
* ``l2p`` — the L2P privacy formula of LAZY Thm 3.2 and its calibration.

Conventions: scalars in, Python floats out; the ``*_homogeneous`` forms and the
zCDP conversions broadcast over arrays. Invalid inputs (ε <= 0, δ outside
[0, 1), non-finite values, wrong shapes, unknown modes) raise ``ValueError`` /
``TypeError`` naming the parameter, the value and what is allowed.
"""
from __future__ import annotations


from . import ledger  # noqa: F401
from .accountant import BOUNDS, Certificate, certify
from .calibrate import GridResult, calibrate, grid_search
from .composition import (
    OPTIMAL_AUTO_MAX_K, compose_advanced_dr, compose_basic, compose_conditional, compose_kov15,
    compose_kov15_printed, compose_parallel, delta_optimal_homogeneous, eps_advanced_dr, eps_basic,
    eps_composed_best, eps_kov15, eps_kov15_homogeneous, eps_kov15_printed, eps_optimal_homogeneous, group_privacy,
)
from .events import (
    composed_event, gaussian_event, laplace_event, pld_epsilon, pure_dp_event, rdp_epsilon,
    self_composed_event, tree_aggregation_event, zcdp_event,
)
from .ledger import Event, Ledger
from .plan import Plan, make_plan
from .planners import (
    plan_above_threshold, plan_advanced_composition, plan_gaussian, plan_laplace, plan_tree_aggregation, tree_levels,
)
from .zcdp import (
    EPS_FROM_RHO_METHODS, eps_from_rho, gaussian_delta, gaussian_eps_dr, gaussian_eps_exact, gaussian_eps_zcdp, gaussian_sigma_dr,
    gaussian_sigma_growth, gaussian_sigma_growth_printed, gaussian_sigma_zcdp, gaussian_zcdp, pure_to_zcdp,
    rho_from_eps_delta, zcdp_to_approx,
)

__all__ = [
    # ledger, accountant, plan
    "ledger", "Event", "Ledger", "certify", "Certificate", "BOUNDS", "Plan", "make_plan",
    # composition
    "eps_basic", "compose_basic", "compose_parallel", "eps_advanced_dr", "compose_advanced_dr", "eps_kov15",
    "compose_kov15", "eps_kov15_printed", "compose_kov15_printed", "eps_kov15_homogeneous",
    "delta_optimal_homogeneous", "eps_optimal_homogeneous", "eps_composed_best", "OPTIMAL_AUTO_MAX_K",
    "compose_conditional", "group_privacy",
    # zCDP and Gaussian
    "pure_to_zcdp", "gaussian_zcdp", "eps_from_rho", "zcdp_to_approx", "rho_from_eps_delta", "EPS_FROM_RHO_METHODS",
    "gaussian_sigma_zcdp", "gaussian_sigma_dr", "gaussian_sigma_growth", "gaussian_sigma_growth_printed",
    "gaussian_eps_dr", "gaussian_eps_zcdp", "gaussian_eps_exact", "gaussian_delta",
    # search
    "calibrate", "grid_search", "GridResult",
    # dp_accounting bridges
    "gaussian_event", "laplace_event", "zcdp_event", "pure_dp_event", "composed_event", "self_composed_event",
    "tree_aggregation_event", "pld_epsilon", "rdp_epsilon",
    # planners
    "plan_laplace", "plan_gaussian", "plan_tree_aggregation", "plan_above_threshold", "plan_advanced_composition",
    "tree_levels",
]

from . import l2p  # noqa: E402,F401  (LAZY Thm 3.2 accountant)
from .l2p import *  # noqa: E402,F401,F403

__all__ += list(l2p.__all__)
