"""``lazy-switching``: L2P's switches (Z5), the marginal of its played expert (Z7) and the lower bound for lazy
algorithms (Z8); Lazy private online learning, docs/algorithms/lazy.md#studies.

Spec: ``specs/lazy-switching.toml``; page prose: ``specs/lazy-switching.md``. Z5 tests the exact expected counts of
fake switches and shadow resamples; Z8 reports regret / (T^{1/3} ε^{-2/3}) on ``adv_lazy_epochs`` (Thm 4.2); Z7 is
LAZY Lemma 3.4 (:func:`~jaxdp.experts.lazy_setups.z7_marginal_checks`) on L2P-MW in block mode.
"""
from __future__ import annotations

import math
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from ..core import seed_keys, simulate
from ..experts import (
    adversary_and_params, experts_problem, l2p_expected_counts, l2p_mw_params, learner_and_params, z7_losses, z7_played,
)
from ..experts.lazy_setups import z7_marginal_checks
from .framework import Study, plot_curves, summarize
from .specs import StudySpec

S = StudySpec("lazy-switching", __name__)
DOC_PAGE, RESULTS, BLOCKS, FAMILY_ALPHA = S.doc_page, S.results, S.blocks, S.data["family_alpha"]
COUNTS = ["expected_regret", "lb_ratio", "switches", "n_real", "n_fake", "n_yres", "n_batches", "p"]


def _z7_config(cfg):
    return (int(cfg["z7_d"]), int(cfg["z7_B"]), int(cfg["z7_batches"]), float(cfg["z7_eta"]), float(cfg["z7_p"]))


def z7_table(df, cfg: dict, alpha: float = 1e-8):
    """Per checked batch s: :func:`~jaxdp.experts.lazy_setups.z7_marginal_checks` of the pooled histogram of x_s
    against nu_s, and the control against nu_{s-1}."""
    import pandas as pd

    d, B, nb, eta, _ = _z7_config(cfg)
    counts = {int(s): g[[f"count_{j}" for j in range(d)]].to_numpy(float).sum(0)
              for s, g in df[df["exp"] == "Z7"].groupby("s", sort=True)}
    return pd.DataFrame(z7_marginal_checks(counts, z7_losses(d, B, nb, int(cfg["seed"])), eta, B, alpha))


def z7_plot(df, cfg: dict, path: pathlib.Path) -> pathlib.Path:
    """TV(x_s, nu_s) per checked batch beside an exact sampler's noise level, the sound bound and the control."""
    d, B, _, eta, p = _z7_config(cfg)
    curves = {"tv": "TV(x_s, nu_s)", "tv_noise": "E[TV] of an exact sampler", "tv_bound": "sound bound (alpha=1e-8)",
              "tv_vs_prev": "control: TV(x_s, nu_{s-1})"}
    t = z7_table(df, cfg).melt(id_vars="s", value_vars=list(curves), var_name="curve", value_name="tv_mean").dropna()
    return plot_curves(t.assign(curve=t["curve"].map(curves)), "s", "tv", path, hue="curve", logx=False,
                       title=f"Z7, LAZY Lemma 3.4 (delta0 = 0): x_s vs nu_s (d={d}, B={B}, eta={eta}, p={p})",
                       xlabel="batch s", ylabel="total variation")


@S.register
def build(cfg: dict) -> Study:
    """The Z5/Z8 points (learner × ε × ``T`` on the lower-bound adversary) and, with ``z7``, one Z7 point per checked
    batch. Tables: ``switching`` and ``summary`` (Z5, Z8) and ``marginals`` (Z7, :func:`z7_table`)."""
    d, T_max, delta = int(cfg["d"]), max(int(t) for t in cfg["T"]), float(cfg["delta"])
    points = [{"exp": "Z5_Z8", **p, "eps": float(p["eps"])} for p in S.points(cfg)]
    if cfg["z7"]:
        zd, zB, znb, zeta, zp = _z7_config(cfg)
        z_losses = z7_losses(zd, zB, znb, int(cfg["seed"]))
        l2p_mw_params(zeta, zp, zB, block_size=zB)            # validates z7_eta, z7_p
        z_s = sorted({int(s) for s in cfg["z7_s"]})
        if not z_s or max(z_s) > znb:
            raise ValueError(f"z7_s must be batch indices in [1, z7_batches={znb}], got {cfg['z7_s']!r}")
        points += [{"exp": "Z7", "learner": "l2p_mw_block", "s": s} for s in z_s]
    if not points:
        raise ValueError("lazy-switching: empty grid (no learners and z7 = false)")

    def learner(pt):
        return learner_and_params(pt["learner"], d, int(pt["T"]), float(pt["eps"]), delta, T_max=T_max)

    def run_z7(pts, seeds):
        # replicate r of seed index i: fold_in(seed_keys(seed, i), r); histograms per seed over replicates
        reps = int(cfg["z7_reps"])
        rep_idx, keys = jnp.arange(reps, dtype=jnp.uint32), seed_keys(int(cfg["seed"]), seeds)
        keys = jax.vmap(lambda k: jax.vmap(lambda r: jax.random.fold_in(k, r))(rep_idx))(keys)
        xs = z7_played(keys.reshape(-1), z_losses, zeta, zp, zB).reshape(len(seeds), reps, znb)
        return [{f"count_{j}": (xs[:, :, int(pt["s"]) - 1] == j).sum(1).astype(float) for j in range(zd)}
                for pt in pts]

    def run(pts, seeds):
        if pts[0]["exp"] == "Z7":
            return run_z7(pts, seeds)
        keys, out, n = seed_keys(int(cfg["seed"]), seeds), [], len(seeds)
        for pt in pts:
            T, eps = int(pt["T"]), float(pt["eps"])
            (L, params, info), (A, ap) = learner(pt), adversary_and_params("paper_epochs", d, T, eps)
            r = simulate(L, A, experts_problem(), params, ap, keys, T, T_max=T_max, n_checkpoints=4)
            m = {"expected_regret": r["expected_regret"], "switches": r["switches"].astype(float),
                 "lb_ratio": r["expected_regret"] / (T ** (1 / 3) * eps ** (-2 / 3))}
            m.update({k: r[k].astype(float) if k in r else np.zeros(n) for k in COUNTS[3:7]})
            m["p"] = np.full(n, float(info.get("p", 0.0)))
            out.append(m)
        return out

    def switching_summary(df):
        df = df[df["exp"] == "Z5_Z8"]
        if not len(df):
            return None
        s = summarize(df, by=["learner", "eps", "T"], metrics=COUNTS)
        fake, s["n_yres_pred"] = l2p_expected_counts(s["n_batches_mean"], s["n_real_mean"], s["p_mean"])
        s["n_fake_pred"] = fake
        return s

    def analyze(df):
        s, tables = switching_summary(df), {}
        if s is not None:
            tables["switching"] = s[["learner", "eps", "T", "expected_regret_mean", "lb_ratio_mean", "switches_mean",
                                     "n_real_mean", "n_fake_mean", "n_fake_pred", "n_yres_mean", "n_yres_pred"]]
        if (df["exp"] == "Z7").any():
            tables["marginals"] = z7_table(df, cfg)
        if s is not None:
            tables["summary"] = s
        return tables

    def plot(df, outdir: pathlib.Path):
        paths, s = [], switching_summary(df)
        if s is not None:
            s["curve"] = s["learner"] + " eps=" + s["eps"].astype(str)
            paths.append(plot_curves(s, x="T", y="lb_ratio", hue="curve", path=outdir / "lazy_lb_ratio.png",
                                     title="regret / (T^{1/3} eps^{-2/3}) on adv_lazy_epochs (Thm 4.2)"))
            if len(sl := s[s["learner"] != "tree"]):
                paths.append(plot_curves(sl, x="T", y="switches", hue="curve", path=outdir / "lazy_switches.png",
                                         title="L2P model changes vs T"))
        if (df["exp"] == "Z7").any():
            paths.append(z7_plot(df, cfg, outdir / "lazy_z7_marginals.png"))
        return paths

    def check_point(pt):
        if pt["exp"] == "Z5_Z8":
            learner(pt), adversary_and_params("paper_epochs", d, int(pt["T"]), float(pt["eps"]))

    return S.study(cfg, points=points, run=run, check_point=check_point, analyze=analyze, plot=plot)


def prediction_checks(df):
    """Per L2P cell and count (fake switches, shadow resamples), the per-seed residual of its exact prediction
    (``p (n_batches - n_real)``, ``p n_batches``: expectation 0) tested by its z-score against the two-sided normal
    quantile at ``FAMILY_ALPHA / m`` (``m`` checks): "holds" when ``|z|`` is below it, else "misses"."""
    import pandas as pd

    d = df[(df["exp"] == "Z5_Z8") & df["learner"].astype(str).str.startswith("l2p") & (df["p"] > 0)]
    rows = []
    for (learner, eps, T), g in d.groupby(["learner", "eps", "T"], sort=True):
        fake, yres = l2p_expected_counts(g["n_batches"], g["n_real"], float(g["p"].iloc[0]))
        for count, meas, pred in (("fake switches", g["n_fake"], fake), ("shadow resamples", g["n_yres"], yres)):
            r = (meas - pred).to_numpy(float)
            se = float(r.std(ddof=1) / math.sqrt(len(r)))
            rows.append(dict(learner=learner, eps=float(eps), T=int(T), count=count, n_seeds=len(r),
                             measured=float(meas.mean()), predicted=float(pred.mean()),
                             z=float(r.mean() / se) if se > 0 else 0.0))
    out = pd.DataFrame(rows)
    out["threshold"] = float(stats.norm.isf(FAMILY_ALPHA / (2 * max(len(out), 1))))
    out["verdict"] = np.where(out["z"].abs() <= out["threshold"], "holds", "misses")
    return out


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/lazy-switching``)."""
    import pandas as pd

    d = pathlib.Path(results_dir or RESULTS)
    s = pd.read_csv(d / "summary.csv").sort_values(["learner", "eps", "T"])
    c = prediction_checks(pd.read_csv(d / "results.csv"))
    n_miss = int((c["verdict"] == "misses").sum())
    return {BLOCKS[0]: S.render(BLOCKS[0], S=int(s["n_seeds"].min()), table=S.table("regret", s)),
            BLOCKS[1]: S.render(BLOCKS[1], checks=len(c), alpha=f"{FAMILY_ALPHA:g}", n_hold=len(c) - n_miss,
                                crit=f"{float(c['threshold'].iloc[0]):.2f}", n_miss=n_miss, table=S.table("predictions", c)),
            BLOCKS[2]: S.render(BLOCKS[2], table=S.table("marginals", pd.read_csv(d / "marginals.csv")))}


publish = S.publisher(page_blocks)
