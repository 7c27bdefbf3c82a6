"""Worst-case neighbouring loss streams: how tight is a certificate? (docs/results/tightness.md)

An exact law (:mod:`jaxdp.privacy.audit.exact`) gives the exact privacy loss of ONE neighbouring pair. The
certificate must hold for every pair, so the question "is the certificate loose, or the audited pair weak?"
needs the worst pair. :func:`worst_pair` searches the neighbouring loss streams of a small instance:

* the space: loss streams ``x ∈ V^T`` (``T`` rounds, each round's loss vector one of the rows of ``values``),
  and neighbours ``(x, x')`` that differ in exactly one round (replace-one);
* the score of a pair: its exact ``ε(δ)``, the smallest ``ε`` with hockey-stick divergence
  ``H_ε(P‖P') = sup_E P(E) - e^ε P'(E) <= δ`` in both directions (:func:`jaxdp.privacy.audit.exact.exact_eps`),
  where ``P, P'`` are the learner's exact output laws on ``x, x'``;
* exhaustive enumeration when the space has at most ``max_pairs`` unordered pairs: the law of every stream is
  computed once, the laws are put on a common set of outputs, and every pair's ε is computed in vectorised
  batches; otherwise random restarts with steepest-ascent coordinate search: from a pair, the moves are
  changing one round of the common stream (both inputs), changing the two values of the differing round, or
  moving the difference to another round; the best improving move is taken until none improves or the budget
  of evaluated pairs is spent. Given starting pairs (e.g. the audited one) are searched from first, so the
  search never reports less than them.
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Sequence

import numpy as np

from ...core.validation import check_delta, check_finite, check_positive_int, check_seed
from .exact import align, exact_eps

__all__ = ["WorstPair", "TightnessCase", "UncoveredCase", "neighbour_space_size", "pair_eps", "worst_pair",
           "tightness_row", "describe_pair"]


class WorstPair(NamedTuple):
    """The result of :func:`worst_pair`.

    Attributes:
        eps: the exact ``ε(δ)`` of the best pair found.
        x0, x1: the pair, float64 ``(T, d)`` loss arrays differing in one round.
        round: the round (0-based) where they differ.
        examined: the number of distinct pairs whose ε was computed.
        exhaustive: whether every pair of the space was examined (then ``eps`` is the worst case of the space).
    """
    eps: float
    x0: np.ndarray
    x1: np.ndarray
    round: int
    examined: int
    exhaustive: bool


def neighbour_space_size(T: int, n_values: int) -> int:
    """The number of unordered neighbouring pairs of streams in ``V^T`` (``|V| = n_values``): ``V^T · T (V-1) / 2``.

    Args:
        T: the number of rounds.
        n_values: the number of loss vectors a round may take.

    Returns:
        The number of pairs.
    """
    return n_values ** T * T * (n_values - 1) // 2


def pair_eps(law: Callable, x0, x1, *, delta: float = 0.0) -> float:
    """The exact ``ε(δ)`` of one neighbouring pair under an exact law.

    Args:
        law: ``law(losses) -> (codes, probs)``, the exact output law of a learner on a ``(T, d)`` loss array.
        x0, x1: the two loss arrays.
        delta: the ``δ`` of the hockey-stick divergence.

    Returns:
        ``ε(δ)`` (:func:`jaxdp.privacy.audit.exact.exact_eps` of the aligned laws).
    """
    _, p, q = align(law(np.asarray(x0, np.float64)), law(np.asarray(x1, np.float64)))
    return float(exact_eps(p, q, delta=delta)[0])


def worst_pair(law: Callable, T: int, values, *, delta: float = 0.0, max_pairs: int = 1_000_000,
               restarts: int = 4, max_evals: int = 5_000, seed: int = 0, starts: Sequence = (),
               batch: int = 4096) -> WorstPair:
    """The neighbouring pair of loss streams with the largest exact ``ε(δ)`` (module docstring).

    Args:
        law: ``law(losses) -> (codes, probs)``: the exact law of the learner's released output on a ``(T, d)`` loss
            array (distinct integer codes; e.g. :func:`jaxdp.privacy.audit.exact.sv_experts_law` with its
            parameters bound).
        T: the number of rounds.
        values: the ``(V, d)`` loss vectors a round may take (a ``(V,)`` array: ``d = 1``).
        delta: the ``δ`` of ``ε(δ)``.
        max_pairs: enumerate every pair when the space has at most this many, else search (0: always search).
        restarts: random starting pairs of the search (besides ``starts``).
        max_evals: the search's budget of evaluated pairs (all restarts together).
        seed: the seed of the search's random starts.
        starts: pairs ``(x0, x1)`` to search from first (rows must be rows of ``values``).
        batch: pairs per vectorised batch of the enumeration.

    Returns:
        The :class:`WorstPair`.

    Raises:
        TypeError, ValueError: ``law`` is not callable, or a count, ``delta``, ``seed`` or ``values`` is out of range
            (``values`` must hold at least two finite loss vectors).
    """
    if not callable(law):
        raise TypeError(f"law must be a callable law(losses) -> (codes, probs), got {type(law).__name__}")
    T = check_positive_int("T", T)
    check_delta(delta)
    for name, v, lo in (("max_pairs", max_pairs, 0), ("restarts", restarts, 0), ("max_evals", max_evals, 1),
                        ("batch", batch, 1)):
        check_positive_int(name, v, minimum=lo)
    check_seed("seed", seed)
    vals = np.asarray(check_finite(values, "values"), np.float64)
    vals = vals[:, None] if vals.ndim == 1 else vals
    if vals.ndim != 2 or len(vals) < 2:
        raise ValueError(f"values must be a (V,) or (V, d) array of V >= 2 loss vectors, got shape {np.shape(values)}")
    V = len(vals)
    if neighbour_space_size(T, V) <= max_pairs:
        return _enumerate(law, T, vals, delta, batch)
    return _search(law, T, vals, delta, restarts, max_evals, seed, starts)


def _digits(s, T: int, V: int) -> np.ndarray:
    """Base-``V`` digits (round ``t``'s value index) of stream indices."""
    return (np.asarray(s)[..., None] // V ** np.arange(T)) % V


def _enumerate(law, T, vals, delta, batch) -> WorstPair:
    V = len(vals)
    N = V ** T
    laws = [law(vals[_digits(s, T, V)]) for s in range(N)]
    codes = np.unique(np.concatenate([c for c, _ in laws]))
    M = np.zeros((N, codes.size))
    for s, (c, p) in enumerate(laws):
        M[s, np.searchsorted(codes, c)] = p
    S = np.arange(N)
    dig = _digits(S, T, V)
    a_list, b_list, j_list = [], [], []
    for j in range(T):
        for v in range(V):
            for v2 in range(v + 1, V):
                a = S[dig[:, j] == v]
                a_list.append(a)
                b_list.append(a + (v2 - v) * V ** j)
                j_list.append(np.full(a.size, j))
    A, B, J = np.concatenate(a_list), np.concatenate(b_list), np.concatenate(j_list)
    eps = np.concatenate([exact_eps(M[A[i:i + batch]], M[B[i:i + batch]], delta=delta)[0]
                          for i in range(0, A.size, batch)])
    k = int(np.argmax(eps))
    x0, x1 = vals[_digits(A[k], T, V)], vals[_digits(B[k], T, V)]
    return WorstPair(pair_eps(law, x0, x1, delta=delta), x0, x1, int(J[k]), int(A.size), True)


def _search(law, T, vals, delta, restarts, max_evals, seed, starts) -> WorstPair:
    V = len(vals)
    rng = np.random.default_rng(seed)
    cache: dict = {}
    scores: dict = {}

    def law_of(s):
        if s not in cache:
            cache[s] = law(vals[list(s)])
        return cache[s]

    def score(s, j, v1):
        s1 = s[:j] + (v1,) + s[j + 1:]
        key = (s, s1) if s <= s1 else (s1, s)
        if key not in scores:
            _, p, q = align(law_of(s), law_of(s1))
            scores[key] = float(exact_eps(p, q, delta=delta)[0])
        return scores[key]

    def index(row):
        return int(np.flatnonzero(np.all(np.isclose(vals, row), axis=1))[0])

    inits = []
    for x0, x1 in starts:
        x0, x1 = np.asarray(x0, np.float64).reshape(T, -1), np.asarray(x1, np.float64).reshape(T, -1)
        j = int(np.flatnonzero(np.any(x0 != x1, axis=1))[0])
        inits.append((tuple(index(r) for r in x0), j, index(x1[j])))
    for _ in range(restarts):
        s = tuple(int(v) for v in rng.integers(V, size=T))
        j = int(rng.integers(T))
        inits.append((s, j, int((s[j] + rng.integers(1, V)) % V)))
    best = (-1.0, inits[0])
    for cur in inits:
        val = score(*cur)
        while len(scores) < max_evals:
            s, j, v1 = cur
            moves = [(s[:t] + (v,) + s[t + 1:], j, v1) for t in range(T) if t != j for v in range(V) if v != s[t]]
            moves += [(s[:j] + (a,) + s[j + 1:], j, b) for a in range(V) for b in range(V) if a != b]
            moves += [(s, t, v) for t in range(T) if t != j for v in range(V) if v != s[t]]
            top = max(moves, key=lambda m: score(*m))
            if score(*top) <= val:
                break
            cur, val = top, score(*top)
        if val > best[0]:
            best = (val, cur)
    val, (s, j, v1) = best
    x0 = vals[list(s)]
    x1 = x0.copy()
    x1[j] = vals[v1]
    return WorstPair(val, x0, x1, j, len(scores), False)


class TightnessCase(NamedTuple):
    """One learner at one size for :func:`tightness_row` (built by ``jaxdp.experts.audits.tightness_cases`` and
    ``jaxdp.bandits.audits.tightness_cases``).

    Attributes:
        name: the learner (its audit's name).
        size: the instance, in words.
        law: ``law(losses) -> (codes, probs)``, the exact law of the released output.
        T: the number of rounds.
        values: the ``(V, d)`` loss vectors a round may take.
        delta: the certified δ (ε is compared at it).
        certified: the certified ε at this size (planner or ledger).
        audited: today's audited pairs at this size, ``{label: (x0, x1)}``.
        search: keyword arguments of :func:`worst_pair`.
        slack: where certified/exact > 2, the ledger term recomputed with its exact value (or "not attributed yet");
            a callable ``slack(pair) -> str`` gets the :class:`WorstPair` found.
        audit: ``audit(x0, x1) -> eps_lower``, the Monte Carlo audit on a pair (embedded at the audit's full size
            where that is larger), or ``None``.
        learner: the registry name (``jaxdp.registry.LEARNERS``) of the learner.
        audit_size: the size the audit runs at, in words (default: ``size``).
        certified_by: what gives ``certified``, in words (e.g. the planner's ledger).
        others: other certificates of the same parameters, ``((label, eps), ...)`` at the same δ (e.g. the printed
            theorem, a tighter composition); each must also be at least every exact ε.
    """
    name: str
    size: str
    law: Callable
    T: int
    values: np.ndarray
    delta: float
    certified: float
    audited: dict
    search: dict
    slack: str | Callable = "not attributed yet"
    audit: Callable | None = None
    learner: str = ""
    audit_size: str = ""
    certified_by: str = ""
    others: tuple = ()


class UncoveredCase(NamedTuple):
    """A private learner (at one size or planner mode) without an exact law, for :func:`tightness_row`.

    Attributes:
        name: the learner (its audit's name, or its registry name).
        size: the instance, in words.
        delta: the certified δ.
        certified: the certified ε (``nan``: none).
        reason: why no exact law is computable (continuous outputs, state too large, ...).
        bound: what bounds the exact ε instead, in words.
        bound_eps: its value where one is computed (``nan`` otherwise).
        learner: the registry name of the learner.
    """
    name: str
    size: str
    delta: float
    certified: float
    reason: str
    bound: str
    bound_eps: float = float("nan")
    learner: str = ""


def tightness_row(case, *, run_audit: bool = True) -> dict:
    """Exact ε on today's audited pairs and on the worst pair :func:`worst_pair` finds, and their ratios to the
    certified ε.

    Args:
        case: the learner and size (a :class:`TightnessCase`), or a :class:`UncoveredCase` (its row has ``nan`` exact
            ε and states why, in ``slack``, and what bounds it, in ``bound``).
        run_audit: also run the case's Monte Carlo audit on the best pair found.

    Returns:
        A dict: ``name, learner, size, delta, certified, exact_audited, exact_best, pair`` (compact: the differing
        round and the two streams), ``examined, exhaustive, ratio_audited, ratio_best, eps_lower, slack, bound,
        covered, seconds, x0, x1`` (``x0, x1``: the worst pair's arrays, ``None`` for an uncovered case),
        ``certified_by`` and ``others``: ``[(label, eps, eps / exact_best), ...]``, the case's other certificates with
        their ratios to the worst pair's exact ε (empty for an uncovered case).
    """
    import time

    nan = float("nan")
    if isinstance(case, UncoveredCase):
        return dict(name=case.name, learner=case.learner, size=case.size, delta=case.delta, certified=case.certified,
                    exact_audited=nan, exact_best=nan, pair="-", examined=0, exhaustive=False, ratio_audited=nan,
                    ratio_best=nan, eps_lower=nan, slack=case.reason, bound=case.bound, bound_eps=case.bound_eps,
                    covered=False, seconds=0.0, x0=None, x1=None, audit_size="", certified_by="", others=[])
    t0 = time.time()
    audited = max(pair_eps(case.law, a, b, delta=case.delta) for a, b in case.audited.values())
    starts = [(np.asarray(a, np.float64), np.asarray(b, np.float64)) for a, b in case.audited.values()]
    r = worst_pair(case.law, case.T, case.values, delta=case.delta, starts=starts, **case.search)
    secs = time.time() - t0
    low = float(case.audit(r.x0, r.x1)) if (run_audit and case.audit is not None) else nan
    slack = case.slack(r) if callable(case.slack) else case.slack
    return dict(name=case.name, learner=case.learner, size=case.size, delta=case.delta, certified=case.certified,
                exact_audited=audited, exact_best=r.eps, pair=describe_pair(r.x0, r.x1), examined=r.examined,
                exhaustive=r.exhaustive, ratio_audited=_ratio(case.certified, audited),
                ratio_best=_ratio(case.certified, r.eps), eps_lower=low,
                slack=slack if case.certified > 2 * r.eps else "-", bound="", bound_eps=nan, covered=True,
                seconds=secs, x0=r.x0, x1=r.x1, audit_size=case.audit_size or case.size,
                certified_by=case.certified_by,
                others=[(str(lab), float(e), _ratio(float(e), r.eps)) for lab, e in case.others])


def _ratio(a: float, b: float) -> float:
    """``a / b`` (``inf`` at ``b = 0``, ``nan`` when ``a`` is not finite, e.g. no certificate)."""
    if not np.isfinite(a):
        return float("nan")
    return a / b if b > 0 else float("inf")


def describe_pair(x0, x1) -> str:
    """A neighbouring pair in a few words: the differing round's two loss vectors, and the other non-zero rounds.

    Args:
        x0, x1: ``(T, d)`` loss arrays differing in one round.

    Returns:
        E.g. ``"l_1: 10 vs 01; else 0"`` or ``"l_3: 00 vs 11; l_1=10, l_2=10, else 0"`` (rounds 1-based; three or more
        consecutive rounds with the same loss read ``l_4..l_9=01``).
    """
    x0, x1 = np.asarray(x0), np.asarray(x1)
    def v(row):
        s = [f"{a:g}" for a in row]
        return "".join(s) if all(len(a) == 1 for a in s) else "(" + ",".join(s) + ")"

    j = int(np.flatnonzero(np.any(x0 != x1, axis=1))[0])
    ts = [t for t in range(len(x0)) if t != j and np.any(x0[t] != 0)]
    rest, i = [], 0
    while i < len(ts):
        k = i
        while k + 1 < len(ts) and ts[k + 1] == ts[k] + 1 and np.array_equal(x0[ts[k + 1]], x0[ts[i]]):
            k += 1
        if k - i >= 2:
            rest.append(f"l_{ts[i] + 1}..l_{ts[k] + 1}={v(x0[ts[i]])}")
        else:
            rest += [f"l_{ts[m] + 1}={v(x0[ts[m]])}" for m in range(i, k + 1)]
        i = k + 1
    return f"l_{j + 1}: {v(x0[j])} vs {v(x1[j])}; " + ", ".join(rest + ["else 0"])
