"""``lazy-switching``: L2P's switches (Z5), the marginal of its played expert (Z7) and the lower bound for lazy
algorithms (Z8); Lazy private online learning, docs/algorithms/lazy.md#studies.

Spec: ``specs/lazy-switching.toml``; page prose: ``specs/lazy-switching.md``. Z5 tests the exact expected counts of
fake switches and shadow resamples; Z8 reports regret / (T^{1/3} ε^{-2/3}) on ``adv_lazy_epochs`` (Thm 4.2); Z7 is
LAZY Lemma 3.4 (:func:`~jaxdp.experts.lazy_setups.z7_marginal_checks`) on L2P-MW in block mode.
"""
from __future__ import annotations

import pathlib

import numpy as np

from ..core import seed_keys, simulate
from ..experts import adversary_and_params, experts_problem, l2p_expected_counts, l2p_mw_params, learner_and_params
from ..experts.lazy_setups import mw_marginal, z7_histograms, z7_losses, z7_marginal_checks
from .claims import zero_mean_checks
from .framework import Study, plot_curves, summarize
from .plots import plot_bars_beside_curves
from .specs import StudySpec

S = StudySpec("lazy-switching", __name__)
DOC_PAGE, RESULTS, BLOCKS, FAMILY_ALPHA = S.doc_page, S.results, S.blocks, S.data["family_alpha"]
Z7_CURVES = {"tv": "TV(x_s, nu_s)", "tv_noise": "E[TV] of an exact sampler", "tv_bound": "sound bound (alpha=1e-8)",
             "tv_vs_prev": "control: TV(x_s, nu_{s-1})"}
COUNTS = ["expected_regret", "lb_ratio", "switches", "n_real", "n_fake", "n_yres", "n_batches", "p"]


def _z7_config(cfg):
    return (int(cfg["z7_d"]), int(cfg["z7_B"]), int(cfg["z7_batches"]), float(cfg["z7_eta"]), float(cfg["z7_p"]))


def z7_table(df, cfg: dict, alpha: float = 1e-8):
    """Per checked batch s: :func:`~jaxdp.experts.lazy_setups.z7_marginal_checks` of the pooled histogram of x_s
    against nu_s, and the control against nu_{s-1}."""
    import pandas as pd

    d, B, nb, eta, _ = _z7_config(cfg)
    counts = {int(s): g.filter(like="count_").to_numpy(float).sum(0) for s, g in df[df["exp"] == "Z7"].groupby("s")}
    return pd.DataFrame(z7_marginal_checks(counts, z7_losses(d, B, nb, int(cfg["seed"])), eta, B, alpha))


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

    def run(pts, seeds):
        if pts[0]["exp"] == "Z7":   # per seed, the histograms over z7_reps replicates (z7_histograms)
            h = z7_histograms(seed_keys(int(cfg["seed"]), seeds), int(cfg["z7_reps"]), z_losses, zeta, zp, zB)
            return [{f"count_{j}": h[:, int(pt["s"]) - 1, j].astype(float) for j in range(zd)} for pt in pts]
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
        return s.assign(n_fake_pred=fake)

    def analyze(df):
        s = switching_summary(df)
        tables = {} if s is None else {"switching": s[S.data["switching_columns"]]}
        tables.update({"marginals": z7_table(df, cfg)} if (df["exp"] == "Z7").any() else {})
        return tables if s is None else {**tables, "summary": s}

    def plot(df, outdir: pathlib.Path):
        paths, s = [], switching_summary(df)
        if s is not None:
            s["curve"] = s["learner"] + " eps=" + s["eps"].astype(str)
            paths.append(plot_curves(s, x="T", y="lb_ratio", hue="curve", path=outdir / "lazy_lb_ratio.png",
                                     title="regret / (T^{1/3} eps^{-2/3}) on adv_lazy_epochs (Thm 4.2)"))
            if len(sl := s[s["learner"] != "tree"]):
                paths.append(plot_curves(sl, x="T", y="switches", hue="curve", path=outdir / "lazy_switches.png",
                                         title="L2P model changes vs T"))
        if (df["exp"] == "Z7").any():   # x_s's histogram vs nu_s; TV beside an exact sampler's noise, bound, control
            t, z = z7_table(df, cfg), df[df["exp"] == "Z7"]
            h = {int(s): g.filter(like="count_").to_numpy(float).sum(0) for s, g in z.groupby("s")}
            c = t.melt(id_vars="s", value_vars=list(Z7_CURVES), var_name="curve", value_name="tv_mean").dropna()
            paths.append(plot_bars_beside_curves(
                {f"x_{s} (empirical)": v / v.sum() for s, v in h.items()}, [mw_marginal(z_losses, zeta, (s - 1) * zB)
                for s in h], c, "s", "tv", outdir / "lazy_z7_marginals.png", mark_label="nu_s (exact)",
                bar_title=f"Z7: x_s over {int(t['n'].iloc[0])} runs vs nu_s (d={zd}, B={zB}, eta={zeta}, p={zp})",
                bar_xlabel="expert", bar_ylabel="probability", hue="curve", hue_order=list(Z7_CURVES),
                hue_labels=Z7_CURVES, logx=False, logy=False, xlabel="batch s", ylabel="total variation",
                title="LAZY Lemma 3.4 (delta0 = 0): TV at Monte-Carlo noise level"))
        return paths

    def check_point(pt):
        if pt["exp"] == "Z5_Z8":
            learner(pt), adversary_and_params("paper_epochs", d, int(pt["T"]), float(pt["eps"]))

    return S.study(cfg, points=points, run=run, check_point=check_point, analyze=analyze, plot=plot)


def prediction_checks(df):
    """Per L2P cell and count (fake switches, shadow resamples), :func:`~jaxdp.studies.claims.zero_mean_checks` of
    its exact prediction (``p (n_batches - n_real)``, ``p n_batches``) at family-wise error ``FAMILY_ALPHA``."""
    d = df[(df["exp"] == "Z5_Z8") & df["learner"].astype(str).str.startswith("l2p") & (df["p"] > 0)]
    cells = []
    for (learner, eps, T), g in d.groupby(["learner", "eps", "T"], sort=True):
        fake, yres = l2p_expected_counts(g["n_batches"], g["n_real"], float(g["p"].iloc[0]))
        cells += [(dict(learner=learner, eps=float(eps), T=int(T), count=count), meas, pred) for count, meas, pred in
                  (("fake switches", g["n_fake"], fake), ("shadow resamples", g["n_yres"], yres))]
    return zero_mean_checks(cells, FAMILY_ALPHA)


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of the results page from a kept run (default ``results/lazy-switching``)."""
    import pandas as pd

    d = pathlib.Path(results_dir or RESULTS)
    s = pd.read_csv(d / "summary.csv").sort_values(["learner", "eps", "T"])
    c = prediction_checks(pd.read_csv(d / "results.csv"))
    n_miss = int((c["verdict"] == "misses").sum())
    return {BLOCKS[0]: S.render(BLOCKS[0], S=int(s["n_seeds"].min()), table=S.table("regret", s)),
            BLOCKS[1]: S.render(BLOCKS[1], checks=len(c), alpha=f"{FAMILY_ALPHA:g}", n_hold=len(c) - n_miss,
                                crit=f"{float(c['threshold'].iloc[0]):.2f}", n_miss=n_miss,
                                table=S.table("predictions", c)),
            BLOCKS[2]: S.render(BLOCKS[2], table=S.table("marginals", pd.read_csv(d / "marginals.csv")))}


publish = S.publisher(page_blocks)
