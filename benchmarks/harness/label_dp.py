"""Fitted label-DP estimators per second vs N and seeds on CPU: JAX (vmapped over seeds) vs NumPy/SciPy.

Two estimators, each "sample a dataset, privatize, fit, evaluate the exact excess risk on a grid":

* local Laplace-label kNN regression (LABEL Thm 6) — JAX: sorted-window kNN (d = 1);
  NumPy/SciPy: ``scipy.spatial.cKDTree`` query per seed;
* central exponential mechanism per bin (LABEL eq. (17)) — JAX: segment_sum + Gumbel-max;
  NumPy: ``np.add.at`` counts + Gumbel-max per seed.

Compile time is reported apart. ``run(tiny=True)`` is callable from a test.

    python benchmarks/bench_label_dp.py            # N in {10^3, 10^4, 10^5}, seeds in {16, 128}
    python benchmarks/bench_label_dp.py --tiny
"""
from __future__ import annotations

import argparse
import time

import jax
import numpy as np

from jaxdp.label_dp import LabelParams, gen_smooth_classification, gen_smooth_regression, make_estimator, run_grid
from jaxdp.label_dp.planners import plan_for


def _np_knn_one(rng, N, k, eps, grid):
    from scipy import spatial

    X = rng.uniform(size=(N, 1))
    eta = 0.5 * np.sin(2 * np.pi * X[:, 0])
    Y = np.where(rng.uniform(size=N) < (1 + eta) / 2, 1.0, -1.0)
    Z = Y + rng.laplace(0.0, 2.0 / eps, N)
    _, idx = spatial.cKDTree(X).query(grid, k=k)
    pred = Z[idx].mean(1) if k > 1 else Z[idx]
    return np.mean((pred - 0.5 * np.sin(2 * np.pi * grid[:, 0])) ** 2)


def _np_exp_bins_one(rng, N, bins, eps, grid):
    X = rng.uniform(size=N)
    e1 = 0.5 + 0.4 * np.sin(2 * np.pi * X + 0.7)
    Y = (rng.uniform(size=N) < e1).astype(int)
    b = np.minimum((X * bins).astype(int), bins - 1)
    cnt = np.zeros((bins, 2))
    np.add.at(cnt, (b, Y), 1)
    c = np.argmax(eps * cnt / 2 + rng.gumbel(size=cnt.shape), axis=1)
    g = grid[:, 0]
    eg = 0.5 + 0.4 * np.sin(2 * np.pi * g + 0.7)
    E = np.stack([1 - eg, eg], 1)
    pc = c[np.minimum((g * bins).astype(int), bins - 1)]
    return np.mean(E.max(1) - E[np.arange(g.size), pc])


def run(tiny: bool = False, Ns=None, seeds=None, M: int = 1000, eps: float = 1.0) -> list[dict]:
    """Fitted label-DP estimators per second, JAX (vmapped over seeds) against NumPy/SciPy (module docstring).

    For each estimator (``laplace_knn``: local Laplace-label kNN regression; ``exp_mech_bins``: the central
    exponential mechanism per bin), size ``N`` and seed count, the JAX estimator is timed on its second call
    (the first minus the second is the compile time) and the NumPy reference on at most 8 seeds, scaled to
    the seed count. Parameters come from :func:`jaxdp.label_dp.planners.plan_for`.

    Args:
        tiny: a test-sized run (``N`` in {500, 2000}, 4 seeds, ``M = 100``).
        Ns: the dataset sizes (``None``: {10^3, 10^4, 10^5}, or the tiny ones).
        seeds: the seed counts (``None``: {16, 128}, or 4).
        M: the size of the evaluation grid on ``[0, 1]`` (100 when ``tiny``).
        eps: the privacy parameter ε.

    Returns:
        One row per ``(estimator, N, seeds)``: ``jax_fits_per_s``, ``numpy_fits_per_s``, ``speedup``,
        ``compile_s``, and the mean excess risk of each implementation.
    """
    Ns = Ns or ([500, 2000] if tiny else [1000, 10_000, 100_000])
    seeds = seeds or ([4] if tiny else [16, 128])
    M = 100 if tiny else M
    rows = []
    grid = (np.arange(M) + 0.5) / M
    for name, gen, method, np_fn in [
        ("laplace_knn", gen_smooth_regression(), "local_laplace_knn", _np_knn_one),
        ("exp_mech_bins", gen_smooth_classification(), "central_exp_bins", _np_exp_bins_one),
    ]:
        for N in Ns:
            fn = make_estimator(gen, method, N_max=N, M=M, bins_max=1024)
            pl = plan_for(method, N=N, eps=eps)
            prm = LabelParams(eps, pl["bins"], pl["k"], pl["clip"])
            for S in seeds:
                keys = jax.random.split(jax.random.key(0), S)
                t0 = time.perf_counter()
                run_grid(fn, keys, np.array([N]), prm)
                t_first = time.perf_counter() - t0
                t0 = time.perf_counter()
                out = run_grid(fn, keys, np.array([N]), prm)
                t_jax = time.perf_counter() - t0
                rng = np.random.default_rng(0)
                n_np = max(1, min(S, 8))
                t0 = time.perf_counter()
                arg = pl["k"] if method == "local_laplace_knn" else pl["bins"]
                ref = [np_fn(rng, N, arg, eps, grid[:, None]) for _ in range(n_np)]
                t_np = (time.perf_counter() - t0) / n_np * S
                rows.append(dict(estimator=name, N=N, seeds=S, jax_fits_per_s=S / t_jax,
                                 numpy_fits_per_s=S / t_np, speedup=t_np / t_jax, compile_s=t_first - t_jax,
                                 jax_mean_excess=float(out["excess"].mean()), numpy_mean_excess=float(np.mean(ref))))
    return rows


def main():
    """Command line (``python benchmarks/bench_label_dp.py [--tiny]``): :func:`run`, printed as a table."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true")
    a = ap.parse_args()
    rows = run(tiny=a.tiny)
    print(f"{'estimator':<14}{'N':>8}{'seeds':>7}{'jax fits/s':>12}{'numpy fits/s':>14}{'speedup':>9}{'compile s':>11}")
    for r in rows:
        print(f"{r['estimator']:<14}{r['N']:>8}{r['seeds']:>7}{r['jax_fits_per_s']:>12.1f}{r['numpy_fits_per_s']:>14.1f}"
              f"{r['speedup']:>9.2f}{r['compile_s']:>11.2f}")


if __name__ == "__main__":
    main()
