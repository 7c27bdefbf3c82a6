"""Benchmark: GROWTH epoch algorithm (``epoch_growth_sco``) — estimators/s vs seeds and n on CPU,
against a NumPy per-seed loop implementation of the same algorithm (same phases, same solver
iteration count; Laplace noise). Compile time is reported apart (first call minus a warm call).

``run(quick)`` returns rows (``jaxdp.bench`` convention); ``python benchmarks/bench_sco.py [--tiny]`` prints them.
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np


def numpy_epoch_growth(rng, data, L, R, eta0, eps, n_epochs, k, n_iter, a=1.0, b=1.0, kappa=2.0):
    """NumPy reference of Algorithm 2 for ``inst_kappa_linear`` (loss (a/κ)||x||^κ + b<x,s>), pure DP."""
    n, d = data.shape
    n0 = n // n_epochs
    bl = n0 // k
    x = np.zeros(d)
    for e in range(n_epochs):
        De, etae = 2 * R * 2.0 ** -e, eta0 * 2.0 ** -e
        ce = x.copy()
        for j in range(k):
            blk = data[e * n0 + j * bl: e * n0 + (j + 1) * bl]
            eta_i = etae * 16.0 ** -j
            lam = 1.0 / (eta_i * bl)
            mu = blk.mean(axis=0)
            beta = a * (kappa - 1) * R ** (kappa - 2)
            step = 1.0 / (beta + lam)
            y, c = x.copy(), x.copy()
            for _ in range(n_iter):
                r = np.linalg.norm(y)
                g = a * r ** (kappa - 2) * y + b * mu + lam * (y - c)
                y = y - step * g
                for cc, rr in ((np.zeros(d), R), (ce, De), (c, 2 * L * eta_i * bl)):  # one Dykstra-free sweep
                    v = y - cc
                    nv = np.linalg.norm(v)
                    if nv > rr:
                        y = cc + v * rr / nv
            x = y + rng.laplace(size=d) * 4 * L * eta_i * math.sqrt(d) / eps
            for cc, rr in ((np.zeros(d), R), (ce, De)):
                v = x - cc
                nv = np.linalg.norm(v)
                if nv > rr:
                    x = cc + v * rr / nv
    return x


def run(quick: bool = True, tiny: bool = False) -> list[dict]:
    import jax

    from ..core import seed_keys
    from ..sco import EpochParams, epoch_estimator, inst_kappa_linear, plan_epoch_growth_sco, run_sco

    inst = inst_kappa_linear(2, 2.0, 0.5)
    if tiny:
        ns, seeds_list, n_iter = [400], [4], 10
    elif quick:
        ns, seeds_list, n_iter = [2000, 20000], [8, 64], 40
    else:
        ns, seeds_list, n_iter = [10000, 100000, 1000000], [16, 128, 1024], 60
    rows = []
    for n in ns:
        pl = plan_epoch_growth_sco(eps=1.0, n=n, d=2, kappa_low=1.5, L=inst.L, D=2 * inst.R, mode="rate").params
        fn = epoch_estimator(inst, n, pl["n_epochs"], pl["k"], n_iter)
        p = EpochParams(pl["eta0"], pl["eps"], pl["delta"], pl["gauss_mult"], pl["phase_offset"])
        for S in seeds_list:
            t0 = time.perf_counter()
            jax.block_until_ready(run_sco(fn, seed_keys(0, S), p))
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            jax.block_until_ready(run_sco(fn, seed_keys(1, S), p))
            warm = time.perf_counter() - t0
            # NumPy loop on a few seeds (rate measured)
            rng = np.random.default_rng(0)
            S_np = min(S, 2 if not tiny else 1)
            t0 = time.perf_counter()
            for _ in range(S_np):
                data = np.zeros((n, 2))
                data[:, 0] = np.where(rng.uniform(size=n) < 0.75, 1.0, -1.0)
                numpy_epoch_growth(rng, data, inst.L, inst.R, pl["eta0"], 1.0, pl["n_epochs"], pl["k"], n_iter)
            t_np = (time.perf_counter() - t0) / S_np
            rows.append(dict(bench="epoch_growth_sco", n=n, seeds=S, compile_s=max(first - warm, 0.0), run_s=warm,
                             est_per_s=S / warm, numpy_est_per_s=1.0 / t_np, speedup=(S / warm) * t_np))
    return rows


if __name__ == "__main__":
    for r in run(quick="--full" not in sys.argv, tiny="--tiny" in sys.argv):
        print("  ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
