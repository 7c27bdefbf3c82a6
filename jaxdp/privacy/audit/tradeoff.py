"""Trade-off curve bounds: ε(δ) at every δ and a μ-GDP lower bound from one set of attack scores.

A neighbouring pair ``(x_a, x_b)`` and a score ``s`` (a statistic of the output, or a learned
classifier as in :mod:`jaxdp.privacy.audit.learned`) define the threshold tests "say ``x_a`` when
``s(o) > t``". Their error rates

    α(t) = P[s(M(x_b)) > t]   (type I),        β(t) = P[s(M(x_a)) <= t]   (type II)

trace a trade-off curve, and (ε, δ)-DP is the statement that every test satisfies
``1 − β <= e^ε α + δ`` and ``1 − α <= e^ε β + δ`` (Wasserman–Zhou 2010; Kairouz, Oh,
Viswanath 2015). f-DP (Dong, Roth, Su, "Gaussian Differential Privacy", JRSS-B 2022) asks
``β >= f(α)`` for a trade-off function ``f``; μ-GDP is ``f = G_μ``, ``G_μ(α) = Φ(Φ⁻¹(1 − α) − μ)``,
the curve of the Gaussian mechanism ``N(0, 1)`` vs ``N(μ, 1)``.

**Simultaneous bounds.** From ``n`` fresh runs per input (never the runs that trained the
classifier or placed the thresholds) we bound ``α(t)`` from above and ``1 − β(t)`` from below at
every threshold ``t`` of a grid, all at once with probability at least ``1 − α_fw``:

* ``method="bonferroni"`` (default): the grid (``K`` thresholds) is fixed before the fresh runs
  are drawn; each of the ``2K`` one-sided Clopper–Pearson bounds is taken at ``α_fw/(2K)``. Tight in
  the tails, where ε at small δ lives.
* ``method="dkw"``: one-sided Dvoretzky–Kiefer–Wolfowitz bands with Massart's constant,
  ``sup_t (F̂(t) − F(t)) <= sqrt(ln(2/α_fw) / (2n))`` for each input's score distribution (each at
  ``α_fw/2``); valid at every threshold simultaneously, even ones read off the fresh runs, but
  additive, so weak for rare events.

**What is reported.** Every quantity derived from the simultaneous bounds holds jointly:

* ``eps_at(δ)``: the direct lower bound ``max_t max(ln((1 − β_hi − δ)/α_hi), ln((1 − α_hi − δ)/β_hi))``
  for any δ (no assumption on the mechanism);
* ``mu_lower``: a μ-GDP mechanism has ``β(t) >= G_μ(α(t)) >= G_μ(α_hi(t))``, so
  ``μ >= Φ⁻¹(1 − α_hi(t)) − Φ⁻¹(β_hi(t))`` for every ``t``; ``mu_lower`` is the largest of these:
  with confidence ``1 − α_fw`` the mechanism is not μ-GDP for any ``μ < mu_lower``;
* ``eps_gdp(δ)``: the ε(δ) of ``mu_lower``-GDP, ``δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``
  (Dong, Roth, Su, Cor. 2.13) inverted at δ. This lower-bounds the mechanism's ε(δ) **when its
  trade-off curve is a Gaussian one** (``G_μ*`` for some μ*, as for any Gaussian-noise mechanism:
  then ``mu_lower <= μ*`` and ε(δ) is increasing in μ). For other mechanisms it lower-bounds only
  the ε(δ) that a GDP analysis can certify, not their own (randomized response is μ-GDP for some
  μ, yet has finite ε at δ = 0). This is the estimate used by Nasr, Hayes, Steinke, Balle, Tramèr,
  Jagielski, Carlini, Terzis, "Tight Auditing of Differentially Private Machine Learning", USENIX
  Security 2023 (and Nasr, Song, Thakurta, Papernot, Carlini, "Adversary Instantiation: Lower Bounds
  for Differentially Private Machine Learning", IEEE S&P 2021, for the direct ε).

:func:`audit_tradeoff` runs the whole procedure on one neighbour pair and returns an
:class:`jaxdp.privacy.audit.AuditReport` whose ``tradeoff`` field holds the :class:`TradeoffBound`.
"""
from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ..accounting.floating import FLOAT32_DELTA_FLOOR
from ...core.validation import check_positive_int, check_probability
from .auditor import (
    DEFAULT_ALPHA, AuditReport, _check_claim, _check_key, _check_pair, _evidence, clopper_pearson_lower,
    clopper_pearson_upper,
)
from .learned import Logistic, MLP, Histogram, classifier_scores, draw_features, fit_classifier, _Feats

__all__ = ["TradeoffBound", "tradeoff_bound", "gdp_delta", "gdp_eps", "audit_tradeoff", "DELTAS"]

#: the δ values at which reports list ε(δ)
DELTAS = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2)


def gdp_delta(eps: float, mu: float) -> float:
    """δ(ε) of μ-GDP: ``Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)`` (Gaussian Differential Privacy, Cor. 2.13).

    Args:
        eps: the ε.
        mu: the GDP parameter μ.

    Returns:
        δ(ε) (0 for ``μ <= 0``, 1 for ``μ = inf``).
    """
    from scipy import stats

    if mu <= 0:
        return 0.0
    if math.isinf(mu):
        return 1.0
    a = stats.norm.logcdf(-eps / mu + mu / 2)
    b = eps + stats.norm.logcdf(-eps / mu - mu / 2)
    return float(max(math.exp(a) - math.exp(b), 0.0)) if a > b else 0.0


def gdp_eps(delta: float, mu: float) -> float:
    """The smallest ε with ``gdp_delta(ε, μ) <= delta`` (``inf`` for δ = 0 and μ > 0; 0 for μ = 0).

    Args:
        delta: the δ.
        mu: the GDP parameter μ.

    Returns:
        That ε.
    """
    from scipy import optimize

    if mu <= 0:
        return 0.0
    if delta <= 0:
        return math.inf
    if gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while gdp_delta(hi, mu) > delta:
        hi *= 2.0
        if hi > 1e6:
            return math.inf
    return float(optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-10))


@dataclasses.dataclass
class TradeoffBound:
    """Simultaneous confidence bounds on a trade-off curve (see the module docstring).

    ``fpr_hi[i] >= α(t_i) = P[s(M(x_b)) > t_i]`` and ``tpr_lo[i] <= 1 − β(t_i) = P[s(M(x_a)) > t_i]`` for every ``i``,
    jointly with probability at least ``1 − alpha``.

    Attributes:
        thresholds: the thresholds ``t_i`` (sorted, distinct).
        fpr_hi: the upper bounds on ``α(t_i)``.
        tpr_lo: the lower bounds on ``1 − β(t_i)``.
        alpha: the joint error level.
        method: ``"bonferroni"`` or ``"dkw"`` (:func:`tradeoff_bound`).
        n_a: the runs on ``x_a``.
        n_b: the runs on ``x_b``.
    """

    thresholds: np.ndarray
    fpr_hi: np.ndarray
    tpr_lo: np.ndarray
    alpha: float
    method: str
    n_a: int
    n_b: int

    @property
    def fnr_hi(self) -> np.ndarray:
        """Upper bounds on β(t) = P[s(M(x_a)) <= t]."""
        return 1.0 - self.tpr_lo

    def eps_curve(self, delta: float) -> np.ndarray:
        """Per threshold: the larger of the two directions' bounds ``ln((P_lo − δ)/P_hi)``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            e1 = np.where(self.tpr_lo - delta > 0, np.log(np.maximum(self.tpr_lo - delta, 1e-300) / self.fpr_hi),
                          -np.inf)
            tnr_lo = 1.0 - self.fpr_hi
            e2 = np.where(tnr_lo - delta > 0, np.log(np.maximum(tnr_lo - delta, 1e-300) / self.fnr_hi), -np.inf)
        return np.maximum(e1, e2)

    def eps_at(self, delta: float) -> float:
        """Direct lower bound on ε(δ) (no assumption on the mechanism); 0 when nothing is shown."""
        c = self.eps_curve(float(delta))
        return float(max(np.max(c), 0.0)) if c.size else 0.0

    def mu_curve(self) -> np.ndarray:
        from scipy import stats

        with np.errstate(divide="ignore", invalid="ignore"):
            return stats.norm.isf(self.fpr_hi) - stats.norm.ppf(self.fnr_hi)

    @property
    def mu_lower(self) -> float:
        """Lower bound on μ of any μ-GDP guarantee of the mechanism (0 if nothing is shown)."""
        m = self.mu_curve()
        m = m[np.isfinite(m)]
        return float(max(np.max(m), 0.0)) if m.size else 0.0

    def eps_gdp(self, delta: float) -> float:
        """ε(δ) of ``mu_lower``-GDP: a lower bound on ε(δ) for mechanisms with a Gaussian trade-off curve."""
        return gdp_eps(float(delta), self.mu_lower)

    def table(self, deltas: Sequence[float] = DELTAS) -> list:
        return [dict(delta=d, eps_direct=self.eps_at(d), eps_gdp=self.eps_gdp(d)) for d in deltas]


def _dkw(n: int, alpha: float) -> float:
    """One-sided DKW band half-width with Massart's constant at level ``alpha`` (needs ``alpha <= 1/2``)."""
    return math.sqrt(math.log(1.0 / alpha) / (2.0 * n))


def tradeoff_bound(scores_a, scores_b, *, alpha: float, thresholds=None, method: str = "bonferroni",
                   max_thresholds: int = 4096) -> TradeoffBound:
    """Simultaneous bounds on the trade-off curve of the tests ``{s > t}`` from FRESH scores.

    Args:
        scores_a: scores of runs on the numerator input ``x_a`` (large: ``x_a``).
        scores_b: scores of runs on ``x_b``.
        alpha: the joint error level.
        thresholds: the thresholds ``t`` (``method="bonferroni"``: required, fixed independently of these scores, e.g.
            quantiles of a selection sample).
        method: ``"bonferroni"``: ``2K`` Clopper–Pearson bounds at ``alpha/(2K)``. ``"dkw"``: any thresholds, DKW bands
            at ``alpha/2`` per input.
        max_thresholds: ``method="dkw"`` without ``thresholds``: up to this many quantiles of the pooled scores.

    Returns:
        The :class:`TradeoffBound`.

    Raises:
        ValueError: no scores, ``method="bonferroni"`` without thresholds, or an unknown ``method``.
    """
    check_probability("alpha", alpha, open_left=True, open_right=True)
    sa, sb = np.sort(np.asarray(scores_a, np.float64)), np.sort(np.asarray(scores_b, np.float64))
    na, nb = sa.size, sb.size
    if na < 1 or nb < 1:
        raise ValueError("tradeoff_bound needs scores of at least one run per input")
    if method == "bonferroni":
        if thresholds is None:
            raise ValueError("method='bonferroni' needs thresholds fixed before the fresh scores were drawn")
        t = np.unique(np.asarray(thresholds, np.float64))
        a = alpha / (2.0 * t.size)
        ka = na - np.searchsorted(sa, t, side="right")
        kb = nb - np.searchsorted(sb, t, side="right")
        return TradeoffBound(t, clopper_pearson_upper(kb, nb, a), clopper_pearson_lower(ka, na, a), float(alpha),
                             method, na, nb)
    if method == "dkw":
        if alpha > 1.0:
            raise ValueError("alpha must be <= 1")
        if thresholds is None:
            pooled = np.concatenate([sa, sb])
            t = np.unique(np.quantile(pooled, np.linspace(0, 1, max_thresholds), method="inverted_cdf"))
        else:
            t = np.unique(np.asarray(thresholds, np.float64))
        ea, eb = _dkw(na, alpha / 2.0), _dkw(nb, alpha / 2.0)
        pa = (na - np.searchsorted(sa, t, side="right")) / na
        pb = (nb - np.searchsorted(sb, t, side="right")) / nb
        return TradeoffBound(t, np.minimum(pb + eb, 1.0), np.maximum(pa - ea, 0.0), float(alpha), method, na, nb)
    raise ValueError(f"method must be 'bonferroni' or 'dkw', got {method!r}")


def _grid(sa, sb, k: int) -> np.ndarray:
    """``k`` thresholds at quantiles of the pooled selection scores, dense in both tails (logit-spaced)."""
    pooled = np.concatenate([sa, sb])
    lv = np.unique(np.concatenate([1.0 / (1.0 + np.exp(-np.linspace(-12, 12, k - k // 4))),
                                   np.linspace(0.02, 0.98, k // 4)]))
    return np.unique(np.quantile(pooled, lv, method="inverted_cdf"))


def audit_tradeoff(sample_fn: Callable, x0, x1, *, claimed_eps: float, claimed_delta: float = 0.0, key: jax.Array,
                   statistic: Optional[Callable] = None, classifier=None, n_train: int = 100_000,
                   n_select: int = 100_000, n_eval: int = 1_000_000, n_thresholds: int = 64,
                   method: str = "bonferroni", gdp: bool = False, deltas: Sequence[float] = DELTAS,
                   alpha: float = DEFAULT_ALPHA, batch: int = 1 << 16, name: str = "mechanism",
                   delta_float: Optional[float] = None) -> AuditReport:
    """Audit ``(claimed_eps, claimed_delta)`` through simultaneous trade-off-curve bounds on one pair.

    The score is ``statistic(out)`` (a jittable scalar statistic; no training) or a ``classifier`` (:class:`Logistic` by
    default, trained on ``n_train`` runs per input). A selection sample of ``n_select`` runs per input orients the score
    and places ``n_thresholds`` thresholds; the bounds come from ``n_eval`` fresh runs per input (:func:`tradeoff_bound`
    with ``method``).

    The report's ``eps_lower`` is the direct bound ``eps_at(claimed_delta + delta_float)``, or, with ``gdp=True`` (only
    for mechanisms whose trade-off curve is Gaussian, e.g. Gaussian noise added to a query), the larger of it and
    ``eps_gdp(claimed_delta + delta_float)``. ``report.tradeoff`` holds the :class:`TradeoffBound`; the printed report
    lists ε(δ) at ``deltas`` both ways and μ.

    Args:
        sample_fn: jittable ``(key, x) -> output``.
        x0, x1: the two neighbouring inputs.
        claimed_eps: the claimed ε (> 0, finite).
        claimed_delta: the claimed δ in ``[0, 1)``.
        key: typed PRNG key.
        statistic: jittable ``out -> scalar`` score (used instead of ``classifier`` when given).
        classifier: :class:`Logistic` (default), :class:`MLP` or :class:`Histogram`.
        n_train: training runs per input (classifier only).
        n_select: selection runs per input.
        n_eval: fresh runs per input for the bounds.
        n_thresholds: the number of thresholds (>= 4).
        method: ``"bonferroni"`` or ``"dkw"``.
        gdp: also use the μ-GDP fit for the verdict.
        deltas: the δ values at which the report lists ε(δ).
        alpha: the joint error: a mechanism satisfying the claim is flagged with probability at most α.
        batch: runs per compiled, vectorised chunk.
        name: the name shown in the report.
        delta_float: float δ floor added to ``claimed_delta`` (default ``2^-23``).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.

    Raises:
        TypeError: ``key`` is not a typed PRNG key or a classifier of another type.
        ValueError: an invalid claim, sample size, ``n_thresholds``, ``alpha`` or ``method``, or mismatched inputs.
    """
    _check_claim(claimed_eps, claimed_delta, alpha)
    n_select = check_positive_int("n_select", n_select, minimum=2)
    n_eval = check_positive_int("n_eval", n_eval, minimum=2)
    n_thresholds = check_positive_int("n_thresholds", n_thresholds, minimum=4)
    if method not in ("bonferroni", "dkw"):
        raise ValueError(f"method must be 'bonferroni' or 'dkw', got {method!r}")
    _check_key(key)
    _check_pair(x0, x1)
    if delta_float is None:
        delta_float = FLOAT32_DELTA_FLOOR
    delta = float(claimed_delta) + float(delta_float)
    t0 = time.perf_counter()
    batch = min(int(batch), max(n_select, n_eval))      # one batch shape: one compilation of the runner
    k_train, k_sel, k_eval, k_fit = jax.random.split(key, 4)
    if statistic is not None:
        spec, params = Logistic(features=_Stat(statistic)), None
    else:
        spec = classifier if classifier is not None else Logistic()
        if not isinstance(spec, (Logistic, MLP, Histogram)):
            raise TypeError(f"classifier must be Logistic, MLP or Histogram, got {spec!r}")
        n_train = check_positive_int("n_train", n_train, minimum=2)
        f = _Feats((spec.features,))
        (a,) = draw_features(sample_fn, f, jax.random.fold_in(k_train, 0), x0, n_train, batch)
        (b,) = draw_features(sample_fn, f, jax.random.fold_in(k_train, 1), x1, n_train, batch)
        params = fit_classifier(spec, a, b, k_fit)

    def scores(k, x, n):
        (F,) = draw_features(sample_fn, _Feats((spec.features,)), k, x, n, batch)
        if params is None:
            return np.asarray(F, np.float64).reshape(n)
        return classifier_scores(spec, params, F).astype(np.float64)

    s0, s1 = scores(jax.random.fold_in(k_sel, 0), x0, n_select), scores(jax.random.fold_in(k_sel, 1), x1, n_select)
    sign = 1.0 if np.median(s0) >= np.median(s1) else -1.0
    thr = _grid(sign * s0, sign * s1, n_thresholds)
    e0 = sign * scores(jax.random.fold_in(k_eval, 0), x0, n_eval)
    e1 = sign * scores(jax.random.fold_in(k_eval, 1), x1, n_eval)
    tb = tradeoff_bound(e0, e1, alpha=alpha, thresholds=thr if method == "bonferroni" else None, method=method)
    direct = tb.eps_at(delta)
    eps_g = tb.eps_gdp(delta) if gdp else 0.0
    eps_lower = max(direct, eps_g if math.isfinite(eps_g) else 0.0)
    # evidence: the threshold test that gives the direct bound
    curve = tb.eps_curve(delta)
    i = int(np.argmax(curve)) if curve.size else 0
    t_i = float(tb.thresholds[i]) if curve.size else float("nan")
    ka = int(np.sum(e0 > t_i))
    kb = int(np.sum(e1 > t_i))
    lvl = alpha / (2.0 * tb.thresholds.size) if method == "bonferroni" else alpha / 2.0
    up = bool(np.log(max(tb.tpr_lo[i] - delta, 1e-300) / tb.fpr_hi[i]) >= curve[i] - 1e-12) if curve.size else True
    stat = "s" if statistic is None else "statistic"
    if up:
        evd, (_, hi) = _evidence(f"{'' if sign > 0 else '-'}{stat} > {t_i:.6g}", 0, ka, n_eval, kb, n_eval, delta,
                                 lvl, claimed_eps)
    else:
        evd, (_, hi) = _evidence(f"{'' if sign > 0 else '-'}{stat} <= {t_i:.6g}", 1, n_eval - kb, n_eval,
                                 n_eval - ka, n_eval, delta, lvl, claimed_eps)
    evd.update(mu_lower=tb.mu_lower, eps_direct=direct, eps_gdp=eps_g if gdp else None, method=method,
               n_thresholds=int(tb.thresholds.size))
    lines = [f"  trade-off bound ({method}, {tb.thresholds.size} thresholds, all jointly at confidence {1 - alpha:.10g}):"
             f" mu-GDP lower bound {tb.mu_lower:.4f}"]
    for row in tb.table(deltas):
        g = row["eps_gdp"]
        lines.append(f"    delta={row['delta']:<8.3g} eps(delta) >= {row['eps_direct']:.4f} (direct)"
                     f"   {g:.4f} (mu-GDP fit{'' if gdp else ', not used for the verdict'})")
    if gdp and eps_g > direct:
        lines.append(f"  verdict from the mu-GDP fit: eps({delta:.3g}) >= {eps_g:.4f} of {tb.mu_lower:.4f}-GDP (valid for a"
                     " Gaussian trade-off curve, e.g. Gaussian noise; the direct bound above needs no assumption)")
    family = (f"trade-off curve ({'statistic' if statistic is not None else spec.name} score, {method},"
              f" {tb.thresholds.size} thresholds{', mu-GDP fit' if gdp else ''})")
    rep = AuditReport(name=name, eps_lower=eps_lower, ci=(direct, max(hi, direct)), claimed_eps=float(claimed_eps),
                      claimed_delta=float(claimed_delta), violation=eps_lower > claimed_eps, evidence=evd, n=n_eval,
                      confidence=1.0 - alpha, n_events=int(tb.thresholds.size), family=family,
                      seconds=time.perf_counter() - t0, delta_float=float(delta_float), alpha_per_bound=lvl,
                      resolution=float(clopper_pearson_upper(0, n_eval, lvl)), notes=tuple(lines), tradeoff=tb)
    return rep


@dataclasses.dataclass(frozen=True)
class _Stat:
    fn: Callable

    def __call__(self, out):
        return jnp.reshape(jnp.asarray(self.fn(out), jnp.float32), (1,))
