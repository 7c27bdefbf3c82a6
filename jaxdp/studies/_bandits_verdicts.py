"""Verdicts of the ``bandits`` study: each fitted curve of its kept run against the bound our docs state for
the learner (docs/algorithms/bandits.md), for the generated verdict table of docs/results/bandits.md. Split from
:mod:`jaxdp.studies.bandits`, which re-exports these names."""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Optional, cast

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

# --------------------------------------------------------------------------- verdicts

#: the claimed exponent of a T or K cell: the log-log slope of its bound (the kept ``theory`` column, the bounds of
#: :mod:`jaxdp.bandits.theory`) over the fitted range, the "slope of the bound" of docs/algorithms/bandits.md#study
BOUND_SLOPE = "slope of the bound"
#: each learner's bound as docs/algorithms/bandits.md states it
BOUNDS = {
    "ucb1": "Σ 8 ln T/Δ_i + (1 + π²/3) Σ Δ_i (Auer, Cesa-Bianchi & Fischer 2002, Thm 1)",
    "thompson": "Lai–Robbins rate Σ Δ_i ln T/kl(μ_i, μ*), attained asymptotically (Agrawal & Goyal 2012)",
    "exp3": "2√(e−1)·√(TK ln K) (Auer, Cesa-Bianchi, Freund & Schapire 2002, Cor. 3.2)",
    "exp3_ix": "(3/√2)·√(TK ln K) (Neu 2015)",
    "dp_ucb_tree": "O(Σ ln T/Δ_i + K H ln T/ε) while the radii hold (Tossou & Dimitrakakis 2016)",
    "dp_se": "O(Σ ln T/Δ_a + K ln T/ε) on the good event (Sajed & Sheffet 2019)",
    "dp_exp3": "2√(τTK ln K (2 + B + 2b²)), b = 1/ε, B = b ln T (DP-EXP3-Lap, Tossou & Dimitrakakis 2017)",
    "dp_exp3_batched": "2√(τTK ln K (2 + B + 2b²)), τ = ⌈1/ε⌉, b = 1/(ετ) (Asi, Raman & Talwar 2025)",
    "ldp_ucb": "O(Σ (1 + 1/ε²) ln T/Δ_i) (Ren, Zhou, Lui & Zhang 2020)",
}
#: learners whose bound is for stationary stochastic arms (none applies on the switching instance)
STOCHASTIC = ("ucb1", "thompson", "dp_ucb_tree", "dp_se", "ldp_ucb")
_NOT_STATED = ("", math.nan, "")
#: (sweep, learner[, instance]) -> (claim text, claimed exponent, kind); the exponent :data:`BOUND_SLOPE` is read
#: from the bound of each cell, a pair is the range of a ``between`` claim; ``None``: no bound applies
CLAIMS: dict = {
    **{("T", ln): (BOUNDS[ln], BOUND_SLOPE, "at_most") for ln in BOUNDS},
    **{("K", ln): (BOUNDS[ln], BOUND_SLOPE, "at_most") for ln in BOUNDS},
    **{("T", ln, "switch"): None for ln in STOCHASTIC},
    ("T", "dp_se", "switch"): ("linear: successive elimination drops the late arm in its first epoch, regret ≈ T/6",
                               1.0, "equals"),
    ("eps", "dp_ucb_tree"): ("O(Σ ln T/Δ_i + K H ln T/ε): an ε-free term plus one in 1/ε", (-1.0, 0.0), "between"),
    ("eps", "dp_se"): ("O(Σ ln T/Δ_a + K ln T/ε): an ε-free term plus one in 1/ε (Sajed & Sheffet 2019)",
                       (-1.0, 0.0), "between"),
    ("eps", "dp_exp3"): ("2√(τTK ln K (2 + B + 2b²)), b = 1/ε, B = b ln T: terms in ε⁰, ε^−1/2, ε^−1",
                         (-1.0, 0.0), "between"),
    ("eps", "dp_exp3_batched"): ("τ = ⌈1/ε⌉: ε^−1/2 for ε < 1 (Asi, Raman & Talwar 2025), the per-round bound "
                                 "for ε ≥ 1", (-1.0, 0.0), "between"),
    ("eps", "ldp_ucb"): ("O(Σ (1 + 1/ε²) ln T/Δ_i): an ε-free term plus one in 1/ε²", (-2.0, 0.0), "between"),
}
#: the section of the results page that explains every miss
MISS_LINK = "#misses"
#: the experiment column of the verdict rows, per sweep
EXPERIMENTS = {"T": "regret vs T", "eps": "regret vs ε", "K": "regret vs K"}


def _x_label(sweep: str, v) -> str:
    from .analysis import _pow2

    return {"T": lambda: f"T = {_pow2(v)}", "eps": lambda: f"ε = {float(v):g}", "K": lambda: f"K = {int(v)}"}[sweep]()


def late_arm_cost(K: int, T: int) -> float:
    """The pseudo-regret of a learner that never plays the switching instance's best fixed arm: that arm's total
    mean reward over the ``T`` rounds less the best other arm's (:func:`switch_params`).

    Args:
        K: the number of arms.
        T: the horizon.

    Returns:
        The linear cost (``T/2 − ⌊T/3⌋`` for the late arm's 0-then-1 rewards against Ber(1/2)).
    """
    from .bandits import switch_params

    before, after, s = switch_params(K, T)
    gain = s * before + (T - s) * after
    best = int(np.argmax(gain))
    return float(gain[best] - np.delete(gain, best).max())


def _trivial_cap(pts, gap: float) -> np.ndarray:
    """Which points' bound is a trivial cap: ``T·max Δ`` of a stochastic instance (the index policies' bounds are
    ``min(·, T·max Δ)``) or ``T`` (DP-EXP3's bound is ``min(·, T)``)."""
    from .bandits import instance_means

    out = []
    for p in pts.itertuples(index=False):
        caps = [float(p.T)]
        if p.instance != "switch":
            mu = instance_means(p.instance, int(p.K), gap)
            caps.append(float(p.T) * float((mu.max() - mu).max()))
        out.append(any(np.isclose(p.theory, c, rtol=1e-9, atol=0.0) for c in caps))
    return np.asarray(out, bool)


def _miss_reason(r, pts, kind: str, claimed: float) -> str:
    """Why a claimed cell misses, from its fitted points: a curve rising toward its bound, or a linear curve plus a
    slower remainder."""
    reg = pts["regret_mean"].to_numpy(float)
    th = pts["theory"].to_numpy(float)
    if kind == "at_most" and len(pts) >= 2 and np.isfinite(th).all() and (th > 0).all():
        ratio = reg / th
        if (ratio < 1).all() and ratio[-1] > ratio[0]:
            if r.learner == "thompson":   # its reference is the asymptotic rate, not a finite-T bound
                return (f"below the rate at every fitted point but rising toward it (regret/rate {ratio[0]:.2f} → "
                        f"{ratio[-1]:.2f}): the rate is attained asymptotically, approached from below")
            return (f"below its bound at every fitted point but rising toward it (regret/bound {ratio[0]:.2f} → "
                    f"{ratio[-1]:.2f}): a bound caps the value, not the local slope")
    if kind == "equals" and claimed == 1.0 and r.instance == "switch" and r.slope < 1 and len(pts) >= 2:
        lin = np.array([late_arm_cost(int(k), int(t)) for k, t in zip(pts["K"], pts["T"])])
        rest = reg - lin
        if (rest > 0).all() and (lin > 0).all():
            return (f"the late arm's linear cost T/2 − ⌊T/3⌋ plus a remainder that grows more slowly ({rest[0]:,.0f} → "
                    f"{rest[-1]:,.0f} over the fitted T), so the fitted slope is below 1; regret/cost = "
                    f"{reg[-1] / lin[-1]:.3f} at {_x_label('T', pts['T'].iloc[-1])}")
    return "the measured slope lies outside the claim"


def verdicts(slopes, summary, gap: Optional[float] = None) -> "pd.DataFrame":
    """One verdict per fitted cell of a ``slopes`` table, against the bounds of docs/algorithms/bandits.md (:data:`CLAIMS`).

    In the T and K sweeps the claimed exponent is the slope of the cell's bound over the fitted range, an upper-bound
    exponent (``at_most``: holds unless the whole interval lies above it); a cell is "not tested" where that bound is
    a trivial cap (``T·max Δ`` or ``T``) at a fitted point (its slope is then not the theorem's rate), where no bound
    applies (a stochastic bound on the switching instance), where a fitted mean is not positive (no log-log slope) or
    where the curve has no spread over seeds. DP-SE on the switching instance is claimed linear (slope 1). In the ε
    sweep the bounds are sums of an ε-free term and terms in 1/ε (LDP-UCB: 1/ε²): the slope lies ``between`` their
    exponents.

    Args:
        slopes: one row per fitted curve: ``sweep`` (``"T"``, ``"eps"`` or ``"K"``), ``learner``, ``instance``,
            ``x_min``, ``x_max`` (the fitted range), ``slope``, ``slope_lo``, ``slope_hi``, ``theory_slope`` (the
            bound's slope over the range) and optionally ``n_seeds`` (as in ``slopes.csv``).
        summary: one row per grid point: ``sweep``, ``learner``, ``instance``, ``K``, ``T``, ``eps``, ``n_seeds``,
            ``regret_mean`` and ``theory`` (the bound), as in ``summary.csv``.
        gap: the best arm's lead on the ``gap`` instance (the K sweep's trivial cap ``T·gap``).

    Returns:
        The verdict rows (columns of :func:`jaxdp.studies.analysis.verdict_table`, with ``claimed_hi`` for the
        ``between`` claims).
    """
    import pandas as pd

    from .analysis import slope_verdict
    from .bandits import DEFAULTS, LABELS

    gap = float(cast(float, DEFAULTS["gap"])) if gap is None else float(gap)

    rows = []
    for r in slopes.itertuples(index=False):
        x = r.sweep
        pts = summary[(summary["sweep"] == x) & (summary["learner"] == r.learner) & (summary["instance"] == r.instance)]
        pts = pts[(pts[x] >= r.x_min) & (pts[x] <= r.x_max)].sort_values(x)
        n = float(getattr(r, "n_seeds", math.nan))
        n_seeds = int(n) if np.isfinite(n) else (int(pts["n_seeds"].min()) if len(pts) else 0)
        row = dict(experiment=EXPERIMENTS[x], cell=f"{LABELS[r.learner]}, {r.instance}", slope=r.slope,
                   slope_lo=r.slope_lo, slope_hi=r.slope_hi, n_seeds=n_seeds, claimed_hi=math.nan, reason="", link="")
        key = (x, r.learner, r.instance)
        claim = CLAIMS[key] if key in CLAIMS else CLAIMS.get(key[:2], _NOT_STATED)
        m = len(pts)
        nonpos = int((pts["regret_mean"] <= 0).sum())
        below = f"pseudo-regret ≤ 0 at {nonpos} of the {m} fitted points (below the best fixed arm)"
        if not np.isfinite(r.slope):   # no point estimate: the bootstrap's interval is not shown either
            row.update(slope_lo=math.nan, slope_hi=math.nan)
        if claim is None:
            rows.append(dict(row, claim="no bound applies", claimed=math.nan, kind="equals", verdict="not tested",
                             reason="the learner's bound is for stationary stochastic arms, not the oblivious "
                                    "switching instance" + (f"; {below}" if nonpos else "")))
            continue
        if claim is _NOT_STATED:
            rows.append(dict(row, claim="no exponent stated", claimed=math.nan, kind="equals", verdict="not tested",
                             reason="our docs state no bound for this learner here"))
            continue
        text, exp, kind = claim
        lo_c, hi_c = (exp if kind == "between" else (r.theory_slope if exp == BOUND_SLOPE else exp, math.nan))
        row = dict(row, claim=text, claimed=float(lo_c), kind=kind, claimed_hi=float(hi_c))
        capped = _trivial_cap(pts, gap) if exp == BOUND_SLOPE else np.zeros(m, bool)
        if not np.isfinite(r.slope):
            rows.append(dict(row, verdict="not tested", reason=f"{below}: no log-log slope"))
        elif nonpos:
            rows.append(dict(row, verdict="not tested",
                             reason=f"{below}: the slope is fitted on the other {m - nonpos} only"))
        elif not (r.slope_hi - r.slope_lo > 1e-9 * max(1.0, abs(r.slope))):
            rows.append(dict(row, verdict="not tested", reason="no spread over seeds: no sampling interval"))
        elif capped.any():
            at = ", ".join(_x_label(x, v) for v in pts[x][capped])
            rows.append(dict(row, verdict="not tested",
                             reason=f"the bound is a trivial cap (T·max Δ or T) at {int(capped.sum())} of the {m} fitted "
                                    f"points ({at}), so its slope is not the theorem's rate there"))
        elif not np.isfinite(lo_c):
            rows.append(dict(row, verdict="not tested", reason="no bound value over the fitted range"))
        else:
            v = slope_verdict(r.slope_lo, r.slope_hi, float(lo_c), kind, float(hi_c))
            if v == "misses":
                row.update(reason=_miss_reason(r, pts, kind, float(lo_c)), link=MISS_LINK)
            rows.append(dict(row, verdict=v))
    return pd.DataFrame(rows)
