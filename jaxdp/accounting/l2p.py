"""Privacy accounting for L2P (Lazy private online learning, Thm 3.2 and App. B.1;
docs/algorithms/lazy.md). Host-side float64 NumPy.

* :func:`l2p_privacy` — Thm 3.2 as printed:

      eps   = 2 eta/p + eta + 3 T eta^2 p log(1/delta1) / (2B) + sqrt(6 T eta^2 p log^2(1/delta1) / B)
      delta = 2T (2/eta + log(1/delta1)/p) e B delta0 + 2 T delta1

  under ``T p / B >= 1``, ``eta B log(1/delta1) / p <= 1``, ``eta <= 1/10``,
  ``0 < p < 1``. Wherever LAZY writes ``T/B`` we use ``ceil(T/B)`` batches
  (conservative for a partial last batch).
* :func:`l2p_ledger` / :func:`l2p_privacy_conservative` — PROPOSED conservative
  accounting: every boundary where any of ``A_s, S_s, S'_s`` is 0 draws a fresh
  sample costing the measure's own ``sample_eps`` (Lemma 3.6); their number is
  bounded by the ``1 - delta1`` quantile of ``Bin(ceil(T/B), q)``,
  ``q = min(1, 2p + 1 - e^{-B(2 eta + spread)})`` (exact binomial tail), and the
  round where the neighbours differ adds ``2 eta/p + sample_eps``. The constants come
  from the measure (:data:`L2P_MEASURES`): MW (Gibbs sampling) has ``spread = eta``,
  ``sample_eps = 2 eta`` (``e^{-3B eta}``, ``2 eta``); a general Assumption 3.1 measure
  such as RMW has ``spread = 2 eta``, ``sample_eps = 4 eta`` (``e^{-4B eta}``, ``4 eta``).
  ``l2p_ledger`` is certified by :func:`jaxdp.accounting.certify` (failure events
  ``2 delta1`` and Thm 3.2's ``delta0`` term are charged first);
  ``l2p_privacy_conservative`` is its vectorised upper bound (KOV15 at ``delta~ = delta1``)
  used to screen grid points.
* :func:`l2p_calibrate` — PROPOSED: grid search over ``(B, p, eta)``
  minimizing a regret proxy subject to Thm 3.2's conditions, its printed
  ``(eps, delta)`` and (``conservative``) the accountant on :func:`l2p_ledger`.

All functions broadcast over NumPy arrays.
"""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np
from scipy import stats as _st

from . import _checks as C
from .accountant import certify
from .composition import eps_kov15_homogeneous

__all__ = ["l2p_privacy", "l2p_privacy_conservative", "l2p_conditions", "l2p_calibrate", "l2p_delta1",
           "mw_regret_proxy", "mw_paper_regret_proxy", "l2p_ledger", "l2p_measure_constants", "L2P_MEASURES",
           "printed_eps", "calibrate_trusted"]


def _n_batches(T, B):
    return np.ceil(np.asarray(T, float) / np.asarray(B, float))


def l2p_delta1(delta: float, T: int, delta0: float = 0.0) -> float:
    """``delta1 = delta/(2T)`` if ``delta0 = 0`` else ``delta/(4T)`` (the 2 T delta1 term gets all or half of delta)."""
    return delta / (2.0 * T) if delta0 == 0 else delta / (4.0 * T)


def l2p_conditions(eta, p, B, T, delta1) -> dict:
    """The side conditions of Thm 3.2, each as a boolean (array)."""
    eta, p, B, T, delta1 = (np.asarray(v, float) for v in (eta, p, B, T, delta1))
    L1 = np.log(1.0 / delta1)
    return {
        "T p / B >= 1": _n_batches(T, B) * p >= 1.0 - 1e-12,
        "eta B log(1/delta1) / p <= 1": eta * B * L1 / p <= 1.0 + 1e-12,
        "eta <= 1/10": eta <= 0.1 + 1e-15,
        "0 < p < 1": (p > 0) & (p < 1),
    }


def _check(eta, p, B, T, delta0, delta1):
    eta = C.pos("eta", eta)
    p = C.as_f64("p", p)
    if np.any((p <= 0) | (p > 1)):
        raise ValueError(f"p must be in (0, 1], got {p!r}")
    B = C.as_f64("B", B)
    if np.any((B < 1) | (B != np.round(B))):
        raise ValueError(f"B must be a positive integer, got {B!r}")
    T = C.as_f64("T", T)
    if np.any((T < 1) | (T != np.round(T))):
        raise ValueError(f"T must be a positive integer, got {T!r}")
    delta0 = C.as_f64("delta0", delta0)
    if np.any((delta0 < 0) | (delta0 > 1)):
        raise ValueError(f"delta0 must be in [0, 1], got {delta0!r}")
    delta1 = C.as_f64("delta1", delta1)
    if np.any((delta1 <= 0) | (delta1 >= 1)):
        raise ValueError(f"delta1 must be in (0, 1), got {delta1!r}")
    return eta, p, B, T, delta0, delta1


def _printed(eta, p, B, T, delta0, delta1):
    L1 = np.log(1.0 / delta1)
    TB = _n_batches(T, B)  # T/B
    eps = 2 * eta / p + eta + 1.5 * TB * eta ** 2 * p * L1 + np.sqrt(6.0 * TB * eta ** 2 * p * L1 ** 2)
    delta = 2 * T * (2 / eta + L1 / p) * math.e * B * delta0 + 2 * T * delta1
    return eps, delta


def printed_eps(eta: float, p: float, B: int, T: int, delta0: float, delta1: float) -> float:
    """Thm 3.2's printed eps for validated host floats (no checks; planners call it after validating once)."""
    return float(_printed(eta, p, B, T, delta0, delta1)[0])


def l2p_privacy(eta, p, B, T, delta0, delta1):
    """LAZY Thm 3.2 as printed: returns ``(eps, delta, conditions_ok)`` (broadcasting).

    ``eta``: the D_inf bound of Assumption 3.1; ``p``: fake-switch probability;
    ``B``: batch size; ``T``: horizon; ``delta0``: Assumption 3.1's delta;
    ``delta1``: the free parameter of Thm 3.2. ``conditions_ok`` is False where
    a side condition (:func:`l2p_conditions`) fails: the formula then certifies nothing.
    """
    eta, p, B, T, delta0, delta1 = _check(eta, p, B, T, delta0, delta1)
    eps, delta = _printed(eta, p, B, T, delta0, delta1)
    ok = np.logical_and.reduce(list(l2p_conditions(eta, p, B, T, delta1).values()))
    return C.out(eps), C.out(delta), (bool(ok) if np.ndim(ok) == 0 else ok)


#: The measure's own privacy, per unit of Assumption 3.1's eta: (pointwise spread of the per-loss
#: log-ratio between two points, epsilon of one fresh sample for replace-one neighbours).
#: * ``"mw"`` — Gibbs sampling exp(-eta S) with losses in [0, 1]: log func(l, x) - log func(l, y) is in
#:   [-eta, eta]; neighbouring measures are an exponential mechanism with score sensitivity 1: 2 eta-DP.
#: * ``"general"`` — any measure with only Assumption 3.1 (normalised D_inf <= eta per loss; RMW):
#:   the unnormalised per-loss log-ratio spread is 2 eta, and renormalising the neighbours'
#:   measures costs another 2 eta: 4 eta-DP.
L2P_MEASURES = {"mw": (1.0, 2.0), "general": (2.0, 4.0)}


def l2p_measure_constants(measure: str) -> tuple[float, float]:
    """``(spread, sample_eps)`` per unit eta of the measure ``"mw"`` or ``"general"`` (see :data:`L2P_MEASURES`)."""
    if measure not in L2P_MEASURES:
        raise ValueError(f"measure must be one of {sorted(L2P_MEASURES)}, got {measure!r}")
    return L2P_MEASURES[measure]


def _delta0_term(eta, p, B, T, delta0, delta1):
    return 2 * T * (2 / eta + np.log(1.0 / delta1) / p) * math.e * B * delta0


def _switch_count(eta, p, B, T, delta1, measure):
    """The ``1 - delta1`` quantile of the number of boundaries that draw a fresh sample.

    Per boundary ``q = min(1, 2p + 1 - exp(-B (2 eta + spread)))``: the fake coins ``A_s``, ``S'_s``
    (``2p``) and a real switch ``S_s = 0`` (log acceptance ``>= -(2B eta + B spread)``).
    """
    spread, _ = L2P_MEASURES[measure]
    n = _n_batches(T, B)
    q = np.minimum(1.0, 2 * p + 1 - np.exp(-(2.0 + spread) * B * eta))
    k = _st.binom.isf(delta1, n.astype(np.int64), q)  # P[Bin(n, q) > k] <= delta1
    k = np.where(np.isfinite(k), k, n)
    return np.minimum(k, n)


def _conservative(eta, p, B, T, delta0, delta1, measure="general"):
    """Vectorised conservative eps: KOV15 over the fresh samples at delta~ = delta1, plus t0's 2eta/p + sample."""
    _, c_s = L2P_MEASURES[measure]
    k = _switch_count(eta, p, B, T, delta1, measure)
    e_comp, _ = eps_kov15_homogeneous(c_s * eta, 0.0, k, delta1)
    eps = np.asarray(e_comp, float) + 2 * eta / p + c_s * eta
    _, delta = _printed(eta, p, B, T, delta0, delta1)
    return eps, delta


def l2p_privacy_conservative(eta, p, B, T, delta0, delta1, measure: str = "general"):
    """PROPOSED conservative accountant for L2P: ``(eps, delta)`` (module docstring), broadcasting.

    ``measure`` names the input measure's own privacy (:data:`L2P_MEASURES`): ``"mw"`` (Gibbs
    sampling over experts: switching ``e^{-3B eta}``, ``2 eta`` per fresh sample) or ``"general"``
    (any Assumption 3.1 measure, e.g. RMW: ``e^{-4B eta}``, ``4 eta``; the default, because it is
    valid for every measure).
    """
    eta, p, B, T, delta0, delta1 = _check(eta, p, B, T, delta0, delta1)
    l2p_measure_constants(measure)
    eps, delta = _conservative(eta, p, B, T, delta0, delta1, measure)
    return C.out(eps), C.out(delta)


def l2p_ledger(eta: float, p: float, B: int, T: int, delta0: float, delta1: float, measure: str = "general",
               outcomes: int = 1):
    """The ledger of L2P with measure parameter ``eta`` (Assumption 3.1), trusted host floats.

    Sequential: ``k`` fresh samples after the round ``t0`` where neighbours differ, each the
    measure's own ``sample_eps = c eta`` (``k`` = the ``1 - delta1`` quantile of
    ``Bin(ceil(T/B), q)``), the switching decision at ``t0`` (``2 eta/p``, LAZY Thm 3.2) and the
    sample at ``t0``; failure events ``2 delta1`` (conditional composition, LAZY Lemma 3.8) and
    Thm 3.2's ``delta0`` term. ``outcomes``: size of the sampled set (float δ floor only).
    """
    from . import ledger as LG

    _, c_s = L2P_MEASURES[measure]
    k = int(_switch_count(np.float64(eta), np.float64(p), np.float64(B), float(T), delta1, measure))
    extra = float(_delta0_term(eta, p, B, T, delta0, delta1)) + 2.0 * delta1
    kind = "exponential" if measure == "mw" else "pure"
    items = []
    if k > 0:
        items.append(LG.Event(kind, eps=c_s * eta, count=k, float_dim=int(outcomes),
                              label=f"fresh samples after t0 (1-delta1 quantile of Bin(ceil(T/B), q), measure={measure})"))
    items += [LG.pure(2 * eta / p, label="switching decision at t0 (2 eta/p)"),
              LG.Event(kind, eps=c_s * eta, label="sample at t0", float_dim=int(outcomes))]
    return LG.sequential(*items, delta_extra=extra, label=f"L2P (T={T}, B={B}, p={p:.4g}, eta={eta:.4g})")


def mw_regret_proxy(d: int, T: int) -> Callable:
    """The valid L2P-MW bound ``ln d / eta + eta T B / 8`` (CORRECTED batching term; docs/algorithms/lazy.md) as ``R(eta, B)``."""
    return lambda eta, B: math.log(d) / eta + eta * T * B / 8.0


def mw_paper_regret_proxy(d: int, T: int, c_B: float = 1.0) -> Callable:
    """The paper's proxy ``ln d / eta + eta T / 8 + c_B T B^2 eta^2`` (Prop. 3.3 as printed; for reproducing its curves)."""
    return lambda eta, B: math.log(d) / eta + eta * T / 8.0 + c_B * T * B ** 2 * eta ** 2


def l2p_calibrate(*, T: int, eps: float, delta: float, regret: Callable, delta0: float = 0.0,
                  eta_max: Optional[float] = None, log_factor: str = "exact", conservative: bool = True,
                  n_B: int = 120, n_c: int = 80, n_eta: int = 400, measure: str = "general") -> dict:
    """Certified L2P parameters minimizing a regret proxy (PROPOSED; docs/algorithms/lazy.md).

    Searches ``B`` in ``round(logspace(0, log10 T, n_B))``, ``p = c eta / eps``
    with ``c`` in ``logspace(log10 2.0001, 3, n_c)``, ``eta`` in
    ``logspace(-7, -1, n_eta)`` (capped at ``eta_max``), keeping the argmin of
    ``regret(eta, B)`` subject to Thm 3.2's conditions and
    ``eps(eta, p, B) <= eps``, ``delta(...) <= delta``.

    ``log_factor="exact"``: the constraints use ``log(1/delta1)``;
    ``"rate"``: ``log(1/delta1) -> 1`` in the constraints (the ``retuned``
    rate form; the result is then not certified at ``(eps, delta)``).
    ``conservative``: with ``"exact"``, also require
    :func:`l2p_privacy_conservative` ``<= eps`` (``mode="certified"``) with the measure's constants
    (``measure``: ``"mw"`` or ``"general"``, :data:`L2P_MEASURES`).

    Returns a dict with ``eta, p, B, delta1, regret, eps_printed, eps_conservative,
    delta_certified``. Raises ``ValueError`` if nothing in the grid is feasible.
    """
    T = int(C.count_arg(T, "T"))
    eps = float(C.pos("eps", eps))
    delta = float(C.delta_open(delta, "delta"))
    return calibrate_trusted(T=T, eps=eps, delta=delta, regret=regret, delta0=delta0, eta_max=eta_max,
                             log_factor=log_factor, conservative=conservative, n_B=n_B, n_c=n_c, n_eta=n_eta,
                             measure=measure)


def calibrate_trusted(*, T: int, eps: float, delta: float, regret: Callable, delta0: float = 0.0,
                      eta_max: Optional[float] = None, log_factor: str = "exact", conservative: bool = True,
                      n_B: int = 120, n_c: int = 80, n_eta: int = 400, measure: str = "general") -> dict:
    """:func:`l2p_calibrate` for inputs a planner has already validated (host ints and floats; no checks)."""
    if log_factor not in ("exact", "rate"):
        raise ValueError(f"log_factor must be 'exact' or 'rate', got {log_factor!r}")
    delta1 = l2p_delta1(delta, T, delta0)
    L1 = math.log(1.0 / delta1) if log_factor == "exact" else 1.0
    Bs = np.unique(np.round(np.logspace(0, math.log10(T), n_B))).astype(float)
    cs = np.logspace(math.log10(2.0001), 3, n_c)
    etas = np.logspace(-7, -1, n_eta)
    if eta_max is not None:
        etas = np.unique(np.minimum(etas, eta_max))
    Bg, cg, eg = np.meshgrid(Bs, cs, etas, indexing="ij")
    pg = cg * eg / eps
    nb = _n_batches(T, Bg)
    feas = (pg < 1) & (nb * pg >= 1) & (eg * Bg * L1 / pg <= 1) & (eg <= 0.1)
    eps_pr = 2 * eg / pg + eg + 1.5 * nb * eg ** 2 * pg * L1 + np.sqrt(6.0 * nb * eg ** 2 * pg * L1 ** 2)
    del_pr = 2 * T * (2 / eg + L1 / pg) * math.e * Bg * delta0 + 2 * T * delta1
    feas &= (eps_pr <= eps) & (del_pr <= delta * (1 + 1e-12))
    R = np.where(feas, regret(eg, Bg), np.inf)
    order = np.argsort(R, axis=None)
    n_feas = int(feas.sum())
    if n_feas == 0:
        raise ValueError(
            f"l2p_calibrate: no (eta, p, B) in the search grid satisfies Thm 3.2 at eps={eps}, delta={delta}, T={T} "
            f"(log_factor={log_factor!r}); increase eps or T")
    chosen = None
    for start in range(0, n_feas, 256):
        idx = np.unravel_index(order[start:start + 256], R.shape)
        e_, p_, B_ = eg[idx], pg[idx], Bg[idx]
        if conservative and log_factor == "exact":
            ec, _ = _conservative(e_, p_, B_, float(T), delta0, delta1, measure)
            good = np.nonzero(ec <= eps)[0]
        else:
            good = np.arange(e_.size)
        for j in good:
            if conservative and log_factor == "exact":
                cert = certify(l2p_ledger(float(e_[j]), float(p_[j]), int(B_[j]), T, delta0, delta1, measure), delta)
                if not cert.eps <= eps:
                    continue
            chosen = (float(e_[j]), float(p_[j]), int(B_[j]), float(R[tuple(i[j] for i in idx)]))
            break
        if chosen is not None:
            break
    if chosen is None:
        raise ValueError(f"l2p_calibrate: no grid point passes the conservative accountant at eps={eps}, "
                         f"delta={delta}, T={T}")
    eta_c, p_c, B_c, r_c = chosen
    e_pr, d_pr = _printed(eta_c, p_c, B_c, float(T), delta0, delta1)
    e_cons, _ = _conservative(np.float64(eta_c), np.float64(p_c), np.float64(B_c), float(T), delta0, delta1, measure)
    return {"eta": eta_c, "p": p_c, "B": B_c, "delta1": delta1, "regret": r_c, "eps_printed": float(e_pr),
            "eps_conservative": float(e_cons), "delta_certified": float(d_pr)}
