"""``realizable-findings``: experiments that decide the open findings on the realizable paper (REAL).

Spec, grids and claims: ``specs/realizable-findings.toml``; page prose: ``specs/realizable-findings.md``;
derivations: docs/algorithms/realizable-findings.md. Learners and instances: :mod:`jaxdp.experts.realizable_setups`,
:func:`jaxdp.oco.realizable.thm4_dp_ftrl`.
"""
from __future__ import annotations

import pathlib

import numpy as np
import pandas as pd

from ..core import seed_keys, simulate
from ..experts import experts_problem
from ..experts.realizable_setups import realizable_adversary, realizable_constants, realizable_learner, realizable_plan
from ..oco.realizable import thm4_dp_ftrl
from .analysis import fit_spans, ratio_to_base, verdict_table
from .claims import fit_points, judge_fits, tally
from .framework import Study, fit_slopes, summarize
from .plots import plot_figures
from .specs import StudySpec, fstring, grid_points

S = StudySpec("realizable-findings", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS, FITS, N_BOOT = S.doc_page, S.results, S.blocks, S.claims, S.data["fits"], 2000


def _run(p, cfg, keys, n):
    """One point: its learner planned at the point, on its experiment's adversary; per-seed metrics and constants."""
    exp, d, T = p["exp"], p["d"], p["T"]
    if exp == "oco":
        s = thm4_dp_ftrl(p["learner"].replace("dp_ftrl_", ""), d, T, p["eps"], cfg["delta"], cfg["oco_D"])
        plan, const = s["plan"], dict(lam=s["lam"], sigma=s["plan"].params["sigma"])
        out = simulate(s["learner"], s["adversary"], s["problem"], s["params"], s["adv_params"], keys, T, T_max=T,
                       n_checkpoints=4)
    else:
        plan = realizable_plan(p["learner"], eps=p["eps"], T=T, d=d, mode=p["mode"], beta=cfg["beta"], Lstar=p["Lstar"])
        adv = (realizable_adversary("bernoulli", d, q=cfg["q"], q_star=p["Lstar"] / T) if exp == "adaptive" else
               realizable_adversary("halving", d, r=cfg["halving_r"]))   # each elimination can be seen by the trees
        learner, params = realizable_learner(p["learner"], d, plan)
        out = simulate(learner, adv[0], experts_problem(), params, adv[1], keys, T, T_max=T, n_checkpoints=4)
        const = realizable_constants(p["learner"], plan)
    r = {k: np.asarray(out[k], float) if k in out else np.full(n, np.nan)
         for k in ("regret", "best_loss", "switches", "em_draws", "doublings", "phases", "padded")}
    return {**r, **{k: np.full(n, float(v)) for k, v in {**const, "eps_certified": plan.eps_certified}.items()}}


def _fit_table(df, n_boot: int = 500):
    """The regret's slope of every curve of every experiment of ``FITS`` (``{experiment: (x, *curve keys)}``) over
    its whole range, seed indices resampled jointly, labelled ``fit = "<experiment>: regret vs <x>"``; oco's with its
    claimed exponent 1/3; ``None`` when no experiment has two values of its ``x``."""
    out = []
    for exp, (x, *keys) in FITS.items():
        sub = df[df["exp"] == exp]
        if len(sub) and sub[x].nunique() > 1:
            f = fit_slopes(sub, x, "regret", keys, upper_half=False, n_boot=n_boot, resample="joint")
            out.append(f.assign(fit=f"{exp}: regret vs {x}")[["fit", *f.columns]])
    f = pd.concat(out, ignore_index=True) if out else None
    return f if f is None or not f["fit"].str.startswith("oco").any() else f.assign(
        claimed=np.where(f["fit"].str.startswith("oco"), 1 / 3, np.nan))


def _plot(df, outdir: pathlib.Path):
    """The TOML's ``figures``: each experiment's mean regret per curve, beside its theory curve."""
    df = df.assign(curve=df["learner"] + " / " + df["mode"] + " / L*=" + df["Lstar"].map("{:g}".format))
    return plot_figures(df, outdir, S.data["figures"], {})


@S.register
def build(cfg: dict) -> Study:
    """The ``adaptive``, ``potential``, ``binary_tree`` and ``oco`` experiments (module docstring). Tables:
    ``summary`` (regret, draws, doublings and phases per point) and ``slopes`` (:func:`_fit_table`)."""
    def analyze(df):
        tables = {"summary": summarize(df, ["exp", "learner", "mode", "d", "T", "eps", "Lstar"],
                                       ["regret", "em_draws", "doublings", "phases"])}
        fits = _fit_table(df)
        return tables if fits is None else {**tables, "slopes": fits}

    points = grid_points(S.data["grids"], cfg, dict(exp="", learner="", mode="", d=0, T=0, eps=0.0, Lstar=0.0))
    return S.study(cfg, points=points, analyze=analyze, plot=_plot, seeds_per_chunk=None, points_per_chunk=16,
                   run=lambda pts, seeds: [_run(p, cfg, seed_keys(int(cfg["seed"]), seeds), len(seeds)) for p in pts])


def verdicts(slopes, results):
    """One verdict per fitted cell of ``slopes`` against its claim (keyed ``<exp>/<curve>``, the curve its learner
    or binary_tree's threshold mode), by :func:`~jaxdp.studies.claims.judge_fits` on the curves' points: mean
    regret, draws, phases, share of seeds with regret > T/2 and the planners' constants."""
    g = results.assign(stuck=results["regret"] > results["T"] / 2).groupby(
        ["exp", "learner", "mode", "d", "T", "Lstar"], sort=True, dropna=False)
    const = [c for c in ("threshold0", "margin", "eta", "tau", "m_set", "P_max", "lam") if c in results]
    pts = g[["regret", "em_draws", "phases", "stuck"]].mean().join(g[const].first()).reset_index()
    import pandas as pd

    exp = lambda r: r.fit.split(":")[0]   # noqa: E731
    return pd.DataFrame(judge_fits(
        slopes, lambda r: CLAIMS.get(f"{exp(r)}/{r['mode'] if exp(r) == 'binary_tree' else r.learner}"),
        lambda r: fstring(S.data["cells"][exp(r)], dict(r)), x=lambda r: FITS[exp(r)][0],
        curve=lambda r: fit_points(pts[pts["exp"] == exp(r)], r, FITS[exp(r)][1:], FITS[exp(r)][0])))


def _summary(g, by, extra=()):
    g = g.assign(half=g["regret"] > g["T"] / 2, anyp=g["phases"] > 0)
    agg = g.groupby(by, sort=True).agg(**{c: (c, "mean") for c in ("em_draws", "doublings", "phases", "half", "anyp")},
                                       **{f"{c}_first": (c, "first") for c in extra})
    return summarize(g, by, ["regret"]).merge(agg.reset_index(), on=by)


def _adaptive(a) -> dict:
    paired = ratio_to_base(a[a["learner"].isin(["adaptive_printed", "adaptive_flipped"])], ["mode", "Lstar", "T"],
                           "learner", "adaptive_flipped", "regret", n_boot=N_BOOT, count_differ=True)
    full = sorted(set(paired["mode"]) - set(paired.loc[paired["ndiff"] > 0, "mode"]))  # same runs at every L*, T
    return dict(note=S.render("realizable-findings same runs", modes=", ".join(full)) + " " if full else "",
                paired=S.table("adaptive_paired", paired),
                table=S.table("adaptive", _summary(a, ["learner", "mode", "Lstar", "T"], ("threshold0",))))


def _oco(o) -> dict:
    fa, f8 = (fit_slopes(g, "d", "regret", ["learner"], upper_half=False, n_boot=N_BOOT, resample="joint")
              for g in (o, o[o["d"] >= 8]))
    fa[["slope8", "slope8_lo", "slope8_hi"]] = f8[["slope", "slope_lo", "slope_hi"]].to_numpy()
    return dict(table=S.table("oco", summarize(o, ["learner", "d"], ["regret"])), slopes=S.table("oco_slopes", fa))


#: each experiment's tables on its block of the page
TABLES = {"adaptive": _adaptive, "oco": _oco,
          "potential": lambda p: dict(table=S.table("potential", _summary(p, ["learner", "T"], ("K", "threshold"))),
                                      paired=S.table("potential_paired", ratio_to_base(
                                          p, ["T"], "learner", "potential", "regret", n_boot=N_BOOT))),
          "binary_tree": lambda b: dict(table=S.table("binary_tree", _summary(b, ["mode", "T"], ("m_set", "tau"))))}


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/realizable-findings``)."""
    import pandas as pd

    df = pd.read_csv(pathlib.Path(results_dir or RESULTS) / "results.csv")
    S_ = int(df.groupby(["exp", "learner", "mode", "d", "T", "Lstar"])["seed"].nunique().min())
    out = {blk: S.render(blk, S=S_, n_boot=N_BOOT, **TABLES[exp](df[df["exp"] == exp]))
           for blk, exp in zip(BLOCKS, FITS) if (df["exp"] == exp).any()}
    fits = _fit_table(df, N_BOOT)
    out[BLOCKS[4]] = S.render(BLOCKS[4], n_boot=N_BOOT, table=S.table("fits", [] if fits is None else fits))
    if fits is not None:
        v = verdicts(fits, df)
        out[BLOCKS[5]] = S.render(BLOCKS[5], S=S_, n_boot=N_BOOT, tol=f"{CLAIMS['oco/dp_ftrl_masked'].tolerance:g}",
                                  spans=fit_spans(fits), rows=len(v), tally=tally(v), table=verdict_table(v))
    return out


publish = S.publisher(page_blocks)
