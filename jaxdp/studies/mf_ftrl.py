"""``mf-ftrl``: DP-FTRL with each continual-counting mechanism at equal certified (ε, δ) (docs/results/mf-ftrl.md).

Spec, design and claims: ``specs/mf-ftrl.toml``; page prose: ``specs/mf-ftrl.md``. Every point's ``sigma`` comes
from ``plan_dp_ftrl(..., noise=mech)``; the claims are judged on regret / :func:`bounds` at every point of a sweep.
"""
from __future__ import annotations

import itertools
import json
import pathlib

import jax.numpy as jnp
import numpy as np

from ..core import seed_keys, simulate
from ..oco import (
    adv_smooth_realizable, dp_ftrl, dp_ftrl_lambda_matched, dp_ftrl_noise_bound, dp_ftrl_noise_energy, dp_ftrl_params,
    plan_dp_ftrl, smooth_realizable_params, squared_problem,
)
from ..privacy.mechanisms.matrix_factorization import MECHANISMS, get_mechanism
from .analysis import fmt_num, loglog_slope, ratio_to_base, verdict_table
from .realizable_oco import _lipschitz
from .claims import judge_curve, tally
from .framework import Study, fit_slopes, plot_curves, plot_panels, summarize
from .plots import theory_columns
from .specs import StudySpec

S = StudySpec("mf-ftrl", __name__)
DOC_PAGE, RESULTS, BLOCKS = S.doc_page, S.results, S.blocks
RATIO_BLOCK, SLOPE_BLOCK, TWIN_BLOCK, VERDICT_BLOCK = BLOCKS
CLAIMS = {tuple(k.split()): c for k, c in S.claims.items()}     # keyed by (sweep, instance)
BETA, N_BOOT, KEYS = 1.0, 2000, ["part", "mechanism", "env", "T", "eps"]
#: two mechanisms whose per-seed regrets correlate at least this much at every point of a sweep share one verdict row
SAME_EVIDENCE = 0.998


def _horizon(cfg, part):
    return int(max(cfg["T"])) if part == "T" else int(cfg["T_fixed"])


def _mechanism(cfg, name, part):
    return get_mechanism(name, _horizon(cfg, part), bands=int(cfg["bands"]))


def _point_params(cfg, name, part, env, T, eps):
    """``(lam, sigma, clip, eps_certified, V, max_error)`` of one grid point."""
    mech, D, d = _mechanism(cfg, name, part), cfg["D"], int(cfg["d"])
    plan = plan_dp_ftrl(eps=eps, delta=cfg["delta"], T=T, d=d, mode=cfg["mode"], L=_lipschitz(D), D=D, beta=BETA,
                        setting="realizable" if env == "realizable" else "general", noise=mech)
    sigma, V = plan.params["sigma"], mech.max_row_norm_sq(T)
    lam = dp_ftrl_lambda_matched(T, d, V, sigma, D, BETA) if env == "realizable" else plan.params["lam"]
    return lam, sigma, plan.params["clip"], plan.eps_certified, V, mech.max_error(T)


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
        mech, prob = _mechanism(cfg, name, part), squared_problem(d, D)
        sig_xi = [cfg["sigma_xi"] if p["env"] == "noisy" else 0.0 for p in pts]
        ap = type(smooth_realizable_params(D, 0.0, 0.0))(
            D=jnp.full(G, D, jnp.float32), grid_h=jnp.zeros(G, jnp.float32), sigma=jnp.asarray(sig_xi, jnp.float32))
        keys = seed_keys(cfg["seed"], seeds)
        keys = jnp.broadcast_to(keys, (G,) + keys.shape)          # common random numbers across the grid
        vals = [_point_params(cfg, name, part, p["env"], p["T"], p["eps"]) for p in pts]
        params = type(dp_ftrl_params(1.0, 0.0, 1.0))(lam=jnp.asarray([v[0] for v in vals], jnp.float32),
                                                      sigma=jnp.asarray([v[1] for v in vals], jnp.float32),
                                                      clip=jnp.asarray([v[2] for v in vals], jnp.float32))
        out = simulate(dp_ftrl(prob, T_max, None, mech), adv_smooth_realizable(d), prob, params, ap, keys, T,
                       T_max=T_max, grid=True)
        n, carried = len(seeds), float(mech.carried_bytes(T_max, d))
        return [{"regret": out["regret"][i], "best_loss": out["best_loss"][i], "lam": np.full(n, vals[i][0]),
                 "sigma": np.full(n, vals[i][1]), "eps_certified": np.full(n, vals[i][3]),
                 "max_error": np.full(n, vals[i][5]), "carried_bytes": np.full(n, carried)} for i in range(G)]

    def analyze(df):
        slopes = slope_fits(df)   # every point uses the same seed keys: seed indices resampled jointly
        extra = df.groupby(KEYS)[["lam", "sigma", "eps_certified", "max_error", "carried_bytes"]].first()
        summ = summarize(df, KEYS, ["regret", "best_loss"]).merge(extra.reset_index(), on=KEYS)
        base = summ[summ["mechanism"] == "tree"][["part", "env", "T", "eps", "regret_mean"]]
        summ = summ.merge(base.rename(columns={"regret_mean": "tree_regret"}), on=["part", "env", "T", "eps"],
                          how="left")
        summ["regret_vs_tree"] = summ["regret_mean"] / summ["tree_regret"]
        # each mechanism against the tree at equal certified (eps, delta), seeds paired
        return {"slopes": slopes, "summary": summ.drop(columns=["tree_regret"]),
                "ratios": ratio_to_base(df, ["part", "env", "T", "eps"], "mechanism", "tree", "regret")}

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

    out, order = [], {m: i for i, m in enumerate(MECHANISMS)}
    for part, envs in (("T", ("realizable", "noisy")), ("eps", ("realizable",))):
        for env in envs:
            g = df[(df["part"] == part) & (df["env"] == env)]
            if len(g) and g[part].nunique() >= 2:
                f = fit_slopes(g, part, "regret", by=["mechanism"], upper_half=part == "T", n_boot=N_BOOT,
                               resample="joint").sort_values("mechanism", key=lambda c: c.map(order))
                f.insert(0, "sweep", part)
                f.insert(2, "env", env)
                out.append(f)
    cols = ["sweep", "mechanism", "env", "slope", "slope_lo", "slope_hi", "n_x", "x_min", "x_max", "n_seeds"]
    return pd.concat(out, ignore_index=True)[cols]


def _slope_table(fits, b) -> str:
    import pandas as pd

    rows = []
    for r in fits.itertuples(index=False):
        g, x = _points_of(b, r.sweep, r.mechanism, r.env, r.x_min, r.x_max)
        rob = _points_of(b, r.sweep, r.mechanism, r.env, -np.inf, np.inf)[0]["regret_over_bound"]
        rows.append({**r._asdict(), "sigma_slope": loglog_slope(g[x], g["sigma"]), "rob_lo": rob.min(),
                     "rob_hi": rob.max(), "bound_slope": loglog_slope(g[x], g["bound"])})
    return S.table("slopes", pd.DataFrame(rows))


def bounds(summary, D: float = 1.0):
    """Each mechanism's theory curve at every point of ``summary`` (with ``Eb2``, ``bound``, ``regret_over_bound``),
    recovered from its planned λ: ``E||b||^2 = D^2 (lambda - 32 beta)^3 / (beta T)`` of the realizable twin."""
    lam_r = summary[summary["env"] == "realizable"][["part", "mechanism", "T", "eps", "lam"]]
    b = summary.merge(lam_r.rename(columns={"lam": "lam_realizable"}), on=["part", "mechanism", "T", "eps"], how="left")
    T = b["T"].astype(float)
    b["Eb2"] = eb2 = dp_ftrl_noise_energy(b["lam_realizable"], T, D, BETA)
    b["bound"] = dp_ftrl_noise_bound(T, eb2, D, _lipschitz(D), BETA, b["env"] == "realizable")
    b["regret_over_bound"] = b["regret_mean"] / b["bound"]
    return b


def _points_of(b, sweep, mechanism, env, x_min, x_max):
    x = "T" if sweep == "T" else "eps"
    g = b[(b["part"] == sweep) & (b["mechanism"] == mechanism) & (b["env"] == env)]
    return g[(g[x] >= x_min) & (g[x] <= x_max)].sort_values(x), x


def same_evidence(df) -> set:
    """``{(part, env, a, b)}``, ``a`` before ``b`` in ``MECHANISMS``: the pairs whose per-seed regrets correlate at
    least :data:`SAME_EVIDENCE` at every point of the sweep (one piece of evidence twice)."""
    out = set()
    for (part, env), g in df.groupby(["part", "env"]):
        cs = [p.pivot(index="seed", columns="mechanism", values="regret").corr() for _, p in g.groupby(["T", "eps"])]
        mechs = [m for m in MECHANISMS if m in cs[0].columns]
        out |= {(part, env, a, b) for a, b in itertools.combinations(mechs, 2)
                if min(float(c.at[a, b]) for c in cs) >= SAME_EVIDENCE}
    return out


def verdicts(summary, twins=(), D: float = 1.0):
    """One verdict row per (sweep, mechanism, instance), T sweep first, against :data:`CLAIMS`: mean regret /
    :func:`bounds` at every point of the sweep; twins (:func:`same_evidence`) share one row ``a = b``."""
    import pandas as pd

    b = bounds(summary, D)
    alias = {(p, e, m2): m1 for p, e, m1, m2 in sorted(twins, key=lambda t: -MECHANISMS.index(t[2]))}

    def root(p, e, m):   # the first mechanism of a chain of twins
        return root(p, e, alias[(p, e, m)]) if (p, e, m) in alias else m

    rows = []
    sweeps = sorted(b.groupby(["part", "env"]), key=lambda kv: (kv[0][0] != "T", kv[0][1] != "realizable"))
    for (part, env), g in sweeps:
        for mech in [m for m in MECHANISMS if m in set(g["mechanism"]) and (part, env, m) not in alias]:
            same = [m for m in MECHANISMS if m in set(g["mechanism"]) and root(part, env, m) == mech]
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
