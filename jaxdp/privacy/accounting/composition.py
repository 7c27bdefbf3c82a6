"""Composition theorems and group privacy for (ε, δ)-DP, host-side float64.

Every function returns ``(eps, delta)`` of the composed / derived guarantee.
Scalar inputs give Python floats; the homogeneous forms broadcast over arrays
(useful inside grid searches).

Sources: Dwork–Roth, *The Algorithmic Foundations of Differential Privacy*
(2014), Thms 3.16, 3.20, Cor. 3.21; Kairouz–Oh–Viswanath, *The Composition
Theorem for Differential Privacy* (ICML 2015 / IEEE TIT 2017), Thms 3.3 and 3.5;
LAZY = Lazy private online learning Lemmas A.2, A.3 (eq. (4)), 3.8;
REAL = Realizable private online optimization Lemmas 2.1, 2.2;
GROWTH = Growth conditions for private optimization Lemma 2.1.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from ...core import validation as C

__all__ = [
    "eps_basic", "compose_basic", "compose_parallel", "eps_advanced_dr", "compose_advanced_dr",
    "eps_kov15", "compose_kov15", "eps_kov15_printed", "compose_kov15_printed", "eps_kov15_homogeneous",
    "delta_optimal_homogeneous", "eps_optimal_homogeneous", "compose_conditional", "group_privacy",
    "eps_composed_best", "OPTIMAL_AUTO_MAX_K",
]

ArrayLike = Any


def eps_basic(eps_list: Sequence[float], delta_list: Sequence[float] | None = None) -> tuple[float, float]:
    """Basic (sequential, adaptive) composition: ``(Σ ε_i, Σ δ_i)``.

    ``k`` mechanisms, the i-th ``(ε_i, δ_i)``-DP, run adaptively on the same data
    are ``(Σε_i, Σδ_i)``-DP (identical: ``(kε, kδ)``). The δ sum is capped at 1.

    Source: Dwork–Roth Thm 3.16; REAL Lemma 2.1; GROWTH Lemma 2.1.

    Args:
        eps_list: per-mechanism ε values.
        delta_list: per-mechanism δ values (``None``: all 0).

    Returns:
        ``(Σ ε_i, min(1, Σ δ_i))``.
    """
    e, d = C.eps_delta_lists(eps_list, delta_list)
    return float(e.sum()), float(min(1.0, d.sum()))


compose_basic = eps_basic


def compose_parallel(eps_list: Sequence[float], delta_list: Sequence[float] | None = None) -> tuple[float, float]:
    """Parallel composition: mechanisms on *disjoint* parts of the data give ``(max ε_i, max δ_i)``.

    Each individual affects exactly one of the mechanisms (replace-one
    neighbours move one record inside one part). Used by GROWTH Alg. 1/2
    (disjoint batches) and LABEL (disjoint bins). Source: McSherry 2009
    (PINQ, Thm 4).

    Args:
        eps_list: per-mechanism ε values.
        delta_list: per-mechanism δ values (``None``: all 0).

    Returns:
        ``(max ε_i, max δ_i)``.
    """
    e, d = C.eps_delta_lists(eps_list, delta_list)
    return float(e.max()), float(d.max())


def eps_advanced_dr(eps: ArrayLike, delta: ArrayLike, k: ArrayLike, delta_prime: ArrayLike):
    """Advanced composition (Dwork–Roth Thm 3.20; REAL Lemma 2.2).

    The ``k``-fold adaptive composition of ``(ε, δ)``-DP mechanisms is
    ``(ε', kδ + δ')``-DP for every ``δ' ∈ (0, 1)`` with

        ε' = sqrt(2 k ln(1/δ')) ε + k ε (e^ε − 1).

    This is the theorem's formula, not capped at basic composition (use
    ``eps_composed_best`` for the minimum over valid bounds). Broadcasts over arrays.

    Args:
        eps, delta: per-mechanism privacy.
        k: the number of composed mechanisms.
        delta_prime: the slack δ' ∈ (0, 1).

    Returns:
        ε' (the total δ is ``kδ + δ'``).
    """
    e = C.eps_arg(eps)
    d = C.delta_arg(delta)
    kk = C.as_f64("k", k)
    if np.any(kk < 1) or np.any(kk != np.round(kk)):
        raise ValueError(f"k must be an integer >= 1, got {k!r}")
    dp = C.delta_open(delta_prime, "delta_prime")
    eps_tot = np.sqrt(2.0 * kk * np.log(1.0 / dp)) * e + kk * e * np.expm1(e)
    return C.out(eps_tot), C.out(np.minimum(1.0, kk * d + dp))


compose_advanced_dr = eps_advanced_dr


def _kov_terms(s1, s2, sq, delta_tilde):
    """min{Σε, S1 + sqrt(2 S2 log(e + sqrt(S2)/δ̃)), S1 + sqrt(2 S2 log(1/δ̃))} with S1 = Σ ε tanh(ε/2)."""
    a = s1 + np.sqrt(2.0 * s2 * np.log(math.e + np.sqrt(s2) / delta_tilde))
    b = s1 + np.sqrt(2.0 * s2 * np.log(1.0 / delta_tilde))
    return np.minimum(sq, np.minimum(a, b))


def eps_kov15(eps_list: Sequence[float], delta_list: Sequence[float] | None, delta_tilde: float) -> tuple[float, float]:
    """Heterogeneous composition of Kairouz–Oh–Viswanath (KOV15 Thm 3.5), CORRECTED form of LAZY eq. (4).

    For ``(ε_t, δ_t)``-DP mechanisms ``t = 1..k`` composed adaptively and any ``δ̃ ∈ (0, 1)``::

        ε̃ = min{ Σ ε_t,
                 Σ ε_t (e^{ε_t} − 1)/(e^{ε_t} + 1) + sqrt(Σ 2 ε_t² log(e + sqrt(Σ ε_t²)/δ̃)),
                 Σ ε_t (e^{ε_t} − 1)/(e^{ε_t} + 1) + sqrt(Σ 2 ε_t² log(1/δ̃)) }
        δ_tot = 1 − (1 − δ̃) Π_t (1 − δ_t)

    LAZY Lemma A.3 prints the leading term as ``Σ ε_t`` (worse than basic
    composition) and ``δ̃_t`` inside the product.
    The printed form is ``eps_kov15_printed``. Entries ``ε_t = 0`` are allowed.

    Args:
        eps_list: per-mechanism ε values.
        delta_list: per-mechanism δ values (``None``: all 0).
        delta_tilde: the slack δ̃ ∈ (0, 1).

    Returns:
        ``(ε̃, δ_tot)``.
    """
    e, d = C.eps_delta_lists(eps_list, delta_list)
    dt = float(C.delta_open(delta_tilde, "delta_tilde"))
    s1 = float(np.sum(e * np.tanh(e / 2.0)))  # (e^x − 1)/(e^x + 1) = tanh(x/2)
    s2 = float(np.sum(e * e))
    eps_tot = float(_kov_terms(s1, s2, float(e.sum()), dt))
    delta_tot = -math.expm1(math.log1p(-dt) + float(np.sum(np.log1p(-d))))
    return eps_tot, delta_tot


compose_kov15 = eps_kov15


def eps_kov15_printed(eps_list: Sequence[float], delta_list: Sequence[float] | None,
                      delta_tilde: float) -> tuple[float, float]:
    """LAZY eq. (4) (Lemma A.3) exactly as printed — for reference only, do not use to certify.

        ε̃ = Σ ε_t + min{ sqrt(Σ 2ε_t² log(e + sqrt(Σ ε_t²)/δ̃)), sqrt(Σ 2ε_t² log(1/δ̃)) },
        δ_tot = 1 − (1 − δ̃) Π_t (1 − δ̃_t)   (δ̃_t read as the per-mechanism δ_t).

    It is always larger than basic composition (``Σ ε_t``), hence valid but
    useless; the intended statement is ``eps_kov15``.

    Args:
        eps_list: per-mechanism ε values.
        delta_list: per-mechanism δ values (``None``: all 0).
        delta_tilde: the slack δ̃ ∈ (0, 1).

    Returns:
        ``(ε̃, δ_tot)`` as printed.
    """
    e, d = C.eps_delta_lists(eps_list, delta_list)
    dt = float(C.delta_open(delta_tilde, "delta_tilde"))
    s2 = float(np.sum(e * e))
    extra = min(math.sqrt(2.0 * s2 * math.log(math.e + math.sqrt(s2) / dt)), math.sqrt(2.0 * s2 * math.log(1.0 / dt)))
    delta_tot = -math.expm1(math.log1p(-dt) + float(np.sum(np.log1p(-d))))
    return float(e.sum()) + extra, delta_tot


compose_kov15_printed = eps_kov15_printed


def eps_kov15_homogeneous(eps: ArrayLike, delta: ArrayLike, k: ArrayLike, delta_tilde: ArrayLike):
    """``eps_kov15`` for ``k`` identical ``(ε, δ)`` mechanisms, broadcasting over arrays.

        ε̃ = min{ kε, kε tanh(ε/2) + sqrt(2kε² log(e + sqrt(k)ε/δ̃)), kε tanh(ε/2) + sqrt(2kε² log(1/δ̃)) },
        δ_tot = 1 − (1 − δ̃)(1 − δ)^k.

    Source: Kairouz–Oh–Viswanath Thm 3.5 (homogeneous case: Thm 3.4); LAZY Lemma A.3 corrected.
    ``eps`` may be 0 (gives 0); ``k`` is a count >= 0.

    Args:
        eps, delta: per-mechanism privacy.
        k: the number of composed mechanisms.
        delta_tilde: the slack δ̃ ∈ (0, 1).

    Returns:
        ``(ε̃, δ_tot)``.
    """
    e = C.nonneg("eps", eps)
    d = C.delta_arg(delta)
    kk = C.nonneg("k", k)
    if np.any(kk != np.round(kk)):
        raise ValueError(f"k must be a non-negative integer (or array of them), got {k!r}")
    dt = C.delta_open(delta_tilde, "delta_tilde")
    s1 = kk * e * np.tanh(e / 2.0)
    s2 = kk * e * e
    eps_tot = _kov_terms(s1, s2, kk * e, dt)
    delta_tot = -np.expm1(np.log1p(-dt) + kk * np.log1p(-d))
    return C.out(eps_tot), C.out(delta_tot)


_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_S = (1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188)


#: ``stirlerr(n)`` for n = 0..15 (index n; n = 0 unused), from ``math.lgamma`` (abs. error ~1e-15, checked in the tests)
_STIRLERR_SMALL = np.array([0.0] + [math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - _HALF_LOG_2PI
                                    for n in range(1, 16)])


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """``log(n!) − log(sqrt(2πn) (n/e)^n)`` for integer-valued ``n >= 1`` (Loader 2000, "Fast and accurate computation
    of binomial probabilities": the asymptotic series, to 1e-17 for n > 15; a table below)."""
    n = np.atleast_1d(np.asarray(n, dtype=np.float64))
    s0, s1, s2, s3, s4 = _S
    nn = n * n
    out = (s0 - (s1 - (s2 - (s3 - s4 / nn) / nn) / nn) / nn) / n
    small = n <= 15.0
    if small.any():
        out[small] = _STIRLERR_SMALL[n[small].astype(np.int64)]
    return out


def _bd0(x: np.ndarray, m: float) -> np.ndarray:
    """``x log(x/m) + m − x >= 0`` without cancellation (Loader 2000; series where ``x ≈ m``), ``x > 0, m >= 0``."""
    x = np.asarray(x, dtype=np.float64)
    v = (x - m) / (x + m)
    near = np.abs(v) < 0.1
    out = np.empty_like(x)
    if near.any():
        vn, xn = v[near], x[near]
        s = (xn - m) * vn
        ej = 2.0 * xn * vn
        v2 = vn * vn
        vmax = float(np.abs(vn).max())
        # term j is <= v^(2j) of the first: stop once below 1e-17 (at most 9 terms since |v| < 0.1)
        terms = 9 if vmax == 0 else min(9, max(1, math.ceil(17.0 / (2.0 * -math.log10(vmax)))))
        for j in range(1, terms + 1):
            ej = ej * v2
            s = s + ej / (2 * j + 1)
        out[near] = s
    far = ~near
    if far.any():
        xf = x[far]
        with np.errstate(divide="ignore", over="ignore"):    # m underflowed to 0 (ε > ~745): bd0 = inf, pmf 0
            out[far] = xf * np.log(xf / m) + m - xf
    return out


def _log_binom_pmf(l: np.ndarray, k: int, log_q: float, log_p: float) -> np.ndarray:
    """``log P(Bin(k, q) = l)`` with ``p = 1 − q``, to a few ulp relative in the pmf (Loader's saddle-point form,
    the one R's ``dbinom`` uses), for integer ``0 <= l <= k``."""
    l = np.atleast_1d(np.asarray(l, dtype=np.float64))
    q, p = math.exp(log_q), math.exp(log_p)
    out = np.empty_like(l)
    inner = (l > 0) & (l < k)
    li = l[inner]
    ri = k - li
    lc = float(_stirlerr(np.float64(k))[0]) - _stirlerr(li) - _stirlerr(ri) - _bd0(li, k * q) - _bd0(ri, k * p)
    out[inner] = lc - 0.5 * (2.0 * _HALF_LOG_2PI + np.log(li) + np.log1p(-li / k))
    out[l == 0] = k * log_p
    out[l == k] = k * log_q
    return out


#: terms of the KOV sum below this fraction of the sum are not evaluated; a bound on them is added instead
_KOV_WINDOW_RTOL = 1e-30
#: relative round-up of the windowed sum, ``1e-12 + 2e-16 k``: covers the floating-point error of its terms
#: (measured <= 4e-12 relative at k = 1e7 against 50-digit arithmetic)
_KOV_ROUND_UP = 1e-12
_KOV_ROUND_UP_PER_K = 2e-16


def _log_delta_rr(eps: float, k: int, eps_total: float) -> float:
    """Upper bound (tight to ~1e-12 relative) on log of the hockey-stick divergence ``E_{e^{ε'}}`` of k-fold binary
    randomized response, ε-DP each.

    With ``q = 1/(1 + e^ε)`` and ``L ~ Bin(k, q)`` (the number of disagreeing answers) the KOV15 Thm 3.3 sum is
    ``δ_rr(ε') = E[(1 − e^{−g(L)})_+]``, ``g(l) = (k − 2l)ε − ε'``: only ``l <= l* = max{l : g(l) > 0}`` count. The
    sum is evaluated exactly on a window ``[a, b] ⊆ [0, l*]`` around ``min(mode, l*)``; the mass left out is bounded by
    geometric series (the pmf ratios ``P(l−1)/P(l) = l p/((k−l+1) q)`` increase in ``l``), so
    ``Σ_{l<a} P(l) <= P(a) ρ/(1 − ρ)`` with ``ρ = P(a−1)/P(a) < 1`` and ``Σ_{l>b} P(l) <= P(b) σ/(1 − σ)`` with
    ``σ = P(b+1)/P(b) < 1``, and these bounds are *added* (each term is ``<= P(l)``). The window widens until the
    bound is below ``1e-30`` of the sum (or covers ``[0, l*]``), so the cost is ``O(sqrt(k q p))``, not ``O(k)``.
    """
    gap_of = lambda l: (k - 2.0 * l) * eps - eps_total   # noqa: E731
    lstar = min(k, math.ceil((k - eps_total / eps) / 2.0) - 1)
    while lstar >= 0 and gap_of(lstar) <= 0:
        lstar -= 1
    while lstar + 1 <= k and gap_of(lstar + 1) > 0:
        lstar += 1
    if lstar < 0:
        return -math.inf
    log_q = -float(np.logaddexp(0.0, eps))       # q = 1/(1 + e^ε)
    log_p = -float(np.logaddexp(0.0, -eps))      # p = e^ε/(1 + e^ε)
    q, p = math.exp(log_q), math.exp(log_p)
    mode = min(k, int(math.floor((k + 1) * q)))
    peak = min(mode, lstar)
    w = int(12.0 * math.sqrt(k * q * p)) + 40
    while True:
        a, b = max(0, peak - w), min(lstar, peak + w)
        l = np.arange(a, b + 1, dtype=np.float64)
        lp = _log_binom_pmf(l, k, log_q, log_p)
        terms = lp + np.log(-np.expm1(-gap_of(l)))
        m = float(terms.max())
        log_sum = m + math.log(float(np.exp(terms - m).sum()))
        tails = []
        full = True
        if a > 0:       # log of rho = P(a-1)/P(a) = a p/((k-a+1) q)
            log_rho = math.log(a) + log_p - math.log(k - a + 1) - log_q
            if log_rho >= 0.0:
                full = False
            else:
                tails.append(float(lp[0]) + log_rho - math.log(-math.expm1(log_rho)))
        if b < lstar:   # log of sigma = P(b+1)/P(b) = (k-b) q/((b+1) p)
            log_sig = math.log(k - b) + log_q - math.log(b + 1) - log_p
            if log_sig >= 0.0:
                full = False
            else:
                tails.append(float(lp[-1]) + log_sig - math.log(-math.expm1(log_sig)))
        log_tail = float(np.logaddexp.reduce(tails)) if tails else -math.inf
        if full and log_tail - log_sum < math.log(_KOV_WINDOW_RTOL):
            return float(np.logaddexp(log_sum, log_tail)) + math.log1p(_KOV_ROUND_UP + _KOV_ROUND_UP_PER_K * k)
        w *= 4


def _delta_opt(e: float, k: int, et: float, d: float) -> float:
    log_drr = _log_delta_rr(e, k, et)
    if log_drr == -math.inf:
        drr = 0.0
    else:
        drr = max(math.exp(log_drr), 5e-324)     # never round a positive δ_rr down to 0
    if drr >= 1.0:
        return 1.0
    return -math.expm1(k * math.log1p(-d) + math.log1p(-drr))


def delta_optimal_homogeneous(eps: float, k: int, eps_total: float, delta: float = 0.0) -> float:
    """Exact δ of the optimal k-fold composition of ``(ε, δ)``-DP at level ``ε_total`` (KOV15 Thm 3.3).

        δ_tot(ε') = 1 − (1 − δ)^k (1 − δ_rr),
        δ_rr = (1 + e^ε)^{-k} Σ_{l=0}^{k} C(k, l) (e^{(k−l)ε} − e^{ε'} e^{lε})_+ .

    ``δ_rr`` is the hockey-stick divergence of the k-fold composition of binary
    randomized response, which dominates every ε-DP mechanism; at
    ``ε' = (k − 2i)ε`` this is the KOV formula verbatim. No (ε', δ') pair better
    than this is implied by composition alone, so it is the tightest possible
    composition bound (exact, not an upper bound on it).

    The sum is ``E[(1 − e^{(2L−k)ε + ε'})_+]`` over ``L ~ Bin(k, 1/(1 + e^ε))``; it is evaluated on the window of
    ``l`` that carries all but ``1e-30`` of it (log-space binomial pmf), and a geometric-series bound on the rest
    is added, so the value returned is an upper bound, equal to the exact one to ~1e-12 relative, at a cost of
    ``O(sqrt(k))`` (about a millisecond at ``k = 10^7``; see ``_log_delta_rr``).

    Args:
        eps: per-mechanism ε.
        k: the number of composed mechanisms.
        eps_total: the total level ε'.
        delta: per-mechanism δ.

    Returns:
        δ_tot(ε'), an upper bound equal to the exact value to about 1e-12 relative.
    """
    e = float(C.eps_arg(eps))
    kk = C.count_arg(k, "k")
    et = float(C.nonneg("eps_total", eps_total))
    d = float(C.delta_arg(delta))
    return float(_delta_opt(e, int(kk), et, d))


def eps_optimal_homogeneous(eps: float, delta: float, k: int, delta_total: float, *, rtol: float = 1e-10) -> float:
    """Smallest ``ε'`` with ``delta_optimal_homogeneous(eps, k, ε', delta) <= delta_total`` (KOV15 Thm 3.3).

    Brent's method on ``[0, min(kε, KOV15 Thm 3.5 bound)]`` (at ``ε' = kε`` the randomized-response term is 0),
    then moved up until the inequality holds as computed: the returned ε' satisfies it and is within ``rtol``
    (relative, in ``[1e-14, 0.1]``) of the exact optimum. Any ``k``: about 20 evaluations of ``O(sqrt(k))`` each.
    Raises ``ValueError`` when ``delta_total < 1 − (1 − δ)^k`` (no ε' certifies it).

    Args:
        eps, delta: per-mechanism privacy.
        k: the number of composed mechanisms.
        delta_total: the total δ budget.
        rtol: relative tolerance, in ``[1e-14, 0.1]``.

    Returns:
        The smallest certified ε' (to ``rtol``).

    Raises:
        ValueError: ``delta_total < 1 − (1 − δ)^k``: no ε' certifies it.
    """
    e = float(C.eps_arg(eps))
    d = float(C.delta_arg(delta))
    kk = int(C.count_arg(k, "k"))
    dt = float(C.delta_arg(delta_total, "delta_total"))
    r = float(C.as_f64("rtol", C.coerce_number("rtol", rtol)))
    if not 1e-14 <= r <= 0.1:
        raise ValueError(f"rtol must be in [1e-14, 0.1], got {rtol!r}")
    floor = -math.expm1(kk * math.log1p(-d))
    if dt < floor:
        raise ValueError(f"delta_total must be >= 1-(1-delta)^k = {floor:.6g} for k={kk} mechanisms with "
                         f"delta={d}, got {dt}")
    return _eps_opt(e, kk, dt, d, r)


def _eps_opt(e: float, k: int, dt: float, d: float, rtol: float = 1e-10) -> float:
    """:func:`eps_optimal_homogeneous` for validated arguments (the accountant's entry)."""
    from scipy.optimize import brentq

    f = lambda x: _delta_opt(e, k, x, d)  # noqa: E731
    if f(0.0) <= dt:
        return 0.0
    hi = k * e
    dtil = 1.0 - (1.0 - dt) / math.exp(k * math.log1p(-d))
    if 0.0 < dtil < 1.0:
        kov = float(_kov_terms(k * e * math.tanh(e / 2.0), k * e * e, k * e, dtil)) * (1.0 + 1e-9)
        if 0.0 < kov < hi and f(kov) <= dt:
            hi = kov
    f_hi = f(hi)
    if f_hi > dt:      # pragma: no cover - at ε' = kε the randomized-response term is 0
        return hi
    if f_hi > 0.0:     # log δ(ε') is close to linear in ε': Brent converges in a few steps
        log_dt = math.log(dt)
        x = brentq(lambda v: math.log(f(v)) - log_dt, 0.0, hi, xtol=1e-300, rtol=rtol / 4.0, maxiter=200)
    else:
        x = brentq(lambda v: f(v) - dt, 0.0, hi, xtol=1e-300, rtol=rtol / 4.0, maxiter=200)
    step = 0.25 * rtol * x + 1e-300
    while x < hi and f(x) > dt:
        x = min(hi, x + step)
        step *= 2.0
    return x


#: the accountant and ``eps_composed_best(optimal=None)`` use the exact optimal composition up to this many
#: identical events (each ε' takes ~20 evaluations of ``O(sqrt(k))``: ~0.1 s at 10^7); explicit calls have no cap
OPTIMAL_AUTO_MAX_K = 10_000_000


def eps_composed_best(eps: float, delta: float, k: int, delta_total: float, *, optimal: bool | None = None) -> float:
    """The smallest ε certified for ``k`` identical ``(ε, δ)`` mechanisms at total ``delta_total``.

    Minimum over basic (needs ``delta_total >= kδ``), Dwork–Roth advanced and
    corrected KOV15 (slack ``δ' = delta_total − kδ`` resp. ``δ̃`` with
    ``1 − (1 − δ̃)(1 − δ)^k = delta_total``) and, if ``optimal``, the exact KOV15 Thm 3.3
    (``O(sqrt(k))`` per evaluation; ``optimal=None`` uses it for ``k <= OPTIMAL_AUTO_MAX_K``).
    ``inf`` when nothing certifies ``delta_total``.

    Args:
        eps, delta: per-mechanism privacy.
        k: the number of composed mechanisms.
        delta_total: the total δ budget.
        optimal: use the exact KOV15 Thm 3.3 (``None``: for ``k <= OPTIMAL_AUTO_MAX_K``).

    Returns:
        The smallest certified ε (``inf`` when nothing certifies ``delta_total``).
    """
    e = float(C.eps_arg(eps))
    d = float(C.delta_arg(delta))
    kk = C.count_arg(k, "k")
    dt = float(C.delta_arg(delta_total, "delta_total"))
    if optimal is None:
        optimal = kk <= OPTIMAL_AUTO_MAX_K
    best = kk * e if kk * d <= dt else math.inf
    slack = dt - kk * d
    if 0 < slack < 1:
        best = min(best, eps_advanced_dr(e, d, kk, slack)[0])
    # δ̃ with 1 − (1 − δ̃)(1 − δ)^k = dt
    one_minus = (1.0 - dt) / math.exp(kk * math.log1p(-d))
    dtil = 1.0 - one_minus
    if 0 < dtil < 1:
        best = min(best, eps_kov15_homogeneous(e, d, kk, dtil)[0])
        if optimal:
            best = min(best, eps_optimal_homogeneous(e, d, kk, dt))
    return float(best)


def compose_conditional(eps_list: Sequence[float], delta_list: Sequence[float] | None,
                        lambda_list: Sequence[float], delta_tilde: float) -> tuple[float, float]:
    """Conditional composition (LAZY Lemma 3.8).

    If each ``M_t`` is ``(ε_t, δ_t)``-indistinguishable conditionally on a
    history event of probability ``>= 1 − λ_t``, the composition is
    ``(ε̃_δ̃, 1 − (1 − δ̃) Π(1 − δ_t) + 2 Σ λ_t)``-DP with ``ε̃_δ̃`` the (corrected)
    KOV15 bound of ``eps_kov15``. δ is capped at 1.

    Args:
        eps_list: per-mechanism ε values.
        delta_list: per-mechanism δ values (``None``: all 0).
        lambda_list: per-mechanism failure probabilities λ_t of the conditioning events.
        delta_tilde: the slack δ̃ ∈ (0, 1).

    Returns:
        ``(ε̃, δ)`` of the composition.
    """
    e, d = C.eps_delta_lists(eps_list, delta_list)
    lam = C.as_f64("lambda_list", lambda_list)
    if lam.ndim == 0:
        lam = np.full_like(e, float(lam))
    if lam.shape != e.shape:
        raise ValueError(f"lambda_list must have the same shape as eps_list {e.shape}, got {lam.shape}")
    if np.any((lam < 0) | (lam > 1)):
        raise ValueError(f"lambda_list must have every entry in [0, 1], got min {lam.min()}, max {lam.max()}")
    eps_tot, delta_tot = eps_kov15(list(e), list(d), delta_tilde)
    return eps_tot, float(min(1.0, delta_tot + 2.0 * lam.sum()))


def group_privacy(eps: ArrayLike, delta: ArrayLike, k: ArrayLike):
    """Group privacy (LAZY Lemma A.2; Dwork–Roth Thm 2.2 for δ = 0).

    An ``(ε, δ)``-DP algorithm on inputs at distance ``k`` satisfies
    ``Pr[A(S) ∈ O] <= e^{kε} Pr[A(S') ∈ O] + k e^{(k−1)ε} δ``, i.e. it is
    ``(kε, k e^{(k−1)ε} δ)``-DP for groups of size ``k`` (δ capped at 1).
    Broadcasts over arrays.

    Args:
        eps, delta: the algorithm's privacy.
        k: the group size.

    Returns:
        ``(kε, min(1, k e^{(k−1)ε} δ))``.
    """
    e = C.eps_arg(eps)
    d = C.delta_arg(delta)
    kk = C.as_f64("k", k)
    if np.any(kk < 1) or np.any(kk != np.round(kk)):
        raise ValueError(f"k must be an integer >= 1 (the group size), got {k!r}")
    with np.errstate(over="ignore"):
        dg = np.where(d > 0, kk * np.exp((kk - 1.0) * e) * d, 0.0)
    return C.out(kk * e), C.out(np.minimum(1.0, dg))
