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

from ..bandits.instances import check_point, is_trivial_cap, simulate_budgets, theory_value, twin_learner
from ..core import seed_keys
from .analysis import _pow2, upper_half, verdict_table
from .claims import judge_bound_except, judge_curve, tally, untested_row
from .framework import Study, fit_slopes, summarize
from .plots import plot_figures
from .specs import StudySpec, curve_slopes, grid_points, kept_manifest

S = StudySpec("bandits", __name__)
DOC_PAGE, RESULTS, BLOCKS, DEFAULTS = S.doc_page, S.results, S.blocks, S.defaults
PRIVATE, LEARNERS = tuple(S.data["private"]), tuple(S.data["nonprivate"] + S.data["private"])
LABELS, THEORY_NAMES, TWIN_OF = S.data["labels"], S.data["theory_names"], S.data["twin_of"]
#: ``{learner or (learner, instance): Claim or None}``; ``None``: no claim applies there
CLAIMS = S.claims
CLAIMS.update({f"{ln} switch": None for ln in S.data["unclaimed_on_switch"]})
MISS_LINK, N_BOOT, KEYS = "#misses", 2000, ["sweep", "learner", "instance", "K", "T", "eps"]
_RANK, _X = {n: i for i, n in enumerate(LEARNERS)}, {"T": "T", "eps": "ε", "K": "K"}
#: the notes of the page's tables and verdict block (``specs/bandits.md``, ``bandits note <key>``), by key
NOTES = {k: functools.partial(S.render, f"bandits note {k}")
         for k in ("no_slope", "partial", "no_bound", "flat", "flat_K", "batched", "twins", "cap", "cap_all",
                   "repeated", "below")}


def _points(cfg: dict) -> list:
    """The three sweeps (``[grids]``); a non-private learner has no ε."""
    pts = grid_points(S.data["grids"], cfg, dict(sweep="", learner="", instance="", K=0, T=0, eps=0.0), "sweep",
                      private=PRIVATE)
    return [dict(p, eps=p["eps"] if p["learner"] in PRIVATE else None) for p in pts]


def _fits(df, summ, n_boot: int = 500):
    """Every fitted curve (``slopes.csv``): T per (learner, instance) over the upper half of the grid, ε and K per
    learner over the whole grid, seed indices resampled jointly, with the bound's slope over the fitted range."""
    import pandas as pd

    out = []
    for x, by in (("T", ["learner", "instance"]), ("eps", ["learner"]), ("K", ["learner"])):
        sub, pts = df[df["sweep"] == x], summ[summ["sweep"] == x]
        if len(sub) and sub[x].nunique() >= 2:
            sl = fit_slopes(sub, x, "regret", by=by, upper_half=x == "T", n_boot=n_boot, resample="joint")
            sl = curve_slopes(sl.assign(sweep=x, instance=sl.get("instance", pts["instance"].iloc[0])), pts, x,
                              {"theory_slope": "theory"}, ["learner", "instance"])
            last = pts.set_index(["learner", "instance", x]).loc[list(zip(sl["learner"], sl["instance"], sl["x_max"]))]
            out.append(sl.assign(**{"regret@x_max": last["regret_mean"].to_numpy(float),
                                    "theory@x_max": last["theory"].to_numpy(float)}))
    cols = ["sweep", "learner", "instance", "x_min", "x_max", "slope", "slope_lo", "slope_hi", "theory_slope",
            "regret@x_max", "theory@x_max"]
    return pd.concat(out, ignore_index=True)[cols].assign(theory=lambda f: f["learner"].map(THEORY_NAMES))


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
        summ["theory"] = [theory_value(ln, i, int(k), int(t), e, gap) for ln, i, k, t, e in
                          summ[["learner", "instance", "K", "T", "eps"]].itertuples(index=False)]
        summ["regret/theory"] = summ["regret_mean"] / summ["theory"]
        return {"slopes": _fits(df, summ), "summary": summ}

    def plot(df, outdir: pathlib.Path):   # the TOML's figures: one panel per learner
        return plot_figures(df, outdir, S.data["figures"], cfg, summary=lambda d, keys, y: summarize(
            d.assign(learner=d["learner"].map(LABELS)), keys, y, n_boot=200))

    return S.study(cfg, points=_points(cfg), run=run, analyze=analyze, plot=plot,
                   check_point=lambda p: check_point(p["learner"], p["instance"], p["K"], p["T"], p["eps"], gap),
                   description=__doc__.strip().splitlines()[0])


def _x_label(sweep: str, v, horizon=_pow2) -> str:
    """``<swept variable> = <v>`` as the page prints it (a horizon by ``horizon``, default ``2^k``)."""
    return {"T": lambda: f"T = {horizon(v)}", "eps": lambda: f"ε = {float(v):g}", "K": lambda: f"K = {int(v)}"}[sweep]()


def flagged(summary, gap: float):
    """``summary`` (``summary.csv``) with what the page reads of each point: ``bound`` (its ``theory``), ``capped``
    (the bound is a trivial cap, :func:`~jaxdp.bandits.instances.is_trivial_cap`), ``repeated`` (its runs are
    another learner's, :func:`~jaxdp.bandits.instances.twin_learner`) and ``flat`` (no spread over seeds); ``gap``:
    the run's."""
    rows = summary[["learner", "instance", "K", "T", "eps", "theory"]].to_numpy()
    return summary.assign(bound=summary["theory"], flat=summary["regret_lo"] == summary["regret_hi"],
                          capped=[is_trivial_cap(b, i, int(k), int(t), float(gap)) for _, i, k, t, _, b in rows],
                          repeated=[twin_learner(ln, int(k), int(t), e) != ln for ln, _, k, t, e, _ in rows])


def verdicts(slopes, summary):
    """One verdict row per fitted cell of ``slopes`` against :data:`CLAIMS` on the points of :func:`flagged`: a bound
    by regret/bound at every fitted point but the ``capped`` and ``repeated``
    (:func:`~jaxdp.studies.claims.judge_bound_except`), a rate by the slope over the fitted range."""
    import pandas as pd

    rows, N = [], NOTES
    for r in slopes.itertuples(index=False):
        x = r.sweep
        pts = summary[(summary["sweep"] == x) & (summary["learner"] == r.learner) & (summary["instance"] == r.instance)]
        pts = pts[(pts[x] >= r.x_min) & (pts[x] <= r.x_max)].sort_values(x)
        n, cell = int(pts["n_seeds"].min()) if len(pts) else 0, f"{LABELS[r.learner]}, {r.instance}"
        claim = CLAIMS.get((r.learner, r.instance), CLAIMS.get(r.learner))
        if claim is None:
            rows.append(untested_row(f"regret vs {_X[x]}", cell, *S.data["no_claim"], n))
        elif claim.kind == "bound":
            skip = [("capped", N["cap"]), ("repeated", functools.partial(N["repeated"], of=LABELS[TWIN_OF.get(
                r.learner, r.learner)]))]
            rows.append(judge_bound_except(claim, pts, x, skip, experiment=f"regret / bound over {_X[x]}", cell=cell,
                                           label=functools.partial(_x_label, x), none_left=N["cap_all"](),
                                           below=N["below"]()))
        else:
            claim = dataclasses.replace(claim, value=float(r.theory_slope)) if math.isnan(claim.value) else claim
            rows.append(judge_curve(claim, pd.Series(dict(r._asdict(), n_seeds=n)), None, x,
                                    experiment=f"regret vs {_X[x]}", cell=cell))
    return pd.DataFrame(rows)


def _by_rank(sl, *cols):
    """``sl`` sorted by ``cols``: learners in :data:`LEARNERS` order, sweeps T, ε, K, anything else by value."""
    order = {"learner": _RANK, "sweep": {"T": 0, "eps": 1, "K": 2}}
    return sl.sort_values(list(cols), key=lambda c: c.map(order[c.name]) if c.name in order else c)


def _t_table(fits, summ, T_max: int) -> tuple:
    """The T sweep's table (``[columns].T_sweep``) and its number of curves: each (learner, instance) curve's slope,
    the bound's, its regret and bound at the largest horizon, and a note (:data:`NOTES`): what its slope cannot
    show."""
    t, st, N = _by_rank(fits[fits["sweep"] == "T"], "instance", "learner"), summ[summ["sweep"] == "T"], NOTES
    last = st.sort_values("T").groupby(["learner", "instance"]).tail(1)
    t = t.drop(columns="theory").merge(last[["learner", "instance", "regret_mean", "regret_lo", "regret_hi", "theory"]],
                                       on=["learner", "instance"], how="left")
    notes = []
    for r in t.itertuples(index=False):
        g = st[(st["learner"] == r.learner) & (st["instance"] == r.instance)]
        fitted, k = g[g["T"].between(r.x_min, r.x_max)], int(g["flat"].sum())
        pos = int((fitted["regret_mean"] > 0).sum())
        notes.append("; ".join(n for n in [
            N["no_slope"](neg=len(fitted) - pos, n=len(fitted)) if not np.isfinite(r.slope) else
            N["partial"](pos=pos, n=len(fitted)) if pos < len(fitted) else "",
            "" if np.isfinite(r.theory) else N["no_bound"](), N["flat"](k=k) if k else ""] if n) or "—")
    return S.table("T_sweep", t.assign(learner=t["learner"].map(LABELS), note=notes), T_max=T_max), len(t)


def _sweep_table(fits, summ, x: str, note) -> str:
    """The ``x`` sweep's table (``[columns].<x>_sweep``): every learner's mean regret at each ``x``, its slope, the
    bound's and a note."""
    t = _by_rank(fits[fits["sweep"] == x], "learner").merge(summ.loc[summ["sweep"] == x, ["learner", x, "regret_mean"]])
    return S.table(f"{x}_sweep", t.assign(note=t["learner"].map(note), learner=t["learner"].map(LABELS)))


def _bounds_values(summ) -> dict:
    """The values of the bounds block: which points have a bound, and which reach above it."""
    has = np.isfinite(summ["theory"]) & (summ["theory"] > 0)
    b, none = summ[has].assign(ratio=summ["regret_mean"] / summ["theory"]), summ[~has]
    top = b.sort_values("ratio", ascending=False).iloc[0]
    above, over = b[b["regret_mean"] > b["theory"]], b[b["regret_hi"] > b["theory"]]

    def where(r, more=""):
        return f"{LABELS[r['learner']]} on `{r['instance']}`, {_x_label(r['sweep'], r[r['sweep']], int)}{more}"

    pairs = ", ".join(f"{LABELS[ln]} on `{i}`" for ln, i in none[["learner", "instance"]].drop_duplicates().to_numpy())
    above_list = "; ".join(where(r) for _, r in above.iterrows())
    over_list = "; ".join(where(r, f" (mean {r['ratio']:.2f} of the bound)") for _, r in over.iterrows())
    return dict(n_bound=len(b), n_points=len(summ), n_none=len(none), none=pairs or "none", n_above=len(above),
                above=f" ({above_list})" if above_list else "", top=top["ratio"], top_where=where(top),
                n_over=len(over), over=f": {over_list}" if over_list else "")


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/bandits.md`` from a kept run's ``results.csv`` and ``summary.csv``
    (the bound of each point: its ``theory`` column)."""
    import pandas as pd

    d = pathlib.Path(results_dir or RESULTS)
    df = pd.read_csv(d / "results.csv")
    summ = flagged(pd.read_csv(d / "summary.csv"), kept_manifest(d)["config"]["gap"])
    n_seeds, fits, N = int(summ["n_seeds"].min()), _fits(df, summ, N_BOOT), NOTES
    v = verdicts(_by_rank(fits, "sweep", "instance", "learner"), summ)
    twins = "; ".join(N["twins"](ln=LABELS[ln], at=", ".join(_x_label(x, e) for e in sorted(g[x])),
                                 of=LABELS[TWIN_OF[ln]])
                      for (x, ln), g in summ[summ["repeated"]].groupby(["sweep", "learner"]))

    def note(x, ln):   # the ε and K tables' notes: the points that are another learner's runs, or without spread
        rep, flat = (sorted(summ.loc[(summ["sweep"] == x) & (summ["learner"] == ln) & summ[c], x])
                     for c in ("repeated", "flat"))
        if rep:
            return N["batched"](eps=", ".join(f"{e:g}" for e in rep))
        return N["flat_K"](K=", ".join(str(int(k)) for k in flat)) if x == "K" and flat else "—"

    Ts = sorted(df.loc[df["sweep"] == "T", "T"].unique())
    t_table, curves = _t_table(fits, summ, int(Ts[-1]))
    return {BLOCKS[0]: S.render(BLOCKS[0], curves=curves, S=n_seeds, T_lo=int(upper_half(Ts)[0]),
                                T_hi=int(upper_half(Ts)[-1]), n_boot=N_BOOT, T_max=int(Ts[-1]), table=t_table),
            **{BLOCKS[i]: S.render(BLOCKS[i], T=int(df.loc[df["sweep"] == x, "T"].iloc[0]), S=n_seeds,
                                   table=_sweep_table(fits, summ, x, functools.partial(note, x)))
               for i, x in ((1, "eps"), (2, "K"))},
            BLOCKS[3]: S.render(BLOCKS[3], **_bounds_values(summ)),
            BLOCKS[4]: S.render(BLOCKS[4], rows=len(v), tally=tally(v), twins=f" ({twins})" if twins else "",
                                n_boot=N_BOOT, table=verdict_table(v))}


publish = S.publisher(page_blocks)
