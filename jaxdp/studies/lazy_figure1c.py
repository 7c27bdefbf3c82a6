"""``lazy-figure1c``: LAZY Figure 1(c), the regret exponent β(α) with ε = T^-α (docs/algorithms/lazy.md#figure-1).

Spec and claims: ``specs/lazy-figure1c.toml``; page prose: ``specs/lazy-figure1c.md``. L2P-MW (paper and re-tuned
settings), the prior low-switching template and Hedge on the paper's lower-bound adversary, batch-aligned epochs and
alternating batches; the slope of log E[regret] on log T against ``figure1_exponents`` (c) and (c').
"""
from __future__ import annotations

import dataclasses
import math
import pathlib

import numpy as np

from jaxdp.core import seed_keys
from jaxdp.experts import adversary_and_params, alternating_terms, figure1_exponents, l2p_mw_regret_bound
from jaxdp.experts import learner_and_params
from jaxdp.experts.lazy_setups import lazy_run
from jaxdp.studies.analysis import _pow2, equal_expected_regret, summarize, upper_half, verdict_table
from jaxdp.studies.claims import fit_points, judge_fits, tally
from jaxdp.studies.framework import Study, fit_slopes
from jaxdp.studies.plots import plot_figures
from jaxdp.studies.specs import StudySpec, curve_slopes, kept_manifest

S = StudySpec("lazy-figure1c", __name__)
DOC_PAGE, RESULTS, BLOCKS, CLAIMS = S.doc_page, S.results, S.blocks, S.claims
N_BOOT, TOL, NO_CLAIM = 2000, 0.05, S.data["claims_notes"]["no_claim"]
#: per point: the mean expected regret and the plan's η and B
PER_POINT = dict(expected_regret=("expected_regret", "mean"), eta=("eta", "first"), B=("B", "first"))


def _curve(panel: str, curve: str):
    """The exponent curve ``figure1_exponents(α, panel)[curve]`` as a function of α."""
    return lambda a: figure1_exponents(a, panel)[curve]


#: the exponents table's columns as the figure draws them
BETA = dict(slope="beta_mean", slope_lo="beta_lo", slope_hi="beta_hi")
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

    def run(pts, seeds):   # each horizon costs T rounds, not max(T) (one compilation per horizon); run_columns
        keys, Ts = seed_keys(int(cfg["seed"]), seeds), [int(pt["T"]) for pt in pts]
        runs = [lazy_run(keys, pt["learner"], pt["adversary"], d, T, T ** -pt["alpha"], float(cfg["delta"]))
                for pt, T in zip(pts, Ts)]
        return [{k: np.broadcast_to(r[k], len(seeds)) for k in S.data["run_columns"]} for r in runs]

    def check_point(pt):   # the planner's and the adversary's checks
        T, eps = int(pt["T"]), int(pt["T"]) ** -pt["alpha"]
        learner_and_params(pt["learner"], d, T, eps, float(cfg["delta"])), adversary_and_params(pt["adversary"], d, T, eps)

    def analyze(df):
        # every T uses the same seed keys: resample seed indices jointly across the T grid
        sl = fit_slopes(df, x="T", y="expected_regret", by=["learner", "adversary", "alpha"], resample="joint")
        sl["beta_theory"] = [THEORY.get((r.learner, r.adversary), ("", lambda a: np.nan))[1](r.alpha)
                             for r in sl.itertuples()]
        sl["beta_claimed_c"] = figure1_exponents(sl["alpha"].to_numpy(), "c")["L2P"]
        return {"exponents": sl}

    def plot(df, outdir: pathlib.Path):   # [[figures]]: one panel per adversary with the exponent curves of α
        return plot_figures(df, outdir, S.data["figures"], {"fig1": figure1_exponents},
                            summary=lambda rows, *_: analyze(rows)["exponents"].rename(columns=BETA))

    points = S.points({**cfg, "alpha": [float(a) for a in cfg["alpha"]]})   # α a float even if given as 0
    return S.study(cfg, points=points, run=run, check_point=check_point, analyze=analyze, plot=plot)


def verdicts(slopes, summary, d: int):
    """One verdict per fitted (learner, adversary, α) cell against :data:`CLAIMS` (:func:`judge_fits`): an exponent
    by the slope over ``log10(x_max/x_min)`` decades of T, Hedge's bound by mean regret / √(T ln d/2) at every
    fitted T."""
    import pandas as pd

    exps = dict(zip(("bound", "rate"), S.data["claims_notes"]["experiments"]))
    fits = slopes.assign(fit=[exps["bound" if ln in CLAIMS and CLAIMS[ln].kind == "bound" else "rate"]
                              for ln in slopes["learner"]])
    pts = summary.assign(bound=np.sqrt(summary["T"].to_numpy(float) * math.log(d) / 2))
    return pd.DataFrame(judge_fits(fits, lambda r: CLAIMS.get(r.learner) if r.fit == exps["bound"] or r.learner
                                   not in CLAIMS else dataclasses.replace(CLAIMS[r.learner],
                                                                          value=EXPONENT[r.learner](float(r.alpha))),
                                   lambda r: f"{r.learner}, {r.adversary}, α = {r.alpha:g}",
                                   lambda r: fit_points(pts, r, ["learner", "adversary", "alpha"], "T"),
                                   no_claim=("—", NO_CLAIM)))


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/lazy-figure1c``): the exponents,
    L2P-MW's expected regret on alternating batches beside the model's terms (``alternating_terms``) and their
    slopes, the verdicts, and L2P-MW's expected regret over its valid bound ``ln d/η + ηTB/8``."""
    import pandas as pd

    dd, by = pathlib.Path(results_dir or RESULTS), ["learner", "adversary", "alpha"]
    df, d = pd.read_csv(dd / "results.csv"), int(kept_manifest(dd)["config"]["d"])
    S_ = int(df.groupby(by + ["T"])["seed"].nunique().min())
    real, exp = (fit_slopes(df, "T", y, by=by, n_boot=N_BOOT, resample="joint") for y in ("regret", "expected_regret"))
    rows = real.assign(**{f"e{k}": exp[f"slope{k}"].to_numpy() for k in ("", "_lo", "_hi")})
    up = upper_half(sorted(df["T"].unique()))
    T_lo, T_hi = int(up[0]), int(up[-1])
    p = df.groupby(by + ["T"]).agg(**PER_POINT).reset_index()
    p = p.assign(**alternating_terms(d, p["T"], p["eta"], p["B"]), bound=l2p_mw_regret_bound(
        d, p["T"].to_numpy(float), p["eta"].to_numpy(float), p["B"].to_numpy(float)))
    p["ratio"] = p["expected_regret"] / p["bound"]
    alt, l2p = (p["learner"] == "l2p_paper") & (p["adversary"] == "alternating"), real["learner"].isin(list(EXPONENT))
    t = p[alt]   # L2P-MW (paper settings) on alternating batches: E[regret] beside the model's terms
    dev = (t["expected_regret"] / t["model"] - 1).abs().groupby(t["alpha"]).max().to_dict()
    mrows = curve_slopes(real[(real["adversary"] == "alternating") & (real["learner"] == "l2p_paper")], t, "T",
                         {c: c for c in ("expected_regret", "model", "warmup", "tanh_term")}, ["alpha"])
    v = verdicts(real.assign(n_seeds=S_), summarize(df, by + ["T"], ["regret"], n_boot=N_BOOT), d)
    lists = p[p["T"].isin(up)].groupby(by).agg(ratios=("ratio", list), Bs=("B", list)).reset_index()
    brows = curve_slopes(real[l2p], p, "T", {"sb": "bound", "se": "expected_regret"}, by).merge(lists, on=by)
    return {
        BLOCKS[0]: S.render(BLOCKS[0], cells=len(rows), S=S_, T_lo=T_lo, T_hi=T_hi, n_boot=N_BOOT,
                            table=S.table("exponents", rows, twins=equal_expected_regret(
                                df, "sketch", "hedge", ["adversary", "alpha"], 1e-4), theory=THEORY,
                                claimed_c=_curve("c", "L2P"), twins_note=S.data["claims_notes"]["twins"])),
        BLOCKS[1]: S.render(BLOCKS[1], d=d, table=S.table("terms", t),
                            deviations=", ".join(f"{100 * v:.1f}% at α = {a:g}" for a, v in sorted(dev.items()))),
        BLOCKS[2]: S.render(BLOCKS[2], T_lo=T_lo, T_hi=T_hi, table=S.table("model", mrows)),
        BLOCKS[3]: S.render(BLOCKS[3], rows=len(v), tol=TOL, decades=math.log10(up[-1] / up[0]), T_lo=T_lo,
                            T_hi=T_hi, n_boot=N_BOOT, tally=tally(v), table=verdict_table(v)),
        BLOCKS[4]: S.render(BLOCKS[4], d=d, T_lo=_pow2(up[0]), T_hi=_pow2(up[-1]),
                            table=S.table("bound", brows, exponent=EXPONENT)),
    }


publish = S.publisher(page_blocks)
