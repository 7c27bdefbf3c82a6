"""Exact privacy losses at the sizes the audits run (docs/guide/auditing.md#exact).

An empirical audit lower-bounds ε; where its bound stays far below the claim, the question is whether the
audit is weak or the mechanism is not tight at that size. The functions here answer it by computing the
output law of the audited mechanism EXACTLY (enumeration of the outputs, quadrature over continuous noise)
on the audited neighbouring inputs, so that

* ``exact_eps`` = the largest privacy loss ``log P(E)/P'(E)`` over all events (pure DP: the largest
  ratio of one output's probabilities), or over events of probability at least ``p_min`` (what a
  finite audit can see), and
* ``audit.eps_lower / exact_eps`` is the fraction of the attainable loss the audit reaches.

Mechanisms:

* :func:`shared_svt_common_law`: REAL Alg. 1 of *Private Online Learning in the Realizable Regime* run
  with ONE threshold noise shared by its ``≤ K`` sparse-vector instances (the correct scaling of Lyu, Su,
  Li, *Understanding the Sparse Vector Technique for Differential Privacy*, Alg. 1, or the broken twin
  that keeps the fresh instances' query noise), on losses common to all experts (so the exponential
  mechanism is uniform and only the sparse vector leaks): the law of the switch pattern by Gauss–Legendre
  quadrature over the threshold noise, and (:func:`visible_switch_law`) the law of the observed
  ``x_t ≠ x_{t-1}`` pattern with ``d`` experts.
* :func:`csvt_answer_law`: the answer vector of Lyu et al.'s sparse vector with ``c`` positives on a
  fixed query vector (quadrature over the threshold noise).
* :func:`fresh_sv_experts_law`: REAL Alg. 1 with fresh instances, ``d = 2``, any loss sequence: the law
  of the whole action sequence (exact, enumeration over switch patterns, quadrature per instance).
* :func:`l2p_mw_law`: the law of the batch-expert sequence of L2P-MW (LAZY, Thm 3.2's algorithm) by
  enumeration of its lazy-switching Markov chain.
* :func:`gaussian_eps`: the exact ε(δ) of the Gaussian mechanism (Balle & Wang, *Improving the Gaussian
  Mechanism for Differential Privacy*, Thm 8).
"""
from __future__ import annotations

import math
from typing import Dict, Tuple

import numpy as np
from scipy import special, stats

__all__ = ["laplace_cdf", "laplace_quadrature", "shared_svt_common_law", "visible_switch_law", "align",
           "exact_eps", "event_eps"]


# ----------------------------------------------------------------------------- helpers
def laplace_cdf(x, b):
    """CDF of ``Lap(b)`` at ``x`` (float64, vectorised)."""
    x = np.asarray(x, np.float64) / b
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(x, 0.0)))


def laplace_quadrature(centre: float, scale: float, breakpoints, *, nodes: int = 24, tail: float = 60.0,
                       pieces: int = 48) -> Tuple[np.ndarray, np.ndarray]:
    """Nodes and weights integrating ``g(τ) p(τ) dτ`` for ``τ = centre + Lap(scale)`` whose ``g`` is smooth
    between ``breakpoints``: Gauss–Legendre with ``nodes`` points on every piece between consecutive
    breakpoints (the density's kink ``centre`` added), the two tails cut at ``tail`` scales beyond the
    outermost breakpoints and split into ``pieces`` pieces each. The weights include the density."""
    bp = np.unique(np.concatenate([np.asarray(breakpoints, np.float64).ravel(), [centre]]))
    lo, hi = bp[0] - tail * scale, bp[-1] + tail * scale
    edges = np.unique(np.concatenate([np.linspace(lo, bp[0], pieces + 1), bp, np.linspace(bp[-1], hi, pieces + 1)]))
    # long inner pieces are split as well (at most one scale long)
    fine = [edges[0]]
    for a, b in zip(edges[:-1], edges[1:]):
        m = max(1, int(math.ceil((b - a) / scale)))
        fine.extend(np.linspace(a, b, m + 1)[1:])
    edges = np.asarray(fine)
    u, w = np.polynomial.legendre.leggauss(nodes)
    a, b = edges[:-1, None], edges[1:, None]
    x = (0.5 * (b - a) * u + 0.5 * (a + b)).ravel()
    wx = (0.5 * (b - a) * w).ravel()
    dens = np.exp(-np.abs(x - centre) / scale) / (2.0 * scale)
    return x, wx * dens


def event_eps(p: np.ndarray, q: np.ndarray, *, delta: float = 0.0, p_min: float = 0.0) -> Tuple[float, float]:
    """The largest ``log((P(E) - δ)/Q(E))`` over unions ``E`` of outputs with ``P(E) >= p_min`` (both
    directions are the caller's: pass ``(q, p)`` for the other). Returns ``(eps, P(E))``. The best
    union is a prefix of the outputs sorted by ``p/q`` (descending), which this scans."""
    p = np.asarray(p, np.float64)
    q = np.asarray(q, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(q > 0, p / np.where(q > 0, q, 1.0), np.where(p > 0, np.inf, 0.0))
    order = np.argsort(-r, kind="stable")
    P, Q = np.cumsum(p[order]), np.cumsum(q[order])
    ok = (P >= p_min) & (P - delta > 0)
    if not ok.any():
        return 0.0, 0.0
    with np.errstate(divide="ignore"):
        e = np.where(ok, np.log(np.maximum(P - delta, 1e-300)) - np.log(np.maximum(Q, 1e-300)), -np.inf)
    i = int(np.argmax(e))
    return float(max(e[i], 0.0)), float(P[i])


def exact_eps(p, q, *, delta: float = 0.0, p_min: float = 0.0) -> Tuple[float, float]:
    """``max(event_eps(p, q), event_eps(q, p))`` (the symmetric privacy loss) and the event's probability."""
    a = event_eps(p, q, delta=delta, p_min=p_min)
    b = event_eps(q, p, delta=delta, p_min=p_min)
    return a if a[0] >= b[0] else b


# ----------------------------------------------------------------------------- shared-threshold sparse vector
def _segment_sums(losses) -> np.ndarray:
    """Every value an accumulator can take: the sums of contiguous stretches of ``losses`` (and 0)."""
    c = np.concatenate([[0.0], np.cumsum(np.asarray(losses, np.float64))])
    return np.unique(np.round((c[None, :] - c[:, None])[np.triu_indices(len(c))], 12))


def shared_svt_common_law(losses, L: float, b_thr: float, b_q: float, K: int, *,
                          nodes: int = 24) -> Tuple[np.ndarray, np.ndarray]:
    """Exact law of the switch pattern of REAL Alg. 1 with one shared threshold noise, on a common loss sequence.

    Every expert takes loss ``losses[t]`` in round ``t`` (so the played expert does not matter and the
    exponential mechanism is uniform). The learner (test-then-play order, as ``sparse_vector_experts``):
    ``τ̂ = L + Lap(b_thr)`` once; in round ``t`` the accumulator takes ``losses[t]``, and while fewer than ``K``
    switches happened, ``switch_t = acc + Lap(b_q) >= τ̂`` (fresh query noise), after which ``acc = 0``.
    The correct option has ``(b_thr, b_q) = (2/eps_svt, 4K/eps_svt)``, the broken twin ``(2/eps_svt, 4/eps_svt)``.

    Conditionally on ``τ̂`` the rounds are independent coin flips, so each pattern's probability is a
    product of Laplace CDFs integrated against the threshold density (:func:`laplace_quadrature`, the
    kinks at every accumulator value). Returns ``(codes, probs)``: ``codes[i] = Σ_t switch_t 2^t`` over
    the patterns with at most ``K`` switches, ``probs`` summing to 1 (up to quadrature error ~1e-12).
    """
    losses = np.asarray(losses, np.float64).ravel()
    T = losses.size
    tau, w = laplace_quadrature(L, b_thr, _segment_sums(losses), nodes=nodes)
    codes = np.zeros(1, np.int64)
    acc = np.zeros(1)
    count = np.zeros(1, np.int64)
    vec = np.ones((1, tau.size))
    for t in range(T):
        a = acc + losses[t]
        live = count < K
        p_top = np.where(live[:, None], 1.0 - laplace_cdf(tau[None, :] - a[:, None], b_q), 0.0)
        li = np.nonzero(live)[0]
        codes = np.concatenate([codes, codes[li] | (1 << t)])
        count = np.concatenate([count, count[li] + 1])
        acc = np.concatenate([a, np.zeros(li.size)])
        vec = np.concatenate([vec * (1.0 - p_top), vec[li] * p_top[li]])
    return codes, vec @ w


def visible_switch_law(codes, probs, d: int) -> Tuple[np.ndarray, np.ndarray]:
    """The law of the OBSERVED pattern ``x_t ≠ x_{t-1}`` when each switch draws the new expert uniformly from
    ``d`` (common losses: the exponential mechanism is uniform), so a switch keeps the expert with
    probability ``1/d``. Returns ``(codes, probs)`` over the observed patterns."""
    out: Dict[int, float] = {}
    stay = 1.0 / d
    for c, p in zip(np.asarray(codes).tolist(), np.asarray(probs).tolist()):
        bits = [i for i in range(c.bit_length()) if c >> i & 1]
        m = len(bits)
        for s in range(1 << m):
            v = 0
            k = 0
            for j, b in enumerate(bits):
                if s >> j & 1:
                    v |= 1 << b
                    k += 1
            out[v] = out.get(v, 0.0) + p * (1.0 - stay) ** k * stay ** (m - k)
    keys = np.array(sorted(out), np.int64)
    return keys, np.array([out[k] for k in keys.tolist()])


def align(law0, law1) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two ``(codes, probs)`` laws on the union of their codes: ``(codes, p0, p1)``."""
    codes = np.union1d(law0[0], law1[0])
    p0 = np.zeros(codes.size)
    p1 = np.zeros(codes.size)
    p0[np.searchsorted(codes, law0[0])] = law0[1]
    p1[np.searchsorted(codes, law1[0])] = law1[1]
    return codes, p0, p1


def shared_svt_window_law(T: int, K: int, j: int, L: float, b_thr: float, b_q: float, *,
                          nodes: int = 24) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact law, by pattern class, of the switch pattern of the shared-threshold learner on the pair
    ``D``: every loss 0, ``D'``: every expert takes loss 1 in round ``j`` (0 elsewhere).

    Under ``D`` every query is 0; under ``D'`` the queries of the instance active in round ``j`` are 1 from
    round ``j`` until its switch (the accumulator resets there). Given ``τ̂`` the answers are independent
    with ``P(switch) = p(τ̂) = P(Lap(b_q) >= τ̂)`` (``p₁(τ̂) = P(1 + Lap(b_q) >= τ̂)`` inside that window), so a
    pattern's probability depends only on its class :func:`window_class` ``(c, b, e, r)``: ``c`` switches,
    ``b`` no-switch answers outside the window, a window of ``r`` answers of which the last is a switch
    iff ``e = 1``. ``P = ∫ p^c (1-p)^{b+r-e}``, ``P' = ∫ p^{c-e} (1-p)^b p₁^e (1-p₁)^{r-e}`` against the
    threshold density (:func:`laplace_quadrature`). Returns ``(classes (n, 4), P(class), P'(class))``,
    each law summing to 1; the classes' multiplicities come from a count over the rounds.
    """
    counts: Dict[tuple, float] = {(0, 0, 0, 0, 0): 1.0}     # (c, phase, b, e, r) -> number of patterns
    for t in range(T):
        new: Dict[tuple, float] = {}
        for (c, ph, b, e, r), m in counts.items():
            if c >= K:                                   # halted: no more answers
                nxt = [(c, ph, b, e, r)]
            else:
                if ph == 0 and t == j:
                    ph = 1
                if ph == 1:
                    nxt = [(c, 1, b, e, r + 1), (c + 1, 2, b, 1, r + 1)]
                else:
                    nxt = [(c, ph, b + 1, e, r), (c + 1, ph, b, e, r)]
            for s in nxt:
                new[s] = new.get(s, 0.0) + m
        counts = new
    keys = np.array([(c, b, e, r) for (c, _, b, e, r) in counts], np.int64)
    mult = np.array(list(counts.values()))
    tau, w = laplace_quadrature(L, b_thr, [0.0, 1.0], nodes=nodes)
    p, p1 = 1.0 - laplace_cdf(tau, b_q), 1.0 - laplace_cdf(tau - 1.0, b_q)
    lp, lq, lp1, lq1 = np.log(p), np.log1p(-p), np.log(p1), np.log1p(-p1)
    c, b, e, r = (keys[:, i:i + 1].astype(np.float64) for i in range(4))
    P = mult * (np.exp(c * lp + (b + r - e) * lq) @ w)
    Q = mult * (np.exp((c - e) * lp + b * lq + e * lp1 + (r - e) * lq1) @ w)
    return keys, P, Q


def window_class(flags, j: int, K: int, xp=np):
    """The class ``(c, b, e, r)`` of :func:`shared_svt_window_law` of a switch pattern ``flags`` (``(..., T)``
    booleans; ``xp``: ``numpy`` or ``jax.numpy``)."""
    flags = xp.asarray(flags)
    T = flags.shape[-1]
    idx = xp.arange(T)
    c = flags.sum(-1)
    before = (flags & (idx < j)).sum(-1)
    after = flags & (idx >= j)
    has = after.any(-1)
    s = xp.argmax(after, axis=-1)
    open_ = before < K
    r = xp.where(open_, xp.where(has, s - j + 1, T - j), 0)
    e = (open_ & has).astype(c.dtype)
    last = T - 1 - xp.argmax(flags[..., ::-1], axis=-1)
    answered = xp.where(c >= K, last + 1, T)
    b = answered - c - (r - e)
    return c, b, e, r


def window_log_ratio_table(T: int, K: int, classes, P, Q) -> np.ndarray:
    """``table[c, b, e, r] = log(P/P')`` of ONE pattern of each class (the multiplicities cancel); ``nan`` elsewhere."""
    tab = np.full((K + 1, T + 1, 2, T + 1), np.nan)
    with np.errstate(divide="ignore"):
        tab[tuple(classes.T)] = np.log(P) - np.log(Q)
    return tab
