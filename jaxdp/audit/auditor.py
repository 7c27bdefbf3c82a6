"""Empirical privacy auditing with Clopper–Pearson bounds (DESIGN.md layer 5; spec §9.5).

Given a randomized function ``mechanism(key, x) -> output`` (a single
mechanism or a whole algorithm run), two neighbouring inputs ``x0, x1`` and a
family of output events, :func:`audit` runs ``n`` independent copies on each
input in one vmapped call and lower-bounds the privacy loss. For an event E
with ``p_b = P[M(x_b) ∈ E]``, (ε, δ)-DP requires ``p0 <= e^ε p1 + δ`` (and the
same with 0 and 1 swapped), so with one-sided Clopper–Pearson bounds
``p0 >= p0_lo`` and ``p1 <= p1_hi`` (each at level α/(2m) for m tested
(event, direction) pairs, Bonferroni),

    ε_lower = max over events and directions of  ln((p0_lo - δ) / p1_hi)

is below the true ε with probability >= 1 - α. A mechanism is flagged
(``violation``) when ``ε_lower > claimed_eps``: a correct mechanism is
flagged with probability at most α = 1 - confidence (default α = 1e-7).

Event families:

* :class:`ThresholdEvents` — ``{s(out) >= c}`` and ``{s(out) < c}`` for a
  scalar statistic ``s`` and thresholds ``c`` (given, or quantiles of a pilot
  run with independent keys, so the grid is not fitted to the audited sample).
* :class:`HistogramEvents` — single cells ``{cell(out) = j}`` of a discrete output.
* :class:`SearchEvents` — thresholds, single cells and unions of the cells
  with the largest likelihood ratios are scored on a first sample; only the
  best event is evaluated, without correction, on an independent second
  sample (no double dipping).

Reference for the method: Jagielski, Ullman, Oprea 2020 ("Auditing DP machine
learning"); jax_privacy ``auditing.py``.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from ..core.validation import check_delta, check_epsilon, check_positive_int, check_probability, is_concrete

__all__ = [
    "AuditReport", "ThresholdEvents", "HistogramEvents", "SearchEvents", "audit",
    "clopper_pearson_lower", "clopper_pearson_upper", "eps_lower_bound", "DEFAULT_CONFIDENCE",
]

DEFAULT_CONFIDENCE = 1.0 - 1e-7


# ----------------------------------------------------------------------------- Clopper–Pearson
def clopper_pearson_lower(k, n, alpha):
    """One-sided lower confidence bound for a binomial proportion: ``P[p < lower] <= alpha``."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(all="ignore"):
        lo = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k > 0, lo, 0.0)


def clopper_pearson_upper(k, n, alpha):
    """One-sided upper confidence bound for a binomial proportion: ``P[p > upper] <= alpha``."""
    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(all="ignore"):
        hi = stats.beta.ppf(1.0 - alpha, k + 1, n - k)
    return np.where(k < n, hi, 1.0)


def eps_lower_bound(k0, n0, k1, n1, delta, alpha):
    """``ln((p0_lo - δ)/p1_hi)`` with one-sided CP bounds at level ``alpha`` each (``-inf`` if ``p0_lo <= δ``)."""
    p0_lo = clopper_pearson_lower(k0, n0, alpha)
    p1_hi = clopper_pearson_upper(k1, n1, alpha)
    num = p0_lo - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num > 0, np.log(np.maximum(num, 1e-300) / p1_hi), -np.inf)


# ----------------------------------------------------------------------------- event families
def _identity(out):
    return out


@dataclasses.dataclass(frozen=True)
class ThresholdEvents:
    """Events ``{statistic(out) >= c}`` and ``{statistic(out) < c}``.

    ``statistic``: jittable ``out -> scalar`` (default: the output itself).
    ``thresholds``: explicit values, or ``None`` for ``n_thresholds`` quantiles
    (logit-spaced, so both tails are covered) of a pilot run of ``pilot`` draws
    per input with independent keys.
    """

    statistic: Callable[[Any], Any] = _identity
    thresholds: Optional[tuple] = None
    n_thresholds: int = 32
    pilot: int = 1 << 16


@dataclasses.dataclass(frozen=True)
class HistogramEvents:
    """Events ``{cell(out) == j}`` for ``j < n_cells``; ``cell``: jittable ``out -> int`` (default: the output)."""

    n_cells: int
    cell: Callable[[Any], Any] = _identity


@dataclasses.dataclass(frozen=True)
class SearchEvents:
    """Pick the best simple event on a first sample, bound ε on an independent second one.

    Give ``statistic`` (threshold events on quantiles of the first sample) and/or
    ``cell`` with ``n_cells`` (single cells and unions of the cells with the
    largest likelihood ratios). ``split`` is the fraction of the ``n`` runs per
    input used for the search.
    """

    statistic: Optional[Callable[[Any], Any]] = None
    cell: Optional[Callable[[Any], Any]] = None
    n_cells: Optional[int] = None
    n_thresholds: int = 64
    split: float = 0.5


# ----------------------------------------------------------------------------- report
@dataclasses.dataclass
class AuditReport:
    """Outcome of an audit.

    ``eps_lower``: the ε lower bound (0 if no event gives evidence);
    ``ci``: ``(eps_lower, eps_upper)`` for the best event, a two-sided interval at the
    audit's confidence for that event's privacy loss ``ln((p0 - δ)/p1)``;
    ``violation``: ``eps_lower > claimed_eps``; ``evidence``: the best event and its counts.
    """

    name: str
    eps_lower: float
    ci: tuple
    claimed_eps: float
    claimed_delta: float
    violation: bool
    evidence: dict
    n: int
    confidence: float
    n_events: int
    family: str
    seconds: float = float("nan")

    @property
    def verdict(self) -> str:
        return "VIOLATION" if self.violation else "consistent"

    def __str__(self) -> str:
        e = self.evidence
        lines = [
            f"audit {self.name}: {self.verdict} with the claim (eps={self.claimed_eps:g}, delta={self.claimed_delta:g})",
            f"  eps lower bound {self.eps_lower:.4f}  (confidence {self.confidence:.10g}, {self.family} events,"
            f" {self.n_events} tested, n={self.n} runs per input)",
            f"  best event      {e.get('event', '-')}  [{e.get('direction', '-')}]",
        ]
        if "k0" in e:
            a, b = e["direction"].split(" vs ")
            lines.append(f"  counts          {a}: {e['k0']}/{e['n0']} (p in [{e['p0_lo']:.4g}, {e['p0_hi']:.4g}])   "
                         f"{b}: {e['k1']}/{e['n1']} (p in [{e['p1_lo']:.4g}, {e['p1_hi']:.4g}])")
            lines.append(f"  eps interval    [{self.ci[0]:.4f}, {self.ci[1]:.4f}] for this event;"
                         f" delta lower bound at the claimed eps {e['delta_lower']:.3g}")
        if self.violation:
            a, b = e["direction"].split(" vs ")
            lines.append(f"  evidence: P[M({a}) in E] >= {e['p0_lo']:.4g} > e^{self.claimed_eps:g} * {e['p1_hi']:.4g}"
                         f" + {self.claimed_delta:g} >= e^eps P[M({b}) in E] + delta, impossible for an (eps, delta)-DP mechanism")
        if math.isfinite(self.seconds):
            lines.append(f"  time            {self.seconds:.2f} s")
        return "\n".join(lines)


# ----------------------------------------------------------------------------- running
@functools.lru_cache(maxsize=128)
def _runner(mechanism, fn):
    """Compiled ``(keys, x) -> fn(mechanism(key, x))`` over a batch of keys (cached per function pair)."""
    return jax.jit(jax.vmap(lambda k, x: fn(mechanism(k, x)), in_axes=(0, None)))


def _draw(mechanism, fn, key, x, n, batch):
    run = _runner(mechanism, fn)
    m = min(n, batch)
    chunks = -(-n // m)
    keys = jax.random.split(key, chunks)
    out = [np.asarray(run(jax.random.split(kc, m), x)) for kc in keys]
    return np.concatenate(out)[:n]


def _threshold_counts(s0, s1, thresholds):
    """Counts of ``s >= c`` for each threshold (ties included)."""
    s0, s1 = np.sort(s0), np.sort(s1)
    c = np.asarray(thresholds, float)
    ge0 = s0.size - np.searchsorted(s0, c, side="left")
    ge1 = s1.size - np.searchsorted(s1, c, side="left")
    return ge0, ge1


def _threshold_events(s0, s1, thresholds):
    """Event table for ``{s >= c}`` and ``{s < c}``: (names, k0, k1)."""
    ge0, ge1 = _threshold_counts(s0, s1, thresholds)
    names = [f"s >= {c:.6g}" for c in thresholds] + [f"s < {c:.6g}" for c in thresholds]
    return names, np.concatenate([ge0, s0.size - ge0]), np.concatenate([ge1, s1.size - ge1])


def _cell_counts(c0, c1, n_cells):
    c0, c1 = np.asarray(c0).astype(np.int64), np.asarray(c1).astype(np.int64)
    for c in (c0, c1):
        if c.size and (c.min() < 0 or c.max() >= n_cells):
            raise ValueError(f"cell(out) must lie in [0, {n_cells}), got values in [{c.min()}, {c.max()}]")
    return np.bincount(c0, minlength=n_cells), np.bincount(c1, minlength=n_cells)


def _logit_quantiles(pooled, m):
    levels = 1.0 / (1.0 + np.exp(-np.linspace(-8.0, 8.0, m)))
    return np.unique(np.quantile(pooled, levels))


def _best(names, k0, k1, n0, n1, delta, alpha):
    """Best (event, direction) by the CP ε lower bound; returns (eps_lo, index, direction)."""
    e01 = eps_lower_bound(k0, n0, k1, n1, delta, alpha)
    e10 = eps_lower_bound(k1, n1, k0, n0, delta, alpha)
    i01, i10 = int(np.argmax(e01)), int(np.argmax(e10))
    if e01[i01] >= e10[i10]:
        return float(e01[i01]), i01, 0
    return float(e10[i10]), i10, 1


def _evidence(name, direction, ka, na, kb, nb, delta, alpha, claimed_eps):
    """Evidence dict for event ``name`` with ``a`` the numerator input; two-sided interval at 2*alpha."""
    pa_lo, pa_hi = float(clopper_pearson_lower(ka, na, alpha)), float(clopper_pearson_upper(ka, na, alpha))
    pb_lo, pb_hi = float(clopper_pearson_lower(kb, nb, alpha)), float(clopper_pearson_upper(kb, nb, alpha))
    eps_lo = math.log((pa_lo - delta) / pb_hi) if pa_lo > delta else -math.inf
    eps_hi = math.log((pa_hi - delta) / pb_lo) if pb_lo > 0 and pa_hi > delta else math.inf
    if direction == 1:
        name_dir = "x1 vs x0"
    else:
        name_dir = "x0 vs x1"
    return dict(event=name, direction=name_dir, k0=int(ka), n0=int(na), k1=int(kb), n1=int(nb),
                p0_lo=pa_lo, p0_hi=pa_hi, p1_lo=pb_lo, p1_hi=pb_hi,
                delta_lower=max(pa_lo - math.exp(min(claimed_eps, 700.0)) * pb_hi, 0.0)), (eps_lo, eps_hi)


def _check_inputs(mechanism, x0, x1, claimed_eps, claimed_delta, n, confidence, key, batch):
    if not callable(mechanism):
        raise TypeError(f"mechanism must be a callable (key, x) -> output, got {type(mechanism).__name__}")
    check_epsilon(claimed_eps, "claimed_eps", allow_inf=False)
    check_delta(claimed_delta, "claimed_delta")
    n = check_positive_int("n", n, minimum=2)
    check_positive_int("batch", batch)
    check_probability("confidence", confidence, open_left=True, open_right=True)
    if not (isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key) and key.shape == ()):
        raise TypeError(f"key must be a single typed PRNG key (jax.random.key(seed)), got {key!r}")
    l0, t0 = jax.tree.flatten(x0)
    l1, t1 = jax.tree.flatten(x1)
    if t0 != t1:
        raise ValueError(f"x0 and x1 must have the same structure, got {t0} and {t1}")
    for a, b in zip(l0, l1):
        if np.shape(a) != np.shape(b):
            raise ValueError(f"x0 and x1 must have the same shapes, got {np.shape(a)} and {np.shape(b)}")
        for v, nm in ((a, "x0"), (b, "x1")):
            if is_concrete(v):
                arr = np.asarray(v)
                if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr)):
                    raise ValueError(f"{nm} must be finite, got {arr}")
    return n


def audit(mechanism: Callable, x0, x1, *, claimed_eps: float, claimed_delta: float = 0.0, events=None,
          n: int = 100_000, key: jax.Array, confidence: float = DEFAULT_CONFIDENCE, batch: int = 1 << 16,
          name: str = "mechanism") -> AuditReport:
    """Audit ``mechanism`` on neighbours ``x0, x1`` against the claim (``claimed_eps``, ``claimed_delta``).

    ``mechanism(key, x) -> output`` is any jittable function (vmapped here over
    ``n`` keys per input, in chunks of ``batch``). ``events``: a
    :class:`ThresholdEvents` (default), :class:`HistogramEvents` or
    :class:`SearchEvents`. The probability that a mechanism satisfying the
    claim is reported as a violation is at most ``1 - confidence``.

    Example::

        rep = audit(lambda k, x: laplace_mech(k, x, 1.0, 1.0), 0.0, 1.0, claimed_eps=1.0,
                    key=jax.random.key(0), n=200_000)
        assert not rep.violation
    """
    import time

    n = _check_inputs(mechanism, x0, x1, claimed_eps, claimed_delta, n, confidence, key, batch)
    events = ThresholdEvents() if events is None else events
    alpha = 1.0 - confidence
    delta = float(claimed_delta)
    t_start = time.perf_counter()
    k0, k1, k_pilot0, k_pilot1 = jax.random.split(key, 4)

    if isinstance(events, ThresholdEvents):
        check_positive_int("events.n_thresholds", events.n_thresholds)
        s0 = _draw(mechanism, events.statistic, k0, x0, n, batch).astype(np.float64)
        s1 = _draw(mechanism, events.statistic, k1, x1, n, batch).astype(np.float64)
        if s0.ndim != 1:
            raise ValueError(f"ThresholdEvents.statistic must return a scalar per run, got shape {s0.shape[1:]}")
        if events.thresholds is not None:
            thr = np.unique(np.asarray(events.thresholds, float))
        else:
            m = min(events.pilot, n)
            p0 = _draw(mechanism, events.statistic, k_pilot0, x0, m, batch)
            p1 = _draw(mechanism, events.statistic, k_pilot1, x1, m, batch)
            thr = _logit_quantiles(np.concatenate([p0, p1]).astype(np.float64), events.n_thresholds)
        names, c0, c1 = _threshold_events(s0, s1, thr)
        m_tests = 2 * len(names)
        family = "threshold"
    elif isinstance(events, HistogramEvents):
        n_cells = check_positive_int("events.n_cells", events.n_cells, minimum=2)
        c0, c1 = _cell_counts(_draw(mechanism, events.cell, k0, x0, n, batch),
                              _draw(mechanism, events.cell, k1, x1, n, batch), n_cells)
        names = [f"cell == {j}" for j in range(n_cells)]
        m_tests = 2 * n_cells
        family = "histogram"
    elif isinstance(events, SearchEvents):
        return _audit_search(mechanism, x0, x1, events, claimed_eps, delta, n, alpha, confidence, batch,
                             (k0, k1, k_pilot0, k_pilot1), name, t_start)
    else:
        raise TypeError(f"events must be ThresholdEvents, HistogramEvents or SearchEvents, got {events!r}")

    a = alpha / m_tests
    eps_lo, i, direction = _best(names, c0, c1, n, n, delta, a)
    ka, kb = (c0[i], c1[i]) if direction == 0 else (c1[i], c0[i])
    ev, (lo, hi) = _evidence(names[i], direction, ka, n, kb, n, delta, a, claimed_eps)
    eps_lower = max(eps_lo, 0.0)
    return AuditReport(name=name, eps_lower=eps_lower, ci=(eps_lower, max(hi, 0.0)), claimed_eps=float(claimed_eps),
                       claimed_delta=delta, violation=eps_lower > claimed_eps, evidence=ev, n=n,
                       confidence=confidence, n_events=m_tests, family=family,
                       seconds=time.perf_counter() - t_start)


def _audit_search(mechanism, x0, x1, ev, claimed_eps, delta, n, alpha, confidence, batch, keys, name, t_start):
    import time

    if ev.statistic is None and ev.cell is None:
        raise ValueError("SearchEvents needs a statistic and/or a cell function")
    if ev.cell is not None:
        n_cells = check_positive_int("events.n_cells", ev.n_cells, minimum=2)
    check_probability("events.split", ev.split, open_left=True, open_right=True)
    n_a = max(1, int(round(n * ev.split)))
    n_b = n - n_a
    if n_b < 1:
        raise ValueError(f"SearchEvents.split={ev.split} leaves no runs for the evaluation sample (n={n})")
    k0, k1, ka0, ka1 = keys
    stat_fns = []
    if ev.statistic is not None:
        stat_fns.append(("statistic", ev.statistic))
    if ev.cell is not None:
        stat_fns.append(("cell", ev.cell))
    # sample 1 (search) uses keys ka*, sample 2 (evaluation) keys k*: independent
    cand = []   # (name, predicate on arrays of the chosen feature, feature kind)
    for kind, fn in stat_fns:
        a0 = np.asarray(_draw(mechanism, fn, jax.random.fold_in(ka0, len(cand)), x0, n_a, batch))
        a1 = np.asarray(_draw(mechanism, fn, jax.random.fold_in(ka1, len(cand)), x1, n_a, batch))
        if kind == "statistic":
            thr = _logit_quantiles(np.concatenate([a0, a1]).astype(np.float64), ev.n_thresholds)
            for c in thr:
                cand.append((kind, f"s >= {c:.6g}", ("ge", c)))
                cand.append((kind, f"s < {c:.6g}", ("lt", c)))
        else:
            h0, h1 = _cell_counts(a0, a1, n_cells)
            # unions of the cells with the largest ratio in each direction
            for ha, hb in ((h0, h1), (h1, h0)):
                order = np.argsort(-((ha + 0.5) / (hb + 0.5)))
                for r in range(1, n_cells):
                    cells = tuple(sorted(int(j) for j in order[:r]))
                    cand.append((kind, f"cell in {set(cells)}" if r > 1 else f"cell == {cells[0]}", ("in", cells)))
        cand_feats = (a0, a1)
        for j in range(len(cand)):
            if len(cand[j]) == 3:
                cand[j] = cand[j] + (cand_feats,)
    # score every candidate on sample 1 by the bound it would give at the final confidence
    best = (-np.inf, None, 0)
    for kind, nm, pred, (a0, a1) in cand:
        e0, e1 = _apply(pred, a0).sum(), _apply(pred, a1).sum()
        sc, _, d = _best([nm], np.array([e0]), np.array([e1]), n_a, n_a, delta, alpha)
        if sc > best[0] or best[1] is None:
            best = (sc, (kind, nm, pred), d)
    (kind, nm, pred), d = best[1], best[2]
    fn = ev.statistic if kind == "statistic" else ev.cell
    b0 = np.asarray(_draw(mechanism, fn, k0, x0, n_b, batch))
    b1 = np.asarray(_draw(mechanism, fn, k1, x1, n_b, batch))
    e0, e1 = int(_apply(pred, b0).sum()), int(_apply(pred, b1).sum())
    ka_, kb_ = (e0, e1) if d == 0 else (e1, e0)
    evd, (lo, hi) = _evidence(nm, d, ka_, n_b, kb_, n_b, delta, alpha, claimed_eps)
    evd["search_sample"] = n_a
    eps_lower = max(lo, 0.0)
    return AuditReport(name=name, eps_lower=eps_lower, ci=(eps_lower, max(hi, 0.0)), claimed_eps=float(claimed_eps),
                       claimed_delta=delta, violation=eps_lower > claimed_eps, evidence=evd, n=n,
                       confidence=confidence, n_events=1, family=f"search ({len(cand)} candidates)",
                       seconds=time.perf_counter() - t_start)


def _apply(pred, x):
    op, arg = pred
    if op == "ge":
        return x >= arg
    if op == "lt":
        return x < arg
    return np.isin(x, np.asarray(arg))
