"""``lazy-switching``: L2P's switches (Z5), the marginal of its played expert (Z7) and the lower bound for lazy
algorithms (Z8); Lazy private online learning, docs/algorithms/lazy.md#studies.

Spec: ``specs/lazy-switching.toml``; page prose: ``specs/lazy-switching.md``. Z5 tests the exact expected counts of
fake switches and shadow resamples; Z8 reports regret / (T^{1/3} ε^{-2/3}) on ``adv_lazy_epochs`` (Thm 4.2) for the
lazy learners and the binary-tree baseline; Z7 compares the histogram of the expert x_s L2P-MW (block mode) plays in
batch s on replayed losses with nu_s = softmax(-eta * the first (s-1)B losses) (LAZY Lemma 3.4, delta0 = 0).
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
    LazyEpochsParams, adv_lazy_epochs, experts_problem, l2p_expected_counts, l2p_mw_params, learner_and_params,
    marginal_check, mw_marginal, tree_ftrl_experts, tree_ftrl_params, z7_losses, z7_played,
)
from .framework import Study, plot_curves, summarize
from .plots import figure_legend
from .specs import StudySpec

S = StudySpec("lazy-switching", __name__)
DOC_PAGE, RESULTS, BLOCKS, FAMILY_ALPHA = S.doc_page, S.results, S.blocks, S.data["family_alpha"]
COUNTS = ["expected_regret", "lb_ratio", "switches", "n_real", "n_fake", "n_yres", "n_batches", "p"]


def _z7_config(cfg):
    return (int(cfg["z7_d"]), int(cfg["z7_B"]), int(cfg["z7_batches"]), float(cfg["z7_eta"]), float(cfg["z7_p"]))


def z7_table(df, cfg: dict, alpha: float = 1e-8):
    """Per checked batch s: :func:`marginal_check` of the pooled histogram of x_s against nu_s, and the control
    against nu_{s-1} (``tv_vs_prev``, ``chi2_p_vs_prev``, ``prev_rejected``, ``tv_nu_prev_nu``)."""
    import pandas as pd

    d, B, nb, eta, _ = _z7_config(cfg)
    losses, rows = z7_losses(d, B, nb, int(cfg["seed"])), []
    for s, g in df[df["exp"] == "Z7"].groupby("s", sort=True):
        s = int(s)
        counts = g[[f"count_{j}" for j in range(d)]].to_numpy(float).sum(0)
        nu, prev = mw_marginal(losses, eta, (s - 1) * B), mw_marginal(losses, eta, max(s - 2, 0) * B)
        row = {"s": s, "round": (s - 1) * B + 1, **marginal_check(counts, nu, alpha)}
        w = marginal_check(counts, prev, alpha) if s >= 2 else None
        row.update(tv_vs_prev=w["tv"] if w else np.nan, chi2_p_vs_prev=w["chi2_p"] if w else np.nan,
                   prev_rejected=not w["ok"] if w else False, tv_nu_prev_nu=0.5 * float(np.abs(nu - prev).sum()))
        rows.append(row)
    return pd.DataFrame(rows)


def z7_plot(df, cfg: dict, path: pathlib.Path) -> pathlib.Path:
    """Left: the frequencies of x_s vs nu_s per checked batch; right: TV vs s with the noise level and the bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d, B, nb, eta, p = _z7_config(cfg)
    losses, t, z = z7_losses(d, B, nb, int(cfg["seed"])), z7_table(df, cfg), df[df["exp"] == "Z7"]
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    ss = list(t["s"])
    width, exact_x, exact_p = 0.8 / max(len(ss), 1), [], []
    for i, s in enumerate(ss):
        counts = z[z["s"] == s][[f"count_{j}" for j in range(d)]].to_numpy(float).sum(0)
        xs = np.arange(d) + (i - (len(ss) - 1) / 2) * width
        a0.bar(xs, counts / counts.sum(), width=width, alpha=0.6, label=f"x_{s} (empirical)")
        exact_x.append(xs)
        exact_p.append(mw_marginal(losses, eta, (s - 1) * B))
    # the exact marginals of every batch as one marker-only line, so it has one legend entry
    a0.plot(np.concatenate(exact_x), np.concatenate(exact_p), color="k", marker="_", linestyle="None",
            ms=max(3.0, 60 * width), mew=2, label="nu_s (exact)")
    a0.set(xlabel="expert", ylabel="probability")
    a0.set_title(f"Z7: x_s over {int(t['n'].iloc[0])} runs vs nu_s (d={d}, B={B}, eta={eta}, p={p})", fontsize=9)
    a1.plot(t["s"], t["tv"], "o-", label="TV(x_s, nu_s)")
    a1.plot(t["s"], t["tv_noise"], "k--", label="E[TV] of an exact sampler")
    a1.plot(t["s"], t["tv_bound"], "r:", label="sound bound (alpha=1e-8)")
    tp = t[t["s"] >= 2]
    a1.plot(tp["s"], tp["tv_vs_prev"], "x-", label="control: TV(x_s, nu_{s-1})")
    a1.set(xlabel="batch s", ylabel="total variation")
    a1.set_title("LAZY Lemma 3.4 (delta0 = 0): TV at Monte-Carlo noise level", fontsize=9)
    a1.grid(True, alpha=0.3)
    fig.tight_layout()
    figure_legend(fig)   # one legend for both panels, below them: it covers no bar and no curve
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return path


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
        T, eps = int(pt["T"]), float(pt["eps"])
        if pt["learner"] == "tree":
            return tree_ftrl_experts(d, T_max), tree_ftrl_params(d, T, eps, delta, T_max=T_max), {"p": 0.0, "B": 1}
        return learner_and_params(pt["learner"], d, T, eps, delta)

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
            L, params, info = learner(pt)
            ap = LazyEpochsParams(T=jnp.int32(T), eps=jnp.float32(eps), epoch_len=jnp.int32(0))
            r = simulate(L, adv_lazy_epochs(d), experts_problem(), params, ap, keys, T, T_max=T_max, n_checkpoints=4)
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
            learner(pt)
            LazyEpochsParams(T=jnp.int32(int(pt["T"])), eps=jnp.float32(pt["eps"]), epoch_len=jnp.int32(0))

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
