"""``mf-ftrl``: DP-FTRL with each continual-counting mechanism at equal certified (ε, δ) (docs/results/mf-ftrl.md).

Spec, design and claims: ``specs/mf-ftrl.toml``; page prose: ``specs/mf-ftrl.md``. Every point's ``sigma`` comes
from ``plan_dp_ftrl(..., noise=mech)``; the claims are judged on regret / :func:`bounds` at every point of a sweep.
"""
from __future__ import annotations

import json
import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..oco import (DPFTRLParams, SmoothRealizableParams, adv_smooth_realizable, dp_ftrl, dp_ftrl_bound_of_lambda,
                   dp_ftrl_params, plan_dp_ftrl_point, squared_problem)
from ..privacy.mechanisms.matrix_factorization import MECHANISMS, get_mechanism
from .analysis import fmt_num, loglog_slope, ratio_to_base, verdict_table
from .claims import judge_curve, tally
from .framework import Study, fit_slopes, plot_curves, plot_panels, summarize
from .plots import theory_columns
from .specs import StudySpec, same_evidence as _same, seed_matrix

S = StudySpec("mf-ftrl", __name__)
DOC_PAGE, RESULTS, BLOCKS = S.doc_page, S.results, S.blocks
RATIO_BLOCK, SLOPE_BLOCK, TWIN_BLOCK, VERDICT_BLOCK = BLOCKS
CLAIMS = {tuple(k.split()): c for k, c in S.claims.items()}     # keyed by (sweep, instance)
BETA, N_BOOT, KEYS, P = 1.0, 2000, ["part", "mechanism", "env", "T", "eps"], ["part", "env", "T", "eps"]
#: two mechanisms whose per-seed regrets correlate at least this much at every point of a sweep share one verdict row
SAME_EVIDENCE = 0.998


def _horizon(cfg, part):
    return int(max(cfg["T"])) if part == "T" else int(cfg["T_fixed"])


def _mechanism(cfg, name, part):
    return get_mechanism(name, _horizon(cfg, part), bands=int(cfg["bands"]))


def _point_params(cfg, name, part, env, T, eps):
    """``(lam, sigma, clip, eps_certified, V, max_error)`` of one grid point (:func:`plan_dp_ftrl_point`)."""
    return plan_dp_ftrl_point(_mechanism(cfg, name, part), eps=eps, delta=cfg["delta"], T=T, d=int(cfg["d"]),
                              D=cfg["D"], beta=BETA, mode=cfg["mode"], realizable=env == "realizable")


@S.register
def build(cfg: dict) -> Study:
    """Per mechanism, the T sweep on each instance and the ε sweep on the realizable one, all at the same certified
    (ε, δ). Tables: ``slopes``, ``summary`` (with each mechanism's regret relative to the tree), ``ratios``."""
    points = []
    for name in cfg["mechanisms"]:
        points += [{"part": "T", "mechanism": name, "env": env, "T": int(T), "eps": float(cfg["eps"])}
                   for env in cfg["envs"] for T in cfg["T"]]
        points += [{"part": "eps", "mechanism": name, "env": "realizable", "T": int(cfg["T_fixed"]),
                    "eps": float(eps)} for eps in cfg["eps_sweep"]]

    def check_point(p):
        lam, sigma, clip, eps_c, _, _ = _point_params(cfg, p["mechanism"], p["part"], p["env"], p["T"], p["eps"])
        dp_ftrl_params(lam, sigma, clip)
        if not eps_c <= p["eps"] * (1 + 1e-9):
            raise ValueError(f"point {p} is not certified at eps={p['eps']} (certified {eps_c})")

    def run(pts, seeds):
        name, part, d, D, G = pts[0]["mechanism"], pts[0]["part"], int(cfg["d"]), cfg["D"], len(pts)
        T, T_max = np.asarray([p["T"] for p in pts], np.int32), _horizon(cfg, part)
        mech, prob, f32 = _mechanism(cfg, name, part), squared_problem(d, D), lambda v: jnp.asarray(v, jnp.float32)
        ap = SmoothRealizableParams(D=f32([D] * G), grid_h=f32([0.0] * G),
                                    sigma=f32([cfg["sigma_xi"] if p["env"] == "noisy" else 0.0 for p in pts]))
        keys = seed_keys(cfg["seed"], seeds)
        keys = jnp.broadcast_to(keys, (G,) + keys.shape)          # common random numbers across the grid
        vals = [_point_params(cfg, name, part, p["env"], p["T"], p["eps"]) for p in pts]
        out = simulate(dp_ftrl(prob, T_max, None, mech), adv_smooth_realizable(d), prob,
                       DPFTRLParams(*(f32([v[k] for v in vals]) for k in range(3))), ap, keys, T, T_max=T_max, grid=True)
        full, carried = (lambda v: np.full(len(seeds), v)), float(mech.carried_bytes(T_max, d))
        return [{"regret": out["regret"][i], "best_loss": out["best_loss"][i], "lam": full(v[0]), "sigma": full(v[1]),
                 "eps_certified": full(v[3]), "max_error": full(v[5]), "carried_bytes": full(carried)}
                for i, v in enumerate(vals)]

    def analyze(df):
        slopes = slope_fits(df)   # every point uses the same seed keys: seed indices resampled jointly
        extra = df.groupby(KEYS)[["lam", "sigma", "eps_certified", "max_error", "carried_bytes"]].first()
        summ = summarize(df, KEYS, ["regret", "best_loss"]).merge(extra.reset_index(), on=KEYS)
        tree = summ[summ["mechanism"] == "tree"].set_index(P)["regret_mean"]
        summ["regret_vs_tree"] = summ["regret_mean"].to_numpy() / tree.reindex(summ.set_index(P).index).to_numpy()
        # each mechanism against the tree at equal certified (eps, delta), seeds paired
        return {"slopes": slopes, "summary": summ, "ratios": ratio_to_base(df, P, "mechanism", "tree", "regret")}

    def plot(df, outdir: pathlib.Path):
        """``regret_vs_T.png`` (a panel per instance) and ``regret_vs_eps.png``: mean regret with 95% CIs per
        mechanism, and dashed each mechanism's theory bound at every point (:func:`bounds`)."""
        summ = bounds(summarize(df, KEYS, ["regret"]).merge(df.groupby(KEYS)["lam"].first().reset_index(), on=KEYS),
                      float(cfg["D"]))
        order = [m for m in cfg["mechanisms"] if m in set(df["mechanism"])]
        s, e = summ[summ["part"] == "T"], summ[summ["part"] == "eps"]
        return ([plot_panels(s, "env", "T", "regret", outdir / "regret_vs_T.png", hue="mechanism", hue_order=order,
                             width=6.4, ylabel="regret (mean, 95% CI)", title=lambda env: f"DP-FTRL, {env}, d={cfg['d']}, eps={cfg['eps']}",
                             theory=lambda env, sub: theory_columns(sub, "T", "bound", "mechanism", order))]
                if len(s) else []) + ([pathlib.Path(plot_curves(
                    e, "eps", "regret", hue="mechanism", hue_order=order, path=outdir / "regret_vs_eps.png",
                    ylabel="regret (mean, 95% CI)", title=f"DP-FTRL realizable, T={int(cfg['T_fixed'])}, d={cfg['d']}",
                    theory=theory_columns(e, "eps", "bound", "mechanism", order)))]
                    if e["eps"].nunique() >= 2 else [])

    return S.study(cfg, check_point=check_point, points=points, run=run, analyze=analyze, plot=plot, seeds_per_chunk=16)


def ratio_table(ratios) -> str:
    """The Markdown table of each mechanism's regret over the tree's (seed-paired 95% intervals), from
    ``ratios.csv``: one row per point, T sweep first."""
    r = ratios.assign(cell=[f"{a:.2f} [{lo:.2f}, {hi:.2f}]" for a, lo, hi in ratios[["ratio", "ratio_lo", "ratio_hi"]]
                            .itertuples(index=False)], order=ratios["part"] != "T")
    keys = ["order", "part", "env", "T", "eps"]
    t = r.pivot_table(index=keys, columns="mechanism", values="cell", aggfunc="first").reindex(
        columns=MECHANISMS[1:]).fillna("-")
    return S.table("ratios", t.join(r.groupby(keys)["n_seeds"].min()).reset_index())


def slope_fits(df):
    """The regret's slopes in ``T`` (upper half of the grid, each instance) and in ε (whole grid), every mechanism,
    seed indices resampled jointly across a curve's points; one row per (sweep, mechanism, instance)."""
    import pandas as pd

    out = [fit_slopes(g, part, "regret", by=["mechanism"], upper_half=part == "T", n_boot=N_BOOT, resample="joint")
           .sort_values("mechanism", key=lambda c: c.map(MECHANISMS.index)).assign(sweep=part, env=env)
           for part, env in (("T", "realizable"), ("T", "noisy"), ("eps", "realizable"))
           if len(g := df[(df["part"] == part) & (df["env"] == env)]) and g[part].nunique() >= 2]
    return pd.concat(out, ignore_index=True)[["sweep", "mechanism", "env", "slope", "slope_lo", "slope_hi", "n_x",
                                             "x_min", "x_max", "n_seeds"]]


def _slope_table(fits, b) -> str:
    import pandas as pd

    rows = []
    for r in fits.itertuples(index=False):
        x = "T" if r.sweep == "T" else "eps"
        c = b[(b["part"] == r.sweep) & (b["mechanism"] == r.mechanism) & (b["env"] == r.env)].sort_values(x)
        g = c[c[x].between(r.x_min, r.x_max)]
        rows.append({**r._asdict(), "sigma_slope": loglog_slope(g[x], g["sigma"]), "bound_slope":
                     loglog_slope(g[x], g["bound"]), "rob_lo": c["regret_over_bound"].min(),
                     "rob_hi": c["regret_over_bound"].max()})
    return S.table("slopes", pd.DataFrame(rows))


def bounds(summary, D: float = 1.0):
    """Each mechanism's theory curve at every point of ``summary`` (with ``Eb2``, ``bound``, ``regret_over_bound``),
    recovered from its realizable twin's planned λ (:func:`~jaxdp.oco.dp_ftrl_bound_of_lambda`)."""
    lam_r = summary[summary["env"] == "realizable"][["part", "mechanism", "T", "eps", "lam"]]
    b = summary.merge(lam_r.rename(columns={"lam": "lam_realizable"}), on=["part", "mechanism", "T", "eps"], how="left")
    b["Eb2"], b["bound"] = dp_ftrl_bound_of_lambda(b["lam_realizable"], b["T"].astype(float), D, BETA,
                                                   b["env"] == "realizable")
    b["regret_over_bound"] = b["regret_mean"] / b["bound"]
    return b


def same_evidence(df) -> set:
    """``{(part, env, a, b)}``, ``a`` before ``b`` in ``MECHANISMS``: the mechanisms whose per-seed regrets correlate
    at least :data:`SAME_EVIDENCE` at every point of a sweep (:func:`~jaxdp.studies.specs.same_evidence`)."""
    out = set()
    for (part, env), g in df.groupby(["part", "env"]):
        ms = [m for m in MECHANISMS if m in set(g["mechanism"])]
        x = "T" if part == "T" else "eps"
        twins = _same([(m, 0, seed_matrix(g[g["mechanism"] == m], x, "regret")[1]) for m in ms], SAME_EVIDENCE,
                      float("inf"))
        out |= {(part, env, a, b) for b, (a, _) in twins.items()}
    return out


def verdicts(summary, twins=(), D: float = 1.0):
    """One verdict row per (sweep, mechanism, instance), T sweep first, against :data:`CLAIMS`: mean regret /
    :func:`bounds` at every point of the sweep; twins (:func:`same_evidence`) share one row ``a = b``."""
    import pandas as pd

    b, rows = bounds(summary, D), []
    merged = {(p, e, m2) for p, e, _, m2 in twins}
    for (part, env), g in sorted(b.groupby(["part", "env"]), key=lambda kv: (kv[0][0] != "T", kv[0][1] != "realizable")):
        for mech in [m for m in MECHANISMS if m in set(g["mechanism"]) and (part, env, m) not in merged]:
            same = [mech] + [m for m in MECHANISMS if (part, env, mech, m) in set(twins)]
            pts = g[g["mechanism"].isin(same) & np.isfinite(g["bound"])]
            rows.append(judge_curve(CLAIMS[(part, env)], None, pts, cell=f"{' = '.join(same)}, {env}",
                                    experiment=f"regret / bound vs {'T' if part == 'T' else 'ε'}"))
    return pd.DataFrame(rows)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/mf-ftrl``)."""
    import pandas as pd

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    df, summary = pd.read_csv(d / "results.csv"), pd.read_csv(d / "summary.csv")
    D = float(json.loads((d / "manifest.json").read_text())["config"]["D"]) if (d / "manifest.json").exists() \
        else float(S.defaults["D"])
    v = verdicts(summary, same_evidence(df), D)
    t, e = summary[summary["part"] == "T"], summary[summary["part"] == "eps"]
    r = ratio_to_base(df[df["mechanism"].isin(["sqrt_toeplitz", "blt"])], ["part", "env", "T", "eps"], "mechanism",
                      "sqrt_toeplitz", "regret", n_boot=N_BOOT)
    return {RATIO_BLOCK: S.render(RATIO_BLOCK, table=ratio_table(pd.read_csv(d / "ratios.csv"))),
            SLOPE_BLOCK: S.render(SLOPE_BLOCK, n_boot=N_BOOT, table=_slope_table(slope_fits(df), bounds(summary, D))),
            TWIN_BLOCK: S.render(TWIN_BLOCK, n_boot=N_BOOT, n=len(r), lo=fmt_num(r["ratio"].min()),
                                 hi=fmt_num(r["ratio"].max()), dev=100 * float((r["ratio"] - 1).abs().max()),
                                 above=int((r["ratio_lo"] > 1).sum()), below=int((r["ratio_hi"] < 1).sum())),
            VERDICT_BLOCK: S.render(VERDICT_BLOCK, generated=S.generated("results/mf-ftrl/summary.csv",
                                                                        "results/mf-ftrl/results.csv"),
                                    rows=len(v), tally=tally(v), same=SAME_EVIDENCE, T_lo=t["T"].min(),
                                    T_hi=t["T"].max(), e_lo=e["eps"].min(), e_hi=e["eps"].max(), e_T=e["T"].min(),
                                    cap=1 + max(c.tolerance for c in CLAIMS.values()), table=verdict_table(v))}


publish = S.publisher(page_blocks)
