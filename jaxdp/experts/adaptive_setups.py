"""The setups of the ``adaptive-regret`` study: each experts learner tuned for a horizon with the oblivious regret
bound the library states for it, and the experts adversaries by name.

Both online papers prove their bounds against oblivious adversaries only ("Our regret bound may be invalid with an
adaptive adversary", footnote 3 of "Private Online Learning via Lazy Algorithms"; Section 2 of "Near-Optimal
Algorithms for Private Online Optimization in the Realizable Regime"). :func:`adaptive_experts_learner` returns a
learner with its parameters and that bound, so a run against an adaptive adversary (:mod:`jaxdp.experts.adaptive`)
can be compared with it; :func:`adaptive_experts_adversary` builds the oblivious lower-bound epochs of LAZY
Thm 4.2 and the three adaptive adversaries by name. The OCO counterparts are in :mod:`jaxdp.oco.adaptive`.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import jax.numpy as jnp
import numpy as np

from ..core.validation import check_positive_int
from ._common import params_from_plan
from .adaptive import adaptive_lazy_epochs, punish_last_action, switch_watcher, switch_watcher_params
from .adversaries import LazyEpochsParams, adv_lazy_epochs
from .binary_tree import plan_binary_tree_experts
from .dartboard import shrinking_dartboard
from .ftpl import ftpl, ftpl_eta, ftpl_regret_bound
from .hedge import HedgeParams, hedge_eta, hedge_regret_bound
from .l2p_mw import l2p_mw_regret_bound
from .potential import thm6_bound
from .sparse_vector import adaptive_sparse_vector_experts, plan_adaptive_sparse_vector_experts, thm1_bound, thm2_bound

__all__ = ["ADAPTIVE_EXPERTS_LEARNERS", "ADAPTIVE_EXPERTS_ADVERSARIES", "adaptive_experts_learner",
           "adaptive_experts_adversary"]

#: study name -> the registry learner whose ``jaxdp compare`` built-in it runs (at ``T_max = T``)
_BUILTIN = {"hedge": "hedge", "l2p_mw": "l2p_mw", "sparse_vector": "sparse_vector", "potential": "potential",
            "tree_ftrl_laplace": "tree_ftrl", "tree_ftrl_gaussian": "tree_ftrl"}
ADAPTIVE_EXPERTS_LEARNERS = ("hedge", "dartboard", "ftpl", "l2p_mw", "sparse_vector", "adaptive_sv", "binary_tree",
                             "potential", "tree_ftrl_laplace", "tree_ftrl_gaussian")
ADAPTIVE_EXPERTS_ADVERSARIES = ("epochs", "adaptive_epochs", "punish_last", "switch_watcher")


def adaptive_experts_learner(name: str, d: int, T: int, eps: float, delta: float
                             ) -> tuple[Any, Any, Optional[Callable[[int, Any], np.ndarray]]]:
    """An experts learner tuned for horizon ``T`` and its oblivious regret bound.

    The registry's ``jaxdp compare`` built-in where there is one (Hedge, L2P-MW, sparse-vector, potential and
    tree-FTRL experts; tree-FTRL with Laplace nodes at ``delta = 0``, with Gaussian ones at ``delta``), the planner
    in ``certified`` mode otherwise (adaptive sparse vector with the flipped doubling test, binary tree), and
    Hedge's rate for the shrinking dartboard (Geulen, Vöcking & Winkler 2010) and FTPL's exponential-noise rate.

    The bound ``bound(t, L*) -> array`` is the library's oblivious bound after ``t <= T`` rounds at these
    parameters and a best loss ``L*`` (an array, one value per run): ``√(t ln d/2)`` for Hedge and the dartboard
    (Arora, Hazan & Kale 2012), FTPL's ``(1 + ln d)/η + ηt``, L2P-MW's ``ln d/η + ηtB/8`` (LAZY Thm 3.2, Prop. 3.3),
    REAL Thm 1 and Thm 2 (which grow with ``L*``; ``β = 0.1``) and Thms 6–7 (``L* = 0`` only: NaN elsewhere);
    ``None`` where the library states none (binary tree, tree-FTRL).

    Args:
        name: one of :data:`ADAPTIVE_EXPERTS_LEARNERS`.
        d: the number of experts.
        T: the horizon the learner is tuned for.
        eps, delta: the privacy target (non-private learners ignore it).

    Returns:
        ``(learner, params, bound)``.

    Raises:
        ValueError: an unknown ``name``, or a learner whose built-in is missing.
    """
    from ..registry import get_learner

    if name not in ADAPTIVE_EXPERTS_LEARNERS:
        raise ValueError(f"name must be one of {', '.join(ADAPTIVE_EXPERTS_LEARNERS)}, got {name!r}")
    if name in _BUILTIN:
        how = get_learner(_BUILTIN[name]).compare
        if how is None:
            raise ValueError(f"learner {_BUILTIN[name]!r} is no compare built-in")
        L, p, _ = how.make(d, T, T, eps, 0.0 if name == "tree_ftrl_laplace" else delta, None)
    elif name in ("dartboard", "ftpl"):
        eta = ftpl_eta(d, T, "exponential") if name == "ftpl" else hedge_eta(d, T)
        L, p = (ftpl if name == "ftpl" else shrinking_dartboard)(d), HedgeParams(eta=np.float32(eta))
    elif name == "adaptive_sv":
        plan = plan_adaptive_sparse_vector_experts(eps=eps, T=T, d=d, mode="certified", test_sign="flipped")
        L, p = adaptive_sparse_vector_experts(d), params_from_plan(plan)
    else:
        L, p = get_learner("binary_tree").learner_from_plan(
            plan_binary_tree_experts(eps=eps, T=T, d=d, mode="certified"), d)
    flat = {"hedge": lambda t: hedge_regret_bound(d, t, hedge_eta(d, T)),
            "dartboard": lambda t: hedge_regret_bound(d, t, hedge_eta(d, T)),
            "ftpl": lambda t: ftpl_regret_bound(d, t, ftpl_eta(d, T, "exponential")),
            "l2p_mw": lambda t: l2p_mw_regret_bound(d, t, float(p.eta), float(p.B))}
    by_L = {"sparse_vector": lambda t, Ls: thm1_bound(d, t, eps, 0.1, delta, np.asarray(Ls, float)),
            "adaptive_sv": lambda t, Ls: thm2_bound(d, t, eps, 0.1, np.asarray(Ls, float)),
            "potential": lambda t, Ls: np.where(np.asarray(Ls) == 0, thm6_bound(d, t, eps, delta), np.nan)}
    if name in flat:
        return L, p, lambda t, Ls: np.full(np.shape(Ls), float(flat[name](t)))
    return L, p, by_L.get(name)


def adaptive_experts_adversary(name: str, d: int, T: int, epoch_len: int = 32, patience: int = 2) -> tuple:
    """An experts adversary of the ``adaptive-regret`` study by name, with its parameters.

    ``epochs``: the oblivious lower-bound instance of LAZY Thm 4.2 (:func:`~jaxdp.experts.adv_lazy_epochs`, one
    ``Ber(1/2)^d`` vector per epoch of ``epoch_len`` rounds, ``ε = 1`` in its layout); ``adaptive_epochs``: the same
    vectors with loss 1 moved onto the expert played in the previous round
    (:func:`~jaxdp.experts.adaptive_lazy_epochs`); ``punish_last``: :func:`~jaxdp.experts.punish_last_action`;
    ``switch_watcher``: :func:`~jaxdp.experts.switch_watcher` with ``patience``.

    Args:
        name: one of :data:`ADAPTIVE_EXPERTS_ADVERSARIES`.
        d: the number of experts.
        T: the horizon (the epochs' layout).
        epoch_len: rounds per epoch of the (adaptive) epochs.
        patience: the switch watcher's patience.

    Returns:
        ``(adversary, adv_params)``.

    Raises:
        ValueError: an unknown ``name``, ``T`` or ``epoch_len`` below 1, ``patience`` below 1, ``d`` below 2.
    """
    if name not in ADAPTIVE_EXPERTS_ADVERSARIES:
        raise ValueError(f"name must be one of {', '.join(ADAPTIVE_EXPERTS_ADVERSARIES)}, got {name!r}")
    T, epoch_len = check_positive_int("T", T), check_positive_int("epoch_len", epoch_len)
    ep = LazyEpochsParams(T=jnp.int32(T), eps=jnp.float32(1.0), epoch_len=jnp.int32(epoch_len))
    made: dict[str, Callable[[], tuple]] = {
        "epochs": lambda: (adv_lazy_epochs(d), ep), "adaptive_epochs": lambda: (adaptive_lazy_epochs(d), ep),
        "punish_last": lambda: (punish_last_action(d), None),
        "switch_watcher": lambda: (switch_watcher(d), switch_watcher_params(int(patience)))}
    return made[name]()
