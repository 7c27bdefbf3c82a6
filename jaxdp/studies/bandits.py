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
import json
import math
import pathlib

import jax.numpy as jnp
import numpy as np

from .. import bandits as BD
from ..bandits.instances import (
    instance_adversary, instance_means, is_trivial_cap, learner_setup, stack_params, theory_value,
)
from ..core import seed_keys, simulate
from .analysis import _pow2, fmt_ci, fmt_num, loglog_slope, markdown_table, upper_half, verdict_table
from .claims import Measurement, Verdict, judge, judge_exact_bound, tally, untested_row, verdict_row
from .framework import Study, fit_slopes, plot_panels, summarize
from .specs import StudySpec

S = StudySpec("bandits", __name__)
DOC_PAGE, RESULTS, BLOCKS, DEFAULTS, QUICK, PARAMS = S.doc_page, S.results, S.blocks, S.defaults, S.quick, S.params
NONPRIVATE, PRIVATE = tuple(S.data["nonprivate"]), tuple(S.data["private"])
LEARNERS, INSTANCES = NONPRIVATE + PRIVATE, tuple(PARAMS["instances"].choices or ())
LABELS, THEORY_NAMES, TWIN_OF = S.data["labels"], S.data["theory_names"], S.data["twin_of"]
#: ``{learner or (learner, instance): Claim or None}``; ``None``: no claim applies there
CLAIMS = S.claims
CLAIMS.update({f"{ln} switch": None for ln in S.data["unclaimed_on_switch"]})
MISS_LINK, N_BOOT, KEYS = "#misses", 2000, ["sweep", "learner", "instance", "K", "T", "eps"]
_RANK, _X = {n: i for i, n in enumerate(LEARNERS)}, {"T": "T", "eps": "ε", "K": "K"}


def _points(cfg: dict) -> list:
    """The three sweeps; at ``eps >= 1`` the batched DP-EXP3 (blocks of one round) is DP-EXP3: not run twice."""
    eps1, K = float(cfg["eps"]), int(cfg["K"])
    fixed = [ln for ln in cfg["learners"] if not (ln == "dp_exp3_batched" and math.ceil(1.0 / eps1 - 1e-12) <= 1)]
    e = {ln: (eps1 if ln in PRIVATE else None) for ln in cfg["learners"]}
    return ([{"sweep": "T", "learner": ln, "instance": i, "K": K, "T": int(T), "eps": e[ln]}
             for i in cfg["instances"] for ln in fixed for T in cfg["T"]]
            + [{"sweep": "eps", "learner": ln, "instance": "linspace", "K": K, "T": int(cfg["eps_T"]), "eps": float(x)}
               for ln in cfg["learners"] if ln in PRIVATE for x in cfg["eps_sweep"]]
            + [{"sweep": "K", "learner": ln, "instance": "gap", "K": int(k), "T": int(cfg["K_T"]), "eps": e[ln]}
               for ln in fixed for k in cfg["K_sweep"]])


def _fits(df, summ, n_boot: int = 500):
    """Every fitted curve (``slopes.csv``): T per (learner, instance) over the upper half of the grid, ε and K per
    learner over the whole grid, seed indices resampled jointly, with the bound's slope over the fitted range."""
    import pandas as pd

    rows = []
    for x, by in (("T", ["learner", "instance"]), ("eps", ["learner"]), ("K", ["learner"])):
        sub = df[df["sweep"] == x]
        if not len(sub) or sub[x].nunique() < 2:
            continue
        sl = fit_slopes(sub, x, "regret", by=by, upper_half=x == "T", n_boot=n_boot, resample="joint")
        for r in sl.to_dict("records"):
            g = summ[(summ["sweep"] == x) & (summ["learner"] == r["learner"])]
            g = g[g["instance"] == r["instance"]] if "instance" in by else g
            g = g[(g[x] >= r["x_min"]) & (g[x] <= r["x_max"])].sort_values(x)
            th, xs = g["theory"].to_numpy(float), g[x].to_numpy(float)
            th_slope = loglog_slope(xs, th)
            rows.append({"sweep": x, "learner": r["learner"], "instance": r.get("instance", g["instance"].iloc[0]),
                         **{k: r[k] for k in ("x_min", "x_max", "slope", "slope_lo", "slope_hi")},
                         "theory_slope": th_slope, "regret@x_max": float(g["regret_mean"].iloc[-1]),
                         "theory@x_max": float(th[-1]), "theory": THEORY_NAMES[r["learner"]]})
    return pd.DataFrame(rows)


@S.register
def build(cfg: dict) -> Study:
    """The three sweeps, each point with common random numbers. Tables: ``summary`` (mean pseudo-regret with 95% CIs
    and the bound per point) and ``slopes`` (:func:`_fits`); plots of regret against T, ε and K."""
    gap = float(cfg["gap"])

    def run(pts, seeds):
        name, inst, K, T = (pts[0][k] for k in ("learner", "instance", "K", "T"))
        setups = [learner_setup(name, K, T, p["eps"]) for p in pts]
        learner, params = setups[0][0], stack_params(setups[0][1], [s[2] for s in setups])
        Ts = np.full(len(pts), T, np.int32)
        adversary, ap = instance_adversary(inst, K, Ts, gap)
        keys = seed_keys(cfg["seed"], seeds)
        keys = jnp.broadcast_to(keys, (len(pts),) + keys.shape)   # common random numbers across the points
        out = simulate(learner, adversary, BD.bandit_problem("pseudo"), params, ap, keys, Ts, grid=True,
                       n_checkpoints=2)
        return [{"regret": out["regret"][i], "switches": out["switches"][i].astype(float) if "switches" in out
                 else np.full(len(seeds), np.nan)} for i in range(len(pts))]

    def check_point(p):
        learner_setup(p["learner"], p["K"], p["T"], p["eps"])
        if p["instance"] != "switch":
            instance_means(p["instance"], p["K"], gap)

    def analyze(df):
        df = df.assign(eps=df["eps"].astype(float))
        summ = summarize(df, KEYS, ["regret", "switches"])
        summ["theory"] = [theory_value(ln, i, int(k), int(t), e, gap) for ln, i, k, t, e in
                          summ[["learner", "instance", "K", "T", "eps"]].itertuples(index=False)]
        summ["regret/theory"] = summ["regret_mean"] / summ["theory"]
        return {"slopes": _fits(df, summ), "summary": summ}

    def plot(df, outdir: pathlib.Path):   # one panel per learner; regret can be negative on `switch`: linear y
        summ = summarize(df.assign(eps=df["eps"].astype(float)), KEYS, ["regret"], n_boot=200)
        return [plot_panels(s.assign(learner=s["learner"].map(LABELS)), "learner", x, "regret",
                            outdir / f"regret_vs_{x}{'_' + i if x == 'T' else ''}.png", width=3.4, logy=i != "switch",
                            ylabel="pseudo-regret (mean, 95% CI)", title=lambda v, i=i, x=x: f"{v} ({i}), {x} sweep")
                for (x, i), s in summ.groupby(["sweep", "instance"], sort=False)]

    return S.study(cfg, points=_points(cfg), run=run, check_point=check_point, analyze=analyze, plot=plot,
                   description=__doc__.strip().splitlines()[0])


def _x_label(sweep: str, v) -> str:
    return {"T": lambda: f"T = {_pow2(v)}", "eps": lambda: f"ε = {float(v):g}", "K": lambda: f"K = {int(v)}"}[sweep]()


def _bound_verdict(claim, pts, n: int, x: str, gap: float, repeated) -> tuple:
    """``(Verdict, Measurement or None)`` of a bound on one cell's points but the trivial caps and the ``repeated``
    (another learner's runs); an exact evaluation (no spread over seeds) is judged by its value."""
    own = pts[~pts[x].isin(list(repeated))]
    capped = np.array([is_trivial_cap(p.theory, p.instance, int(p.K), p.T, gap) for p in own.itertuples(index=False)],
                      bool)
    tested = own[~capped]
    notes = [f"the bound is the trivial cap (T·max Δ or T) at {', '.join(_x_label(x, v) for v in own[x][capped])}, "
             f"tested at the other {len(tested)}"] if capped.any() else []
    if len(own) < len(pts):
        notes.append(f"at {', '.join(_x_label(x, v) for v in sorted(repeated))} its runs are "
                     f"{LABELS[TWIN_OF[pts['learner'].iloc[0]]]}'s, seed by seed, and counted in that row")
    if not len(tested):
        return Verdict("not tested", "the bound is the trivial cap (T·max Δ or T) at every fitted point"), None
    b = tested["theory"].to_numpy(float)
    mean, lo, hi = (tested[c].to_numpy(float) / b for c in ("regret_mean", "regret_lo", "regret_hi"))
    ratios = (mean, lo, hi)
    m = Measurement.of_ratios(mean, lo, hi, n)
    v = judge_exact_bound(m) if m.exact(*ratios) else judge(claim, m)
    if m.estimate <= 0:
        notes.append("pseudo-regret ≤ 0 at every tested point (below the best fixed arm)")
    return Verdict(v.verdict, "; ".join([v.reason, *notes] if v.reason else notes)), m


def verdicts(slopes, summary, gap=None, repeats=None):
    """One verdict row per fitted cell of ``slopes`` against :data:`CLAIMS`: a bound by regret/bound at every
    fitted point (trivial caps left out), a rate by the slope over the fitted range. ``repeats``:
    ``{(sweep, learner): swept values}`` where the learner's runs are :data:`TWIN_OF`'s, left out of its row."""
    import pandas as pd

    gap, repeats, rows = float(DEFAULTS["gap"] if gap is None else gap), repeats or {}, []
    for r in slopes.itertuples(index=False):
        x = r.sweep
        pts = summary[(summary["sweep"] == x) & (summary["learner"] == r.learner) & (summary["instance"] == r.instance)]
        pts = pts[(pts[x] >= r.x_min) & (pts[x] <= r.x_max)].sort_values(x)
        n, cell = int(pts["n_seeds"].min()) if len(pts) else 0, f"{LABELS[r.learner]}, {r.instance}"
        claim = CLAIMS[(r.learner, r.instance)] if (r.learner, r.instance) in CLAIMS else CLAIMS.get(r.learner)
        if claim is None:
            rows.append(untested_row(f"regret vs {_X[x]}", cell, "no bound applies", "the learner's bound is for "
                                     "stationary stochastic arms, not the oblivious switching instance", n))
        elif claim.kind == "bound":
            v, m = _bound_verdict(claim, pts, n, x, gap, repeats.get((x, r.learner), ()))
            experiment = f"regret / bound over {_X[x]}"
            rows.append(verdict_row(claim, m, v, experiment=experiment, cell=cell) if m else
                        untested_row(experiment, cell, claim.text, v.reason, n, kind="at_most", claimed=1.0))
        else:
            claim = dataclasses.replace(claim, value=float(r.theory_slope)) if math.isnan(claim.value) else claim
            fin = np.isfinite(r.slope)   # no point estimate: the bootstrap's interval is not shown either
            m = Measurement(float(r.slope), float(r.slope_lo) if fin else math.nan,
                            float(r.slope_hi) if fin else math.nan, n, decades=math.log10(r.x_max / r.x_min))
            rows.append(verdict_row(claim, m, judge(claim, m), experiment=f"regret vs {_X[x]}", cell=cell))
    return pd.DataFrame(rows)


def _spread_free(df) -> set:
    """The points (tuples of :data:`KEYS`) where every seed has the same pseudo-regret."""
    g = df.groupby(KEYS, dropna=False)["regret"].agg(lambda v: float(v.max() - v.min()))
    return {k for k, v in g.items() if v == 0.0}


def _by_rank(sl, *cols):
    """``sl`` sorted by ``cols``: learners in :data:`LEARNERS` order, sweeps T, ε, K, anything else by value."""
    order = {"learner": _RANK, "sweep": {"T": 0, "eps": 1, "K": 2}}
    return sl.sort_values(list(cols), key=lambda c: c.map(order[c.name]) if c.name in order else c)


def _t_row(r, summ, flat) -> list:
    """The T sweep's row of one (learner, instance) curve, its notes saying what its slope cannot show."""
    g = summ[(summ["sweep"] == "T") & (summ["learner"] == r.learner) & (summ["instance"] == r.instance)]
    last, fitted, notes = g.sort_values("T").iloc[-1], g[(g["T"] >= r.x_min) & (g["T"] <= r.x_max)], []
    n_pos = int((fitted["regret_mean"] > 0).sum())
    if not np.isfinite(r.slope):
        notes.append(f"pseudo-regret ≤ 0 at {len(fitted) - n_pos} of the {len(fitted)} fitted horizons "
                     "(below the best fixed arm): no log-log slope")
    elif n_pos < len(fitted):
        notes.append(f"fitted on the {n_pos} of {len(fitted)} horizons with a positive mean; "
                     "the others are below the best fixed arm")
    if not np.isfinite(last["theory"]):
        notes.append("no bound applies (a stochastic bound on the oblivious switching instance)")
    if nflat := sum(k[:3] == ("T", r.learner, r.instance) for k in flat):
        notes.append(f"no spread over seeds at {nflat} horizon(s)")
    return [LABELS[r.learner], r.instance, fmt_ci(r.slope, r.slope_lo, r.slope_hi) if np.isfinite(r.slope) else "—",
            fmt_num(r.theory_slope), fmt_ci(last["regret_mean"], last["regret_lo"], last["regret_hi"], 0),
            fmt_num(last["theory"], 0), fmt_num(last["regret_mean"] / last["theory"], 2), "; ".join(notes) or "—"]


def _sweep_table(sl, summ, x: str, note) -> str:
    """The ``x`` sweep's table: every learner's mean regret at each ``x``, its slope, the bound's and a note."""
    xs, rows = sorted(summ.loc[summ["sweep"] == x, x].unique()), []
    for r in _by_rank(sl, "learner").itertuples(index=False):
        g = summ[(summ["sweep"] == x) & (summ["learner"] == r.learner)].set_index(x)
        rows.append([LABELS[r.learner], *[f"{g.at[v, 'regret_mean']:,.0f}" if v in g.index else "—" for v in xs],
                     fmt_ci(r.slope, r.slope_lo, r.slope_hi), fmt_num(r.theory_slope), note(r.learner)])
    return markdown_table(["learner", *[_x_label(x, v) for v in xs], "slope [95% CI]", "slope of the bound", "note"], rows)


def _bounds_values(summ) -> dict:
    """The values of the bounds block: which points have a bound, and which reach above it."""
    b = summ[np.isfinite(summ["theory"]) & (summ["theory"] > 0)].copy()
    b["ratio"] = b["regret_mean"] / b["theory"]
    top = b.sort_values("ratio", ascending=False).iloc[0]
    above, over = b[b["regret_mean"] > b["theory"]], b[b["regret_hi"] > b["theory"]]
    none = summ[~summ.index.isin(b.index)]

    def where(r):
        x = {"T": f"T = {int(r['T'])}", "eps": f"ε = {r['eps']:g}", "K": f"K = {int(r['K'])}"}[r["sweep"]]
        return f"{LABELS[r['learner']]} on `{r['instance']}`, {x}"

    pairs = ", ".join(f"{LABELS[ln]} on `{i}`" for ln, i in
                      none[["learner", "instance"]].drop_duplicates().itertuples(index=False))
    above_list = "; ".join(where(r) for _, r in above.iterrows())
    over_list = "; ".join(f"{where(r)} (mean {r['ratio']:.2f} of the bound)" for _, r in over.iterrows())
    return dict(n_bound=len(b), n_points=len(summ), n_none=len(none), none=pairs or "none", n_above=len(above),
                above=f" ({above_list})" if above_list else "", top=top["ratio"], top_where=where(top),
                n_over=len(over), over=f": {over_list}" if over_list else "")


def _batched_repeats(df) -> set:
    """The ε of the ε sweep where the batched DP-EXP3's runs are the per-round one's, seed by seed."""
    e = df[df["sweep"] == "eps"]
    if not {"dp_exp3", "dp_exp3_batched"} <= set(e["learner"]):
        return set()
    a, b = (e[e["learner"] == ln].set_index(["eps", "seed"])["regret"] for ln in ("dp_exp3", "dp_exp3_batched"))
    return {float(k) for k, v in (a - b).abs().groupby(level=0).max().items() if v == 0.0}


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/bandits.md`` from a kept run's ``results.csv`` and ``summary.csv``
    (the bound of each point: its ``theory`` column)."""
    import pandas as pd

    d = pathlib.Path(results_dir or RESULTS)
    df = pd.read_csv(d / "results.csv")
    df = df.assign(eps=df["eps"].astype(float))
    theory = pd.read_csv(d / "summary.csv")[KEYS + ["theory"]]
    summ = summarize(df, KEYS, ["regret"]).merge(theory, on=KEYS, how="left")
    n_seeds = int(df.groupby(KEYS, dropna=False)["seed"].nunique().min())
    flat, fits, same = _spread_free(df), _fits(df, summ, N_BOOT), _batched_repeats(df)
    repeats = {("eps", "dp_exp3_batched"): same}
    gap = json.loads((d / "manifest.json").read_text())["config"]["gap"]
    v = verdicts(_by_rank(fits, "sweep", "instance", "learner"), summ, gap, repeats)
    twins = "; ".join(f"{LABELS[ln]}'s points at {', '.join(_x_label(x, e) for e in sorted(xs))} are "
                      f"{LABELS[TWIN_OF[ln]]}'s runs, seed by seed, and counted once, in {LABELS[TWIN_OF[ln]]}'s row"
                      for (x, ln), xs in repeats.items() if xs)
    batched = f"the per-round DP-EXP3's runs, seed by seed, at ε = {', '.join(f'{x:g}' for x in sorted(same))} " \
              "(blocks of one round)"
    flat_K = {ln: ", ".join(str(int(k)) for k in sorted(k[3] for k in flat if k[:2] == ("K", ln))) for ln in LEARNERS}
    Ts = sorted(df.loc[df["sweep"] == "T", "T"].unique())
    t_fits = _by_rank(fits[fits["sweep"] == "T"], "instance", "learner")
    t_rows = [_t_row(r, summ, flat) for r in t_fits.itertuples(index=False)]
    t_table = S.table("T_sweep", t_rows, T_max=int(Ts[-1]))
    eps_table = _sweep_table(fits[fits["sweep"] == "eps"], summ, "eps",
                             lambda ln: batched if ln == "dp_exp3_batched" and same else "—")
    K_table = _sweep_table(fits[fits["sweep"] == "K"], summ, "K",
                           lambda ln: f"no spread over seeds at K = {flat_K[ln]}" if flat_K.get(ln) else "—")
    T_at = {x: int(df.loc[df["sweep"] == x, "T"].iloc[0]) for x in ("eps", "K")}
    gen = S.generated("results/bandits/results.csv", "summary.csv")
    return {
        BLOCKS[0]: S.render(BLOCKS[0], generated=gen, curves=len(t_rows), S=n_seeds, T_lo=int(upper_half(Ts)[0]),
                            T_hi=int(upper_half(Ts)[-1]), n_boot=N_BOOT, T_max=int(Ts[-1]), table=t_table),
        BLOCKS[1]: S.render(BLOCKS[1], T=T_at["eps"], S=n_seeds, table=eps_table),
        BLOCKS[2]: S.render(BLOCKS[2], T=T_at["K"], S=n_seeds, table=K_table),
        BLOCKS[3]: S.render(BLOCKS[3], **_bounds_values(summ)),
        BLOCKS[4]: S.render(BLOCKS[4], generated=gen, rows=len(v), tally=tally(v), twins=f" ({twins})" if twins else "",
                            n_boot=N_BOOT, table=verdict_table(v)),
    }


publish = S.publisher(page_blocks)
