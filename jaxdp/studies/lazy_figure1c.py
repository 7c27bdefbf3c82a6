"""``lazy-figure1c``: LAZY Figure 1(c), the regret exponent β(α) with ε = T^-α (docs/algorithms/lazy.md#figure-1).

Spec and claims: ``specs/lazy-figure1c.toml``; page prose: ``specs/lazy-figure1c.md``. L2P-MW (paper and re-tuned
settings), the prior low-switching template and Hedge on the paper's lower-bound adversary, batch-aligned epochs and
alternating batches; the slope of log E[regret] on log T against ``figure1_exponents`` (c) and (c').
"""
from __future__ import annotations

import dataclasses
import json
import math
import pathlib

import numpy as np

from jaxdp.core import seed_keys, simulate
from jaxdp.experts import adversary_and_params, alternating_terms, experts_problem, figure1_exponents
from jaxdp.experts import l2p_mw_regret_bound, learner_and_params
from jaxdp.studies.analysis import _pow2, equal_expected_regret, loglog_slope, summarize, upper_half, verdict_table
from jaxdp.studies.claims import judge_fits, tally
from jaxdp.studies.framework import Study, fit_slopes, plot_panels
from jaxdp.studies.specs import StudySpec

S = StudySpec("lazy-figure1c", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS = S.doc_page, S.results, S.blocks, S.claims
N_BOOT, TOL, NO_CLAIM = 2000, 0.05, S.data["claims_notes"]["no_claim"]
#: per point: the mean expected regret and the plan's η and B
PER_POINT = dict(expected_regret=("expected_regret", "mean"), eta=("eta", "first"), B=("B", "first"))


def _curve(panel: str, curve: str):
    """The exponent curve ``figure1_exponents(α, panel)[curve]`` as a function of α."""
    return lambda a: figure1_exponents(a, panel)[curve]


#: (learner, adversary) -> (label, the exponent curve of α that applies to the pair)
THEORY = {(ln, adv): (label, _curve(*pc)) for ln, advs in S.data["theory"].items()
          for adv, (label, *pc) in advs.items()}
#: the claimed exponent of each L2P claim at α
EXPONENT = {ln: (lambda a, f=_curve(*pc): float(f(a))) for ln, pc in S.data["exponent"].items()}


@S.register
def build(cfg: dict) -> Study:
    """Every learner × adversary × α × ``T`` with ``ε = T^{-α}``; table ``exponents``: the fitted β per (learner,
    adversary, α) with the curve that applies (``beta_theory``) and the claimed panel (c) value."""
    d = int(cfg["d"])

    def setup(pt):
        """``(T, learner, params, info, adversary, adversary params)`` of a point (the planner's checks)."""
        T = int(pt["T"])
        eps = T ** -pt["alpha"]
        return (T, *learner_and_params(pt["learner"], d, T, eps, float(cfg["delta"])),
                *adversary_and_params(pt["adversary"], d, T, eps))

    def run(pts, seeds):
        keys, out = seed_keys(int(cfg["seed"]), seeds), []
        for pt in pts:
            T, L, params, info, A, ap = setup(pt)
            # T_max = T: each horizon costs T rounds, not max(T) (one compilation per horizon)
            r = simulate(L, A, experts_problem(), params, ap, keys, T, T_max=T, n_checkpoints=4)
            out.append({"expected_regret": r["expected_regret"], "regret": r["regret"], "switches": r["switches"],
                        "eta": np.full(len(seeds), info["eta"]), "B": np.full(len(seeds), float(info["B"]))})
        return out

    def analyze(df):
        # every T uses the same seed keys: resample seed indices jointly across the T grid
        sl = fit_slopes(df, x="T", y="expected_regret", by=["learner", "adversary", "alpha"], resample="joint")
        sl["beta_theory"] = [THEORY.get((r.learner, r.adversary), ("", lambda a: np.nan))[1](r.alpha)
                             for r in sl.itertuples()]
        sl["beta_claimed_c"] = figure1_exponents(sl["alpha"].to_numpy(), "c")["L2P"]
        return {"exponents": sl}

    def plot(df, outdir: pathlib.Path):
        # one panel per adversary (four learners each), with the exponent curves that apply to it
        sl = analyze(df)["exponents"].rename(columns=dict(slope="beta_mean", slope_lo="beta_lo", slope_hi="beta_hi"))
        claimed = {k: _curve(*pc) for k, pc in S.data["plot"]["claimed"].items()}
        corrected = {adv: {k: _curve(*pc) for k, pc in curves.items()}
                     for adv, curves in S.data["plot"]["corrected"].items()}
        return [plot_panels(sl, "adversary", "alpha", "beta", outdir / "lazy_figure1c.png", hue="learner",
                            theory=lambda adv, sub: {**claimed, **corrected.get(adv, {})},
                            title=lambda adv: f"LAZY Figure 1(c), adversary {adv}", logx=False, logy=False,
                            xlabel="alpha (eps = T^-alpha)", ylabel="beta (expected regret ~ T^beta), 95% CI",
                            width=4.6)]

    points = S.points({**cfg, "alpha": [float(a) for a in cfg["alpha"]]})   # α a float even if given as 0
    return S.study(cfg, points=points, run=run, check_point=setup, analyze=analyze, plot=plot)


def verdicts(slopes, summary, d: int):
    """One verdict per fitted (learner, adversary, α) cell against :data:`CLAIMS` (:func:`judge_fits`): an exponent
    by the slope over ``log10(x_max/x_min)`` decades of T, Hedge's bound by mean regret / √(T ln d/2) at every
    fitted T."""
    import pandas as pd

    exps = dict(zip(("bound", "rate"), S.data["claims_notes"]["experiments"]))
    fits = slopes.assign(fit=[exps["bound" if ln in CLAIMS and CLAIMS[ln].kind == "bound" else "rate"]
                              for ln in slopes["learner"]])
    pts = pd.concat([summary.assign(exp=e, bound=np.sqrt(summary["T"].to_numpy(float) * math.log(d) / 2))
                     for e in exps.values()])
    return judge_fits(fits, pts, dict.fromkeys(exps.values(), ("T", "learner", "adversary", "alpha")),
                      lambda r, e: CLAIMS.get(r.learner) if e == exps["bound"] or r.learner not in CLAIMS else
                      dataclasses.replace(CLAIMS[r.learner], value=EXPONENT[r.learner](float(r.alpha))),
                      lambda r, e: f"{r.learner}, {r.adversary}, α = {r.alpha:g}", no_claim=("—", NO_CLAIM))


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/lazy-figure1c``)."""
    import pandas as pd

    dd = pathlib.Path(results_dir or RESULTS)
    df = pd.read_csv(dd / "results.csv")
    d = int(json.loads((dd / "manifest.json").read_text())["config"]["d"])
    by = ["learner", "adversary", "alpha"]
    S_ = int(df.groupby(by + ["T"])["seed"].nunique().min())
    real = fit_slopes(df, "T", "regret", by=by, n_boot=N_BOOT, resample="joint")
    exp = fit_slopes(df, "T", "expected_regret", by=by, n_boot=N_BOOT, resample="joint")
    twins = equal_expected_regret(df, "sketch", "hedge", ["adversary", "alpha"], 1e-4)
    rows = real.assign(**{f"e{k}": exp[f"slope{k}"].to_numpy() for k in ("", "_lo", "_hi")})
    up = upper_half(sorted(df["T"].unique()))
    T_lo, T_hi = int(up[0]), int(up[-1])
    # L2P-MW (paper settings) on alternating batches: E[regret] beside the model's terms (alternating_terms)
    t = df[(df["adversary"] == "alternating") & (df["learner"] == "l2p_paper")].groupby(["alpha", "T"])
    t = t.agg(**PER_POINT).reset_index()
    t = t.assign(**alternating_terms(d, t["T"], t["eta"], t["B"]))
    dev = (t["expected_regret"] / t["model"] - 1).abs().groupby(t["alpha"]).max().to_dict()
    mrows = pd.DataFrame([{"alpha": a, **{c: loglog_slope(g["T"], g[c]) for c in ("expected_regret", "model", "warmup",
                          "tanh_term")}} for a, g in t[t["T"].isin(up)].groupby("alpha", sort=True)])
    v = verdicts(real.assign(n_seeds=S_), summarize(df, by + ["T"], ["regret"], n_boot=N_BOOT), d)
    # L2P-MW (both settings) against its valid bound ln d/η + ηTB/8 on the upper half of the grid
    b = df[df["T"].isin(up) & df["learner"].isin(["l2p_paper", "l2p_retuned"])].groupby(by + ["T"]).agg(**PER_POINT)
    b = b.reset_index()
    b["bound"] = l2p_mw_regret_bound(d, b["T"].to_numpy(float), b["eta"].to_numpy(float), b["B"].to_numpy(float))
    brows = pd.DataFrame([dict(learner=ln, adversary=adv, alpha=a, ratios=list(g["expected_regret"] / g["bound"]),
                               Bs=list(g["B"]), claimed=EXPONENT[ln](float(a)), sb=loglog_slope(g["T"], g["bound"]),
                               se=loglog_slope(g["T"], g["expected_regret"])) for (ln, adv, a), g in b.groupby(by)])
    return {
        BLOCKS[0]: S.render(BLOCKS[0], cells=len(rows), S=S_, T_lo=T_lo, T_hi=T_hi, n_boot=N_BOOT,
                            table=S.table("exponents", rows, twins=twins, theory=THEORY, claimed_c=_curve("c", "L2P"),
                                          twins_note=S.data["claims_notes"]["twins"])),
        BLOCKS[1]: S.render(BLOCKS[1], d=d, table=S.table("terms", t),
                            deviations=", ".join(f"{100 * v:.1f}% at α = {a:g}" for a, v in sorted(dev.items()))),
        BLOCKS[2]: S.render(BLOCKS[2], T_lo=T_lo, T_hi=T_hi, table=S.table("model", mrows)),
        BLOCKS[3]: S.render(BLOCKS[3], rows=len(v), tol=TOL, decades=math.log10(up[-1] / up[0]), T_lo=T_lo,
                            T_hi=T_hi, n_boot=N_BOOT, tally=tally(v), table=verdict_table(v)),
        BLOCKS[4]: S.render(BLOCKS[4], d=d, T_lo=_pow2(up[0]), T_hi=_pow2(up[-1]), table=S.table("bound", brows)),
    }


publish = S.publisher(page_blocks)
