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

* :func:`shared_svt_common_law`: REAL Alg. 1 (Asi, Feldman, Koren, Talwar, *Private Online Learning in the Realizable Regime*) run
  with ONE threshold noise shared by its ``≤ K`` sparse-vector instances (the correct scaling of Lyu, Su,
  Li, *Understanding the Sparse Vector Technique for Differential Privacy*, Alg. 1, or the broken twin
  that keeps the fresh instances' query noise), on losses common to all experts (so the exponential
  mechanism is uniform and only the sparse vector leaks): the law of the switch pattern by Gauss–Legendre
  quadrature over the threshold noise, and (:func:`visible_switch_law`) the law of the observed
  ``x_t ≠ x_{t-1}`` pattern with ``d`` experts.
* :func:`csvt_answer_law`: the answer vector of Lyu et al.'s sparse vector with ``c`` positives on a
  fixed query vector (quadrature over the threshold noise).
* :func:`sv_experts_law`: REAL Alg. 1 (fresh or shared threshold noise), any loss array: the law of the
  whole action sequence (enumeration over switch patterns and draws, quadrature per instance or shared).
* :func:`l2p_mw_law`: the law of the batch-expert sequence of L2P-MW (*Private Online Learning via Lazy
  Algorithms*, Alg. 1 with multiplicative weights) by
  enumeration of its lazy-switching Markov chain.
* :func:`tree_ftrl_law`: the action sequence of binary-tree noisy Hedge (``tree_ftrl_experts``) at ``d = 2``,
  by nested quadrature over the tree's node noises along the tree of prefix sums (``T <= 8``; fast at ``T <= 4``).
* :func:`potential_law`: the action sequence of REAL Alg. 5 (``potential_experts``, and its guarded variant) by
  enumeration of switch paths and quadrature over each AboveThreshold instance's threshold noise.
* :func:`lazy_sketch_law`: the action sequence of the low-switching template (``private_lazy_sketch``) by
  enumeration of its Markov chain (no continuous noise: exact up to float rounding).
* :func:`gaussian_eps`: the exact ε(δ) of the Gaussian mechanism (Balle & Wang, *Improving the Gaussian
  Mechanism for Differential Privacy*, Thm 8).
* :func:`best_fixed_event`: from an exact law, the one event with the best expected Clopper–Pearson bound
  at ``n`` runs, fixed before any run (the audits ``gaussian``, ``svt-shared-threshold``, ``l2p-mw`` and
  ``sparse-vector-experts-shared-threshold-unscaled`` test such events).
"""
from __future__ import annotations

import math
from typing import Dict, Tuple

import numpy as np

from ..accounting.zcdp import gaussian_delta, gaussian_eps_exact
from ..mechanisms.tree import ctz

__all__ = ["laplace_cdf", "laplace_quadrature", "shared_svt_common_law", "visible_switch_law", "align",
           "exact_eps", "event_eps", "shared_svt_window_law", "window_class", "window_log_ratio_table",
           "sv_experts_law", "csvt_answer_law", "gaussian_delta", "gaussian_eps", "gaussian_threshold_eps",
           "gaussian_best_threshold", "l2p_mw_law", "best_fixed_event", "noise_difference_quadrature", "tree_ftrl_law",
           "lazy_sketch_law", "potential_law"]


# ----------------------------------------------------------------------------- helpers
def laplace_cdf(x, b):
    """CDF of the centred Laplace distribution ``Lap(b)`` (float64, vectorised).

    Args:
        x: the points (scalar or array).
        b: the scale of the Laplace distribution (``> 0``).

    Returns:
        ``P(Lap(b) <= x)`` elementwise, a float64 array of the shape of ``x``.
    """
    x = np.asarray(x, np.float64) / b
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0.0)), 1.0 - 0.5 * np.exp(-np.maximum(x, 0.0)))


def laplace_quadrature(centre: float, scale: float, breakpoints, *, nodes: int = 24, tail: float = 60.0,
                       pieces: int = 48) -> Tuple[np.ndarray, np.ndarray]:
    """Quadrature rule for ``∫ g(τ) p(τ) dτ`` with ``τ = centre + Lap(scale)`` and ``g`` smooth between breakpoints.

    Gauss–Legendre with ``nodes`` points on every piece between consecutive breakpoints (the density's kink
    at ``centre`` is added to them); the two tails are cut at ``tail`` scales beyond the outermost breakpoints
    and split into ``pieces`` pieces each, and inner pieces longer than one scale are split further. The
    weights include the Laplace density, so ``Σ_i g(x_i) w_i`` approximates the expectation.

    Args:
        centre: the location of the Laplace variable (e.g. the noiseless threshold).
        scale: its scale ``b > 0``.
        breakpoints: the points where ``g`` may have kinks or jumps (any shape; flattened).
        nodes: Gauss–Legendre points per piece.
        tail: how many scales beyond the outermost breakpoint each tail is integrated.
        pieces: the number of pieces each tail is split into.

    Returns:
        ``(x, w)``: the float64 nodes and weights (density included), both 1-D of the same length.
    """
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


def event_eps(p: np.ndarray, q: np.ndarray, *, delta: float = 0.0, p_min: float = 0.0):
    """The largest one-directional privacy loss ``log((P(E) - δ)/Q(E))`` over unions ``E`` of outputs.

    Only events with ``P(E) >= p_min`` count. The best union is a prefix of the outputs sorted by ``p/q``
    (descending), which this scans. The direction is the caller's: pass ``(q, p)`` for the other one.
    Leading axes are a batch of pairs of laws (the outputs along the last axis).

    Args:
        p, q: the probabilities of the same outputs under the two neighbouring inputs (same shape, outputs last).
        delta: the ``δ`` subtracted from ``P(E)``.
        p_min: the smallest probability ``P(E)`` an event may have (what a finite audit can see).

    Returns:
        ``(eps, P(E))``: the loss (clipped at 0) and the probability of the maximising event; ``(0.0, 0.0)`` when no
        event qualifies (floats for 1-D laws, arrays of the batch shape otherwise).
    """
    p = np.asarray(p, np.float64)
    q = np.asarray(q, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(q > 0, p / np.where(q > 0, q, 1.0), np.where(p > 0, np.inf, 0.0))
    order = np.argsort(-r, axis=-1, kind="stable")
    P, Q = np.cumsum(np.take_along_axis(p, order, -1), -1), np.cumsum(np.take_along_axis(q, order, -1), -1)
    ok = (P >= p_min) & (P - delta > 0)
    with np.errstate(divide="ignore"):
        e = np.where(ok, np.log(np.maximum(P - delta, 1e-300)) - np.log(np.maximum(Q, 1e-300)), -np.inf)
    i = np.argmax(e, axis=-1)[..., None]
    some = ok.any(-1)
    eps = np.where(some, np.maximum(np.take_along_axis(e, i, -1)[..., 0], 0.0), 0.0)
    mass = np.where(some, np.take_along_axis(P, i, -1)[..., 0], 0.0)
    return (float(eps), float(mass)) if p.ndim == 1 else (eps, mass)


def exact_eps(p, q, *, delta: float = 0.0, p_min: float = 0.0):
    """The symmetric privacy loss of two laws: ``max(event_eps(p, q), event_eps(q, p))``.

    At ``p_min = 0`` this is the exact ``ε(δ)`` of the pair: the smallest ``ε`` whose hockey-stick divergence
    ``sup_E P(E) - e^ε Q(E)`` is at most ``δ`` in both directions.

    Args:
        p, q: the probabilities of the same outputs under the two neighbouring inputs (same shape, outputs last;
            leading axes: a batch of pairs).
        delta: the ``δ`` subtracted from the probability of the event under the numerator law.
        p_min: the smallest probability an event may have under the numerator law.

    Returns:
        ``(eps, P(E))`` of the direction with the larger loss (see :func:`event_eps`).
    """
    a = event_eps(p, q, delta=delta, p_min=p_min)
    b = event_eps(q, p, delta=delta, p_min=p_min)
    if np.ndim(a[0]) == 0:
        return a if a[0] >= b[0] else b
    pick = a[0] >= b[0]
    return np.where(pick, a[0], b[0]), np.where(pick, a[1], b[1])


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
    kinks at every accumulator value).

    Args:
        losses: the ``(T,)`` loss every expert takes in each round.
        L: the noiseless sparse-vector threshold.
        b_thr: the scale of the shared threshold noise.
        b_q: the scale of each query's noise.
        K: the largest number of switches (no query after the ``K``-th).
        nodes: Gauss–Legendre points per quadrature piece.

    Returns:
        ``(codes, probs)``: ``codes[i] = Σ_t switch_t 2^t`` (int64) over the patterns with at most ``K`` switches,
        ``probs`` their probabilities, summing to 1 up to quadrature error (~1e-12).
    """
    losses = np.asarray(losses, np.float64).ravel()
    return _answer_law(losses, *laplace_quadrature(L, b_thr, _segment_sums(losses), nodes=nodes), b_q, K, True)


def _answer_law(q, tau, w, b_q: float, K: int, accumulate: bool):
    """Law of the answers ``⊤_t = [a_t + Lap(b_q) >= τ]`` until the ``K``-th ⊤, ``τ`` integrated by the rule ``(tau, w)``;
    ``a_t = q_t`` plus, with ``accumulate``, the ``q`` since the last ⊤."""
    codes = np.zeros(1, np.int64)
    acc = np.zeros(1)
    count = np.zeros(1, np.int64)
    vec = np.ones((1, tau.size))
    for t in range(q.size):
        a = acc + q[t] if accumulate else np.full(acc.shape, q[t])
        live = count < K
        p_top = np.where(live[:, None], 1.0 - laplace_cdf(tau[None, :] - a[:, None], b_q), 0.0)
        li = np.nonzero(live)[0]
        codes = np.concatenate([codes, codes[li] | (1 << t)])
        count = np.concatenate([count, count[li] + 1])
        acc = np.concatenate([a, np.zeros(li.size)])
        vec = np.concatenate([vec * (1.0 - p_top), vec[li] * p_top[li]])
    return codes, vec @ w


def visible_switch_law(codes, probs, d: int) -> Tuple[np.ndarray, np.ndarray]:
    """The law of the OBSERVED switch pattern ``x_t ≠ x_{t-1}`` given the law of the sparse-vector switch pattern.

    Each switch draws the new expert uniformly from ``d`` (common losses: the exponential mechanism is
    uniform), so a switch keeps the same expert with probability ``1/d`` and is then invisible.

    Args:
        codes: the switch patterns, ``Σ_t switch_t 2^t`` (as returned by :func:`shared_svt_common_law`).
        probs: their probabilities.
        d: the number of experts.

    Returns:
        ``(codes, probs)`` over the observed patterns (``Σ_t [x_t ≠ x_{t-1}] 2^t``, sorted int64).
    """
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
    """Two ``(codes, probs)`` laws put on the union of their codes.

    Args:
        law0, law1: ``(codes, probs)`` pairs; each law's codes are distinct.

    Returns:
        ``(codes, p0, p1)``: the sorted union of the codes and each law's probability of every code (0 where
        the law does not have it).
    """
    codes = np.union1d(law0[0], law1[0])
    p0 = np.zeros(codes.size)
    p1 = np.zeros(codes.size)
    p0[np.searchsorted(codes, law0[0])] = law0[1]
    p1[np.searchsorted(codes, law1[0])] = law1[1]
    return codes, p0, p1


def shared_svt_window_law(T: int, K: int, j: int, L: float, b_thr: float, b_q: float, *,
                          nodes: int = 24) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact law, by pattern class, of the shared-threshold learner's switch pattern on a one-round neighbouring pair.

    The pair is ``D``: every loss 0, ``D'``: every expert takes loss 1 in round ``j`` (0 elsewhere).
    Under ``D`` every query is 0; under ``D'`` the queries of the instance active in round ``j`` are 1 from
    round ``j`` until its switch (the accumulator resets there). Given ``τ̂`` the answers are independent
    with ``P(switch) = p(τ̂) = P(Lap(b_q) >= τ̂)`` (``p₁(τ̂) = P(1 + Lap(b_q) >= τ̂)`` inside that window), so a
    pattern's probability depends only on its class :func:`window_class` ``(c, b, e, r)``: ``c`` switches,
    ``b`` no-switch answers outside the window, a window of ``r`` answers of which the last is a switch
    iff ``e = 1``. ``P = ∫ p^c (1-p)^{b+r-e}``, ``P' = ∫ p^{c-e} (1-p)^b p₁^e (1-p₁)^{r-e}`` against the
    threshold density (:func:`laplace_quadrature`); the classes' multiplicities come from a count over the rounds.

    Args:
        T: the number of rounds.
        K: the largest number of switches.
        j: the round (0-based) where ``D'`` differs from ``D``.
        L: the noiseless threshold.
        b_thr: the scale of the shared threshold noise.
        b_q: the scale of each query's noise.
        nodes: Gauss–Legendre points per quadrature piece.

    Returns:
        ``(classes, P, P')``: the ``(n, 4)`` int64 classes ``(c, b, e, r)`` and the probability of each class
        under ``D`` and under ``D'``, each law summing to 1.
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
    """The class ``(c, b, e, r)`` of :func:`shared_svt_window_law` of switch patterns.

    Args:
        flags: ``(..., T)`` booleans, ``flags[..., t]``: the learner switched in round ``t``.
        j: the round where the neighbouring inputs differ.
        K: the largest number of switches.
        xp: the array module, ``numpy`` or ``jax.numpy``.

    Returns:
        ``(c, b, e, r)``, integer arrays of shape ``flags.shape[:-1]``: the number of switches, the no-switch
        answers outside the window, whether the window ends in a switch, and the window's length.
    """
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
    """Lookup table of the privacy loss of ONE pattern of each class of :func:`shared_svt_window_law`.

    The class multiplicities cancel in the ratio, so ``table[c, b, e, r] = log(P/P')`` of the class laws.

    Args:
        T: the number of rounds.
        K: the largest number of switches.
        classes: the ``(n, 4)`` classes returned by :func:`shared_svt_window_law`.
        P, Q: the probabilities of those classes under ``D`` and ``D'``.

    Returns:
        A float64 array of shape ``(K + 1, T + 1, 2, T + 1)``: the log ratio at each class, ``nan`` elsewhere.
    """
    tab = np.full((K + 1, T + 1, 2, T + 1), np.nan)
    with np.errstate(divide="ignore"):
        tab[tuple(classes.T)] = np.log(P) - np.log(Q)
    return tab


# ----------------------------------------------------------------------------- REAL Alg. 1, whole action sequence
def sv_experts_law(losses, *, eps_svt: float, eta: float, K: int, L: float, Lstar: float = 0.0,
                   threshold: str = "fresh", unscaled: bool = False, nodes: int = 24) -> Tuple[np.ndarray, np.ndarray]:
    """Exact law of the action sequence ``(x_0, ..., x_T)`` of REAL Alg. 1 (``sparse_vector_experts``, test-then-play).

    Enumerates every path (initial expert, and per round: no switch, or a switch to each expert): the
    exponential-mechanism factors ``softmax(-η max(cum, L*)/2)`` are exact; the sparse-vector factors are
    Laplace CDFs integrated over the threshold noise — once over all instances (``threshold="shared"``:
    ``τ̂ = L + Lap(2/eps_svt)``, query noise ``Lap(4K/eps_svt)``, or ``Lap(4/eps_svt)`` when ``unscaled``) or once
    per instance (``"fresh"``: ``Lap(2/eps_svt)``, ``Lap(4/eps_svt)``, a new threshold after each switch). No
    query after the ``K``-th switch. ``d^(T+1) · (d+1)^T`` paths at most: for the audits' ``d = 2``, ``T = 4``.

    Args:
        losses: the ``(T, d)`` loss array.
        eps_svt: the privacy parameter of each sparse-vector instance (sets the noise scales above).
        eta: the learning rate of the exponential mechanism.
        K: the largest number of switches.
        L: the noiseless sparse-vector threshold.
        Lstar: the floor ``L*`` of the cumulative losses in the exponential mechanism.
        threshold: ``"fresh"`` (one threshold noise per instance) or ``"shared"`` (one for all).
        unscaled: with ``"shared"``, keep the query noise at ``Lap(4/eps_svt)`` (the broken variant).
        nodes: Gauss–Legendre points per quadrature piece.

    Returns:
        ``(codes, probs)``: ``codes[i] = Σ_t x_t d^t`` (sorted int64) and the probabilities of the sequences.
    """
    from scipy import special

    losses = np.asarray(losses, np.float64)
    T, d = losses.shape
    b_thr = 2.0 / eps_svt
    b_q = 4.0 / eps_svt * (K if threshold == "shared" and not unscaled else 1)
    bps = np.unique(np.concatenate([_segment_sums(losses[:, x]) for x in range(d)]))
    tau, w = laplace_quadrature(L, b_thr, bps, nodes=nodes)
    out: Dict[int, float] = {}

    def rec(t, x, k, acc, cum, code, em, done, cur):
        if t == T:
            p = em * done * float(cur @ w)
            out[code] = out.get(code, 0.0) + p
            return
        a = acc + losses[t, x]
        c2 = cum + losses[t]
        nxt_code = lambda y: code + y * d ** (t + 1)     # noqa: E731
        if k >= K:
            rec(t + 1, x, k, a, c2, nxt_code(x), em, done, cur)
            return
        p_top = 1.0 - laplace_cdf(tau - a, b_q)
        rec(t + 1, x, k, a, c2, nxt_code(x), em, done, cur * (1.0 - p_top))
        logits = -eta * np.maximum(c2, Lstar) / 2.0
        pem = np.exp(logits - special.logsumexp(logits))
        top = cur * p_top
        if threshold == "fresh":
            done2, cur2 = done * float(top @ w), np.ones_like(cur)
        else:
            done2, cur2 = done, top
        for y in range(d):
            rec(t + 1, y, k + 1, 0.0, c2, nxt_code(y), em * pem[y], done2, cur2)

    for x0 in range(d):
        rec(0, x0, 0, 0.0, np.zeros(d), x0, 1.0 / d, 1.0, np.ones(tau.size))
    keys = np.array(sorted(out), np.int64)
    return keys, np.array([out[k] for k in keys.tolist()])


def csvt_answer_law(queries, threshold: float, b_thr: float, b_q: float, c: int, *,
                    nodes: int = 24) -> Tuple[np.ndarray, np.ndarray]:
    """Exact law of the answer vector of the sparse vector with ``c`` positives and ONE threshold noise.

    Lyu, Su, Li, Alg. 1 (``sparse_vector_from_scales``): ``⊤_i = [q_i + Lap(b_q) >= threshold + Lap(b_thr)]``
    until the ``c``-th ⊤, ⊥ after; quadrature over the threshold noise.

    Args:
        queries: the query values ``q_i`` (flattened).
        threshold: the noiseless threshold.
        b_thr: the scale of the threshold noise.
        b_q: the scale of each query's noise.
        c: the number of positive answers after which the mechanism halts.
        nodes: Gauss–Legendre points per quadrature piece.

    Returns:
        ``(codes, probs)`` with ``codes = Σ_i ⊤_i 2^i`` (int64) and the probability of each answer vector.
    """
    q = np.asarray(queries, np.float64).ravel()
    return _answer_law(q, *laplace_quadrature(threshold, b_thr, q, nodes=nodes), b_q, c, False)


# ----------------------------------------------------------------------------- Gaussian mechanism
def gaussian_eps(delta: float, sigma: float, sensitivity: float = 1.0) -> float:
    """The exact ``ε(δ)`` of the Gaussian mechanism (:func:`jaxdp.privacy.accounting.zcdp.gaussian_eps_exact`, the
    one implementation, with :func:`gaussian_delta` its privacy profile).

    Args:
        delta: the target ``δ``.
        sigma: the standard deviation ``σ`` of the noise.
        sensitivity: the ℓ2 sensitivity ``Δ`` of the query.

    Returns:
        The smallest ``ε >= 0`` with ``δ(ε) <= delta``.
    """
    return gaussian_eps_exact(sensitivity, sigma, delta)


def gaussian_threshold_eps(sigma: float, delta: float, p_min: float, sensitivity: float = 1.0) -> float:
    """The largest privacy loss of the Gaussian mechanism over events a finite audit can see.

    The largest ``log((P(E) - δ)/P'(E))`` over events ``E`` of probability ``>= p_min`` on the pair ``0, Δ``
    (the likelihood ratio is monotone, so the best events are half-lines ``{s < c}``,
    ``P(E) = Φ(c/σ)``, ``P'(E) = Φ((c - Δ)/σ)``; ``c`` on a grid of 20001 quantiles).

    Args:
        sigma: the standard deviation ``σ`` of the noise.
        delta: the ``δ`` subtracted from ``P(E)``.
        p_min: the smallest probability ``P(E)`` an event may have.
        sensitivity: the distance ``Δ`` between the two means.

    Returns:
        The loss (at least 0).
    """
    from scipy import stats

    c = sigma * stats.norm.ppf(np.geomspace(max(p_min, 1e-300), 1.0 - 1e-12, 20001))
    P, Q = stats.norm.cdf(c / sigma), stats.norm.cdf((c - sensitivity) / sigma)
    ok = P - delta > 0
    return float(max(0.0, np.max(np.log(P[ok] - delta) - np.log(Q[ok])))) if ok.any() else 0.0


# ----------------------------------------------------------------------------- L2P-MW
def l2p_mw_law(losses, *, eta: float, p: float, B: int) -> Tuple[np.ndarray, np.ndarray]:
    """Exact law of the batch experts ``(x_1, ..., x_S)`` of L2P-MW on a ``(T, d)`` loss array.

    *Private Online Learning via Lazy Algorithms*, Alg. 1 with multiplicative weights; ``S = T/B`` batches.
    The hidden state is the pair (played ``x``, shadow ``y``); ``x_1, y_1 ~ ν_1`` independently and at each
    boundary ``s``, with ``ν_s = softmax(-η Σ_{t<(s-1)B} l_t)`` and ``Λ`` the previous batch's losses:
    ``x_s = x_{s-1}`` with probability ``(1-p) min(1, e^{-η(Λ(x) - Λ(y)) - 2Bη})``, else ``x_s ~ ν_s``; independently
    ``y_s = y_{s-1}`` with probability ``1 - p``, else ``y_s ~ ν_s``. The law of the ``x`` sequence is the forward
    recursion of this hidden Markov chain over ``y``, for each of the ``d^S`` sequences.

    Args:
        losses: the ``(T, d)`` loss array (rounds past the last full batch are ignored).
        eta: the learning rate ``η`` of the multiplicative weights.
        p: the probability of a fresh draw at each batch boundary.
        B: the batch length in rounds.

    Returns:
        ``(codes, probs)`` with ``codes = Σ_s x_s d^(s-1)`` (int64) over all ``d^S`` sequences.
    """
    from scipy import special

    losses = np.asarray(losses, np.float64)
    T, d = losses.shape
    S = T // B
    batch = losses[: S * B].reshape(S, B, d).sum(1)
    cum = np.concatenate([np.zeros((1, d)), np.cumsum(batch, 0)])          # cum[s] = losses before batch s
    nu = [np.exp(-eta * c - special.logsumexp(-eta * c)) for c in cum]
    seqs = np.array(np.unravel_index(np.arange(d ** S), (d,) * S)).T[:, ::-1]   # seqs[i, s] = x_s, code = Σ x_s d^s
    probs = np.empty(len(seqs))
    for i, xs in enumerate(seqs):
        f = nu[0][xs[0]] * nu[0]                                     # f[y] = P(x_1, y_1 = y)
        for s in range(1, S):
            xp, xn = xs[s - 1], xs[s]
            lam = batch[s - 1]
            keep = (1 - p) * np.exp(np.minimum(0.0, -eta * (lam[xp] - lam) - 2 * B * eta))   # over y_prev
            px = keep * (xn == xp) + (1 - keep) * nu[s][xn]
            fy = f * px                                                 # P(..., x_s, y_{s-1})
            f = (1 - p) * fy + p * fy.sum() * nu[s]                     # y_s
        probs[i] = f.sum()
    codes = (seqs * d ** np.arange(S)).sum(1)
    return codes.astype(np.int64), probs


# ----------------------------------------------------------------------------- events fixed from an exact law
def best_fixed_event(P, Q, n: int, *, alpha: float = 1e-7, delta: float = 0.0, min_count: float = 50.0):
    """The likelihood-ratio event with the best EXPECTED Clopper–Pearson bound, chosen from an exact law.

    Among the events ``{log P/Q > thr}``, the one whose expected bound ``ln((P_lo(E) - δ)/Q_hi(E))`` at ``n``
    runs per input (each bound at level ``alpha/2``) is largest, computed from the exact law before any run,
    so an audit can test this one event on all its runs (no search sample, no Bonferroni over candidates).

    Args:
        P, Q: the probabilities of the same outputs under the two neighbouring inputs.
        n: the number of runs per input.
        alpha: the total significance level of the two Clopper–Pearson bounds.
        delta: the ``δ`` subtracted from ``P_lo(E)``.
        min_count: events with fewer than this many expected hits under ``P`` are skipped.

    Returns:
        ``(thr, expected bound, P(E), Q(E), exact loss ln((P(E) - δ)/Q(E)))``.
    """
    from .auditor import eps_lower_bound

    P, Q = np.asarray(P, np.float64), np.asarray(Q, np.float64)
    with np.errstate(divide="ignore"):
        lr = np.log(P) - np.log(Q)
    order = np.argsort(-lr, kind="stable")
    cp, cq = np.cumsum(P[order]), np.cumsum(Q[order])
    ok = cp * n >= min_count
    with np.errstate(all="ignore"):
        bounds = np.where(ok, eps_lower_bound(np.floor(cp * n), n, np.ceil(cq * n), n, delta, alpha / 2), -np.inf)
    i = int(np.argmax(bounds))
    nxt = lr[order][min(i + 1, lr.size - 1)]
    thr = float(0.5 * (lr[order][i] + nxt)) if nxt < lr[order][i] else float(lr[order][i] - 1e-12)
    E = lr > thr
    return thr, float(bounds[i]), float(P[E].sum()), float(Q[E].sum()), float(np.log((P[E].sum() - delta) / Q[E].sum()))


def gaussian_best_threshold(sigma: float, delta: float, n: int, *, alpha: float = 1e-7,
                            sensitivity: float = 1.0) -> Tuple[float, float, float]:
    """The half-line event of the Gaussian mechanism with the best EXPECTED Clopper–Pearson bound.

    Among the events ``{s < c}`` on ``0`` vs ``Δ``, the one whose expected bound ``ln((P_lo - δ)/P'_hi)`` at
    ``n`` runs per input (each bound at level ``alpha/4``: the auditor tests both half-lines in both
    directions) is largest.

    Args:
        sigma: the standard deviation ``σ`` of the noise.
        delta: the ``δ`` subtracted from ``P_lo``.
        n: the number of runs per input.
        alpha: the total significance level of the audit.
        sensitivity: the distance ``Δ`` between the two means.

    Returns:
        ``(c, expected bound, exact loss ln((P(E) - δ)/P'(E)) of the event)``.
    """
    from scipy import stats
    from .auditor import eps_lower_bound

    c = sigma * stats.norm.ppf(np.geomspace(min(1e-2, 10.0 / n), 0.5, 4001))
    P, Q = stats.norm.cdf(c / sigma), stats.norm.cdf((c - sensitivity) / sigma)
    with np.errstate(all="ignore"):
        b = eps_lower_bound(np.floor(P * n), n, np.ceil(Q * n), n, delta, alpha / 4)
    b = np.where(np.isfinite(b), b, -np.inf)
    i = int(np.argmax(b))
    return float(c[i]), float(b[i]), float(np.log((P[i] - delta) / Q[i]))


# ----------------------------------------------------------------------------- tree FTRL (d = 2), lazy sketch
def noise_difference_quadrature(noise: str, scale: float, *, nodes: int = 12,
                                tail: float = 30.0) -> Tuple[np.ndarray, np.ndarray]:
    """Quadrature rule for ``E g(Z)`` with ``Z = N_0 - N_1`` the difference of two independent node noises.

    ``noise="laplace"``: ``N_i ~ Lap(b)``, ``Z`` has density ``(1 + |z|/b) e^{-|z|/b} / (4b)`` (kink at 0) and
    ``P(|Z| > R) = (1 + R/(2b)) e^{-R/b}``; ``"gaussian"``: ``N_i ~ N(0, σ²)``, ``Z ~ N(0, 2σ²)``. Gauss–Legendre with
    ``nodes`` points on pieces one noise scale long over ``[-R, R]``, ``R = tail`` scales (of ``b``, or of ``Z``'s
    standard deviation, at most 9): the truncated mass is ``(1 + tail/2) e^{-tail}`` (Laplace: ``1.5e-12`` at the
    default ``tail = 30``) or ``erfc(9/√2) = 2e-19`` (Gaussian). The weights include the density.

    Args:
        noise: ``"laplace"`` or ``"gaussian"``.
        scale: the node noise's Laplace ``b`` or Gaussian ``σ`` (``> 0``).
        nodes: Gauss–Legendre points per piece.
        tail: the truncation point in scales.

    Returns:
        ``(z, w)``: float64 nodes and weights (density included), 1-D.

    Raises:
        ValueError: ``noise`` is not one of the two, or ``scale`` is not positive.
    """
    if noise not in ("laplace", "gaussian"):
        raise ValueError(f"noise must be 'laplace' or 'gaussian', got {noise!r}")
    if not (np.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number, got {scale!r}")
    s = float(scale) if noise == "laplace" else math.sqrt(2.0) * float(scale)
    tail = float(tail) if noise == "laplace" else min(float(tail), 9.0)
    m = int(math.ceil(tail))
    edges = np.linspace(-m * s, m * s, 2 * m + 1)
    u, wu = np.polynomial.legendre.leggauss(nodes)
    a, b = edges[:-1, None], edges[1:, None]
    z = (0.5 * (b - a) * u + 0.5 * (a + b)).ravel()
    wz = (0.5 * (b - a) * wu).ravel()
    if noise == "laplace":
        dens = (1.0 + np.abs(z) / s) * np.exp(-np.abs(z) / s) / (4.0 * s)
    else:
        dens = np.exp(-0.5 * (z / s) ** 2) / (s * math.sqrt(2.0 * math.pi))
    return z, wz * dens


def tree_ftrl_law(losses, *, eta: float, scale: float, noise: str = "laplace", nodes: int = 12,
                  tail: float = 30.0) -> Tuple[np.ndarray, np.ndarray]:
    """Exact law of the actions ``(x_1, ..., x_{T+1})`` of binary-tree noisy Hedge at ``d = 2`` (``tree_ftrl_experts``).

    The learner (*Private Online Learning via Lazy Algorithms*, Sec. 4 baseline; the binary-tree counter of Dwork,
    Naor, Pitassi, Rothblum, *Differential Privacy Under Continual Observation*, and Chan, Shi, Song): ``x_1`` uniform;
    after round ``t`` it releases ``x_{t+1} ~ softmax(-η L̂_t)``, ``L̂_t = Σ_{i<=t} l_i + Z_t`` with the tree's noise
    ``Z_t = Σ`` of the node noises of the dyadic decomposition of ``t``. Round ``t`` creates one node (level
    ``ctz(t)``), so ``Z_t = n_t + Z_{π(t)}`` with ``π(t) = t - lowbit(t)``, ``Z_0 = 0``: the prefix sums form a tree
    rooted at 0. At ``d = 2`` the draw depends on ``L̂_t(0) - L̂_t(1) = D_t + z_t`` only (``z_t`` the difference of the
    two coordinates' noises, :func:`noise_difference_quadrature`), ``P(x_{t+1} = 0) = σ(-η (D_t + z_t))``; given the
    ``z``'s the draws are independent, so

        ``P(x) = 1/2 · Π_{c child of 0} E_n M_c(n)``,   ``M_t(z) = σ(±η(D_t + z)) Π_{c child of t} E_n M_c(z + n)``,

    evaluated by nested quadrature (the cost is ``Q^depth`` per sequence, depth ``= ⌊log2 T⌋``). Quadrature error:
    the truncated tails (``<= 1.5e-12`` per node, :func:`noise_difference_quadrature`) plus the Gauss–Legendre
    error on smooth integrands (the rule with ``nodes = 12``, ``tail = 30`` differs from ``24``, ``40`` by ``< 1e-10``
    at the sizes tested, ``tests/privacy/test_tightness_laws.py``).

    Args:
        losses: the ``(T, 2)`` loss array (``T <= 8``).
        eta: the learning rate ``η``.
        scale: the node noise's Laplace ``b`` or Gaussian ``σ``.
        noise: ``"laplace"`` or ``"gaussian"``.
        nodes: Gauss–Legendre points per quadrature piece.
        tail: the truncation of the noise difference, in scales.

    Returns:
        ``(codes, probs)``: ``codes = Σ_t x_t 2^t`` over the ``2^(T+1)`` sequences (int64, ``x_1`` the lowest digit,
        as ``jaxdp.privacy.audit.learners.action_code``), ``probs`` their probabilities.

    Raises:
        ValueError: ``losses`` is not ``(T, 2)`` with ``1 <= T <= 8``.
    """
    L = np.asarray(losses, np.float64)
    if L.ndim != 2 or L.shape[1] != 2 or not 1 <= L.shape[0] <= 8:
        raise ValueError(f"losses must have shape (T, 2) with 1 <= T <= 8, got {L.shape}")
    T = L.shape[0]
    D = np.cumsum(L[:, 0] - L[:, 1])                          # D[t-1] = cum_t(0) - cum_t(1)
    z, w = noise_difference_quadrature(noise, scale, nodes=nodes, tail=tail)

    def children(t):
        lb = 1 << ctz(t) if t else 1 << T
        return [t + (1 << j) for j in range(T.bit_length()) if (1 << j) < lb and t + (1 << j) <= T]

    def message(t, zz):
        """``(ids, M)``: ``M[c]`` = ``M_t(zz)`` for each assignment ``c`` of the actions released at the rounds
        ``ids`` of ``t``'s subtree (``ids[0]`` the most significant bit of ``c``; bit 1: ``x_{t+1} = 1``)."""
        u = eta * (D[t - 1] + zz)
        val = np.stack([1.0 / (1.0 + np.exp(np.clip(u, -700, 700))), 1.0 / (1.0 + np.exp(np.clip(-u, -700, 700)))])
        ids = [t]
        for c in children(t):
            cids, cval = message(c, zz[..., None] + z)
            e = np.tensordot(cval, w, axes=([-1], [0]))
            val = (val[:, None] * e[None, :]).reshape((-1,) + zz.shape)
            ids += cids
        return ids, val

    ids, val = [], np.ones(1)
    for c in children(0):
        cids, cval = message(c, z)
        val = (val[:, None] * (cval @ w)[None, :]).ravel()
        ids += cids
    m = len(ids)
    combo = np.arange(1 << m)
    seq_codes = np.zeros(1 << m, np.int64)
    for j, t in enumerate(ids):
        seq_codes |= ((combo >> (m - 1 - j)) & 1).astype(np.int64) << t      # x_{t+1}: digit t
    probs = np.concatenate([0.5 * val, 0.5 * val])            # x_1 = 0, 1
    codes = np.concatenate([seq_codes, seq_codes | 1])
    order = np.argsort(codes)
    return codes[order], probs[order]


def lazy_sketch_law(losses, *, eta: float, p: float) -> Tuple[np.ndarray, np.ndarray]:
    """Exact law of the actions ``(x_1, ..., x_{T+1})`` of the low-switching template (``private_lazy_sketch``).

    *Private Online Learning via Lazy Algorithms*, Sec. 3 (the earlier template, with MW measures
    ``μ̄_t = softmax(-η cum_t)``): ``x_1`` uniform; after round ``t`` the learner keeps ``x_t`` with probability
    ``(1 - p) a_t``, ``a_t = min(1, e^{-η l_t(x_t) - (lse(-η cum_t) - lse(-η cum_{t-1})) - η})``, else draws
    ``x_{t+1} ~ μ̄_t``. The actions form a Markov chain whose transition depends on the losses only, so each
    sequence's probability is a product of transition probabilities: enumeration of the ``d^(T+1)`` sequences,
    exact up to float rounding.

    Args:
        losses: the ``(T, d)`` loss array.
        eta: the learning rate ``η``.
        p: the fake-switch probability.

    Returns:
        ``(codes, probs)``: ``codes = Σ_t x_t d^t`` (int64, ``x_1`` the lowest digit), ``probs`` their probabilities.
    """
    L = np.asarray(losses, np.float64)
    T, d = L.shape
    probs = np.full(d, 1.0 / d)
    codes = np.arange(d, dtype=np.int64)
    last = np.arange(d)
    cum = np.zeros(d)
    for t in range(T):
        new = cum + L[t]
        lse_old = np.logaddexp.reduce(-eta * cum)
        lse_new = np.logaddexp.reduce(-eta * new)
        mu = np.exp(-eta * new - lse_new)
        log_acc = np.minimum(0.0, -eta * L[t, last] - (lse_new - lse_old) - eta)
        keep = (1.0 - p) * np.exp(log_acc)                                  # per current sequence
        trans = (1.0 - keep)[:, None] * mu[None, :] + keep[:, None] * (np.arange(d)[None, :] == last[:, None])
        probs = (probs[:, None] * trans).ravel()
        codes = (codes[:, None] + np.arange(d, dtype=np.int64)[None, :] * d ** (t + 1)).ravel()
        last = np.tile(np.arange(d), last.size)
        cum = new
    order = np.argsort(codes)
    return codes[order], probs[order]


def potential_law(losses, *, eps0: float, eta: float, K: int, alpha: float = 1.0, s_phi: float = 2.0,
                  guard: bool = False, nodes: int = 24) -> Tuple[np.ndarray, np.ndarray]:
    """Exact law of the actions ``(x_1, ..., x_{T+1})`` of REAL Alg. 5 with uniform ``μ`` (``potential_experts``).

    *Private Online Learning in the Realizable Regime* (Asi, Feldman, Koren, Talwar), Alg. 5: ``x_1`` uniform; in
    round ``t`` the learner adds ``l_t`` to ``cum``, ``log φ = lse(-η cum) - log d``, and asks AboveThreshold
    whether ``q_t = (log φ* - log φ) / (s_φ η)`` (with ``guard``: ``max(q_t, acc)``, ``acc`` the played expert's loss
    since the last resample) plus ``Lap(4/eps0)`` reaches ``τ̂ = 2α/(s_φ η) + Lap(2/eps0)``; on ⊤ (at most ``K``
    times) it resamples ``x ~ softmax(-η cum)``, sets ``log φ* = log φ`` and starts a fresh instance (a new
    threshold noise). Every path (per round: no ⊤, or ⊤ and each expert drawn) is enumerated; each instance's
    answers are Laplace CDFs integrated over its own threshold noise (:func:`laplace_quadrature`, with the kinks at
    every query value of the paths). ``d^(T+1) (d+1)^T`` paths at most.

    Args:
        losses: the ``(T, d)`` loss array.
        eps0: the ε of each AboveThreshold instance.
        eta: the temperature ``η``.
        K: the largest number of resamples.
        alpha: the threshold is ``2α/(s_φ η)``.
        s_phi: the query's assumed sensitivity in units of ``η``.
        guard: the own-loss guard of ``guarded_potential_experts``.
        nodes: Gauss–Legendre points per quadrature piece.

    Returns:
        ``(codes, probs)``: ``codes = Σ_t x_t d^t`` (sorted int64, ``x_1`` the lowest digit) and their probabilities.
    """
    L = np.asarray(losses, np.float64)
    T, d = L.shape
    b_thr, b_q = 2.0 / eps0, 4.0 / eps0
    thr = 2.0 * alpha / (s_phi * eta)

    def logphi(cum):
        return float(np.logaddexp.reduce(-eta * cum)) - math.log(d)

    def paths(visit):
        def rec(t, x, k, cum, star, acc, code, em, done, cur):
            if t == T:
                visit(None, code, em, done, cur)
                return
            c2 = cum + L[t]
            lp = logphi(c2)
            q = (star - lp) / (s_phi * eta)
            a2 = acc + L[t, x]
            if guard:
                q = max(q, a2)
            nxt = lambda y: code + y * d ** (t + 1)      # noqa: E731
            if k >= K:
                rec(t + 1, x, k, c2, star, a2, nxt(x), em, done, cur)
                return
            p_top = visit(q, None, None, None, None)
            rec(t + 1, x, k, c2, star, a2, nxt(x), em, done, None if cur is None else cur * (1.0 - p_top))
            logits = -eta * c2
            pem = np.exp(logits - np.logaddexp.reduce(logits))
            top = None if cur is None else cur * p_top
            done2 = done if top is None else done * float(top @ w_ref[0])
            fresh = None if cur is None else np.ones_like(cur)
            for y in range(d):
                rec(t + 1, y, k + 1, c2, lp, 0.0, nxt(y), em * pem[y], done2, fresh)

        for x0 in range(d):
            rec(0, x0, 0, np.zeros(d), 0.0, 0.0, x0, 1.0 / d, 1.0, visit.start)

    # pass 1: every query value (the kinks of the integrands); pass 2: the probabilities
    qs: list = []
    w_ref: list = [None]

    def collect(q, code, em, done, cur):
        if q is not None:
            qs.append(q)
            return 0.0
    collect.start = None                                 # type: ignore[attr-defined]
    paths(collect)
    tau, w = laplace_quadrature(thr, b_thr, np.asarray(qs + [0.0]), nodes=nodes)
    w_ref[0] = w
    out: Dict[int, float] = {}

    def accumulate(q, code, em, done, cur):
        if q is not None:
            return 1.0 - laplace_cdf(tau - q, b_q)
        out[code] = out.get(code, 0.0) + em * done * float(cur @ w)
    accumulate.start = np.ones(tau.size)                 # type: ignore[attr-defined]
    paths(accumulate)
    keys = np.array(sorted(out), np.int64)
    return keys, np.array([out[k] for k in keys.tolist()])
