"""Claims as data and the one rubric that turns a measurement into a verdict.

A study states what its learners are claimed to do as :class:`Claim` records (what is claimed and where, of
which kind, with which tolerance); :func:`judge` compares one measurement with one claim. Every study's
verdict table is built from these, so a verdict means the same thing on every results page:

* **holds**: the measurement's 95% interval lies within the claim's stated tolerance;
* **consistent, unresolved**: the interval contains the claim but reaches beyond its tolerance; the reason says
  how many seeds per point would resolve it, one way or the other, if the estimate stayed where it is (a
  bootstrap half-width shrinks as ``1/√S``);
* **misses**: the interval excludes the claim;
* **not tested**: the measurement cannot test this claim (no spread over seeds, no finite value, or a fitted
  range too narrow for a rate), and the reason says why.

Each kind of claim has its test:

* ``"rate"``: an asymptotic exponent, tested by the log-log slope over a range of at least ``min_decades``
  decades of its variable (a slope over a factor of 4 is not a rate);
* ``"at_most_rate"`` / ``"at_least_rate"``: an exponent without a constant that bounds the growth from one side
  (misses only when the whole interval lies beyond it);
* ``"between_rate"``: an exponent between two, ``value`` and ``value_hi`` (a sum of two power laws, whose slope
  moves from one to the other over the range): the two one-sided tests at once (misses when the whole interval
  lies beyond either end, holds when it lies within the range widened by the tolerance at both ends);
* ``"bound"``: an upper bound with its constant, tested by the ratio measured / bound at every point of the
  range (holds when every ratio's upper end is at most ``1 + tolerance``, misses when one ratio's lower end
  exceeds 1);
* ``"equality"``: two quantities claimed equal, tested by their difference (claim 0);
* a lower bound with its constant (measured ≥ bound) is a ``"bound"`` on the inverse ratio bound / measured
  (:func:`judge_curve` with ``lower``);
* a paired order (one learner ahead of another, or the two level) is tested on the seed-paired ratio of their
  means by where its interval lies against 1 (:func:`judge_order`).

One curve's row is :func:`judge_curve` (whatever its claim's kind); a table of fits is :func:`judge_fits` (one
:func:`judge_curve` per fit, curves that are one piece of evidence sharing a row). A claim may also carry, as data,
what a fitted curve needs before its slope can be judged (:func:`judge_curve`): the ``scale`` it is stated up to
(an order "free of T" up to a T-dependent scale), the ``regime`` it is derived for (below it, not tested), why the
grid cannot test it at all (``untested``), and what a slope beyond it means (``beyond``, a template filled with the
curve's numbers).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .analysis import VERDICTS as ALL_VERDICTS, _pow2, fmt_num, loglog_slope, seeds_to_resolve

__all__ = ["Claim", "Measurement", "Verdict", "judge", "KINDS", "VERDICTS", "seeds_to_resolve",
           "verdict_row", "untested_row", "tally", "judge_curve", "judge_fits", "fit_points", "fill", "sci",
           "zero_mean_checks", "ORDERS", "judge_order", "theory_curves"]

KINDS = ("rate", "at_most_rate", "at_least_rate", "between_rate", "bound", "equality")
VERDICTS = ("holds", "consistent, unresolved", "misses", "not tested")


@dataclasses.dataclass(frozen=True)
class Claim:
    """One claim of a study, as data.

    Attributes:
        text: what is claimed and where it is stated (a paper and theorem, or a docs page).
        kind: one of :data:`KINDS` (module docstring); default ``"at_most_rate"``, with ``value`` 0: the quantity is
            claimed free of the fitted variable (it does not grow with it).
        value: the claimed exponent (rates; default 0; the lower end for ``"between_rate"``), the claimed ratio's
            cap 1 (``"bound"``) or 0 (``"equality"``).
        tolerance: the half-width within which the claim counts as resolved (the same units as ``value``; default
            0.05).
        min_decades: the smallest span, in decades of the fitted variable, over which a slope tests a rate.
        link: where a miss is explained (an anchor of the results page).
        scale: ``[name, expression]``: the claim is an order up to this scale, an expression in the columns of a
            curve's per-point table (:func:`judge_curve` judges the slope of the measurement divided by it).
        regime: ``[rule, expression]`` or ``[rule, expression, note]``: the claim is derived for the fitted variable
            at least this (per point); the note, a template (:func:`fill`), ends the reason of a curve below it.
        untested: why no grid of the study can test the claim (its curves are not tested, with this reason).
        beyond: a template (:func:`fill`) saying what a slope beyond the claim means, with the curve's numbers.
        value_hi: the upper end of a ``"between_rate"`` claim (at least ``value``; unused by the other kinds).
    """

    text: str
    kind: str = "at_most_rate"
    value: float = 0.0
    tolerance: float = 0.05
    min_decades: float = 2.0
    link: str = ""
    scale: Sequence[str] = ()
    regime: Sequence[str] = ()
    untested: str = ""
    beyond: str = ""
    value_hi: float = math.nan

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if not (math.isfinite(self.tolerance) and self.tolerance > 0):
            raise ValueError(f"tolerance must be positive and finite, got {self.tolerance!r}")
        if self.kind == "between_rate" and self.value_hi < self.value:
            raise ValueError(f"value_hi must be at least value ({self.value!r}), got {self.value_hi!r}")


@dataclasses.dataclass(frozen=True)
class Measurement:
    """What a run measured for one cell, in the form its claim's kind is tested on.

    Attributes:
        estimate: the point estimate (a slope, or for ``"bound"`` the largest ratio measured / bound).
        lo, hi: its 95% interval (for ``"bound"``: the largest lower end and the largest upper end of the
            per-point ratio intervals, so that ``lo > 1`` means some point lies above its bound).
        n_seeds: the seeds per point behind it.
        decades: the span of the fitted variable in decades (``log10(x_max/x_min)``; rates only).
        ratios_lo: for ``"bound"``: the lower ends of the per-point ratio intervals (a miss needs one above 1).
    """

    estimate: float
    lo: float
    hi: float
    n_seeds: int
    decades: float = math.nan
    ratios_lo: Sequence[float] = ()

    @classmethod
    def of_fit(cls, fit, shift: float = 0.0) -> "Measurement":
        """The measurement of a fitted slope, less ``shift`` (a deterministic slope taken off the estimate and both
        ends of its interval).

        Args:
            fit: a row of :func:`~jaxdp.studies.analysis.fit_slopes` (``slope``, ``slope_lo``, ``slope_hi``,
                ``n_seeds``, ``x_min``, ``x_max``).
            shift: the slope subtracted.

        Returns:
            The slope and its interval over ``log10(x_max / x_min)`` decades.
        """
        return cls(float(fit.slope) - shift, float(fit.slope_lo) - shift, float(fit.slope_hi) - shift,
                   int(fit.n_seeds), decades=math.log10(float(fit.x_max) / float(fit.x_min)))


@dataclasses.dataclass(frozen=True)
class Verdict:
    """A verdict and why.

    Attributes:
        verdict: one of :data:`VERDICTS`.
        reason: why (may be empty for ``holds``).
    """

    verdict: str
    reason: str = ""


def _unresolved(m: Measurement, claim: Claim, hold: tuple, claimed: tuple) -> Verdict:
    """``consistent, unresolved``, with the seeds per point that would resolve it if the estimate stayed put.

    ``hold`` and ``claimed`` are the intervals (``(lo, hi)``, infinite ends allowed) of the values for which the
    claim holds within its tolerance and for which it is true. As the interval shrinks around the estimate it
    holds once its half-width is at most the estimate's distance to the edge of ``hold`` (if inside), and misses
    once it is below the estimate's distance to ``claimed`` (if outside); whichever comes first resolves it.
    """
    est, hw = m.estimate, (m.hi - m.lo) / 2
    d_hold = min(est - hold[0], hold[1] - est) if hold[0] <= est <= hold[1] else 0.0
    d_miss = max(claimed[0] - est, est - claimed[1], 0.0)
    target = max(d_hold, d_miss)
    where = (f"the interval [{m.lo:.3f}, {m.hi:.3f}] contains the claim but reaches beyond its tolerance "
             f"±{claim.tolerance:g} (half-width {hw:.3f} at {m.n_seeds} seeds per point)")
    if target <= 0 or m.n_seeds <= 0:
        return Verdict("consistent, unresolved", where + "; its estimate lies on the tolerance's edge")
    need = seeds_to_resolve(hw, m.n_seeds, target)
    return Verdict("consistent, unresolved", where + f"; about {need} seeds would resolve it if the estimate stays")


def judge(claim: Claim, m: Measurement) -> Verdict:
    """The verdict of one measurement against one claim (the rubric of the module docstring).

    Args:
        claim: the claim.
        m: the measurement of the cell, in the form of the claim's kind.

    Returns:
        The :class:`Verdict`.
    """
    if not (np.isfinite(m.estimate) and np.isfinite(m.lo) and np.isfinite(m.hi)):
        return Verdict("not tested", "no finite measurement")
    if not (m.hi - m.lo > 1e-9 * max(1.0, abs(m.estimate))):
        return Verdict("not tested", "no spread over seeds (a zero-width interval): nothing to judge it by")
    if claim.kind == "bound":
        if any(r > 1.0 for r in m.ratios_lo) or m.lo > 1.0:
            worst = max([*m.ratios_lo, m.lo])
            return Verdict("misses", f"above its bound at some point of the range (ratio's lower end {worst:.2f})")
        if m.hi <= 1.0 + claim.tolerance:
            return Verdict("holds", f"at most {m.hi:.2f} of the bound at every point of the range")
        return _unresolved(m, claim, (-math.inf, 1.0 + claim.tolerance), (-math.inf, 1.0))
    rates = ("rate", "at_most_rate", "at_least_rate", "between_rate")
    if claim.kind in rates and not m.decades >= claim.min_decades - 1e-9:
        return Verdict("not tested", f"the fitted range spans {m.decades:.2f} decades; a rate needs "
                                     f"{claim.min_decades:g}")
    c, tol = claim.value, claim.tolerance
    if claim.kind == "between_rate":
        c_hi = claim.value_hi
        if m.hi < c or m.lo > c_hi:
            return Verdict("misses", f"the whole interval lies {'below' if m.hi < c else 'above'} the claimed exponent")
        if m.lo >= c - tol and m.hi <= c_hi + tol:
            return Verdict("holds")
        return _unresolved(m, claim, (c - tol, c_hi + tol), (c, c_hi))
    if claim.kind == "at_most_rate":
        if m.lo > c:
            return Verdict("misses", "the whole interval lies above the claimed exponent")
        return Verdict("holds") if m.hi <= c + tol else _unresolved(m, claim, (-math.inf, c + tol), (-math.inf, c))
    if claim.kind == "at_least_rate":
        if m.hi < c:
            return Verdict("misses", "the whole interval lies below the claimed exponent")
        return Verdict("holds") if m.lo >= c - tol else _unresolved(m, claim, (c - tol, math.inf), (c, math.inf))
    # "rate" and "equality": the interval must contain the claim, and lie within the tolerance to hold
    if not m.lo <= c <= m.hi:
        return Verdict("misses", "the interval excludes the claim")
    if c - tol <= m.lo and m.hi <= c + tol:
        return Verdict("holds")
    return _unresolved(m, claim, (c - tol, c + tol), (c, c))


def verdict_row(claim: Claim, m: Measurement, v: Verdict, *, experiment: str, cell: str, kind: str = "",
                claimed: float = math.nan, link: Optional[str] = None, claimed_hi: Optional[float] = None) -> dict:
    """One row of a verdict table (:func:`jaxdp.studies.analysis.verdict_table`): the claim, the measurement
    and its verdict; a miss links to the claim's explanation.

    Args:
        claim, m, v: the claim, what was measured and :func:`judge`'s verdict.
        experiment, cell: the row's experiment and cell.
        kind: the relation shown before the claimed value (``equals``, ``at_most``, ``at_least``); default from
            the claim's kind (a bound's ratio and an at-most rate ``at_most``, an at-least rate ``at_least``).
        claimed: the value shown as claimed (default the claim's value).
        link: the row's link whatever its verdict (default the claim's link on a miss only).
        claimed_hi: the upper end of a claimed range (``kind="between"``; default a ``"between_rate"`` claim's
            ``value_hi``); adds the column ``claimed_hi``.

    Returns:
        The row: ``experiment``, ``cell``, ``claim``, ``claimed``, ``kind``, ``slope``/``slope_lo``/``slope_hi`` (the
        measurement and its interval), ``n_seeds``, ``verdict``, ``reason`` and ``link`` (and ``claimed_hi`` when
        given).
    """
    kind = kind or {"bound": "at_most", "at_most_rate": "at_most", "at_least_rate": "at_least",
                    "between_rate": "between"}.get(claim.kind, "equals")
    claimed_hi = claim.value_hi if claimed_hi is None and claim.kind == "between_rate" else claimed_hi
    return dict(experiment=experiment, cell=cell, claim=claim.text,
                claimed=claim.value if math.isnan(claimed) else claimed, kind=kind, slope=m.estimate,
                slope_lo=m.lo, slope_hi=m.hi, n_seeds=int(m.n_seeds), verdict=v.verdict, reason=v.reason,
                link=(claim.link if v.verdict == "misses" else "") if link is None else link,
                **({} if claimed_hi is None else {"claimed_hi": claimed_hi}))


def untested_row(experiment: str, cell: str, claim: str, reason: str, n_seeds: int = 0, *, kind: str = "equals",
                 claimed: float = math.nan, m: Optional[Measurement] = None) -> dict:
    """A ``not tested`` row of a verdict table: what could not be judged and why.

    Args:
        experiment, cell: the row's experiment and cell.
        claim: the claim's text.
        reason: why it could not be judged.
        n_seeds: the seeds per point behind the cell.
        kind, claimed: the relation and the value shown as claimed.
        m: a measurement to show although it tests nothing (default none; its seeds count when ``n_seeds`` is 0).

    Returns:
        The row, with the columns of :func:`verdict_row`.
    """
    est, lo, hi = (math.nan,) * 3 if m is None else (m.estimate, m.lo, m.hi)
    n = n_seeds or (m.n_seeds if m is not None else 0)
    return dict(experiment=experiment, cell=cell, claim=claim, claimed=claimed, kind=kind, slope=est,
                slope_lo=lo, slope_hi=hi, n_seeds=int(n), verdict="not tested", reason=reason, link="")


def tally(verdicts, order: Sequence[str] = ()) -> str:
    """``"3 holds, 1 misses"``: the count of each verdict present, in the rubric's order.

    Args:
        verdicts: the verdict rows (a ``pandas.DataFrame`` with a ``verdict`` column).
        order: the verdicts in the order shown (default :data:`jaxdp.studies.analysis.VERDICTS`).

    Returns:
        The counts joined by commas.
    """
    counts = verdicts["verdict"].value_counts()
    return ", ".join(f"{int(counts[k])} {k}" for k in (order or ALL_VERDICTS) if k in counts)


def sci(v: float) -> str:
    """``v`` with two significant digits as the pages print a large number (``1.7·10⁵``).

    Args:
        v: the number.

    Returns:
        The mantissa, times a power of ten in superscript digits when the exponent is not 0.
    """
    m, e = f"{float(v):.1e}".split("e")
    sup = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return m if int(e) == 0 else f"{m}·10" + str(int(e)).translate(sup)


def fill(template: str, points) -> str:
    """A claim's template (an f-string) filled with one curve's numbers.

    Args:
        template: the f-string's text; it sees ``p`` (the per-point table's columns as arrays, ``p.T``),
            ``first`` and ``last`` (its first and last rows, ``last.regret``) and ``pow2``, ``sci``, ``num``,
            ``slope`` (:func:`~jaxdp.studies.analysis.loglog_slope`), ``int``, ``float``, ``abs``, ``min``, ``max``.
        points: the curve's per-point table (a ``pandas.DataFrame`` sorted by the fitted variable).

    Returns:
        The filled text (``""`` for an empty template).

    Raises:
        ValueError: a template holding a backslash or three single quotes.
    """
    import types

    if not template:
        return ""
    if "\\" in template or "'''" in template:
        raise ValueError(f"template must hold no backslash and no three single quotes, got {template!r}")
    rows = points.to_dict("records")
    ns = {"__builtins__": {}, "p": types.SimpleNamespace(**{c: points[c].to_numpy() for c in points}),
          "first": types.SimpleNamespace(**rows[0]), "last": types.SimpleNamespace(**rows[-1]), "pow2": _pow2,
          "sci": sci, "num": fmt_num, "slope": loglog_slope, "int": int, "float": float, "abs": abs, "min": min,
          "max": max}
    return eval("f'''" + template + "'''", ns)  # strings in its fields may hold either quote


def _values(expr: str, points) -> np.ndarray:
    """A claim's expression (``scale``, ``regime``) evaluated on the columns of a per-point table."""
    ns = {"__builtins__": {}, "log2": np.log2, "log": np.log, "sqrt": np.sqrt, "abs": np.abs}
    cols = {c: points[c].to_numpy(float) for c in points if points[c].dtype.kind in "biuf"}
    return np.asarray(eval(expr, ns, cols), float)


def theory_curves(exprs, names) -> dict:
    """A claim's theory curves declared as data, as the ``theory=`` mapping of
    :func:`~jaxdp.studies.plots.plot_curves`: each an expression in ``x`` (the abscissae, an array) and ``names``.

    Args:
        exprs: ``{label: expression}``, in the legend's order; an expression sees ``x``, ``names``, ``np``, ``math``,
            ``int``, ``float``, ``min`` and ``max``.
        names: what the expressions read besides ``x`` (a run's configuration, the library's bounds, a summary).

    Returns:
        ``{label: x -> values}``.

    Raises:
        ValueError: an expression holding a double underscore.
    """
    bad = [e for e in exprs.values() if "__" in e]
    if bad:
        raise ValueError(f"exprs must hold no double underscore, got {bad[0]!r}")
    ns = {"__builtins__": {}, "np": np, "math": math, "int": int, "float": float, "min": min, "max": max, **names}
    return {label: (lambda x, e=e: eval(e, ns, {"x": x})) for label, e in exprs.items()}


def _below_regime(claim: Claim, points, x: str) -> str:
    """Why the curve's grid does not reach the regime its claim is derived for (``""`` when it does)."""
    if not claim.regime:
        return ""
    xs, need = points[x].to_numpy(float), _values(claim.regime[1], points)
    if (xs >= need).all():
        return ""
    end, i = ("ends", -1) if xs[-1] < need[-1] else ("starts", 0)
    return (f"the grid {end} at {x} = {_pow2(xs[i])}, below {claim.regime[0]} = {sci(need[i])} there"
            + fill(claim.regime[2] if len(claim.regime) > 2 else "", points))


def judge_curve(claim: Optional[Claim], fit: Any = None, points: Any = None, x: str = "T", skip: Sequence[tuple] = (),
                *, experiment: str, cell: str, bound: Any = None, stem: str = "regret", lower: bool = False,
                exact_where: Optional[str] = None, label: Callable[[Any], str] = str,
                none_left: str = "no point in the fitted range", below: str = "",
                no_claim: tuple = ("no claim stated for this curve", "reported for comparison")) -> dict:
    """The verdict row of one curve against its claim, tested as the claim's kind says, with everything the claim
    states as data.

    A ``"bound"`` is judged point by point on the ratio measured / bound (``lower``: a lower bound with its constant,
    measured ≥ bound, on the inverse ratio bound / measured, each point's interval inverted so its ends swap, shown
    from the smallest lower end to the largest upper end); the points of ``skip`` test nothing (a bound that is a
    trivial cap the measurement can never exceed, another curve's runs repeated) and are left out, each left-out
    kind named in the reason with where it applies. With ``exact_where`` given, a curve without spread over seeds
    is an exact evaluation (``holds`` when its largest ratio is at most 1, ``exact_where`` appended to the reason,
    else ``misses``), else :func:`judge` calls it not tested (a quantity that should vary over seeds). An exponent
    is judged on the fit's slope (and interval) less the slope of the claim's ``scale`` over the curve's points (a
    deterministic function of ``x``, which shifts the slope and both ends of its interval); a curve below the
    claim's ``regime`` or whose claim is ``untested`` is not tested; otherwise :func:`judge` decides. Where a slope
    that could be judged lies beyond the claim (above an at-most exponent, outside an interval's claim) and the
    claim says what that means (``beyond``), the reason says it and the row links to the claim's explanation. A
    curve without a claim is not tested (its fit shown when given, else the fewest seeds of its points).

    Args:
        claim: the curve's claim, or ``None``.
        fit: an exponent's fit, a row of :func:`~jaxdp.studies.analysis.fit_slopes` (``slope``, ``slope_lo``,
            ``slope_hi``, ``n_seeds``, ``x_min``, ``x_max``); unused by a bound.
        points: the curve's per-point table over the fitted range, sorted by ``x``: for a bound its summary
            (``<stem>_mean``, ``<stem>_lo``, ``<stem>_hi``, ``n_seeds`` and the boolean columns of ``skip``); for an
            exponent the columns its claim's ``scale``, ``regime`` and ``beyond`` read (may be ``None`` when it
            states none of them).
        x: the fitted variable's column.
        skip: a bound's ``[(column, note)]``: the points where ``column`` is true are left out; ``note(at=...,
            n=...)`` (a template's render) says where (``at``: the ``label`` of each such point, comma-separated)
            and how many points are tested (``n``); the notes end the reason in this order.
        experiment, cell: the row's experiment and cell.
        bound: a bound's value at each point (default the column ``bound`` of ``points``).
        stem: a bound's measured metric.
        lower: the bound is a lower bound (measured ≥ bound), judged on bound / measured.
        exact_where: when given, a bound without spread over seeds is judged exactly, with this in its reason.
        label: ``label(x value) -> str``, how a note of ``skip`` names a point (``"T = 2^14"``).
        none_left: the reason of a bound with no point left (not tested; its seeds the fewest of ``points``).
        below: a note ending a bound's reason when the largest ratio is at most 0 (the measurement never positive).
        no_claim: the claim text and reason of a curve without a claim.

    Returns:
        The row (:func:`verdict_row`, or :func:`untested_row` without a claim or, for a bound, without a point).

    Raises:
        ValueError: an exponent's claim without a fit.
    """
    if claim is not None and claim.kind == "bound":
        if points is None or not len(points):
            return untested_row(experiment, cell, claim.text, none_left, kind="at_most", claimed=1.0)
        n = int(points["n_seeds"].min())
        b = np.asarray(points["bound"] if bound is None else bound, float)
        out = np.logical_or.reduce([points[c].to_numpy(bool) for c, _ in skip]) if skip else np.zeros(len(b), bool)
        notes = [note(at=", ".join(label(v) for v in points.loc[points[c].to_numpy(bool), x]), n=int((~out).sum()))
                 for c, note in skip if points[c].any()]
        if not (~out).sum():
            return untested_row(experiment, cell, claim.text, none_left, n, kind="at_most", claimed=1.0)
        cols = [points.loc[~out, f"{stem}_{k}"].to_numpy(float) for k in (("mean", "hi", "lo") if lower else
                                                                           ("mean", "lo", "hi"))]
        mean, lo, hi = (b[~out] / v for v in cols) if lower else (v / b[~out] for v in cols)
        m = Measurement(float(mean.max()), float(lo.min() if lower else lo.max()), float(hi.max()), n,
                        ratios_lo=tuple(lo))
        if exact_where is None or not np.all(hi - lo <= 1e-9 * np.maximum(1.0, np.abs(mean))):
            v = judge(claim, m)
        elif m.estimate <= 1.0:
            v = Verdict("holds", f"an exact evaluation (the same for every seed): at most {m.estimate:.2f} of the "
                                 f"bound{exact_where}")
        else:
            v = Verdict("misses", f"an exact evaluation above the bound ({m.estimate:.2f} of it)")
        notes += [below] if below and m.estimate <= 0 else []
        v = Verdict(v.verdict, "; ".join([v.reason, *notes] if v.reason else notes))
        return verdict_row(claim, m, v, experiment=experiment, cell=cell)
    if claim is None:
        shown = None if fit is None else Measurement.of_fit(fit)
        n = 0 if shown or points is None or not len(points) else int(points["n_seeds"].min())
        return untested_row(experiment, cell, no_claim[0], no_claim[1], n, m=shown)
    if fit is None:
        raise ValueError(f"fit must be given to judge a {claim.kind!r} claim, got None")
    scale = claim.scale
    shift = loglog_slope(points[x], _values(scale[1], points)) if scale and len(points) > 1 else 0.0
    m = Measurement.of_fit(fit, shift)
    why = _below_regime(claim, points, x) or claim.untested
    v, c = (Verdict("not tested", why) if why else judge(claim, m)), claim.value
    beyond = bool(claim.beyond) and not why and m.hi > m.lo and (
        m.lo > c if claim.kind == "at_most_rate" else (m.hi < c or m.lo > claim.value_hi)
        if claim.kind == "between_rate" else not m.lo <= c <= m.hi)
    if beyond:
        sep = ": " if v.verdict == "misses" else "; over it the slope lies beyond the claim: "
        v = Verdict(v.verdict, v.reason + sep + fill(claim.beyond, points))
    return verdict_row(claim, m, v, experiment=experiment, cell=cell, link=claim.link if why or beyond else None)


#: what each paired order claims of the ratio (numerator's mean over denominator's): ``above`` 1, the denominator
#: is ahead; ``below`` 1, the numerator is ahead; ``level``, the interval contains 1
ORDERS = {"above": "interval above 1", "below": "interval below 1", "level": "interval contains 1"}


def judge_order(claim: str, relation: str, ratio: float, lo: float, hi: float, n_seeds: int, *, experiment: str,
                cell: str, best: str = "", claimed_best: Optional[str] = None, label: str = "", link: str = "") -> dict:
    """The verdict row of a paired order claim on a seed-paired ratio's 95% interval (:data:`ORDERS`): ``holds``
    when the interval lies where the relation says (and the claimed best is the denominator), else ``misses`` with
    why; ``not tested`` without a claimed relation or a finite interval.

    Args:
        claim: what is claimed (its relation's words, :data:`ORDERS`, are appended), or the text of a comparison
            without a claim.
        relation: ``"above"``, ``"below"``, ``"level"``, or ``""`` when no order is claimed (not tested).
        ratio, lo, hi, n_seeds: the seed-paired ratio, its 95% interval and the seeds behind it.
        experiment, cell: the row's experiment and cell.
        best: the learner in the denominator (the best by mean, where the claim names one).
        claimed_best: the learner the claim names best (``None``: the claim names none).
        label: how the reason names ``best`` (default ``best``).
        link: where a miss is explained.

    Returns:
        The row: ``experiment``, ``cell``, ``ratio``, ``ratio_lo``, ``ratio_hi``, ``n_seeds``, ``claim``,
        ``relation``, ``verdict``, ``reason`` and ``link`` (on a miss only).

    Raises:
        ValueError: an unknown relation.
    """
    if relation and relation not in ORDERS:
        raise ValueError(f"relation must be one of {sorted(ORDERS)} or '', got {relation!r}")
    if not relation:
        v = Verdict("not tested", "reported only, no order claimed")
    elif not (np.isfinite(lo) and np.isfinite(hi)):
        v = Verdict("not tested", "no paired interval")
    elif claimed_best is not None and best != claimed_best:
        v = Verdict("misses", f"the best by mean is {label or best}, not {claimed_best}")
    elif {"above": lo > 1.0, "below": hi < 1.0, "level": lo <= 1.0 <= hi}[relation]:
        v = Verdict("holds")
    else:
        v = Verdict("misses", "the interval excludes 1" if relation == "level" else f"the interval does not lie "
                                                                                   f"{relation} 1")
    return dict(experiment=experiment, cell=cell, ratio=ratio, ratio_lo=lo, ratio_hi=hi, n_seeds=int(n_seeds),
                claim=f"{claim} ({ORDERS[relation]})" if relation else claim, relation=relation, verdict=v.verdict,
                reason=v.reason, link=link if v.verdict == "misses" else "")


def zero_mean_checks(cells, family_alpha: float):
    """Per check, a z-test that an exact prediction is right: the per-seed residuals measured − predicted have
    expectation 0, so ``z = mean / (sd/√n)`` is judged against the two-sided normal quantile at ``family_alpha / m``
    (``m`` checks, Bonferroni).

    Args:
        cells: ``(fields, measured, predicted)`` per check: the check's columns (a dict) and the per-seed measured
            and predicted values (equal lengths).
        family_alpha: the family-wise error rate over all checks, in (0, 1).

    Returns:
        A ``pandas.DataFrame``, one row per check: its fields, ``n_seeds``, ``measured`` and ``predicted`` (means),
        ``z`` (0 when the residuals have no spread), ``threshold`` and ``verdict`` ("holds" when ``|z|`` is at most
        the threshold, else "misses").
    """
    import pandas as pd
    from scipy import stats

    rows = []
    for fields, meas, pred in cells:
        r = (np.asarray(meas, float) - np.asarray(pred, float))
        se = float(r.std(ddof=1) / math.sqrt(len(r)))
        rows.append(dict(fields, n_seeds=len(r), measured=float(np.mean(meas)), predicted=float(np.mean(pred)),
                         z=float(r.mean() / se) if se > 0 else 0.0))
    out = pd.DataFrame(rows)
    out["threshold"] = float(stats.norm.isf(family_alpha / (2 * max(len(out), 1))))
    out["verdict"] = np.where(out["z"].abs() <= out["threshold"], "holds", "misses")
    return out


def fit_points(points, fit, keys: Sequence[str], x: str):
    """One fit's curve among ``points`` over its fitted range, as :func:`judge_fits` hands it to :func:`judge_curve`.

    Args:
        points: the per-point table holding ``keys`` and ``x``.
        fit: the fit row (a mapping with ``keys``, ``x_min`` and ``x_max``).
        keys: the columns that select the fit's curve among ``points``.
        x: the abscissa's column.

    Returns:
        The rows whose ``keys`` equal the fit's with ``x_min <= x <= x_max``, sorted by ``x``, indexed from 0.
    """
    g = points[np.logical_and.reduce([points[k] == fit[k] for k in keys])]
    return g[g[x].between(fit["x_min"], fit["x_max"])].sort_values(x).reset_index(drop=True)


def judge_fits(fits, claim: Callable, cell: Callable, curve: Callable, *, x: Any = "T", experiment: str = "fit",
               twins: Optional[dict] = None, same: Optional[Callable] = None, hook: Optional[Callable] = None,
               miss: Optional[Callable] = None,
               no_claim: Optional[tuple] = ("no claim stated for this curve", "reported for comparison"),
               **judge: Any) -> list:
    """One verdict row per fitted curve by :func:`judge_curve` on its fit and its points, with a study's hooks; a
    curve that is one piece of evidence with an earlier one (``twins``) shares that curve's row, whose cell names
    both: ``a (= experiment b: b)`` across experiments, else their common leading comma-separated parts once and
    the rest as ``rest of a = rest of b`` (``"…, ρ agnostic = ρ theorem"``).

    Args:
        fits: the fits (:func:`~jaxdp.studies.analysis.fit_slopes` rows), indexed by curve.
        claim: ``claim(fit row) -> Claim or None``: the curve's claim (with its value filled in).
        cell: ``cell(fit row) -> str``: a curve's cell.
        curve: ``curve(fit row)``: the curve's points (:func:`fit_points`, or its per-seed rows), handed to
            :func:`judge_curve` (what a bound and a claim's ``scale``, ``regime`` and ``beyond`` read), ``hook`` and
            ``miss``.
        x: the fitted variable's column, or ``x(fit row) -> column``.
        experiment: the column of ``fits`` naming the row's experiment.
        twins: ``{j: (i, c)}``: curve ``j`` repeats curve ``i`` with per-seed correlation ``c``
            (:func:`~jaxdp.studies.specs.same_evidence`); ``j`` gets no row.
        same: ``same(c) -> str``: the reason appended to the row of a curve that stands for a repeat.
        hook: ``hook(fit row, curve) -> (fit, Verdict or None, cell note, link)``: the fit judged (a refit), a
            verdict that replaces :func:`judge_curve`'s (with this link), a note after the cell.
        miss: ``miss(fit row, curve) -> (why, link)``: on a miss, what the reason adds and the row's link (``None``:
            the claim's).
        no_claim: the claim text and reason of a curve without a claim (:func:`judge_curve`); ``None``: no row.
        **judge: further keywords of :func:`judge_curve` (``stem``, ``exact_where``, ...).

    Returns:
        The verdict rows (:func:`verdict_row`), in the order of ``fits``.
    """
    rows, twins = [], twins or {}
    for j, r in fits.iterrows():
        c = claim(r)
        if (c is None and no_claim is None) or j in twins:
            continue
        g = curve(r)
        fit, v, note, link = hook(r, g) if hook else (r, None, "", None)
        row = (judge_curve(c, fit, g, x(r) if callable(x) else x, experiment=str(r[experiment]), cell="",
                           no_claim=no_claim or (), **judge) if v is None else
               verdict_row(c, Measurement.of_fit(fit), v, experiment=str(r[experiment]), cell="", link=link))
        if row["verdict"] == "misses" and miss:
            why, link = miss(r, g)
            row.update(reason=f"{row['reason']}; {why}" if why else row["reason"], link=c.link if link is None else link)
        text, also = cell(r), [same(t) for i, t in twins.values() if i == j and same]
        for k in (k for k, (i, _) in twins.items() if i == j):
            other, at = cell(fits.loc[k]), str(fits.loc[k][experiment])
            if at != str(r[experiment]):
                text = f"{text} (= {at}: {other})"
            else:
                a, b = text.split(", "), other.split(", ")
                n = next((i for i, (u, w) in enumerate(zip(a, b)) if u != w), len(a))
                text = ", ".join(a[:n] + [f"{', '.join(a[n:])} = {', '.join(b[n:])}"])
        rows.append(dict(row, cell=text + note, reason="; ".join(s for s in (row["reason"], *also[-1:]) if s)))
    return rows


def against_reference(summary, reference: Callable, names: Sequence[str], stem: str, keys: Sequence[str]):
    """Measured means beside an exact reference: the ratio and whether the reference lies in the 95% interval.

    Args:
        summary: per-point rows of :func:`~jaxdp.studies.analysis.summarize` (``<stem>_mean``, ``<stem>_lo``,
            ``<stem>_hi``).
        reference: ``reference(row) -> tuple`` of the reference's values, named by ``names``; the last is the
            reference mean (for example an exact quadrature of the expected value).
        names: the names of the reference's values.
        stem: the measured metric.
        keys: the columns that identify a point, shown first.

    Returns:
        A data frame: ``keys``, ``names``, ``measured_mean``, ``measured_lo``, ``measured_hi``, ``ratio`` (measured
        mean / reference mean) and ``inside`` (``measured_lo <= reference <= measured_hi``).
    """
    q = summary.copy()
    q[list(names)] = [reference(r) for _, r in q.iterrows()]
    q = q.rename(columns={f"{stem}_{k}": f"measured_{k}" for k in ("mean", "lo", "hi")})
    ref = q[names[-1]]
    return q[[*keys, *names, "measured_mean", "measured_lo", "measured_hi"]].assign(
        ratio=q["measured_mean"] / ref, inside=(q["measured_lo"] <= ref) & (ref <= q["measured_hi"]))


def points_against_bounds(points, where: Callable[[Any], str], group: Callable[[Any], str], stem: str = "regret",
                          bound: str = "bound") -> dict:
    """What a page says of every point of a study against its own bound: which points have one, which lie above
    it, and the largest ratio measured / bound.

    Args:
        points: the per-point table (``<stem>_mean``, ``<stem>_hi`` and the column ``bound``), at least one point
            with a bound.
        where: ``where(row) -> str``, how the page names a point.
        group: ``group(row) -> str``, how it names a curve (the points without a bound are listed by curve).
        stem: the measured metric.
        bound: the column of each point's bound (a point has one where it is finite and positive).

    Returns:
        The values of a template: ``n_bound`` (points with a bound), ``n_points``, ``n_none`` (points without),
        ``none`` (the curves of those, comma-separated, in order of first appearance, or ``"none"``), ``n_above``
        and ``above`` (the points whose mean exceeds their bound, ``" (where; ...)"`` or ``""``), ``top`` and
        ``top_where`` (the largest mean / bound and its point), ``n_over`` and ``over`` (the points whose 95%
        interval reaches above their bound, ``": where (mean r of the bound); ..."`` or ``""``).
    """
    has = np.isfinite(points[bound]) & (points[bound] > 0)
    b, none = points[has].assign(ratio=points[f"{stem}_mean"] / points[bound]), points[~has]
    top = b.sort_values("ratio", ascending=False).iloc[0]
    above, over = b[b[f"{stem}_mean"] > b[bound]], b[b[f"{stem}_hi"] > b[bound]]
    groups = ", ".join(dict.fromkeys(group(r) for _, r in none.iterrows()))
    above_list = "; ".join(where(r) for _, r in above.iterrows())
    over_list = "; ".join(f"{where(r)} (mean {r['ratio']:.2f} of the bound)" for _, r in over.iterrows())
    return dict(n_bound=len(b), n_points=len(points), n_none=len(none), none=groups or "none", n_above=len(above),
                above=f" ({above_list})" if above_list else "", top=top["ratio"], top_where=where(top),
                n_over=len(over), over=f": {over_list}" if over_list else "")


def curve_flags(fits, points, keys: Sequence[str], x, flags: Sequence[str], last: Sequence[str] = ()):
    """Beside each fit, where its curve's points carry each flag (a point that tests nothing, or that a note names):
    what a page says of the curve beside its slope.

    Args:
        fits: the fits (:func:`~jaxdp.studies.analysis.fit_slopes` rows with ``x_min``, ``x_max`` and ``keys``).
        points: the per-point table holding ``keys``, the abscissa and the boolean columns ``flags``.
        keys: the columns that select a fit's curve among ``points``.
        x: the abscissa's column, or ``x(fit row) -> column`` when it differs between fits.
        flags: the boolean columns of ``points``.
        last: columns of the curve's last point to copy beside the fit.

    Returns:
        A copy of ``fits`` (a ``pandas.DataFrame``) with ``n_fit`` (the curve's points in the fitted range), per flag
        ``f`` a column ``f`` (the sorted abscissae of the curve's points where it holds, a list) and ``n_<f>`` (how
        many of the fitted points carry it), and the ``last`` columns.
    """
    import pandas as pd

    rows = []
    for r in fits.to_dict("records"):
        xc = x(r) if callable(x) else x
        g = points[np.logical_and.reduce([points[k] == r[k] for k in keys])].sort_values(xc)
        fit = fit_points(points, r, keys, xc)
        rows.append(dict(r, n_fit=len(fit), **{f: list(g.loc[g[f].to_numpy(bool), xc]) for f in flags},
                         **{f"n_{f}": int(fit[f].sum()) for f in flags}, **g.iloc[-1][list(last)]))
    return pd.DataFrame(rows)
