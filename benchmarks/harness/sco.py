"""Benchmark: GROWTH epoch algorithm (``epoch_growth_sco``) — estimators/s vs seeds and n on CPU,
against a NumPy per-seed loop implementation of the same algorithm (same phases, same solver
iteration count; Laplace noise). Compile time is reported apart (first call minus a warm call).

``run(quick)`` returns rows (``benchmarks.harness`` convention); ``python benchmarks/bench_sco.py [--tiny]`` prints them.
"""
from __future__ import annotations

import math
import sys
import time

import numpy as np


def numpy_epoch_growth(rng, data, L, R, eta0, eps, n_epochs, k, n_iter, a=1.0, b=1.0, kappa=2.0):
    """NumPy reference of GROWTH Algorithm 2 for ``inst_kappa_linear``: loss ``(a/κ)||x||^κ + b⟨x, s⟩``, pure DP.

    Epoch ``e`` uses ``n0 = n // n_epochs`` samples in ``k`` phases of ``n0 // k``: phase ``j`` has step
    ``η_j = eta0 2^{-e} 16^{-j}`` and regularization ``λ = 1/(η_j · block)``, solves its regularized ERM by
    ``n_iter`` projected gradient steps (one projection sweep onto the domain ball, the epoch's ball of radius
    ``2R 2^{-e}`` and the phase's localization ball), then adds Laplace noise of scale
    ``4L η_j sqrt(d)/eps`` per coordinate and projects back. One seed per call.

    Args:
        rng: the ``numpy.random.Generator`` (the noise).
        data: the ``(n, d)`` samples ``s``.
        L: the Lipschitz constant of the loss.
        R: the radius of the domain ball.
        eta0: the initial step size.
        eps: the privacy parameter ε.
        n_epochs: the number of epochs.
        k: the phases per epoch.
        n_iter: the gradient steps per phase.
        a: the coefficient of ``||x||^κ``.
        b: the coefficient of the linear term.
        kappa: the growth exponent ``κ``.

    Returns:
        The ``(d,)`` final iterate.
    """
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
    """GROWTH epoch algorithm (``epoch_growth_sco``) estimators per second against :func:`numpy_epoch_growth`.

    For every ``(n, seeds)``: the rate-mode plan at ε = 1 on ``inst_kappa_linear(2, 2.0, 0.5)``; the JAX
    estimator (vmapped over seeds) is timed on its second call (the first minus the second is the compile
    time), the NumPy loop on at most 2 seeds (1 when ``tiny``).

    Args:
        quick: the quick grid (``n`` in {2000, 20000}, seeds in {8, 64}); ``False``: the full grid.
        tiny: the smoke grid of the tests (overrides ``quick``).

    Returns:
        One row per ``(n, seeds)``: ``bench``, ``n``, ``seeds``, ``compile_s``, ``run_s``, ``est_per_s``,
        ``numpy_est_per_s`` and ``speedup``.
    """
    import jax

    from jaxdp.core import seed_keys
    from jaxdp.sco import EpochParams, epoch_estimator, inst_kappa_linear, plan_epoch_growth_sco, run_sco

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
