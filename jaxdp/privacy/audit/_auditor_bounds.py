"""One-sided Clopper–Pearson bounds, the ε lower bound of one test and the Bonferroni level of each bound
(re-exported by :mod:`jaxdp.privacy.audit.auditor` and :mod:`jaxdp.privacy.audit`)."""
from __future__ import annotations

import numpy as np
from scipy import stats


def clopper_pearson_lower(k, n, alpha):
    """One-sided lower confidence bound for a binomial proportion: ``P[p < lower] <= alpha``.

    Args:
        k: the number of successes (array-like; broadcasts with ``n``).
        n: the number of trials.
        alpha: the one-sided error level.

    Returns:
        The lower bound (float64 array; 0 where ``k = 0``).
    """
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
