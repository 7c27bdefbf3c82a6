"""Study ``lazy-switching``: L2P switching behaviour and the lower bound for lazy algorithms (Lazy private online learning; docs/algorithms/lazy.md#studies).

* Z5: real switches (``S_s = 0``), fake switches (``S'_s = 0``), shadow
  resamples and model changes of L2P-MW (paper settings, ``mode="rate"``) vs
  T at fixed eps; predictions ``n_yres ≈ n_batches p``, ``n_fake ≈ p (n_batches - n_real)``,
  ``n_real ≈ n_batches (1 - E[min(1, e^{Delta - 2 B eta})])``.
* Z8: on the lower-bound adversary ``adv_lazy_epochs`` (Thm 4.2), regret of
  the lazy algorithms (L2P-MW, ``private_lazy_sketch``) divided by
  ``T^{1/3} eps^{-2/3}`` stays bounded below, while the binary-tree baseline
  ``tree_ftrl_experts`` (not low-switching) is not bound by it.

* Z7: marginal correctness (LAZY Lemma 3.4 with delta0 = 0, docs/algorithms/lazy.md#l2p): for L2P-MW (block mode)
  against a fixed loss array replayed by ``adv_replay`` (so nu_s is known exactly), the histogram
  over seeds x replicates of the expert x_s played in batch s is compared with the MW distribution
  nu_s = softmax(-eta * sum of the first (s-1)B losses): total variation distance, the expected TV
  of an exact sampler with the same number of draws (the Monte-Carlo noise level), a sound bound
  (noise level + sqrt(ln(1/alpha) / (2n)): TV of n i.i.d. draws has bounded differences 1/n, so
  McDiarmid's inequality bounds its upper tail by alpha), and a chi-square p-value; the same
  statistics against nu_{s-1} (the target one batch late) are a control that must fail.
  Table ``marginals``; plot ``lazy_z7_marginals.png``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import functools
import math
import pathlib

import jax
import jax.numpy as jnp
import numpy as np
from scipy import special, stats

from jaxdp.core import seed_keys, simulate
from jaxdp.core.validation import check_positive_int
from jaxdp.experts import (
    LazyEpochsParams, ReplayParams, adv_lazy_epochs, adv_replay, experts_problem, load_losses,
)
from jaxdp.experts import l2p_mw, l2p_mw_params, tree_ftrl_experts, tree_ftrl_params
from jaxdp.registry import register_study
from jaxdp.studies._common_study import ROOT as ROOT, page_paths
from jaxdp.studies.framework import Param, Study, declare_params, plot_curves, summarize
from jaxdp.studies.lazy_figure1c import learner_and_params

if TYPE_CHECKING:
    import pandas as pd

DOC_PAGE, RESULTS = page_paths("lazy-switching")
BLOCKS = ("lazy-switching regret", "lazy-switching predictions", "lazy-switching marginals")
#: family-wise error of the prediction checks (Bonferroni over every checked cell and count)
FAMILY_ALPHA = 0.05


# --------------------------------------------------------------------------- Z7: marginal correctness


def z7_losses(d: int, B: int, n_batches: int, seed: int = 0) -> np.ndarray:
    """The fixed ``(T = B n_batches, d)`` loss array of Z7: i.i.d. U[0, 1] losses, with a leader that
    rotates every two batches (its losses set to 0), so nu_s moves by TV ~ eta B / 4 per batch
    without collapsing onto one expert.

    Args:
        d: the number of experts.
        B: the batch length.
        n_batches: the number of batches.
        seed: seed of the NumPy generator drawing the losses.

    Returns:
        The ``(B n_batches, d)`` float32 losses in ``[0, 1]``.

    Raises:
        ValueError: a size that is not a positive integer.
    """
    d, B, n_batches = (check_positive_int(n, v) for n, v in (("z7_d", d), ("z7_B", B), ("z7_batches", n_batches)))
    rng = np.random.default_rng(int(seed))
    ell = rng.random((B * n_batches, d))
    for s in range(n_batches):
        ell[s * B:(s + 1) * B, (s // 2) % d] = 0.0
    return load_losses(ell.astype(np.float32), d)


def mw_marginal(losses: np.ndarray, eta: float, n_rounds: int) -> np.ndarray:
    """The multiplicative-weights distribution after the first ``n_rounds`` losses.

    Args:
        losses: the ``(T, d)`` losses.
        eta: the MW step η.
        n_rounds: how many leading rows are summed (0: the uniform distribution).

    Returns:
        ``nu = softmax(-eta * sum_{i < n_rounds} l_i)``, shape ``(d,)``, float64.
    """
    logits = -float(eta) * np.asarray(losses, np.float64)[:int(n_rounds)].sum(0)
    w = np.exp(logits - logits.max())
    return w / w.sum()


def exact_sampler_tv(nu: np.ndarray, n: int) -> float:
    """``E[TV(empirical, nu)]`` for ``n`` i.i.d. draws from ``nu``, exactly: each count is Binomial(n, nu_j)
    and de Moivre's formula gives ``E|X - n q| = 2 k C(n, k) q^k (1 - q)^(n - k + 1)``, ``k = floor(n q) + 1``.

    Args:
        nu: the ``(d,)`` distribution sampled.
        n: the number of draws.

    Returns:
        The expected total variation distance between the draws' histogram and ``nu``.
    """
    nu = np.asarray(nu, np.float64)
    n = int(n)
    q = np.clip(nu, 1e-300, 1.0)
    k = np.floor(n * q) + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        log_mad = (math.log(2.0) + np.log(k) + special.gammaln(n + 1) - special.gammaln(k + 1)
                   - special.gammaln(n - k + 1) + k * np.log(q) + (n - k + 1) * np.log1p(-q))
    mad = np.where((nu > 0) & (nu < 1) & (k <= n), np.exp(log_mad), 0.0)
    return float(0.5 * mad.sum() / n)


def marginal_check(counts: np.ndarray, nu: np.ndarray, alpha: float = 1e-8) -> dict:
    """TV between the histogram ``counts`` and ``nu``, the exact-sampler noise level ``E[TV]``, the sound
    bound ``E[TV] + sqrt(ln(1/alpha) / (2n))`` (McDiarmid: one draw moves TV by at most 1/n, so an exact
    sampler exceeds the bound with probability <= alpha) and the chi-square p-value.

    Args:
        counts: the ``(d,)`` histogram of the played experts.
        nu: the ``(d,)`` target distribution.
        alpha: the bound's false-alarm probability for an exact sampler.

    Returns:
        ``{"n", "tv", "tv_noise", "tv_ratio", "tv_bound", "chi2_p", "ok"}``: the number of draws, the
        TV, ``E[TV]``, their ratio, the bound, the chi-square p-value and ``tv <= tv_bound``.
    """
    counts = np.asarray(counts, np.float64)
    nu = np.asarray(nu, np.float64)
    n = int(round(counts.sum()))
    tv = 0.5 * float(np.abs(counts / n - nu).sum())
    noise = exact_sampler_tv(nu, n)
    bound = noise + math.sqrt(math.log(1.0 / alpha) / (2.0 * n))
    chi2_p = float(stats.chisquare(counts, nu * n).pvalue)
    return {"n": n, "tv": tv, "tv_noise": noise, "tv_ratio": tv / noise, "tv_bound": bound, "chi2_p": chi2_p,
            "ok": bool(tv <= bound)}


@functools.lru_cache(maxsize=None)
def _z7_runner(d: int, B: int, n_batches: int):
    """jit(keys (n,), losses, eta, p) -> (n, n_batches) int32: the expert L2P-MW (block mode) plays in
    each batch, with the simulator's key layout (``k_learn, k_adv, k_init, k_block = split(key, 4)``)."""
    learner, adversary = l2p_mw(d, B), adv_replay(d)

    def one(key, losses, params):
        k_learn, k_adv, k_init, k_block = jax.random.split(key, 4)
        ls = learner.init(k_init, params)
        a_state = adversary.init(k_adv, ReplayParams(losses))

        def rnd(s, t):
            return learner.step(jax.random.fold_in(k_learn, t), s, adversary.loss(a_state, t), params)[0], None

        def blk(s, j):
            x = s.x   # played for rounds jB .. (j+1)B - 1 (x is constant within a batch)
            s, _ = jax.lax.scan(rnd, s, j * B + jnp.arange(B, dtype=jnp.int32))
            s, _ = learner.end_block(jax.random.fold_in(k_block, j), s, params)
            return s, x

        return jax.lax.scan(blk, ls, jnp.arange(n_batches, dtype=jnp.int32))[1]

    return jax.jit(jax.vmap(one, in_axes=(0, None, None)))


def z7_played(keys, losses: np.ndarray, eta: float, p: float, B: int) -> np.ndarray:
    """The experts x_s L2P-MW (block mode) plays in each batch on replayed losses.

    Args:
        keys: ``(n,)`` typed PRNG keys, one per run (split as the simulator splits a run's key).
        losses: the ``(T, d)`` losses replayed, ``T`` a multiple of ``B``.
        eta: the MW step η.
        p: the fake-switch probability.
        B: the batch length.

    Returns:
        ``(n, T // B)`` int32: the expert played in each batch of each run.

    Raises:
        ValueError: ``T`` not a multiple of ``B``, or invalid losses or parameters.
    """
    losses = load_losses(losses)
    B = check_positive_int("B", B)
    T, d = losses.shape
    if T % B:
        raise ValueError(f"losses must have a multiple of B={B} rows, got {T}")
    params = l2p_mw_params(eta, p, B, block_size=B)
    return np.asarray(_z7_runner(d, B, T // B)(keys, jnp.asarray(losses), params))


def _z7_config(cfg):
    return (int(cfg["z7_d"]), int(cfg["z7_B"]), int(cfg["z7_batches"]), float(cfg["z7_eta"]), float(cfg["z7_p"]))


def z7_table(df, cfg: dict, alpha: float = 1e-8):
    """Per batch s: histogram of x_s (pooled over seeds x replicates) vs nu_s, and the control vs nu_{s-1}.

    Args:
        df: the per-seed results; its Z7 rows hold the counts ``count_j`` per checked batch ``s``.
        cfg: the resolved configuration (the Z7 sizes, step, and the root seed of the losses).
        alpha: the false-alarm probability of the sound bound (:func:`marginal_check`).

    Returns:
        One row per batch: ``s``, its first ``round``, the statistics of :func:`marginal_check`
        against nu_s, the control's ``tv_vs_prev``, ``chi2_p_vs_prev``, ``prev_rejected``, and
        ``tv_nu_prev_nu`` (TV between nu_{s-1} and nu_s).
    """
    import pandas as pd

    d, B, nb, eta, _ = _z7_config(cfg)
    losses = z7_losses(d, B, nb, int(cfg["seed"]))
    z = df[df["exp"] == "Z7"]
    rows = []
    for s, g in z.groupby("s", sort=True):
        s = int(s)
        counts = g[[f"count_{j}" for j in range(d)]].to_numpy(float).sum(0)
        r = marginal_check(counts, mw_marginal(losses, eta, (s - 1) * B), alpha)
        row = {"s": s, "round": (s - 1) * B + 1, **r}
        if s >= 2:
            w = marginal_check(counts, mw_marginal(losses, eta, (s - 2) * B), alpha)
            row.update(tv_vs_prev=w["tv"], chi2_p_vs_prev=w["chi2_p"], prev_rejected=not w["ok"])
        else:
            row.update(tv_vs_prev=np.nan, chi2_p_vs_prev=np.nan, prev_rejected=False)
        row["tv_nu_prev_nu"] = (0.5 * float(np.abs(mw_marginal(losses, eta, (s - 1) * B)
                                                   - mw_marginal(losses, eta, max(s - 2, 0) * B)).sum()))
        rows.append(row)
    return pd.DataFrame(rows)


def z7_plot(df, cfg: dict, path: pathlib.Path) -> pathlib.Path:
    """Left: empirical frequencies of x_s vs nu_s for each batch s checked; right: TV vs s with the
    exact-sampler noise level and the sound bound.

    Args:
        df: the per-seed results with the Z7 rows.
        cfg: the resolved configuration.
        path: the PNG written.

    Returns:
        ``path``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    d, B, nb, eta, p = _z7_config(cfg)
    losses = z7_losses(d, B, nb, int(cfg["seed"]))
    t = z7_table(df, cfg)
    z = df[df["exp"] == "Z7"]
    fig, (a0, a1) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=110)
    ss = list(t["s"])
    width = 0.8 / max(len(ss), 1)
    exact_x, exact_p = [], []
    for i, s in enumerate(ss):
        counts = z[z["s"] == s][[f"count_{j}" for j in range(d)]].to_numpy(float).sum(0)
        xs = np.arange(d) + (i - (len(ss) - 1) / 2) * width
        a0.bar(xs, counts / counts.sum(), width=width, alpha=0.6, label=f"x_{s} (empirical)")
        exact_x.append(xs)
        exact_p.append(mw_marginal(losses, eta, (s - 1) * B))
    # the exact marginals of every batch as one marker-only line, so it has one legend entry
    a0.plot(np.concatenate(exact_x), np.concatenate(exact_p), color="k", marker="_", linestyle="None",
            ms=max(3.0, 60 * width), mew=2, label="nu_s (exact)")
    a0.set_xlabel("expert")
    a0.set_ylabel("probability")
    a0.set_title(f"Z7: x_s over {int(t['n'].iloc[0])} runs vs nu_s (d={d}, B={B}, eta={eta}, p={p})", fontsize=9)
    a0.legend(fontsize=7)
    a1.plot(t["s"], t["tv"], "o-", label="TV(x_s, nu_s)")
    a1.plot(t["s"], t["tv_noise"], "k--", label="E[TV] of an exact sampler")
    a1.plot(t["s"], t["tv_bound"], "r:", label="sound bound (alpha=1e-8)")
    tp = t[t["s"] >= 2]
    a1.plot(tp["s"], tp["tv_vs_prev"], "x-", label="control: TV(x_s, nu_{s-1})")
    a1.set_xlabel("batch s")
    a1.set_ylabel("total variation")
    a1.set_title("LAZY Lemma 3.4 (delta0 = 0): TV at Monte-Carlo noise level", fontsize=9)
    a1.grid(True, alpha=0.3)
    a1.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


PARAMS = declare_params("lazy-switching", {
    "seeds": Param("int", lo=1), "seed": Param("int", lo=0), "d": Param("int", lo=2, hi=2 ** 20),
    "T": Param("int", many=True, lo=2, hi=2 ** 31 - 1),
    "eps": Param("float", many=True, lo=0.0, hi=1.0, lo_open=True, help="LAZY's regime eps <= 1"),
    "delta": Param("float", lo=0.0, hi=1.0, lo_open=True, hi_open=True),
    "learners": Param("str", many=True, choices=("l2p_paper", "l2p_retuned", "sketch", "hedge", "tree"),
                      allow_empty=True),
    "z7": Param("bool"), "z7_d": Param("int", lo=2, hi=64), "z7_B": Param("int", lo=1, hi=2 ** 16),
    "z7_batches": Param("int", lo=1, hi=2 ** 16), "z7_eta": Param("float", lo=0.0, lo_open=True),
    "z7_p": Param("float", lo=0.0, hi=1.0, lo_open=True), "z7_s": Param("int", many=True, lo=1),
    "z7_reps": Param("int", lo=1, hi=2 ** 24),
})


@register_study(
    "lazy-switching",
    defaults={"seeds": 256, "d": 16, "T": [1024, 2048, 4096, 8192, 16384, 32768, 65536], "eps": [0.05, 0.2],
              "delta": 1e-6, "seed": 0, "learners": ["l2p_paper", "sketch", "tree"],
              "z7": True, "z7_d": 6, "z7_B": 4, "z7_batches": 16, "z7_eta": 0.25, "z7_p": 0.2,
              "z7_s": [1, 2, 4, 8, 16], "z7_reps": 512},
    quick={"seeds": 8, "d": 8, "T": [512, 1024, 2048], "eps": [0.1], "learners": ["l2p_paper", "tree"],
           "z7_reps": 1024},
    description="L2P switches / fake switches / shadow resamples vs T (Z5), marginal of x_s vs nu_s (Z7) and the "
                "lazy lower bound vs the binary-tree baseline (Z8)")
def build(cfg: dict) -> Study:
    """The ``lazy-switching`` study: the Z5/Z8 points (learner × ε × ``T`` on the lower-bound
    adversary) and, with ``z7``, one Z7 point per checked batch.

    Args:
        cfg: the resolved configuration: ``d``, the ``T`` and ``eps`` grids, ``delta``, ``learners``,
            the Z7 settings (``z7``, ``z7_d``, ``z7_B``, ``z7_batches``, ``z7_eta``, ``z7_p``,
            ``z7_s``, ``z7_reps``), seeds and the root seed.

    Returns:
        The :class:`jaxdp.studies.Study`; its tables are ``switching`` and ``summary`` (Z5, Z8) and
        ``marginals`` (Z7, :func:`z7_table`).

    Raises:
        ValueError: invalid Z7 settings, a checked batch outside ``[1, z7_batches]``, or an empty grid.
    """
    d, Ts = int(cfg["d"]), [int(t) for t in cfg["T"]]
    T_max = max(Ts)
    points = [{"exp": "Z5_Z8", "learner": ln, "eps": float(e), "T": T}
              for ln in cfg["learners"] for e in cfg["eps"] for T in Ts]
    if cfg["z7"]:
        zd, zB, znb, zeta, zp = _z7_config(cfg)
        z_losses = z7_losses(zd, zB, znb, int(cfg["seed"]))   # validates z7_d, z7_B, z7_batches
        l2p_mw_params(zeta, zp, zB, block_size=zB)            # validates z7_eta, z7_p
        reps = check_positive_int("z7_reps", cfg["z7_reps"])
        z_s = [int(s) for s in cfg["z7_s"]]
        if not z_s or min(z_s) < 1 or max(z_s) > znb:
            raise ValueError(f"z7_s must be batch indices in [1, z7_batches={znb}], got {cfg['z7_s']!r}")
        points += [{"exp": "Z7", "learner": "l2p_mw_block", "s": s} for s in sorted(set(z_s))]
    if not points:
        raise ValueError("lazy-switching: empty grid (no learners and z7 = false)")

    def run_z7(pts, seeds):
        # replicate r of seed index i: fold_in(seed_keys(seed, i), r); histograms per seed over replicates
        keys = seed_keys(int(cfg["seed"]), seeds)
        rep_idx = jnp.arange(reps, dtype=jnp.uint32)
        rep_keys = jax.vmap(lambda k: jax.vmap(lambda r: jax.random.fold_in(k, r))(rep_idx))(keys)
        xs = z7_played(rep_keys.reshape(-1), z_losses, zeta, zp, zB).reshape(len(seeds), reps, znb)
        out = []
        for pt in pts:
            x = xs[:, :, int(pt["s"]) - 1]
            out.append({f"count_{j}": (x == j).sum(1).astype(float) for j in range(zd)})
        return out

    def run(pts, seeds):
        if pts[0]["exp"] == "Z7":
            return run_z7(pts, seeds)
        keys = seed_keys(int(cfg["seed"]), seeds)
        out = []
        for pt in pts:
            T, eps = int(pt["T"]), float(pt["eps"])
            if pt["learner"] == "tree":
                L, params, info = tree_ftrl_experts(d, T_max), tree_ftrl_params(d, T, eps, float(cfg["delta"]),
                                                                                T_max=T_max), {"p": 0.0, "B": 1}
            else:
                L, params, info = learner_and_params(pt["learner"], d, T, eps, float(cfg["delta"]))
            ap = LazyEpochsParams(T=jnp.int32(T), eps=jnp.float32(eps), epoch_len=jnp.int32(0))
            r = simulate(L, adv_lazy_epochs(d), experts_problem(), params, ap, keys, T, T_max=T_max, n_checkpoints=4)
            n = len(seeds)
            m = {"expected_regret": r["expected_regret"], "switches": r["switches"].astype(float),
                 "lb_ratio": r["expected_regret"] / (T ** (1 / 3) * eps ** (-2 / 3))}
            for k in ("n_real", "n_fake", "n_yres", "n_batches"):
                m[k] = r[k].astype(float) if k in r else np.zeros(n)
            m["p"] = np.full(n, float(info.get("p", 0.0)))
            out.append(m)
        return out

    def switching_summary(df):
        df = df[df["exp"] == "Z5_Z8"]
        if not len(df):
            return None
        s = summarize(df, by=["learner", "eps", "T"],
                      metrics=["expected_regret", "lb_ratio", "switches", "n_real", "n_fake", "n_yres", "n_batches", "p"])
        s["n_yres_pred"] = s["n_batches_mean"] * s["p_mean"]
        s["n_fake_pred"] = (s["n_batches_mean"] - s["n_real_mean"]) * s["p_mean"]
        return s

    def analyze(df):
        tables = {}
        s = switching_summary(df)
        if s is not None:
            cols = ["learner", "eps", "T", "expected_regret_mean", "lb_ratio_mean", "switches_mean", "n_real_mean",
                    "n_fake_mean", "n_fake_pred", "n_yres_mean", "n_yres_pred"]
            tables["switching"] = s[cols]
        if (df["exp"] == "Z7").any():
            tables["marginals"] = z7_table(df, cfg)
        if s is not None:
            tables["summary"] = s
        return tables

    def plot(df, outdir: pathlib.Path):
        paths = []
        s = switching_summary(df)
        if s is not None:
            s["curve"] = s["learner"] + " eps=" + s["eps"].astype(str)
            paths.append(plot_curves(s, x="T", y="lb_ratio", hue="curve", path=outdir / "lazy_lb_ratio.png",
                                     title="regret / (T^{1/3} eps^{-2/3}) on adv_lazy_epochs (Thm 4.2)"))
            sl = s[s["learner"] != "tree"]
            if len(sl):
                paths.append(plot_curves(sl, x="T", y="switches", hue="curve", path=outdir / "lazy_switches.png",
                                         title="L2P model changes vs T"))
        if (df["exp"] == "Z7").any():
            paths.append(z7_plot(df, cfg, outdir / "lazy_z7_marginals.png"))
        return paths

    def check_point(pt):
        if pt["exp"] != "Z5_Z8":
            return
        T, eps = int(pt["T"]), float(pt["eps"])
        if pt["learner"] == "tree":
            tree_ftrl_params(d, T, eps, float(cfg["delta"]), T_max=T_max)
        else:
            learner_and_params(pt["learner"], d, T, eps, float(cfg["delta"]))
        LazyEpochsParams(T=jnp.int32(T), eps=jnp.float32(eps), epoch_len=jnp.int32(0))

    return Study(name="lazy-switching", points=points, seeds=int(cfg["seeds"]), run=run, check_point=check_point,
                 group_by=("exp", "learner"), analyze=analyze, plot=plot, config=cfg,
                 description="L2P switching (Z5), marginal correctness (Z7) and the lazy lower bound (Z8)")


# --------------------------------------------------------------------------- the docs page, generated


def prediction_checks(df) -> "pd.DataFrame":
    """Per L2P cell, the exact predictions of the counts, tested on the per-seed residuals.

    At every batch boundary L2P draws ``S'_s`` and ``A_s`` (each 0 with probability ``p``) independently of
    everything else, so per seed ``n_yres - p·n_batches`` and ``n_fake - p·(n_batches - n_real)`` have
    expectation exactly 0. Each residual mean is tested with its z-score against the two-sided normal quantile
    at ``FAMILY_ALPHA / m`` (``m`` checks in all): "holds" when ``|z|`` is below it, else "misses".

    Args:
        df: the study's ``results.csv`` rows.

    Returns:
        One row per (learner, ε, T, count): measured mean, predicted mean, z, the threshold and the verdict.
    """
    import pandas as pd

    d = df[(df["exp"] == "Z5_Z8") & df["learner"].astype(str).str.startswith("l2p") & (df["p"] > 0)]
    rows = []
    for (learner, eps, T), g in d.groupby(["learner", "eps", "T"], sort=True):
        p = float(g["p"].iloc[0])
        for count, pred in (("fake switches", p * (g["n_batches"] - g["n_real"])),
                            ("shadow resamples", p * g["n_batches"])):
            meas = g["n_fake"] if count == "fake switches" else g["n_yres"]
            r = (meas - pred).to_numpy(float)
            se = float(r.std(ddof=1) / math.sqrt(len(r)))
            rows.append(dict(learner=learner, eps=float(eps), T=int(T), count=count, n_seeds=len(r),
                             measured=float(meas.mean()), predicted=float(pred.mean()),
                             z=float(r.mean() / se) if se > 0 else 0.0))
    out = pd.DataFrame(rows)
    m = max(len(out), 1)
    crit = float(stats.norm.isf(FAMILY_ALPHA / (2 * m)))
    out["threshold"] = crit
    out["verdict"] = np.where(out["z"].abs() <= crit, "holds", "misses")
    return out


def page_blocks(results_dir=None) -> dict:
    """The generated blocks of ``docs/results/lazy-switching.md`` from a kept run.

    Args:
        results_dir: the results directory (default ``results/lazy-switching``).

    Returns:
        ``{block name: Markdown}``: every (learner, ε, T) cell's regret, regret over the lower-bound rate and
        switches; every prediction check; every checked batch of the marginal test.
    """
    import pandas as pd

    from jaxdp.studies.analysis import _pow2, fmt_ci, fmt_num, markdown_table

    d = pathlib.Path(results_dir) if results_dir is not None else RESULTS
    s = pd.read_csv(d / "summary.csv").sort_values(["learner", "eps", "T"])
    df = pd.read_csv(d / "results.csv")
    n = int(s["n_seeds"].min())
    rows = [[r.learner, fmt_num(r.eps, 2), _pow2(r.T),
             fmt_ci(r.expected_regret_mean, r.expected_regret_lo, r.expected_regret_hi, 1),
             fmt_ci(r.lb_ratio_mean, r.lb_ratio_lo, r.lb_ratio_hi, 2),
             fmt_ci(r.switches_mean, r.switches_lo, r.switches_hi, 0)] for r in s.itertuples(index=False)]
    regret = (f"{n} seeds per cell; 95% bootstrap intervals per cell (the cells share seed keys, so differences "
              "between learners at one cell are paired).\n\n"
              + markdown_table(["learner", "ε", "T", "E[regret] [95% CI]", "regret / (T^{1/3} ε^{-2/3})",
                                "switches"], rows))
    c = prediction_checks(df)
    crow = [[r.learner, fmt_num(r.eps, 2), _pow2(r.T), r.count, fmt_num(r.measured, 2),
             fmt_num(r.predicted, 2), fmt_num(r.z, 2), r.verdict] for r in c.itertuples(index=False)]
    n_miss = int((c["verdict"] == "misses").sum())
    pred = (f"{len(c)} checks, family-wise α = {FAMILY_ALPHA:g}: a check holds when |z| ≤ "
            f"{float(c['threshold'].iloc[0]):.2f}; {len(c) - n_miss} hold, {n_miss} miss.\n\n"
            + markdown_table(["learner", "ε", "T", "count", "measured mean", "predicted mean", "z", "verdict"], crow))
    m = pd.read_csv(d / "marginals.csv")
    mrow = [[int(r.s), f"{r.tv:.4f}", f"{r.tv_noise:.4f}", f"{r.tv_bound:.4f}", fmt_num(r.chi2_p, 3),
             "holds" if bool(r.ok) else "misses",
             "—" if not np.isfinite(r.chi2_p_vs_prev) else f"{r.chi2_p_vs_prev:.2g}"] for r in m.itertuples(index=False)]
    marg = markdown_table(["batch s", "TV(x_s, ν_s)", "TV of an exact sampler", "sound TV bound", "χ² p-value",
                           "verdict", "control: χ² p vs ν_{s−1}"], mrow)
    return dict(zip(BLOCKS, (regret, pred, marg)))


def publish(results_dir=None) -> list:
    """Rewrite the generated blocks of ``docs/results/lazy-switching.md`` from a kept run (:func:`page_blocks`).

    Args:
        results_dir: the results directory (default ``results/lazy-switching``).

    Returns:
        The names of the blocks that changed.
    """
    from jaxdp.studies.analysis import publish_blocks

    return publish_blocks(DOC_PAGE, page_blocks(results_dir))
