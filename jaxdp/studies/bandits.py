"""``bandits``: pseudo-regret of non-private and private bandit learners vs T, K and epsilon, with theory curves.

Spec, claims and labels: ``specs/bandits.toml``; page prose: ``specs/bandits.md``. Three sweeps
(docs/algorithms/bandits.md#study): ``T`` (every learner on ``linspace``, means ``linspace(0.1, 0.9, K)``, and on
the oblivious ``switch``: arm 0 pays 0 for ``T/3`` rounds and 1 after, the others Ber(1/2)), ``eps`` (the private
learners on ``linspace`` at ``T = eps_T``) and ``K`` (every learner on ``gap`` at ``T = K_T``). Each point runs its
own horizon with the learner tuned for it (private learners: their certified plans); the theory curves are the
bounds of :mod:`jaxdp.bandits.theory`.
"""
from __future__ import annotations

import dataclasses
import functools
import math
import pathlib

import numpy as np

from ..bandits.instances import check_point, point_bounds, point_flags, simulate_budgets
from ..core import seed_keys
from .analysis import verdict_table
from .claims import curve_flags, fit_points, judge_curve, points_against_bounds, tally
from .framework import Study, fit_slopes, summarize
from .plots import plot_figures
from .specs import StudySpec, curve_slopes, fstring, grid_points, kept_manifest

S = StudySpec("bandits", __name__)
DOC_PAGE, RESULTS, BLOCKS, DEFAULTS = S.doc_page, S.results, S.blocks, S.defaults
PRIVATE, LEARNERS = tuple(S.data["private"]), tuple(S.data["nonprivate"] + S.data["private"])
LABELS, THEORY_NAMES, TWIN_OF, X_NAMES = (S.data[k] for k in ("labels", "theory_names", "twin_of", "x_names"))
#: ``{learner or (learner, instance): Claim or None}``; ``None``: no claim applies there
CLAIMS = S.claims
CLAIMS.update({f"{ln} switch": None for ln in S.data["unclaimed_on_switch"]})
MISS_LINK, N_BOOT, KEYS = "#misses", 2000, ["sweep", "learner", "instance", "K", "T", "eps"]
#: how the page names a curve, a point and a swept value (``[names]``: f-strings of a row)
NAME = {k: functools.partial(fstring, f, labels=LABELS, x_names=X_NAMES) for k, f in S.data["names"].items()}


def _fits(df, summ, n_boot: int = 500):
    """Every fitted curve (``slopes.csv``), per (learner, instance) of each sweep: sweeps T, ε, K, each by instance and
    learner (:data:`LEARNERS` order), T over the upper half of the grid, ε and K over the whole grid, seed indices
    resampled jointly, with the bound's slope over the fitted range and the last point's regret and bound."""
    import pandas as pd

    out, key = [], ["learner", "instance"]
    for x in ("T", "eps", "K"):
        sub, pts = df[df["sweep"] == x], summ[summ["sweep"] == x]
        if len(sub) and sub[x].nunique() >= 2:
            sl = fit_slopes(sub, x, "regret", by=key, upper_half=x == "T", n_boot=n_boot, resample="joint")
            sl = curve_slopes(sl.assign(sweep=x, rank=sl["learner"].map(LEARNERS.index)), pts, x,
                              {"theory_slope": "theory"}, key)
            last = pts.rename(columns={x: "x_max", "regret_mean": "regret@x_max", "theory": "theory@x_max"})
            last = last[[*key, "x_max", "regret@x_max", "theory@x_max"]]
            out.append(sl.merge(last).sort_values(["instance", "rank"]))
    return pd.concat(out, ignore_index=True)[S.data["slope_columns"]].assign(theory=lambda f: f["learner"].map(
        THEORY_NAMES))


@S.register
def build(cfg: dict) -> Study:
    """The three sweeps, each point with common random numbers. Tables: ``summary`` (mean pseudo-regret with 95% CIs
    and the bound per point) and ``slopes`` (:func:`_fits`); plots of regret against T, ε and K."""
    gap = float(cfg["gap"])

    def run(pts, seeds):
        name, inst, K, T = (pts[0][k] for k in ("learner", "instance", "K", "T"))
        out = simulate_budgets(name, inst, K, T, [p["eps"] for p in pts], gap, seed_keys(cfg["seed"], seeds))
        return [{"regret": out["regret"][i], "switches": out["switches"][i].astype(float) if "switches" in out
                 else np.full(len(seeds), np.nan)} for i in range(len(pts))]

    def analyze(df):
        df = df.assign(eps=df["eps"].astype(float))
        summ = summarize(df, KEYS, ["regret", "switches"])
        summ["theory"] = point_bounds(summ, gap)
        summ["regret/theory"] = summ["regret_mean"] / summ["theory"]
        return {"slopes": _fits(df, summ), "summary": summ}

    def plot(df, outdir: pathlib.Path):   # the TOML's figures: one panel per learner, dashed its bound per point
        def points(d, keys, y):   # each point's mean with its bound (`theory`) and the bound's name
            s = summarize(d.assign(eps=d["eps"].astype(float)), list(dict.fromkeys([*keys, *KEYS])), y, n_boot=200)
            s["theory"] = point_bounds(s, gap)
            return s.assign(theory_name=s["learner"].map(THEORY_NAMES), learner=s["learner"].map(LABELS))

        return plot_figures(df, outdir, S.data["figures"], {**cfg, "private": list(PRIVATE),
                            "nonprivate": S.data["nonprivate"]}, S.data["figure_defaults"], summary=points)

    pts = grid_points(S.data["grids"], cfg, dict(sweep="", learner="", instance="", K=0, T=0, eps=0.0), "sweep",
                      private=PRIVATE)   # the three sweeps ([grids]); a non-private learner has no ε
    return S.study(cfg, points=[dict(p, eps=p["eps"] if p["learner"] in PRIVATE else None) for p in pts], run=run,
                   analyze=analyze, plot=plot, description=__doc__.strip().splitlines()[0],
                   check_point=lambda p: check_point(p["learner"], p["instance"], p["K"], p["T"], p["eps"], gap))


def flagged(summary, gap: float):
    """``summary`` (``summary.csv``) with what the page reads of each point: ``bound`` (its ``theory``), ``capped``
    and ``repeated`` (:func:`~jaxdp.bandits.instances.point_flags`), ``flat`` (no spread over seeds) and
    ``positive`` (a positive mean); ``gap``: the run's."""
    return summary.assign(bound=summary["theory"], flat=summary["regret_lo"] == summary["regret_hi"],
                          positive=summary["regret_mean"] > 0, **point_flags(summary, gap))


def verdicts(slopes, summary):
    """One verdict row per fitted cell of ``slopes`` against :data:`CLAIMS` on the points of :func:`flagged`
    (:func:`~jaxdp.studies.claims.judge_curve`): a bound by regret/bound at every fitted point but the ``capped``
    and ``repeated``, a rate (its value NaN: the bound's ``theory_slope``) by the slope over the fitted range."""
    import pandas as pd

    rows = []
    for r in slopes.to_dict("records"):
        x, ln, c = r["sweep"], r["learner"], CLAIMS.get((r["learner"], r["instance"]), CLAIMS.get(r["learner"]))
        pts = fit_points(summary, r, ["sweep", "learner", "instance"], x)
        c = dataclasses.replace(c, value=float(r["theory_slope"])) if c and math.isnan(c.value) else c
        skip = [(k, functools.partial(S.render, f"note {k}", of=LABELS[TWIN_OF.get(ln, ln)]))
                for k in ("capped", "repeated")]
        rows.append(judge_curve(c, None if c is None else pd.Series(dict(r, n_seeds=pts["n_seeds"].min())), pts, x,
                                skip, cell=f"{LABELS[ln]}, {r['instance']}",
                                experiment=f"regret {'/ bound over' if c and c.kind == 'bound' else 'vs'} {X_NAMES[x]}",
                                label=lambda v: NAME["x"](dict(sweep=x, v=v)), none_left=S.render("note cap_all"),
                                below=S.render("note below"), no_claim=S.data["no_claim"], exact_where=""))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/bandits.md`` from a kept run's ``results.csv`` and ``summary.csv``
    (the bound of each point: its ``theory`` column)."""
    import pandas as pd

    d = pathlib.Path(results_dir or RESULTS)
    summ = flagged(pd.read_csv(d / "summary.csv"), kept_manifest(d)["config"]["gap"])
    fits = _fits(pd.read_csv(d / "results.csv"), summ, N_BOOT)
    cur = curve_flags(fits.drop(columns="theory"), summ, ["sweep", "learner", "instance"], lambda r: r["sweep"],
                      ["repeated", "flat", "positive"], ["regret_mean", "regret_lo", "regret_hi", "theory"])
    t, v = cur[cur["sweep"] == "T"], verdicts(fits, summ)
    twins = "; ".join(S.render("note twins", ln=LABELS[r.learner], of=LABELS[TWIN_OF[r.learner]],
                               at=", ".join(NAME["x"](dict(sweep=r.sweep, v=e)) for e in r.repeated))
                      for r in cur[cur["repeated"].map(len) > 0].itertuples())
    at = dict(S=int(summ["n_seeds"].min()), n_boot=N_BOOT, note=S.render, labels=LABELS, T_max=int(t["x_max"].max()))
    return {BLOCKS[0]: S.render(BLOCKS[0], curves=len(t), T_lo=int(t["x_min"].min()), **at,
                                table=S.table("T_sweep", t, **at)),
            **{BLOCKS[i]: S.render(BLOCKS[i], T=int(summ.loc[summ["sweep"] == x, "T"].iloc[0]), **at,
                                   table=S.table(f"{x}_sweep", cur[cur["sweep"] == x].drop(columns="regret_mean").merge(
                                       summ.loc[summ["sweep"] == x, ["learner", x, "regret_mean"]]), **at))
               for i, x in ((1, "eps"), (2, "K"))},
            BLOCKS[3]: S.render(BLOCKS[3], **points_against_bounds(summ, NAME["point"], NAME["curve"])),
            BLOCKS[4]: S.render(BLOCKS[4], rows=len(v), tally=tally(v), twins=f" ({twins})" if twins else "",
                                table=verdict_table(v), **at)}


publish = S.publisher(page_blocks)
