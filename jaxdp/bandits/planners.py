r"""Planners of the private bandit learners: ``jaxdp plan dp-ucb-tree | dp-se | dp-exp3 | ldp-ucb``.

Each maps ``(eps, delta, T, d = K, mode)`` to a :class:`~jaxdp.privacy.accounting.plan.Plan` whose
``eps_certified`` is what :func:`jaxdp.privacy.accounting.certify` proves for the ledger of the
configured learner. Neighbouring inputs are loss sequences that differ in one round's loss
vector (replace-one, the library's convention); losses (rewards) lie in ``[0, 1]``, so one
reward moves by at most 1. The ledgers:

* ``dp-ucb-tree`` (:func:`jaxdp.bandits.dp_ucb_tree`): ``parallel`` over the ``K`` per-arm trees
  (a round's reward enters the tree of the arm played, and only that one) of a ``sequential``
  composition of the ``H = floor(log2 T) + 1`` tree nodes holding it, each a Laplace release of
  sensitivity 1 with scale ``b``: ``eps = H/b``. ``paper``: ``b = H/eps`` (pure);
  ``certified`` with ``delta > 0``: the largest per-node ``eps_0 = 1/b`` whose ``H``-fold
  composition the accountant certifies at ``(eps, delta)``.
* ``dp-se`` (:func:`jaxdp.bandits.dp_se`): ``parallel`` over the released epoch means (each reward
  enters one), each a Laplace release of a mean of ``R_e`` rewards (sensitivity ``1/R_e``) with
  scale ``1/(eps R_e)``: ``noise_multiplier = 1/eps``. ``beta = 1/T``.
* ``dp-exp3`` (:func:`jaxdp.bandits.dp_exp3`): ``parallel`` over the blocks of ``tau`` rounds, each a
  Laplace release of the block's average loss (sensitivity ``1/tau``) with scale
  ``b = 1/(eps tau)``: ``noise_multiplier = 1/eps``. ``tau = 1`` (DP-EXP3-Lap) or
  ``tau="auto"``: ``ceil(1/eps)`` (the batched conversion of Asi, Raman & Talwar 2025).
* ``ldp-ucb`` (:func:`jaxdp.bandits.ldp_ucb`): ``parallel`` over the rounds, each reward released
  once through ``Lap(1/eps)`` by the local randomizer: ``eps``-LDP, hence ``eps``-DP.

Every noisy value feeds only comparisons and the learner's internal state; the ledgers still
mark the Laplace releases ``raw`` (the library's default for Laplace), so no float δ floor is
claimed.
"""
from __future__ import annotations

import math
from typing import Any, Optional

from ..privacy.accounting import ledger as LG
from ..privacy.accounting.accountant import certify
from ..privacy.accounting.calibrate import calibrate
from ..privacy.accounting.plan import Plan, make_plan
from ..core.validation import check_choice, check_delta, check_epsilon, check_positive_int
from ..privacy.mechanisms.tree import tree_depth
from ..registry import register_planner
from . import theory
from .elimination import dp_se_epoch_length

__all__ = ["plan_dp_ucb_tree", "plan_dp_se", "plan_dp_exp3", "plan_ldp_ucb", "dp_ucb_tree_ledger"]

_RANGE = "losses (rewards) in [0, 1]: one round moves one reward by at most 1"


def _common(eps, delta, T, d, mode, modes=("paper", "certified", "rate")):
    mode = check_choice("mode", mode, modes)
    check_epsilon(eps, allow_inf=False)
    delta = 0.0 if delta is None else delta
    check_delta(delta)
    if T is None:
        raise ValueError("T (the horizon) is required")
    T = check_positive_int("T", int(float(T)) if isinstance(T, str) else T)
    K = check_positive_int("d", int(float(d)) if isinstance(d, str) else (2 if d is None else d), minimum=2)
    return float(eps), float(delta), T, K, mode


def dp_ucb_tree_ledger(b: float, H: int, K: int) -> LG.Ledger:
    """The privacy ledger of :func:`jaxdp.bandits.dp_ucb_tree` (module docstring).

    A round's reward enters the tree of the arm played only (parallel over the ``K`` trees), where it sits
    in ``H`` nodes, each a Laplace release of sensitivity 1 (sequential composition).

    Args:
        b: the Laplace scale of every tree node.
        H: the number of levels of each tree.
        K: the number of arms (per-arm trees).

    Returns:
        The :class:`jaxdp.privacy.accounting.Ledger` (``parallel`` over the arms of ``sequential`` over ``H`` Laplace nodes).
    """
    tree = LG.sequential(LG.laplace(b, count=H, label="the tree nodes that hold one reward (sensitivity 1 each)"),
                         label="the tree of the arm played")
    return LG.parallel(tree, label=f"{K} per-arm trees: a round's reward enters one of them")


def _pure_laplace_plan(algorithm: str, mode: str, params: dict, eps: float, delta: float, item: str, parts: str,
                       **kw) -> Plan:
    """The pure-DP plan of a learner whose ledger is ``parallel`` over Laplace releases (``item``) of noise
    multiplier ``1/eps``, one per part (``parts``); ``kw``: the rest of :func:`make_plan`'s arguments."""
    ledger = LG.parallel(LG.laplace(1.0 / eps, label=item), label=parts)
    return make_plan(algorithm=algorithm, mode=mode, params=params, eps=eps, delta=delta, ledger=ledger,
                     delta_budget=0.0, **kw)


@register_planner("dp-ucb-tree", "DP-UCB with per-arm binary-tree Laplace counters (Tossou-Dimitrakakis 2016): node scale b")
def plan_dp_ucb_tree(*, eps: float, delta: Optional[float] = 0.0, T: int, d: Optional[int] = None,
                     mode: str = "paper") -> Plan:
    """Node scale ``b`` of :func:`jaxdp.bandits.dp_ucb_tree` for ``K = d`` arms and horizons ``T_max = T`` (module docstring).

    Args:
        eps: the privacy parameter ε.
        delta: the privacy parameter δ (``certified`` with ``delta > 0``: the node scale the accountant certifies).
        T: the horizon.
        d: the number of arms ``K`` (``None``: 2).
        mode: ``"paper"``, ``"certified"`` or ``"rate"``.

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan`.

    Raises:
        ValueError: invalid values.
    """
    e, dl, T, K, mode = _common(eps, delta, T, d, mode)
    H = tree_depth(T)
    eps0, budget, notes = e / H, 0.0, []
    if mode == "certified" and dl > 0 and H > 1:
        x = calibrate(lambda v: certify(dp_ucb_tree_ledger(1.0 / v, H, K), dl, use_pld=False).eps, e, lo=e / H,
                      hi=e, increasing=True, rtol=1e-9, name="eps_per_node", what="the certified eps")
        if x > e / H * (1 + 1e-9):
            eps0, budget = x, dl
            notes.append("a composition bound with delta > 0 beats basic composition of the H nodes")
    b = 1.0 / eps0
    params = {"b": b, "H": H, "K": K, "T_max": T, "eps_per_node": eps0}
    return make_plan(algorithm="dp-ucb-tree", mode=mode, params=params, eps=e, delta=dl,
                     ledger=dp_ucb_tree_ledger(b, H, K), delta_budget=budget, conditions={_RANGE: True},
                     utility_conditions={"T <= T_max (the trees hold 2^H - 1 >= T_max items)": True},
                     reference="Algorithms for differentially private multi-armed bandits (Tossou-Dimitrakakis 2016); "
                               "binary mechanism (Chan-Shi-Song 2011)", notes=notes)


@register_planner("dp-se", "DP-SE (Sajed-Sheffet 2019): private successive elimination, Laplace on fresh epoch means")
def plan_dp_se(*, eps: float, delta: Optional[float] = 0.0, T: int, d: Optional[int] = None,
               mode: str = "paper", beta: Optional[float] = None) -> Plan:
    """``(eps, beta = 1/T)`` of :func:`jaxdp.bandits.dp_se` (module docstring).

    Args:
        eps, T, d, mode: as in :func:`plan_dp_ucb_tree`.
        delta: the privacy parameter δ (unused: the ledger is pure DP).
        beta: the failure probability (``None``: ``1/T``).

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan`.

    Raises:
        ValueError: invalid values.
    """
    e, dl, T, K, mode = _common(eps, delta, T, d, mode)
    beta = 1.0 / T if beta is None else float(beta)
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}")
    params = {"eps": e, "beta": beta, "K": K, "R_1": float(dp_se_epoch_length(1, K, e, beta))}
    return _pure_laplace_plan("dp-se", mode, params, e, dl,
                              "one epoch mean of R_e rewards (sensitivity 1/R_e), Lap(1/(eps R_e))",
                              "every reward enters one released mean (one arm, one epoch)",
                              conditions={_RANGE: True}, utility_conditions={"beta <= 1/T": beta <= 1.0 / T * (1 + 1e-12)},
                              reference="An optimal private stochastic-MAB algorithm based on an optimal private "
                                        "stopping rule (Sajed-Sheffet 2019), Alg. DP-SE")


@register_planner("dp-exp3", "private EXP3 on Laplace-noised (block-averaged) losses (Tossou-Dimitrakakis 2017; "
                             "Asi-Raman-Talwar 2025 batching)")
def plan_dp_exp3(*, eps: float, delta: Optional[float] = 0.0, T: int, d: Optional[int] = None, mode: str = "paper",
                 tau: Any = 1) -> Plan:
    """``(eta, gamma, b, B, tau)`` of :func:`jaxdp.bandits.dp_exp3` (module docstring; tuning
    :func:`jaxdp.bandits.theory.dp_exp3_tuning`). ``tau``: block length, or ``"auto"`` for ``ceil(1/eps)``.

    Args:
        eps, delta, T, d, mode: as in :func:`plan_dp_se`.
        tau: the block length, or ``"auto"``.

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan`.

    Raises:
        ValueError: invalid values.
    """
    e, dl, T, K, mode = _common(eps, delta, T, d, mode)
    if isinstance(tau, str) and tau == "auto":
        tau = max(1, math.ceil(1.0 / e - 1e-12))
    tau = check_positive_int("tau", int(float(tau)) if isinstance(tau, str) else tau)
    p = theory.dp_exp3_tuning(K, T, e, tau)
    params = dict(p, K=K, T=T, bound=theory.dp_exp3_bound(K, T, p["eta"], p["gamma"], p["b"], p["B"], tau))
    return _pure_laplace_plan("dp-exp3", mode, params, e, dl,
                              f"one block average of {tau} losses (sensitivity 1/tau), Lap(1/(eps tau))",
                              "every round enters one block",
                              conditions={_RANGE: True, "clipping is post-processing": True},
                              utility_conditions={"gamma = eta K (1 + B) < 1/2 (eta |estimate| <= 1)": p["gamma"] < 0.5},
                              reference="Achieving privacy in the adversarial multi-armed bandit (Tossou-Dimitrakakis "
                                        "2017); Faster rates for private adversarial bandits (Asi-Raman-Talwar 2025)")


@register_planner("ldp-ucb", "LDP-UCB: each reward randomized locally with Lap(1/eps) (Ren et al. 2020)")
def plan_ldp_ucb(*, eps: float, delta: Optional[float] = 0.0, T: int, d: Optional[int] = None,
                 mode: str = "paper") -> Plan:
    """Laplace scale ``b = 1/eps`` of :func:`jaxdp.bandits.ldp_ucb` (module docstring).

    Args:
        eps, delta, T, d, mode: as in :func:`plan_dp_se`.

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan`.

    Raises:
        ValueError: invalid values.
    """
    e, dl, T, K, mode = _common(eps, delta, T, d, mode)
    params = {"b": 1.0 / e, "K": K, "T": T}
    return _pure_laplace_plan("ldp-ucb", mode, params, e, dl, "one reward through the local randomizer Lap(1/eps)",
                              "every round's reward is randomized once, on its own", conditions={_RANGE: True},
                              reference="Multi-armed bandits with local differential privacy (Ren-Zhou-Lui-Zhang "
                                        "2020), Laplace variant")
