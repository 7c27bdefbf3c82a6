"""Privacy accounting for L2P (Lazy private online learning, Thm 3.2 and App. B.1;
docs/algorithms/lazy.md). Host-side float64 NumPy.

* :func:`l2p_privacy` — Thm 3.2 as printed:

      eps   = 2 eta/p + eta + 3 T eta^2 p log(1/delta1) / (2B) + sqrt(6 T eta^2 p log^2(1/delta1) / B)
      delta = 2T (2/eta + log(1/delta1)/p) e B delta0 + 2 T delta1

  under ``T p / B >= 1``, ``eta B log(1/delta1) / p <= 1``, ``eta <= 1/10``,
  ``0 < p < 1``. Wherever LAZY writes ``T/B`` we use ``ceil(T/B)`` batches
  (conservative for a partial last batch).
* :func:`l2p_ledger` — PROPOSED ledger of the configured run, derived from the algorithm: the
  neighbours differ in one round ``t0``; that loss enters (i) the switching decision at the next
  boundary, whose exact two-outcome cost is :func:`l2p_decision_eps`; (ii) the sample at ``t0``;
  (iii) every fresh sample after it. At a boundary L2P may resample both the played model ``x``
  (probability ``q_x = 1 - (1 - p) e^{-B(2 eta_accept + spread)}``) and the shadow ``y``
  (probability ``p``), and both are in the view (``y`` drives later switches), so the number of
  fresh samples is bounded by the exact ``1 - delta1`` quantile of ``Bin(n, q_x) + Bin(n, p)``,
  ``n = ceil(T/B)`` (:func:`l2p_fresh_count`, :func:`l2p_fresh_probabilities`). Each costs the
  measure's own ``sample_eps`` (Lemma 3.6). The constants come from the measure
  (:data:`L2P_MEASURES`): MW (Gibbs sampling) has ``spread = eta``, ``sample_eps = 2 eta``; a general
  Assumption 3.1 measure such as RMW has ``spread = 2 eta``, ``sample_eps = 4 eta``; or pointwise
  absolute constants (RMW on a set of diameter ``D`` with ``L``-Lipschitz losses:
  ``(beta L D, 2 beta L D)``, pure). Failure events ``2 delta1`` and, when ``delta0 > 0``, Thm 3.2's
  ``delta0`` term. Certified by :func:`jaxdp.privacy.accounting.certify`. None of Thm 3.2's side conditions is
  needed by this argument (they are utility/printed-formula conditions).
* :func:`l2p_privacy_conservative` — a vectorised upper bound on the same ledger (KOV15 at
  ``delta~ = delta1``), used only to screen grid points.
* :func:`l2p_calibrate` — PROPOSED: grid search over ``(B, p, eta)``
  minimizing a regret proxy subject to Thm 3.2's conditions, its printed
  ``(eps, delta)`` and (``conservative``) the accountant on :func:`l2p_ledger`.

All functions broadcast over NumPy arrays.
"""
from __future__ import annotations

import functools
import math
from typing import Callable, Optional

import numpy as np

from ...core import validation as C
from .accountant import certify
from .composition import eps_kov15_homogeneous

__all__ = ["l2p_privacy", "l2p_privacy_conservative", "l2p_conditions", "l2p_calibrate", "l2p_delta1",
           "mw_regret_proxy", "mw_paper_regret_proxy", "l2p_ledger", "l2p_measure_constants", "L2P_MEASURES",
           "printed_eps", "calibrate_trusted", "l2p_decision_eps", "l2p_fresh_count",
           "l2p_fresh_probabilities", "l2p_composed_rdp", "l2p_composed_eps", "L2P_RDP_ORDERS"]


def _n_batches(T, B):
    return np.ceil(np.asarray(T, float) / np.asarray(B, float))


def l2p_delta1(delta: float, T: int, delta0: float = 0.0) -> float:
    """``delta1 = delta/(2T)`` if ``delta0 = 0`` else ``delta/(4T)`` (the 2 T delta1 term gets all or half of delta).

    Args:
        delta: the total δ.
        T: the horizon (number of adaptive releases or steps).
        delta0: Assumption 3.1's δ.

    Returns:
        δ₁.
    """
    return delta / (2.0 * T) if delta0 == 0 else delta / (4.0 * T)


def l2p_conditions(eta, p, B, T, delta1) -> dict:
    """The side conditions of Thm 3.2, each as a boolean (array).

    Args:
        eta, p, B, T, delta1: as in :func:`l2p_privacy`.

    Returns:
        Condition name -> boolean (array).
    """
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


def _printed(eta, p, B, T, delta0, delta1, L1=None):
    """Thm 3.2's ``(eps, delta, delta0 term)``; ``L1`` defaults to ``log(1/delta1)``."""
    L1 = np.log(1.0 / delta1) if L1 is None else L1
    TB = _n_batches(T, B)  # T/B
    eps = 2 * eta / p + eta + 1.5 * TB * eta ** 2 * p * L1 + np.sqrt(6.0 * TB * eta ** 2 * p * L1 ** 2)
    d0 = 2 * T * (2 / eta + L1 / p) * math.e * B * delta0
    return eps, d0 + 2 * T * delta1, d0


def printed_eps(eta: float, p: float, B: int, T: int, delta0: float, delta1: float) -> float:
    """Thm 3.2's printed eps for validated host floats (no checks; planners call it after validating once).

    Args:
        eta, p, B, T, delta0, delta1: as in :func:`l2p_privacy`.

    Returns:
        Thm 3.2's printed ε.
    """
    return float(_printed(eta, p, B, T, delta0, delta1)[0])


def l2p_privacy(eta, p, B, T, delta0, delta1):
    """LAZY Thm 3.2 as printed: returns ``(eps, delta, conditions_ok)`` (broadcasting).

    ``conditions_ok`` is False where a side condition (:func:`l2p_conditions`) fails: the formula then
    certifies nothing.

    Args:
        eta: the measure's parameter η (its D_inf bound, Assumption 3.1).
        p: the fake-switch probability.
        B: the batch size.
        T: the horizon (number of adaptive releases or steps).
        delta0: Assumption 3.1's δ.
        delta1: the free parameter δ₁ of Thm 3.2.

    Returns:
        ``(eps, delta, conditions_ok)``.
    """
    eta, p, B, T, delta0, delta1 = _check(eta, p, B, T, delta0, delta1)
    eps, delta, _ = _printed(eta, p, B, T, delta0, delta1)
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
    """``(spread, sample_eps)`` per unit eta of the measure ``"mw"`` or ``"general"`` (see :data:`L2P_MEASURES`).

    Args:
        measure: ``"mw"`` or ``"general"`` (:data:`L2P_MEASURES`).

    Returns:
        ``(spread, sample_eps)`` per unit η.
    """
    if measure not in L2P_MEASURES:
        raise ValueError(f"measure must be one of {sorted(L2P_MEASURES)}, got {measure!r}")
    return L2P_MEASURES[measure]


def l2p_decision_eps(gamma, p, log_a_max=0.0):
    """ε of the switching decision at the boundary after the differing round (exact, two outcomes).

    The decision keeps ``x`` with probability ``(1 - p) a``, ``a = min(1, r e^{-2Bη})``, where the batch
    log-ratio ``log r`` is at most ``B spread`` (so ``log a <= log_a_max = min(0, B spread - 2Bη)``) and a
    neighbouring loss moves it by at most ``gamma``. The keep probabilities differ by at most ``e^{gamma}``;
    the switch probabilities by at most ``(1 - (1 - p) a e^{-gamma}) / (1 - (1 - p) a)``, increasing in ``a``,
    so worst at ``a = a_max``. The decision is the larger of the two logs -DP: below Thm 3.2's ``gamma/p``
    and valid without its side conditions.

    Args:
        gamma: the most a neighbouring loss moves the batch log-ratio.
        p: the fake-switch probability.
        log_a_max: the bound ``log a_max`` on the log acceptance.

    Returns:
        The decision's ε.
    """
    gamma = np.asarray(gamma, float)
    p = np.asarray(p, float)
    a = np.exp(np.minimum(0.0, np.asarray(log_a_max, float)))
    with np.errstate(divide="ignore", invalid="ignore"):
        den = 1.0 - (1.0 - p) * a
        switch = np.log1p((1.0 - p) * a * -np.expm1(-gamma) / den)
    switch = np.where(den > 0, switch, np.inf)
    return np.maximum(gamma, switch)


def l2p_fresh_probabilities(eta_accept, spread, p, B):
    """Per boundary: ``(q_x, q_y)``, bounds on the probability that ``x`` resp. ``y`` is drawn afresh.

    ``x`` is fresh when ``S_s = 0`` or ``S'_s = 0``: ``1 - (1 - p) a`` with the acceptance
    ``a >= e^{-B (2 eta_accept + spread)}`` (the batch log-ratio is at most ``B spread`` in absolute value);
    ``y`` is fresh when ``A_s = 0``: probability ``p`` exactly. The coins are independent of each other.

    Args:
        eta_accept: the η of the acceptance ratio.
        spread: the pointwise spread of the measure.
        p: the fake-switch probability.
        B: the batch size.

    Returns:
        ``(q_x, q_y)``.
    """
    q_x = 1.0 - (1.0 - np.asarray(p, float)) * np.exp(-np.asarray(B, float) * (2.0 * np.asarray(eta_accept, float)
                                                                              + np.asarray(spread, float)))
    return np.clip(q_x, 0.0, 1.0), np.clip(np.asarray(p, float), 0.0, 1.0)


def _isf(mass, n, q):
    """The smallest integer ``k`` with ``P[Bin(n, q) > k] <= mass`` (scalars; bisection on the exact tail, which
    stays accurate far below the ``1e-16`` where ``scipy.stats.binom.isf`` saturates)."""
    from scipy.special import bdtrc as _bdtrc

    n, q = int(n), float(q)
    if q <= 0:
        return 0
    if q >= 1:
        return n
    lm = math.log(1.0 / mass)
    lo = max(0, int(n * q) - 1)                                                  # sf(mean - 1) > 1/2 > mass
    hi = min(n, int(math.ceil(n * q + math.sqrt(2.0 * n * q * (1.0 - q) * lm) + lm * 2.0 / 3.0)))  # Bernstein
    if mass >= 0.5:
        lo = 0
    while lo < hi:
        mid = (lo + hi) // 2
        if _bdtrc(mid, n, q) <= mass:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _isf_screen(mass, n, q):
    """A cheap elementwise upper bound on :func:`_isf`'s quantile: the smaller of ``scipy``'s ``isf`` (rounded up by
    one) and Bernstein's inequality ``nq + sqrt(2 n q (1-q) log(1/m)) + (2/3) log(1/m)``, capped at ``n``.
    Used only to screen a search grid; certificates use the exact count."""
    from scipy import stats as _st

    n = np.asarray(n, float)
    q = np.clip(np.asarray(q, float), 0.0, 1.0)
    lm = math.log(1.0 / mass)
    bern = np.ceil(n * q + np.sqrt(2.0 * n * q * (1.0 - q) * lm) + lm * 2.0 / 3.0)
    with np.errstate(all="ignore"):
        sc = _st.binom.isf(mass, n.astype(np.int64), q) + 1.0
    sc = np.where(np.isfinite(sc), sc, n)
    return np.where(q <= 0, 0.0, np.where(q >= 1, n, np.minimum(np.minimum(sc, bern), n)))


def l2p_fresh_count(n: int, q_x: float, q_y: float, delta1: float) -> int:
    """The ``1 - delta1`` quantile of the number of fresh samples over ``n`` boundaries.

    Exact for ``X + Y`` with ``X ~ Bin(n, q_x)`` (fresh ``x``) and ``Y ~ Bin(n, q_y)`` (fresh ``y``): the
    smallest ``k`` with ``P[X + Y > k] <= delta1``, evaluated as ``sum_j P[Y = j] P[X > k - j]`` over the
    window of ``Y`` outside which its mass is below ``delta1 / 1e6`` (that mass is added to the tail, so the
    count is never too small). Per-boundary probabilities that are only upper bounds (``q_x``) keep it valid:
    the true count is stochastically smaller.

    Args:
        n: the number of boundaries.
        q_x, q_y: per-boundary probabilities (bounds) of a fresh ``x`` resp. ``y``.
        delta1: the free parameter δ₁ of Thm 3.2.

    Returns:
        The count ``k``.
    """
    n = int(n)
    if n <= 0:
        return 0
    return _fresh_count(n, float(q_x), float(q_y), float(delta1))


@functools.lru_cache(maxsize=1024)
def _fresh_count(n: int, q_x: float, q_y: float, delta1: float) -> int:
    from scipy import stats as _st

    drop = delta1 * 1e-6

    def window(q):   # [lo, hi] with P[Bin < lo] <= drop/2 and P[Bin > hi] <= drop/2
        return n - _isf(drop / 2, n, 1.0 - q), _isf(drop / 2, n, q)

    lo_y, hi_y = window(q_y)
    js = np.arange(lo_y, hi_y + 1)
    pmf_y = _st.binom.pmf(js, n, q_y)
    dropped_y = drop if (lo_y > 0 or hi_y < n) else 0.0
    lo_x, hi_x = window(q_x)
    pmf_x = _st.binom.pmf(np.arange(lo_x, hi_x + 1), n, q_x)
    # sf_x[m - lo_x] >= P[X > m] for m in [lo_x, hi_x] (suffix sums of the window plus the mass above it)
    above = drop / 2 if hi_x < n else 0.0
    sf_x = np.concatenate([np.cumsum(pmf_x[::-1])[::-1][1:], [0.0]]) + above

    def tail(k):     # an upper bound on P[X + Y > k], within 2 drop of the exact value
        m = k - js
        sf = np.where(m < lo_x, 1.0, sf_x[np.clip(m - lo_x, 0, hi_x - lo_x)])
        sf = np.where(m >= hi_x, above, sf)
        return float(np.dot(pmf_y, sf)) + dropped_y

    lo = max(_isf(delta1, n, q_x), _isf(delta1, n, q_y))       # P[X + Y > k] >= P[X > k]
    hi = 2 * n
    while lo < hi:
        mid = (lo + hi) // 2
        if tail(mid) <= delta1:
            hi = mid
        else:
            lo = mid + 1
    return int(lo)


def _fresh_count_screen(eta_accept, spread, p, B, T, delta1):
    """Vectorised upper bound on :func:`l2p_fresh_count`: bounds on the ``1 - delta1/2`` quantiles of ``X`` and ``Y``
    added (a union bound)."""
    n = _n_batches(T, B)
    q_x, q_y = l2p_fresh_probabilities(eta_accept, spread, p, B)
    return np.minimum(_isf_screen(delta1 / 2, n, q_x) + _isf_screen(delta1 / 2, n, q_y), 2 * n)


def _conservative(eta, p, B, T, delta0, delta1, measure="general"):
    """Vectorised conservative eps: KOV15 over the fresh samples at delta~ = delta1, plus t0's decision and sample."""
    spread, c_s = L2P_MEASURES[measure]
    k = _fresh_count_screen(eta, spread * np.asarray(eta, float), p, B, T, delta1)
    e_comp, _ = eps_kov15_homogeneous(c_s * eta, 0.0, k, delta1)
    e = np.asarray(eta, float)
    dec = l2p_decision_eps(2.0 * spread * e, p, np.asarray(B, float) * (spread * e - 2.0 * e))
    eps = np.asarray(e_comp, float) + dec + c_s * eta
    return eps, _printed(eta, p, B, T, delta0, delta1)[1]


def l2p_privacy_conservative(eta, p, B, T, delta0, delta1, measure: str = "general"):
    """PROPOSED conservative accountant for L2P: ``(eps, delta)`` (module docstring), broadcasting.

    ``measure`` names the input measure's own privacy (:data:`L2P_MEASURES`): ``"mw"`` (Gibbs
    sampling over experts: switching ``e^{-3B eta}``, ``2 eta`` per fresh sample) or ``"general"``
    (any Assumption 3.1 measure, e.g. RMW: ``e^{-4B eta}``, ``4 eta``; the default, because it is
    valid for every measure). A vectorised upper bound on what :func:`l2p_ledger` certifies (the count
    of fresh samples is bounded by the sum of the two ``1 - delta1/2`` quantiles).

    Args:
        eta, p, B, T, delta0, delta1: as in :func:`l2p_privacy`.
        measure: ``"mw"`` or ``"general"`` (:data:`L2P_MEASURES`).

    Returns:
        ``(eps, delta)``.
    """
    eta, p, B, T, delta0, delta1 = _check(eta, p, B, T, delta0, delta1)
    l2p_measure_constants(measure)
    eps, delta = _conservative(eta, p, B, T, delta0, delta1, measure)
    return C.out(eps), C.out(delta)


def l2p_ledger(eta: float, p: float, B: int, T: int, delta0: float, delta1: float, measure: str = "general",
               outcomes: int = 1, *, eta_accept: Optional[float] = None,
               pointwise: Optional[tuple[float, float]] = None):
    """The ledger of L2P with measure parameter ``eta`` (Assumption 3.1), trusted host floats.

    Neighbours differ in one round ``t0`` of batch ``s0``. That loss enters (i) the switching decision at
    the next boundary (:func:`l2p_decision_eps` with ``gamma = 2 spread``: one loss moves the batch
    log-ratio by at most twice its pointwise spread; the acceptance is at most ``e^{B (spread - 2 eta_accept)}``), and (ii) every measure ``nu_s``, ``s > s0``, hence every
    fresh sample of ``x`` or ``y`` after it, each costing ``sample_eps``. Both ``x`` and ``y`` are in the
    view (``y`` drives later switches), so up to two samples per boundary: their number is at most ``k``,
    the ``1 - delta1`` quantile of ``Bin(n, q_x) + Bin(n, q_y)`` (:func:`l2p_fresh_count`,
    ``n = ceil(T/B)``), except with probability ``delta1``. One more sample is charged at ``t0``.
    Failure events: ``2 delta1`` (conditional composition, LAZY Lemma 3.8) and Thm 3.2's ``delta0`` term.

    ``measure`` gives ``(spread, sample_eps)`` per unit ``eta`` (:data:`L2P_MEASURES`); ``pointwise =
    (spread, sample_eps)`` overrides them with absolute values that hold for every loss and point (pure:
    pass ``delta0 = 0``), e.g. RMW on a set of diameter ``D`` with ``L``-Lipschitz losses:
    ``(beta L D, 2 beta L D)``. ``eta_accept``: the ``eta`` in the algorithm's acceptance ratio
    ``e^{-2B eta}`` (default ``eta``). ``outcomes``: size of the sampled set (float δ floor only).

    Args:
        eta, p, B, T, delta0, delta1: as in :func:`l2p_privacy`.
        measure: ``"mw"`` or ``"general"`` (:data:`L2P_MEASURES`).
        outcomes: size of the sampled set (float δ floor only).
        eta_accept: the η in the acceptance ratio (default ``eta``).
        pointwise: ``(spread, sample_eps)`` absolute values overriding ``measure``.

    Returns:
        The :class:`Ledger`.
    """
    from . import ledger as LG

    spread_u, c_s = L2P_MEASURES[measure]
    spread, s_eps = (spread_u * eta, c_s * eta) if pointwise is None else (float(pointwise[0]), float(pointwise[1]))
    eta_acc = eta if eta_accept is None else float(eta_accept)
    n = int(_n_batches(float(T), float(B)))
    q_x, q_y = l2p_fresh_probabilities(eta_acc, spread, p, B)
    k = l2p_fresh_count(n, float(q_x), float(q_y), delta1)
    extra = (float(_printed(eta, p, B, T, delta0, delta1)[2]) if delta0 > 0 else 0.0) + 2.0 * delta1
    kind = "exponential" if measure == "mw" and pointwise is None else "pure"
    dec = float(l2p_decision_eps(2.0 * spread, p, B * (spread - 2.0 * eta_acc)))
    tag = f"measure={measure}" if pointwise is None else f"pointwise spread={spread:.4g}"
    items = []
    if k > 0:
        items.append(LG.Event(kind, eps=s_eps, count=k, float_dim=int(outcomes),
                              label=f"fresh x and y samples after t0 (1-delta1 quantile of Bin(n, q_x) + Bin(n, p), "
                                    f"n = {n}, q_x = {float(q_x):.4g}; {tag})"))
    items += [LG.pure(dec, label=f"switching decision at t0 (log ratio moves <= {2.0 * spread:.4g})"),
              LG.Event(kind, eps=s_eps, label="sample at t0", float_dim=int(outcomes))]
    return LG.sequential(*items, delta_extra=extra, label=f"L2P (T={T}, B={B}, p={p:.4g}, eta={eta:.4g})")


def mw_regret_proxy(d: int, T: int) -> Callable:
    """The valid L2P-MW bound ``ln d / eta + eta T B / 8`` (CORRECTED batching term; docs/algorithms/lazy.md) as ``R(eta, B)``.

    Args:
        d: the number of experts.
        T: the horizon (number of adaptive releases or steps).

    Returns:
        ``R(eta, B)``.
    """
    return lambda eta, B: math.log(d) / eta + eta * T * B / 8.0


def mw_paper_regret_proxy(d: int, T: int, c_B: float = 1.0) -> Callable:
    """The paper's proxy ``ln d / eta + eta T / 8 + c_B T B^2 eta^2`` (Prop. 3.3 as printed; for reproducing its curves).

    Args:
        d: the number of experts.
        T: the horizon (number of adaptive releases or steps).
        c_B: the constant of the batching term.

    Returns:
        ``R(eta, B)``.
    """
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

    Args:
        T: the horizon (number of adaptive releases or steps).
        eps, delta: the target privacy.
        regret: ``regret(eta, B)``, the proxy to minimise.
        delta0: Assumption 3.1's δ.
        eta_max: a cap on η.
        log_factor: ``"exact"`` or ``"rate"``.
        conservative: also require :func:`l2p_privacy_conservative` ``<= eps`` (with ``"exact"``).
        n_B, n_c, n_eta: grid sizes for ``B``, ``c`` and ``η``.
        measure: ``"mw"`` or ``"general"`` (:data:`L2P_MEASURES`).

    Returns:
        A dict with ``eta, p, B, delta1, regret, eps_printed, eps_conservative, delta_certified``.

    Raises:
        ValueError: nothing in the grid is feasible.
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
    """:func:`l2p_calibrate` for inputs a planner has already validated (host ints and floats; no checks).

    Args:
        T, eps, delta, regret, delta0, eta_max, log_factor, conservative, n_B, n_c, n_eta, measure: as in
            :func:`l2p_calibrate`.

    Returns:
        As :func:`l2p_calibrate`.
    """
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
    feas = (pg < 1) & (_n_batches(T, Bg) * pg >= 1) & (eg * Bg * L1 / pg <= 1) & (eg <= 0.1)
    eps_pr, del_pr, _ = _printed(eg, pg, Bg, T, delta0, delta1, L1)
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
    e_pr, d_pr, _ = _printed(eta_c, p_c, B_c, float(T), delta0, delta1)
    e_cons, _ = _conservative(np.float64(eta_c), np.float64(p_c), np.float64(B_c), float(T), delta0, delta1, measure)
    return {"eta": eta_c, "p": p_c, "B": B_c, "delta1": delta1, "regret": r_c, "eps_printed": float(e_pr),
            "eps_conservative": float(e_cons), "delta_certified": float(d_pr)}


#: The Rényi orders of :func:`l2p_composed_rdp` (any grid is valid: each order gives a valid ε, the minimum is taken).
L2P_RDP_ORDERS = tuple(float(a) for a in np.concatenate([1.0 + np.logspace(-3, 0, 60, endpoint=False),
                                                         np.logspace(math.log10(2.0), 5, 240)]))


def l2p_composed_rdp(eta: float, p: float, B: int, T: int, delta1: float, orders=None):
    """The Rényi-DP curve of L2P-MW's ledger with each fresh sample as a bounded-range mechanism (trusted floats).

    The ledger's items (:func:`l2p_ledger` with ``measure="mw"``): ``k`` fresh Gibbs samples after ``t0`` (the
    ``1 - delta1`` quantile of their count), the switching decision at ``t0`` (``eps_dec``-DP, two outcomes) and one
    sample at ``t0`` (``2 eta``-DP). A fresh sample from ``nu_s ∝ exp(-eta cum)`` on neighbouring streams has
    log-ratio ``-eta (l(x) - l'(x)) + log(Z'/Z)``, in an interval of width ``2 eta`` (``2 eta``-bounded range), so by
    Hoeffding's lemma ``D_a <= a (2 eta)^2 / 8 = a eta^2 / 2`` for every order ``a > 1``; a pure ``e``-DP item has
    ``D_a <= min(e, a e^2 / 2)`` (Bun–Steinke, *Concentrated differential privacy*, Prop. 3.3). Rényi divergences
    add under adaptive composition (Mironov, *Rényi differential privacy*, Prop. 1)::

        R(a) = k min(2 eta, a eta^2 / 2) + min(eps_dec, a eps_dec^2 / 2) + min(2 eta, 2 a eta^2)

    (docs/algorithms/lazy.md#composed).

    Args:
        eta: the MW step size (Assumption 3.1's η).
        p: the fake-switch probability.
        B: the batch size.
        T: the horizon.
        delta1: the free parameter δ₁ of Thm 3.2 (the count's failure probability).
        orders: Rényi orders ``> 1`` (default :data:`L2P_RDP_ORDERS`).

    Returns:
        ``(orders, rdp, k, eps_dec)``: float64 arrays of the orders and ``R`` at them, the count ``k`` and the
        decision's ε.
    """
    a = np.asarray(L2P_RDP_ORDERS if orders is None else orders, float)
    n = int(_n_batches(float(T), float(B)))
    q_x, q_y = l2p_fresh_probabilities(eta, eta, p, B)
    k = l2p_fresh_count(n, float(q_x), float(q_y), delta1)
    dec = float(l2p_decision_eps(2.0 * eta, p, B * (eta - 2.0 * eta)))
    e0 = 2.0 * eta
    rdp = (k * np.minimum(e0, a * e0 * e0 / 8.0) + np.minimum(dec, a * dec * dec / 2.0)
           + np.minimum(e0, a * e0 * e0 / 2.0))
    return a, rdp, int(k), dec


def l2p_composed_eps(eta: float, p: float, B: int, T: int, delta: float, delta1: float) -> tuple[float, str]:
    """L2P-MW's ``composed`` certificate: the smaller of the ledger's and its Rényi bound (docs/algorithms/lazy.md#composed).

    The Rényi curve :func:`l2p_composed_rdp` is converted at ``delta' = delta - 2 delta1`` by
    ``eps = min_a R(a) + log((a - 1)/a) - (log delta' + log a)/(a - 1)`` (Canonne, Kamath, Steinke, *The discrete
    Gaussian for differential privacy*, Prop. 12); the failure events ``2 delta1`` are those of
    :func:`l2p_ledger`. Both bounds are valid for the same mechanism, so their minimum is.

    Args:
        eta, p, B, T: as in :func:`l2p_privacy` (MW measure, ``delta0 = 0``).
        delta: the total δ.
        delta1: the count's failure probability (``<= delta / 2``).

    Returns:
        ``(eps, which)`` with ``which`` ``"rdp"`` or ``"ledger"``, the bound that gave ``eps``.
    """
    led = certify(l2p_ledger(eta, p, B, T, 0.0, delta1, "mw"), delta).eps
    avail = delta - 2.0 * delta1
    if not 0.0 < avail < 1.0:
        return float(led), "ledger"
    a, rdp, _, _ = l2p_composed_rdp(eta, p, B, T, delta1)
    vals = rdp + np.log1p(-1.0 / a) - (math.log(avail) + np.log(a)) / (a - 1.0)
    e_rdp = max(0.0, float(np.min(vals)))
    return (e_rdp, "rdp") if e_rdp < led else (float(led), "ledger")
