"""L2P-MW: L2P applied to multiplicative weights, DP-OPE (LAZY Thm 3.10; docs/algorithms/lazy.md#l2p-mw).

``l2p_mw(d, block_size)`` is ``l2p(mw_measure(d), block_size)`` with
``eta_div = eta_mw`` and ``delta0 = 0`` (LAZY Lemma 3.9). Because
``delta0 = 0`` the marginal of the played expert in batch ``s`` is exactly
``nu_s = softmax(-eta * cum_{(s-1)B})`` (Lemma 3.4), so the expected regret is
that of MW on the batch losses (LAZY Thm 3.2, Prop. 3.3; docs/algorithms/lazy.md#batching-term, CORRECTED):

    E[Reg_T] <= ln(d)/eta + eta T B / 8.

Parameter settings (paper, certified, retuned, ...) come from
``jaxdp.lazy.planner.plan_l2p_mw``.
"""
from __future__ import annotations

import functools
import math
from typing import Optional

import jax.numpy as jnp
import numpy as np

from ..core.types import Learner
from ..core.validation import check_in_range, check_positive, check_positive_int
from ..registry import CompareBuiltin, ConformanceCase, register_learner
from .l2p import L2PParams, l2p
from .measures import MWMeasureParams, mw_measure

__all__ = ["l2p_mw", "l2p_mw_params", "l2p_mw_regret_bound", "l2p_mw_paper_regret", "alternating_prediction",
           "batch_aligned_prediction"]


@functools.lru_cache(maxsize=None)
def l2p_mw(d: int, block_size: Optional[int] = None) -> Learner:
    """L2P-MW over ``d >= 2`` experts. Params: :func:`l2p_mw_params`.

    ``block_size``: static batch size (engine nested scan, fresh samples once
    per batch) or ``None`` (traced ``params.B``; one compilation for every B).
    Info: ``expected_loss`` (= ``<nu_s, l_t>``), ``switches``, ``n_real``,
    ``n_fake``, ``n_yres``, ``n_batches``.

    Args:
        d: the number of experts.
        block_size: static batch size or ``None``.

    Returns:
        The L2P-MW :class:`jaxdp.Learner`.
    """
    d = check_positive_int("d", d, minimum=2)
    return l2p(mw_measure(d), block_size)


def l2p_mw_params(eta: float, p: float, B: int, *, block_size: Optional[int] = None, batch: Optional[int] = None
                  ) -> L2PParams:
    """``L2PParams`` for L2P-MW: MW step ``eta`` (also the D_inf bound), fake-switch
    probability ``p``, batch ``B``. ``batch``: optional leading grid length (values broadcast).

    Args:
        eta: the MW step (also the D_inf bound).
        p: the fake-switch probability.
        B: the batch size.
        block_size: the learner's static batch size, if any (must equal ``B``).
        batch: optional leading grid length.

    Returns:
        :class:`L2PParams`.
    """
    check_positive("eta", eta)
    check_in_range("p", p, 0.0, 1.0)
    B_arr = np.asarray(B)
    if not np.issubdtype(B_arr.dtype, np.integer) or np.any(B_arr < 1):
        raise ValueError(f"B must be a positive integer (or array of them), got {B!r}")
    if block_size is not None and np.any(B_arr != block_size):
        raise ValueError(f"B must equal the learner's block_size={block_size}, got B={B!r}")
    fdt = jnp.result_type(float)
    eta_a = jnp.asarray(eta, fdt)
    p_a = jnp.asarray(p, fdt)
    B_a = jnp.asarray(B_arr, jnp.int32)
    if batch is not None:
        eta_a, p_a, B_a = (jnp.broadcast_to(v, (batch,)) for v in (eta_a, p_a, B_a))
    return L2PParams(measure=MWMeasureParams(eta=eta_a), eta=eta_a, p=p_a, B=B_a)


def l2p_mw_regret_bound(d, T, eta, B):
    """Valid expected-regret bound ``ln d / eta + eta T B / 8`` (LAZY Thm 3.2, Prop. 3.3; docs/algorithms/lazy.md#batching-term, CORRECTED).

    Args:
        d: the number of experts.
        T: the horizon.
        eta: the learning rate η.
        B: the batch size.

    Returns:
        The bound.
    """
    return np.log(d) / np.asarray(eta, float) + np.asarray(eta, float) * np.asarray(T, float) * np.asarray(B, float) / 8.0


def l2p_mw_paper_regret(d, T, eta, B, c_B: float = 1.0):
    """The paper's (claimed) curve ``ln d / eta + eta T / 8 + c_B T B^2 eta^2`` (Prop. 3.3 as printed).

    Args:
        d: the number of experts.
        T: the horizon.
        eta: the learning rate η.
        B: the batch size.
        c_B: the constant of the batching term.

    Returns:
        The curve.
    """
    eta = np.asarray(eta, float)
    T = np.asarray(T, float)
    return np.log(d) / eta + eta * T / 8.0 + c_B * T * np.asarray(B, float) ** 2 * eta ** 2


def alternating_prediction(T, eta, B):
    """Expected regret of L2P-MW on ``adv_alternating_batches(B)``: ``(T/4) tanh(eta B / 2)`` (LAZY Thm 3.2, Prop. 3.3; docs/algorithms/lazy.md#batching-term).

    Args:
        T: the horizon.
        eta: the learning rate η.
        B: the batch size.

    Returns:
        The expected regret.
    """
    return np.asarray(T, float) / 4.0 * np.tanh(np.asarray(eta, float) * np.asarray(B, float) / 2.0)


def batch_aligned_prediction(d, T, B):
    """Regret of any batch-constant algorithm on batch-aligned i.i.d. epochs: ``sqrt(T B ln d / 2)``.

    Args:
        d: the number of experts.
        T: the horizon.
        B: the batch size.

    Returns:
        The regret.
    """
    return np.sqrt(np.asarray(T, float) * np.asarray(B, float) * math.log(d) / 2.0)


# --------------------------------------------------------------------------- registry


def _from_plan(plan) -> L2PParams:
    """``plan_l2p_mw``'s ``{eta, p, B}`` (``delta1`` is the ledger's, not a parameter)."""
    P = plan.params
    return l2p_mw_params(P["eta"], P["p"], int(P["B"]))


def _conformance(d, T):
    from ..experts.conformance import experts_case

    return experts_case(l2p_mw(d), d, [l2p_mw_params(0.05, 0.2, 4), l2p_mw_params(0.1, 0.5, 4)])


def _compare(d, T, T_max, eps, delta, problem):
    plan = _ENTRY.certified_plan(eps=eps, delta=delta, T=T, d=d)
    # traced batch size: one compilation for every (T, eps) of the sweep
    return l2p_mw(d, None), _ENTRY.params_from_plan(plan), float(plan.eps_certified)


_ENTRY = register_learner(
    "l2p_mw", factory=l2p_mw, params_type=L2PParams, problem="experts", private=True, planner="l2p_mw",
    from_plan=_from_plan, conformance=ConformanceCase(_conformance),
    description="L2P on multiplicative weights (DP-OPE): a shadow MW sample per batch of B rounds, switches "
                "by a private coupling; E[Reg_T] <= ln(d)/η + ηTB/8",
    reference="Lazy private online learning, Alg. 1, Thm 3.10 (+ Thm 3.2)",
    compare=CompareBuiltin(_compare, "planner l2p_mw, mode certified (Lazy private online learning, Thm 3.10)"))
