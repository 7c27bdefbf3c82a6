"""``lazy-switching``: L2P's switches (Z5), the marginal of its played expert (Z7) and the lower bound for lazy
algorithms (Z8); Lazy private online learning, docs/algorithms/lazy.md#studies.

Spec: ``specs/lazy-switching.toml``; page prose: ``specs/lazy-switching.md``. Z5 tests the exact expected counts of
fake switches and shadow resamples; Z8 reports regret / (T^{1/3} ε^{-2/3}) on ``adv_lazy_epochs`` (Thm 4.2); Z7 is
LAZY Lemma 3.4 (:func:`~jaxdp.experts.lazy_setups.z7_marginal_checks`) on L2P-MW in block mode.
"""
from __future__ import annotations

import pathlib


from ..core import seed_keys
from ..experts import adversary_and_params, l2p_expected_counts, l2p_mw_params, learner_and_params
from ..experts.lazy_setups import lower_bound_run, mw_marginal, z7_histograms, z7_losses, z7_marginal_checks
from .claims import zero_mean_checks
from .framework import Study, summarize
from .plots import plot_bars_beside_curves, plot_figures
from .specs import StudySpec

S = StudySpec("lazy-switching", __name__)
DOC_PAGE, RESULTS, BLOCKS, FAMILY_ALPHA = S.doc_page, S.results, S.blocks, S.data["family_alpha"]
Z7_CURVES = S.data["z7_figure"]["hue_labels"]
COUNTS = ["expected_regret", "lb_ratio", "switches", "n_real", "n_fake", "n_yres", "n_batches", "p"]


def _z7_config(cfg):
    return (int(cfg["z7_d"]), int(cfg["z7_B"]), int(cfg["z7_batches"]), float(cfg["z7_eta"]), float(cfg["z7_p"]))


def z7_counts(df) -> dict:
    """``{s: the histogram of x_s pooled over every seed and replicate}`` of the Z7 rows."""
    return {int(s): g.filter(like="count_").to_numpy(float).sum(0) for s, g in df[df["exp"] == "Z7"].groupby("s")}


def z7_table(df, cfg: dict, alpha: float = 1e-8):
    """Per checked batch s: :func:`~jaxdp.experts.lazy_setups.z7_marginal_checks` of the pooled histogram of x_s
    (:func:`z7_counts`) against nu_s, and the control against nu_{s-1}."""
    import pandas as pd

    d, B, nb, eta, _ = _z7_config(cfg)
    return pd.DataFrame(z7_marginal_checks(z7_counts(df), z7_losses(d, B, nb, int(cfg["seed"])), eta, B, alpha))


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

    def run(pts, seeds):
        if pts[0]["exp"] == "Z7":   # per seed, the histograms over z7_reps replicates (z7_histograms)
            h = z7_histograms(seed_keys(int(cfg["seed"]), seeds), int(cfg["z7_reps"]), z_losses, zeta, zp, zB)
            return [{f"count_{j}": h[:, int(pt["s"]) - 1, j].astype(float) for j in range(zd)} for pt in pts]
        return [lower_bound_run(seed_keys(int(cfg["seed"]), seeds), pt["learner"], d, int(pt["T"]), float(pt["eps"]),
                                delta, T_max=T_max) for pt in pts]

    def analyze(df):   # Z5/Z8: the summary with L2P's predicted counts; Z7: the marginal checks
        z5, out = df[df["exp"] == "Z5_Z8"], {"marginals": z7_table(df, cfg)} if (df["exp"] == "Z7").any() else {}
        if not len(z5):
            return out
        s = summarize(z5, by=["learner", "eps", "T"], metrics=COUNTS)
        fake, s["n_yres_pred"] = l2p_expected_counts(s["n_batches_mean"], s["n_real_mean"], s["p_mean"])
        s = s.assign(n_fake_pred=fake)
        return {"switching": s[S.data["switching_columns"]], **out, "summary": s}

    def plot(df, outdir: pathlib.Path):   # [[figures]]: Z8's ratio and Z5's switches per (learner, ε)
        curves = df.assign(curve=df["learner"] + " eps=" + df["eps"].astype(str)) if "eps" in df else df
        paths = plot_figures(curves, outdir, S.data["figures"], {})
        if (df["exp"] == "Z7").any():   # x_s's histogram vs nu_s; TV beside an exact sampler's noise, bound, control
            t, h = z7_table(df, cfg), z7_counts(df)
            c = t.melt(id_vars="s", value_vars=list(Z7_CURVES), var_name="curve", value_name="tv_mean").dropna()
            paths.append(plot_bars_beside_curves(
                {f"x_{s} (empirical)": v / v.sum() for s, v in h.items()}, [mw_marginal(z_losses, zeta, (s - 1) * zB)
                for s in h], c, "s", "tv", outdir / "lazy_z7_marginals.png", hue="curve", hue_order=list(Z7_CURVES),
                bar_title=f"Z7: x_s over {int(t['n'].iloc[0])} runs vs nu_s (d={zd}, B={zB}, eta={zeta}, p={zp})",
                **S.data["z7_figure"]))
        return paths

    def check_point(pt):
        if pt["exp"] == "Z5_Z8":
            learner_and_params(pt["learner"], d, int(pt["T"]), float(pt["eps"]), delta, T_max=T_max)
            adversary_and_params("paper_epochs", d, int(pt["T"]), float(pt["eps"]))

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
