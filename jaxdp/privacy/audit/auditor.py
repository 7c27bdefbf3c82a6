"""Empirical privacy auditing with Clopper–Pearson bounds (docs/guide/auditing.md).

Given a randomized function ``mechanism(key, x) -> output`` (a single mechanism or a
whole algorithm run), a family of neighbouring input pairs ``(x0, x1)`` and a family
of output events, :func:`audit_mechanism` runs ``n`` independent copies on each input
in one vmapped call per input and lower-bounds the privacy loss. For an event E with
``p_b = P[M(x_b) ∈ E]``, (ε, δ)-DP requires ``p0 <= e^ε p1 + δ`` (and the same with 0
and 1 swapped). With a one-sided Clopper–Pearson lower bound ``p0_lo`` and upper bound
``p1_hi``,

    ε_lower = max over tests (pair, event, direction) of  ln((p0_lo - δ) / p1_hi).

**The α split (Bonferroni).** A test fails when either of its two bounds fails, so with
``m`` tests every one-sided bound is taken at level ``α/(2m)``: the probability that
*any* of the ``2m`` bounds fails is at most α, and then ``ε_lower`` is below the true
ε. A mechanism satisfying the claim is flagged (``violation``: ``ε_lower > claimed_eps``)
with probability at most α (default ``α = 1e-7``).

**Search.** When the event family is large (thresholds at data-dependent quantiles,
unions of cells, several neighbour pairs), the runs are split: a *search* sample ranks
every candidate (pair, event, direction) and keeps the best ``n_best``; an independent
*evaluation* sample bounds those ``n_best`` with ``m = n_best`` above. The selection
sees none of the evaluation runs, so the split costs no α: the family-wise error is
still α whatever the size of the searched family.

Event families:

* :class:`ThresholdEvents` — ``{s(out) >= c}`` and ``{s(out) < c}`` for a
  scalar statistic ``s`` and thresholds ``c`` (given, or quantiles of a pilot
  run with independent keys, so the grid is not fitted to the audited sample).
* :class:`HistogramEvents` — single cells ``{cell(out) = j}`` of a discrete output.
* :class:`SearchEvents` — thresholds, single cells and unions of the cells
  with the largest likelihood ratios, scored on the search sample.

**Floating point.** The δ tested is ``claimed_delta + delta_float`` where ``delta_float``
(default :data:`jaxdp.privacy.accounting.floating.FLOAT32_DELTA_FLOOR`) is the float sampler's δ
floor: a pure-DP claim is never reported as verified below it.

Reference for the method: Jagielski, Ullman, Oprea 2020 ("Auditing DP machine
learning"); jax_privacy ``auditing.py``.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import time
from typing import Any, Callable, Mapping, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ..accounting.floating import FLOAT32_DELTA_FLOOR
from ...core.validation import check_delta, check_epsilon, check_positive_int, check_probability, is_concrete

__all__ = [
    "AuditReport", "ThresholdEvents", "HistogramEvents", "SearchEvents", "audit", "audit_mechanism",
    "clopper_pearson_lower", "clopper_pearson_upper", "eps_lower_bound", "bonferroni_level",
    "DEFAULT_CONFIDENCE", "DEFAULT_ALPHA",
]

DEFAULT_ALPHA = 1e-7
DEFAULT_CONFIDENCE = 1.0 - DEFAULT_ALPHA


# ----------------------------------------------------------------------------- bounds
def clopper_pearson_lower(k, n, alpha):
    """One-sided lower confidence bound for a binomial proportion: ``P[p < lower] <= alpha``.

    Args:
        k: the number of successes (array-like; broadcasts with ``n``).
        n: the number of trials.
        alpha: the one-sided error level.

    Returns:
        The lower bound (float64 array; 0 where ``k = 0``).
    """
    from scipy import stats

    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(all="ignore"):
        lo = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k > 0, lo, 0.0)


def clopper_pearson_upper(k, n, alpha):
    """One-sided upper confidence bound for a binomial proportion: ``P[p > upper] <= alpha``.

    Args:
        k, n, alpha: as in :func:`clopper_pearson_lower`.

    Returns:
        The upper bound (float64 array; 1 where ``k = n``).
    """
    from scipy import stats

    k, n = np.asarray(k, float), np.asarray(n, float)
    with np.errstate(all="ignore"):
        hi = stats.beta.ppf(1.0 - alpha, k + 1, n - k)
    return np.where(k < n, hi, 1.0)


def eps_lower_bound(k0, n0, k1, n1, delta, alpha):
    """``ln((p0_lo - δ)/p1_hi)`` with one-sided CP bounds at level ``alpha`` *each* (``-inf`` if ``p0_lo <= δ``).

    The pair of bounds fails with probability at most ``2 alpha``: for ``m`` such tests with family-wise error α pass
    ``alpha = bonferroni_level(α, m)``.

    Args:
        k0, n0: the event's count and the number of runs on the numerator input (``p0``).
        k1, n1: the event's count and the number of runs on the denominator input (``p1``).
        delta: the δ tested (the float δ floor included).
        alpha: the level of each one-sided bound.

    Returns:
        The ε lower bound (float64 array; ``-inf`` where ``p0_lo <= δ``).
    """
    p0_lo = clopper_pearson_lower(k0, n0, alpha)
    p1_hi = clopper_pearson_upper(k1, n1, alpha)
    num = p0_lo - delta
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(num > 0, np.log(np.maximum(num, 1e-300) / p1_hi), -np.inf)


def bonferroni_level(alpha: float, m_tests: int) -> float:
    """Level of each one-sided bound when ``m_tests`` tests, two bounds each, share family-wise error α: ``α/(2m)``.

    Args:
        alpha: the family-wise error α.
        m_tests: the number of tests ``m``.

    Returns:
        ``α/(2m)``.
    """
    return float(alpha) / (2.0 * int(m_tests))


# ----------------------------------------------------------------------------- runs, counts, checks
@dataclasses.dataclass(frozen=True)
class _Features:
    """Hashable tuple of feature functions ``out -> array`` (one compiled runner per mechanism × features)."""

    fns: tuple

    def __call__(self, out):
        return tuple(f(out) for f in self.fns)


@functools.lru_cache(maxsize=128)
def _runner(mechanism, fn):
    """Compiled ``(keys, x) -> fn(mechanism(key, x))`` over a batch of keys (cached per function pair)."""
    return jax.jit(jax.vmap(lambda k, x: fn(mechanism(k, x)), in_axes=(0, None)))


def draw_features(mechanism: Callable, fn: Callable, key: jax.Array, x, n: int, batch: int = 1 << 16):
    """``n`` runs of ``fn(mechanism(key_i, x))`` as a tuple of host arrays, in chunks of exactly ``batch`` runs
    (the last one truncated), so every call with the same ``batch`` reuses one compilation.

    Args:
        mechanism: jittable ``(key, x) -> output``.
        fn: the feature map, ``output -> tuple of arrays`` (one entry per classifier of the audit).
        key: typed PRNG key of these runs.
        x: the input.
        n: the number of runs.
        batch: the runs per compiled, vectorised chunk.

    Returns:
        A tuple with one NumPy array per entry of ``fn``'s output, ``n`` rows each.
    """
    run = _runner(mechanism, fn)
    m = int(batch)
    chunks = -(-n // m)
    keys = jax.random.split(key, chunks)
    res: list = []
    for j, kc in enumerate(keys):           # filled in place: the peak is the result plus one chunk
        o = run(jax.random.split(kc, m), x)
        if not res:
            res = [np.empty((n,) + a.shape[1:], a.dtype) for a in o]
        r = min(m, n - j * m)
        for dst, a in zip(res, o):
            dst[j * m:j * m + r] = np.asarray(a)[:r]
    return tuple(res)


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
    """Best (event, direction) by the CP ε lower bound (each bound at ``alpha``); returns (eps_lo, index, direction)."""
    e01 = eps_lower_bound(k0, n0, k1, n1, delta, alpha)
    e10 = eps_lower_bound(k1, n1, k0, n0, delta, alpha)
    i01, i10 = int(np.argmax(e01)), int(np.argmax(e10))
    if e01[i01] >= e10[i10]:
        return float(e01[i01]), i01, 0
    return float(e10[i10]), i10, 1


def _evidence(name, direction, ka, na, kb, nb, delta, alpha, claimed_eps, labels=("x0", "x1")):
    """Evidence dict for event ``name`` with ``a`` the numerator input; every bound at level ``alpha``."""
    pa_lo, pa_hi = float(clopper_pearson_lower(ka, na, alpha)), float(clopper_pearson_upper(ka, na, alpha))
    pb_lo, pb_hi = float(clopper_pearson_lower(kb, nb, alpha)), float(clopper_pearson_upper(kb, nb, alpha))
    eps_lo = math.log((pa_lo - delta) / pb_hi) if pa_lo > delta else -math.inf
    eps_hi = math.log((pa_hi - delta) / pb_lo) if pb_lo > 0 and pa_hi > delta else math.inf
    a, b = labels if direction == 0 else labels[::-1]
    return dict(event=name, direction=f"{a} vs {b}", num=a, den=b, k0=int(ka), n0=int(na), k1=int(kb), n1=int(nb),
                p0_lo=pa_lo, p0_hi=pa_hi, p1_lo=pb_lo, p1_hi=pb_hi,
                delta_lower=max(pa_lo - math.exp(min(claimed_eps, 700.0)) * pb_hi, 0.0)), (eps_lo, eps_hi)


def _check_claim(claimed_eps, claimed_delta, alpha, sample_fn=None) -> None:
    """Refuse a bad claim (finite ε > 0, δ in [0, 1)), family-wise ``alpha`` outside (0, 1) or a non-callable mechanism."""
    if sample_fn is not None and not callable(sample_fn):
        raise TypeError(f"sample_fn must be a callable (key, x) -> output, got {type(sample_fn).__name__}")
    check_epsilon(claimed_eps, "claimed_eps", allow_inf=False)
    check_delta(claimed_delta, "claimed_delta")
    check_probability("alpha", alpha, open_left=True, open_right=True)


def _check_key(key):
    if not (isinstance(key, jax.Array) and jnp.issubdtype(key.dtype, jax.dtypes.prng_key) and key.shape == ()):
        raise TypeError(f"key must be a single typed PRNG key (jax.random.key(seed)), got {key!r}")


def _check_pair(x0, x1, ref=None, label="x0/x1"):
    l0, t0 = jax.tree.flatten(x0)
    l1, t1 = jax.tree.flatten(x1)
    if t0 != t1:
        raise ValueError(f"x0 and x1 must have the same structure, got {t0} and {t1}")
    if ref is not None and ref[0] != t0:
        raise ValueError(f"every neighbour pair must have the structure of the first, got {t0} for {label!r}")
    for j, (a, b) in enumerate(zip(l0, l1)):
        if np.shape(a) != np.shape(b):
            raise ValueError(f"x0 and x1 must have the same shapes, got {np.shape(a)} and {np.shape(b)}")
        if ref is not None and np.shape(a) != ref[1][j]:
            raise ValueError(f"every neighbour pair must have the shapes of the first, got {np.shape(a)} for {label!r}")
        for v, nm in ((a, "x0"), (b, "x1")):
            if is_concrete(v):
                arr = np.asarray(v)
                if np.issubdtype(arr.dtype, np.floating) and not np.all(np.isfinite(arr)):
                    raise ValueError(f"{nm} must be finite, got {arr}")
    return t0, [np.shape(a) for a in l0]


def _normalise_neighbours(neighbours) -> list:
    """``[(x0, x1), ...]`` or ``{label: (x0, x1)}`` -> ``[(label, x0, x1), ...]``, validated."""
    if isinstance(neighbours, Mapping):
        items = list(neighbours.items())
    elif isinstance(neighbours, Sequence) and not isinstance(neighbours, (str, bytes)):
        items = [(f"pair {i}", p) for i, p in enumerate(neighbours)]
    else:
        raise TypeError(f"neighbours must be a sequence of (x0, x1) pairs or a dict label -> (x0, x1), got "
                        f"{type(neighbours).__name__}")
    if not items:
        raise ValueError("neighbours must contain at least one (x0, x1) pair, got none")
    out, ref = [], None
    for label, p in items:
        if not (isinstance(p, (tuple, list)) and len(p) == 2):
            raise ValueError(f"each neighbour pair must be a tuple (x0, x1), got {p!r} for {label!r}")
        r = _check_pair(p[0], p[1], ref, str(label))
        ref = ref or r
        out.append((str(label), p[0], p[1]))
    return out


def _input_id(x) -> bytes:
    leaves = jax.tree.leaves(x)
    return b"|".join(np.asarray(v).tobytes() + str(np.asarray(v).dtype).encode() for v in leaves)


def _distinct_inputs(pairs) -> tuple[list, list]:
    """The distinct inputs of ``pairs`` (``(label, x0, x1)`` rows; pairs may share one) and each pair's indices.

    Raises ``ValueError`` when a pair's two inputs are identical.
    """
    ids: dict = {}
    inputs: list = []
    pair_idx: list = []
    for _, x0, x1 in pairs:
        ij = []
        for x in (x0, x1):
            i = ids.setdefault(_input_id(x), len(inputs))
            if i == len(inputs):
                inputs.append(x)
            ij.append(i)
        if ij[0] == ij[1]:
            raise ValueError("a neighbour pair has two identical inputs; nothing to audit")
        pair_idx.append(tuple(ij))
    return inputs, pair_idx


# ----------------------------------------------------------------------------- event families
def _identity(out):
    return out


@dataclasses.dataclass(frozen=True)
class ThresholdEvents:
    """Events ``{statistic(out) >= c}`` and ``{statistic(out) < c}``.

    Attributes:
        statistic: jittable ``out -> scalar`` (default: the output itself).
        thresholds: explicit values ``c``, or ``None`` for ``n_thresholds`` quantiles (logit-spaced, so both tails are
            covered) of a pilot run of ``pilot`` draws per input with independent keys (of the search sample when the
            audit searches).
        n_thresholds: the number of quantile thresholds when ``thresholds`` is ``None``.
        pilot: the draws per input of the pilot run.
    """

    statistic: Callable[[Any], Any] = _identity
    thresholds: Optional[tuple] = None
    n_thresholds: int = 32
    pilot: int = 1 << 16


@dataclasses.dataclass(frozen=True)
class HistogramEvents:
    """Events ``{cell(out) == j}`` for ``j < n_cells`` (and, when searching, unions of cells).

    Attributes:
        n_cells: the number of cells.
        cell: jittable ``out -> int`` in ``[0, n_cells)`` (default: the output).
    """

    n_cells: int
    cell: Callable[[Any], Any] = _identity


@dataclasses.dataclass(frozen=True)
class SearchEvents:
    """Pick the best simple events on a search sample, bound ε on an independent evaluation sample.

    Give ``statistic`` and/or ``cell`` with ``n_cells``.

    Attributes:
        statistic: jittable ``out -> scalar``: threshold events on quantiles of the search sample (``None``: none).
        cell: jittable ``out -> int``: single cells and unions of the cells with the largest likelihood ratios
            (``None``: none).
        n_cells: the number of cells of ``cell``.
        n_thresholds: the number of quantile thresholds of ``statistic``.
        split: the fraction of the ``n`` runs per input used for the search.
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

    Attributes:
        name: the name of the audited mechanism.
        eps_lower: the ε lower bound (0 if no event gives evidence), valid with probability ``>= confidence`` jointly
            over everything tested.
        ci: ``(eps_lower, eps_upper)`` for the best test, a two-sided interval at the same per-bound level for that
            event's privacy loss ``ln((p0 - δ)/p1)``.
        claimed_eps: the claimed ε.
        claimed_delta: the claimed δ.
        violation: ``eps_lower > claimed_eps``.
        evidence: the best event, its pair and counts.
        n: the runs per input (learned-event and trade-off audits: the fresh evaluation runs).
        confidence: ``1 - alpha``, the joint confidence of the bound.
        n_events: the number of tests the family-wise error is split over (trade-off audits: the thresholds).
        family: a description of the events tested.
        seconds: the wall-clock time of the audit.
        delta_float: the float δ floor added to ``claimed_delta`` for the test.
        alpha_per_bound: the level of each one-sided bound.
        resolution: the smallest event probability the audit can tell from 0 (the CP upper bound at 0 hits), i.e. the
            claim is only checked down to ``max(delta_float, resolution)``.
        pair: the label of the best test's pair (empty for a single pair).
        n_pairs: the number of neighbour pairs audited.
        n_candidates: the number of candidate tests considered (0 where not counted).
        notes: extra report lines (trade-off audits list ε(δ) and μ there).
        tradeoff: the :class:`jaxdp.privacy.audit.tradeoff.TradeoffBound` of a trade-off audit (else ``None``).
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
    delta_float: float = 0.0
    alpha_per_bound: float = float("nan")
    resolution: float = float("nan")
    pair: str = ""
    n_pairs: int = 1
    n_candidates: int = 0
    notes: tuple = ()
    tradeoff: Any = None

    @property
    def verdict(self) -> str:
        return "VIOLATION" if self.violation else "consistent"

    @property
    def delta_tested(self) -> float:
        return self.claimed_delta + self.delta_float

    def __str__(self) -> str:
        e = self.evidence
        lines = [
            f"audit {self.name}: {self.verdict} with the claim (eps={self.claimed_eps:g}, delta={self.claimed_delta:g})",
            f"  eps lower bound {self.eps_lower:.4f}  (confidence {self.confidence:.10g}, {self.family},"
            f" {self.n_events} tested, n={self.n} runs per input)",
        ]
        if self.n_pairs > 1 or self.pair:
            lines.append(f"  best pair       {self.pair}  (of {self.n_pairs} neighbour pairs)")
        lines.append(f"  best event      {e.get('event', '-')}  [{e.get('direction', '-')}]")
        if "k0" in e:
            a, b = e["num"], e["den"]
            lines.append(f"  counts          {a}: {e['k0']}/{e['n0']} (p in [{e['p0_lo']:.4g}, {e['p0_hi']:.4g}])   "
                         f"{b}: {e['k1']}/{e['n1']} (p in [{e['p1_lo']:.4g}, {e['p1_hi']:.4g}])")
            lines.append(f"  eps interval    [{self.ci[0]:.4f}, {self.ci[1]:.4f}] for this event;"
                         f" delta lower bound at the claimed eps {e['delta_lower']:.3g}")
        if self.violation:
            a, b = e["num"], e["den"]
            lines.append(f"  evidence: P[M({a}) in E] >= {e['p0_lo']:.4g} > e^{self.claimed_eps:g} * {e['p1_hi']:.4g}"
                         f" + {self.delta_tested:.3g} >= e^eps P[M({b}) in E] + delta, impossible for an (eps, delta)-DP"
                         " mechanism")
        else:
            pure = "pure DP " if self.claimed_delta == 0 else ""
            lines.append(f"  checked         {pure}(eps={self.claimed_eps:g}, delta={self.claimed_delta:g})"
                         f" verified down to delta_float = {self.delta_float:.3g} (float sampler floor, tested at"
                         f" delta={self.delta_tested:.3g}); events rarer than {self.resolution:.2g} are invisible"
                         f" at n={self.n}")
        lines.extend(self.notes)
        if math.isfinite(self.seconds):
            lines.append(f"  time            {self.seconds:.2f} s")
        return "\n".join(lines)


# ----------------------------------------------------------------------------- candidate events
@dataclasses.dataclass
class _Feature:
    kind: str                   # "stat" or "cell"
    fn: Callable
    n_cells: int = 0
    thresholds: Optional[tuple] = None
    n_thresholds: int = 32
    pilot: int = 0


def _features_of(families) -> list:
    feats = []
    for ev in families:
        if isinstance(ev, ThresholdEvents):
            check_positive_int("events.n_thresholds", ev.n_thresholds)
            feats.append(_Feature("stat", ev.statistic, thresholds=None if ev.thresholds is None
                                  else tuple(np.unique(np.asarray(ev.thresholds, float))),
                                  n_thresholds=ev.n_thresholds, pilot=check_positive_int("events.pilot", ev.pilot)))
        elif isinstance(ev, HistogramEvents):
            feats.append(_Feature("cell", ev.cell, n_cells=check_positive_int("events.n_cells", ev.n_cells, minimum=2)))
        elif isinstance(ev, SearchEvents):
            if ev.statistic is None and ev.cell is None:
                raise ValueError("SearchEvents needs a statistic and/or a cell function")
            check_probability("events.split", ev.split, open_left=True, open_right=True)
            check_positive_int("events.n_thresholds", ev.n_thresholds)
            if ev.statistic is not None:
                feats.append(_Feature("stat", ev.statistic, n_thresholds=ev.n_thresholds))
            if ev.cell is not None:
                feats.append(_Feature("cell", ev.cell,
                                      n_cells=check_positive_int("events.n_cells", ev.n_cells, minimum=2)))
        else:
            raise TypeError(f"events must be ThresholdEvents, HistogramEvents or SearchEvents (or a list of them), "
                            f"got {ev!r}")
    return feats


def _candidates(feat, a0, a1, search: bool):
    """Candidate events of one feature on one pair's sample: list of (name, op, arg) and counts (k0, k1)."""
    if feat.kind == "stat":
        a0, a1 = np.asarray(a0, np.float64), np.asarray(a1, np.float64)
        if a0.ndim != 1:
            raise ValueError(f"a statistic must return a scalar per run, got shape {a0.shape[1:]}")
        thr = feat.thresholds
        if thr is None:
            thr = _logit_quantiles(np.concatenate([a0, a1]), feat.n_thresholds)
        ge0, ge1 = _threshold_counts(a0, a1, thr)
        ev = [(f"s >= {c:.6g}", "ge", float(c)) for c in thr] + [(f"s < {c:.6g}", "lt", float(c)) for c in thr]
        return ev, np.concatenate([ge0, a0.size - ge0]), np.concatenate([ge1, a1.size - ge1])
    h0, h1 = _cell_counts(a0, a1, feat.n_cells)
    ev = [(f"cell == {j}", "in", (j,)) for j in range(feat.n_cells)]  # type: ignore[misc]  # arg: a cell tuple
    k0, k1 = [h0], [h1]
    if search:   # unions of the cells with the largest ratio in each direction
        for ha, hb in ((h0, h1), (h1, h0)):
            order = np.argsort(-((ha + 0.5) / (hb + 0.5)), kind="stable")
            for r in range(2, feat.n_cells):
                cells = tuple(sorted(int(j) for j in order[:r]))
                ev.append((f"cell in {set(cells)}", "in", cells))  # type: ignore[arg-type]
            k0.append(np.cumsum(h0[order])[1:-1])
            k1.append(np.cumsum(h1[order])[1:-1])
    return ev, np.concatenate(k0), np.concatenate(k1)


def _apply(pred, x):
    op, arg = pred
    if op == "ge":
        return x >= arg
    if op == "lt":
        return x < arg
    return np.isin(x, np.asarray(arg))


# ----------------------------------------------------------------------------- the auditor
def audit_mechanism(sample_fn: Callable, neighbours, events=None, *, claimed_eps: float, claimed_delta: float = 0.0,
                    n: int = 100_000, key: jax.Array, alpha: float = DEFAULT_ALPHA, search: Optional[float] = None,
                    n_best: int = 4, batch: int = 1 << 16, name: str = "mechanism",
                    delta_float: Optional[float] = None) -> AuditReport:
    """Audit ``sample_fn`` on a family of neighbour pairs against the claim (``claimed_eps``, ``claimed_delta``).

    Args:
        sample_fn: jittable ``(key, x) -> output`` (one run of the mechanism or algorithm on input ``x``).
        neighbours: ``[(x0, x1), ...]`` or ``{label: (x0, x1)}``; pairs of neighbouring inputs, all with the same pytree
            structure and shapes (one compilation serves every input).
        events: a :class:`ThresholdEvents`, :class:`HistogramEvents` or :class:`SearchEvents`, or a list of them
            (default: thresholds on the output itself).
        claimed_eps: the claimed ε (> 0, finite).
        claimed_delta: the claimed δ in ``[0, 1)``.
        n: runs per input (split between search and evaluation when searching).
        key: typed PRNG key.
        alpha: family-wise error: a mechanism satisfying the claim is flagged with probability ``<= alpha``.
        search: fraction of the runs used to pick the best ``n_best`` tests. Default: the ``split`` of a
            :class:`SearchEvents` if one is given or if there are several pairs (0.5), else 0 (one sample, every (pair,
            event, direction) tested with the Bonferroni split ``α/(2m)``).
        n_best: tests kept by the search and evaluated on the fresh sample (``m = n_best``).
        batch: runs per compiled, vectorised chunk.
        name: the name shown in the report.
        delta_float: float δ floor added to ``claimed_delta`` (default ``FLOAT32_DELTA_FLOOR = 2^-23``; pass
            ``jaxdp.privacy.accounting.floating.delta_float(kind, eps=..., d=...)`` for the mechanism's own).

    Returns:
        :class:`AuditReport` with the strongest bound over the family, its pair and event.

    Raises:
        TypeError: ``sample_fn`` is not callable or ``key`` is not a typed PRNG key.
        ValueError: an invalid claim, ``n``, ``alpha``, ``search`` or ``delta_float``, or a pair of identical or
            mismatched inputs.

    Example:
        >>> import jax
        >>> from jaxdp.privacy.mechanisms import laplace_mech
        >>> rep = audit_mechanism(lambda k, x: laplace_mech(k, x, 1.0, 1.0), [(0.0, 1.0)],
        ...                       claimed_eps=1.0, key=jax.random.key(0), n=100_000)
        >>> rep.violation, 0.5 < rep.eps_lower <= 1.0
        (False, True)
    """
    _check_claim(claimed_eps, claimed_delta, alpha, sample_fn)
    n = check_positive_int("n", n, minimum=2)
    check_positive_int("batch", batch)
    n_best = check_positive_int("n_best", n_best)
    _check_key(key)
    pairs = _normalise_neighbours(neighbours)
    families = [ThresholdEvents()] if events is None else (
        list(events) if isinstance(events, (list, tuple)) else [events])
    feats = _features_of(families)
    if search is None:
        splits = [ev.split for ev in families if isinstance(ev, SearchEvents)]
        search = splits[0] if splits else (0.5 if len(pairs) > 1 else 0.0)
    if not (isinstance(search, (int, float)) and (search == 0 or 0 < search < 1)):
        raise ValueError(f"search must be 0 or in (0, 1), got {search}")
    if delta_float is None:
        delta_float = FLOAT32_DELTA_FLOOR
    if not (isinstance(delta_float, (int, float, np.floating)) and 0 <= delta_float < 1):
        raise ValueError(f"delta_float must be a number in [0, 1), got {delta_float!r}")
    alpha, delta = float(alpha), float(claimed_delta) + float(delta_float)
    t_start = time.perf_counter()
    fn = _Features(tuple(f.fn for f in feats))

    # distinct inputs (pairs may share one): each gets its own keys
    inputs, pair_idx = _distinct_inputs(pairs)
    k_search, k_eval, k_pilot = jax.random.split(key, 3)
    k_search = jax.random.split(k_search, len(inputs))
    k_eval = jax.random.split(k_eval, len(inputs))
    k_pilot = jax.random.split(k_pilot, len(inputs))

    def sample(keys, m, which):
        return {i: draw_features(sample_fn, fn, keys[i], inputs[i], m, min(m, batch)) for i in which}

    labels = [("x0", "x1")] * len(pairs)

    if search > 0:
        n_a = max(1, int(round(n * search)))
        n_b = n - n_a
        if n_b < 1:
            raise ValueError(f"search={search} leaves no runs for the evaluation sample (n={n})")
        A = sample(k_search, n_a, range(len(inputs)))
        # rank every (pair, feature, event, direction) by the bound it would give at the final level
        level = bonferroni_level(alpha, n_best)
        scored = []
        for p, (i0, i1) in enumerate(pair_idx):
            for f, feat in enumerate(feats):
                ev, k0, k1 = _candidates(feat, A[i0][f], A[i1][f], True)
                e01 = eps_lower_bound(k0, n_a, k1, n_a, delta, level)
                e10 = eps_lower_bound(k1, n_a, k0, n_a, delta, level)
                for j, (nm, op, arg) in enumerate(ev):
                    scored.append((float(e01[j]), p, f, nm, (op, arg), 0))
                    scored.append((float(e10[j]), p, f, nm, (op, arg), 1))
        n_cand = len(scored)
        order = sorted(range(n_cand), key=lambda c: -scored[c][0] if np.isfinite(scored[c][0]) else np.inf)
        chosen, seen = [], set()
        for c in order:
            sc, p, f, nm, pred, d = scored[c]
            sig = (p, f, nm, d)
            if sig not in seen:
                seen.add(sig)
                chosen.append(scored[c])
            if len(chosen) == n_best:
                break
        m = len(chosen)
        level = bonferroni_level(alpha, m)
        B = sample(k_eval, n_b, sorted({i for c in chosen for i in pair_idx[c[1]]}))
        best = None
        for sc, p, f, nm, pred, d in chosen:
            i0, i1 = pair_idx[p]
            e0, e1 = int(_apply(pred, np.asarray(B[i0][f])).sum()), int(_apply(pred, np.asarray(B[i1][f])).sum())
            ka, kb = (e0, e1) if d == 0 else (e1, e0)
            evd, (lo, hi) = _evidence(nm, d, ka, n_b, kb, n_b, delta, level, claimed_eps, labels[p])
            if best is None or lo > best[0]:
                best = (lo, hi, evd, p)
        assert best is not None
        lo, hi, evd, p = best
        evd["search_sample"] = n_a
        n_eval, family = n_b, (f"search over {len(pairs)} pair(s) x {n_cand} (event, direction) candidates,"
                               f" best {m} evaluated on fresh runs")
    else:
        n_eval = n
        B = sample(k_eval, n, range(len(inputs)))
        tables = []
        pilots = [f.pilot for f in feats if f.kind == "stat" and f.thresholds is None]
        P = sample(k_pilot, min(max(pilots), n), range(len(inputs))) if pilots else {}
        for p, (i0, i1) in enumerate(pair_idx):
            for f, feat in enumerate(feats):
                if feat.kind == "stat" and feat.thresholds is None:
                    mp = min(feat.pilot, n)
                    pooled = np.concatenate([P[i0][f][:mp], P[i1][f][:mp]]).astype(np.float64)
                    feat = dataclasses.replace(feat, thresholds=tuple(_logit_quantiles(pooled, feat.n_thresholds)))
                ev, k0, k1 = _candidates(feat, B[i0][f], B[i1][f], False)
                tables.append((p, ev, k0, k1))
        m = 2 * sum(len(t[1]) for t in tables)
        n_cand = m
        level = bonferroni_level(alpha, m)
        best_t: Any = None
        for p, ev, k0, k1 in tables:
            eps_lo, i, d = _best([e[0] for e in ev], k0, k1, n, n, delta, level)
            if best_t is None or eps_lo > best_t[0]:
                best_t = (eps_lo, p, ev[i][0], d, k0[i], k1[i])
        _, p, nm, d, c0, c1 = best_t
        ka, kb = (c0, c1) if d == 0 else (c1, c0)
        evd, (lo, hi) = _evidence(nm, d, ka, n, kb, n, delta, level, claimed_eps, labels[p])
        kinds = sorted({"threshold" if f.kind == "stat" else "histogram" for f in feats})
        family = " + ".join(kinds) + " events" + (f" on {len(pairs)} pairs" if len(pairs) > 1 else "")
    eps_lower = max(lo, 0.0)
    resolution = float(clopper_pearson_upper(0, n_eval, level))
    return AuditReport(name=name, eps_lower=eps_lower, ci=(eps_lower, max(hi, 0.0)), claimed_eps=float(claimed_eps),
                       claimed_delta=float(claimed_delta), violation=eps_lower > claimed_eps, evidence=evd, n=n,
                       confidence=1.0 - alpha, n_events=m, family=family, seconds=time.perf_counter() - t_start,
                       delta_float=float(delta_float), alpha_per_bound=level, resolution=resolution,
                       pair=pairs[p][0] if len(pairs) > 1 else "", n_pairs=len(pairs), n_candidates=n_cand)


def audit(mechanism: Callable, x0, x1, *, claimed_eps: float, claimed_delta: float = 0.0, events=None,
          n: int = 100_000, key: jax.Array, confidence: float = DEFAULT_CONFIDENCE, batch: int = 1 << 16,
          name: str = "mechanism", delta_float: Optional[float] = None) -> AuditReport:
    """Audit ``mechanism`` on one pair of neighbours ``x0, x1``: :func:`audit_mechanism` with ``[(x0, x1)]``.

    Args:
        mechanism: jittable ``(key, x) -> output``.
        x0, x1: the two neighbouring inputs (same pytree structure and shapes).
        claimed_eps: the claimed ε (> 0, finite).
        claimed_delta: the claimed δ in ``[0, 1)``.
        events: a :class:`ThresholdEvents` (default), :class:`HistogramEvents` or :class:`SearchEvents`.
        n: runs per input.
        key: typed PRNG key.
        confidence: the probability that a mechanism satisfying the claim is reported as a violation is at most
            ``1 - confidence``.
        batch: runs per compiled, vectorised chunk.
        name: the name shown in the report.
        delta_float: float δ floor added to ``claimed_delta`` (default ``FLOAT32_DELTA_FLOOR = 2^-23``).

    Returns:
        The :class:`AuditReport`.

    Raises:
        TypeError: ``mechanism`` is not callable or ``events`` is not one of the three event families.
        ValueError: an invalid claim, ``confidence`` or ``n`` (see :func:`audit_mechanism`).

    Example::

        rep = audit(lambda k, x: laplace_mech(k, x, 1.0, 1.0), 0.0, 1.0, claimed_eps=1.0,
                    key=jax.random.key(0), n=200_000)
        assert not rep.violation
    """
    if not callable(mechanism):
        raise TypeError(f"mechanism must be a callable (key, x) -> output, got {type(mechanism).__name__}")
    check_probability("confidence", confidence, open_left=True, open_right=True)
    if events is not None and not isinstance(events, (ThresholdEvents, HistogramEvents, SearchEvents)):
        raise TypeError(f"events must be ThresholdEvents, HistogramEvents or SearchEvents, got {events!r}")
    return audit_mechanism(mechanism, [(x0, x1)], events, claimed_eps=claimed_eps, claimed_delta=claimed_delta, n=n,
                           key=key, alpha=1.0 - confidence, batch=batch, name=name, delta_float=delta_float)
