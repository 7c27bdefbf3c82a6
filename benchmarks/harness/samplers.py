"""Sampler and L2P-RMW throughput.

* MALA steps x chains per second vs (chains, d): jaxdp's ``mala`` (vmapped,
  fixed-length scan), ``blackjax.mala`` (same target, vmapped kernel in a
  scan) and a NumPy implementation vectorized over chains. Target: a Gaussian
  truncated to the unit ball. Compile time reported apart.
* L2P-RMW seed-rounds per second vs batch size B (exact sampler, linear
  losses): fresh samples are drawn once per batch, so the per-round cost falls
  as B grows.

``run(quick)`` returns rows (dicts); ``python benchmarks/bench_samplers.py``
prints a markdown table. ``run(tiny=True)`` is the smoke mode used by tests.
"""
from __future__ import annotations

import time

import numpy as np


def _timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    import jax

    jax.block_until_ready(out)
    t1 = time.perf_counter()
    out = fn(*args)
    jax.block_until_ready(out)
    t2 = time.perf_counter()
    return (t1 - t0) - (t2 - t1), t2 - t1


def numpy_mala(n_chains: int, d: int, n_steps: int, h: float, mu: float = 0.5, s: float = 0.6, R: float = 1.0,
               seed: int = 0) -> np.ndarray:
    """MALA for ``N(mu, s² I)`` restricted to the ball of radius ``R``, vectorized over chains (float64).

    Chains start at 0; a proposal outside the ball is rejected.

    Args:
        n_chains: the number of chains.
        d: the dimension.
        n_steps: the MALA steps per chain.
        h: the step size (proposal ``y = x + h ∇log π(x) + sqrt(2h) Z``).
        mu: the mean of the Gaussian (every coordinate).
        s: its standard deviation.
        R: the radius of the ball.
        seed: the seed of NumPy's generator.

    Returns:
        The ``(n_chains, d)`` final states.
    """
    rng = np.random.default_rng(seed)
    x = np.zeros((n_chains, d))

    def ld(x):
        return -0.5 * np.sum((x - mu) ** 2, axis=-1) / s**2

    def gr(x):
        return -(x - mu) / s**2

    v, g = ld(x), gr(x)
    for _ in range(n_steps):
        y = x + h * g + np.sqrt(2 * h) * rng.standard_normal(x.shape)
        inside = np.sum(y * y, axis=-1) <= R * R
        vy, gy = ld(y), gr(y)
        lq_f = -np.sum((y - x - h * g) ** 2, axis=-1) / (4 * h)
        lq_b = -np.sum((x - y - h * gy) ** 2, axis=-1) / (4 * h)
        logr = np.where(inside, vy - v + lq_b - lq_f, -np.inf)
        acc = np.log(rng.random(n_chains)) < logr
        x = np.where(acc[:, None], y, x)
        v = np.where(acc, vy, v)
        g = np.where(acc[:, None], gy, g)
    return x


def bench_mala(chains: int, d: int, n_steps: int) -> list[dict]:
    """MALA steps × chains per second: jaxdp's ``mala``, ``blackjax.mala`` (when installed) and :func:`numpy_mala`.

    Target: ``N(0.5, 0.36 I)`` truncated to the unit ball, step ``h = min(s²/d^{1/3}, 4R²/(32d))``. The JAX
    implementations are vmapped over chains and timed on their second call (the first minus the second is
    the compile time); NumPy is timed once.

    Args:
        chains: the number of chains.
        d: the dimension.
        n_steps: the MALA steps per chain.

    Returns:
        One row per implementation: ``bench``, ``impl``, ``chains``, ``d``, ``steps``, ``compile_s``, ``run_s``
        and ``rate`` (steps × chains per second).
    """
    import jax
    import jax.numpy as jnp

    from jaxdp.samplers import ball, mala

    mu, s, R = 0.5, 0.6, 1.0
    h = min(s**2 / d ** (1 / 3), 4 * R * R / (32 * d))

    def ld(x):
        return -0.5 * jnp.sum((x - mu) ** 2) / s**2

    keys = jax.random.split(jax.random.key(0), chains)
    ours = jax.jit(jax.vmap(lambda k: mala(k, ld, jnp.zeros(d), n_steps, h, ball(R))[0]))
    comp, run = _timed(ours, keys)
    rows = [dict(bench="mala", impl="jaxdp", chains=chains, d=d, steps=n_steps, compile_s=comp, run_s=run,
                 rate=chains * n_steps / run)]
    try:
        import blackjax

        kern = blackjax.mala.build_kernel()
        ld_b = lambda x: jnp.where(jnp.sum(x * x) <= R * R, ld(x), -jnp.inf)  # noqa: E731

        def bj(k):
            st = blackjax.mala.init(jnp.zeros(d), ld_b)
            st, _ = jax.lax.scan(lambda st, i: kern(jax.random.fold_in(k, i), st, ld_b, h),
                                 st, jnp.arange(n_steps))
            return st.position

        bjf = jax.jit(jax.vmap(bj))
        comp, run = _timed(bjf, keys)
        rows.append(dict(bench="mala", impl="blackjax", chains=chains, d=d, steps=n_steps, compile_s=comp,
                         run_s=run, rate=chains * n_steps / run))
    except ImportError:  # pragma: no cover
        pass
    t0 = time.perf_counter()
    numpy_mala(chains, d, n_steps, h)
    run = time.perf_counter() - t0
    rows.append(dict(bench="mala", impl="numpy", chains=chains, d=d, steps=n_steps, compile_s=0.0, run_s=run,
                     rate=chains * n_steps / run))
    return rows


def bench_l2p_rmw(B: int, seeds: int, T: int, d: int) -> dict:
    """L2P-RMW seed-rounds per second at batch size ``B`` (exact sampler, linear losses, ``biased`` adversary).

    ``simulate(l2p_rmw(d, B))`` with ``β = 0.05``, ``λ = sqrt(T)``, radius 0.5, ``η = 0.01``, ``p = 0.1``,
    timed on its second call. Fresh samples are drawn once per batch, so the per-round cost falls as ``B``
    grows.

    Args:
        B: the batch length.
        seeds: the number of seeds.
        T: the rounds per seed.
        d: the dimension.

    Returns:
        One row: ``bench``, ``impl``, ``B``, ``seeds``, ``T``, ``d``, ``compile_s``, ``run_s``, ``rate``
        (seed-rounds per second) and ``us_per_seed_round``.
    """
    from jaxdp.core import seed_keys, simulate
    from jaxdp.oco import adv_linear_oco, linear_oco_params, linear_problem
    from jaxdp.oco.l2p_rmw import l2p_rmw, l2p_rmw_params

    learner = l2p_rmw(d, B)
    params = l2p_rmw_params(beta=0.05, lam=float(np.sqrt(T)), radius=0.5, eta=0.01, p=0.1, B=B)
    prob = linear_problem(d, 0.5)
    adv = adv_linear_oco(d)
    ap = linear_oco_params("biased")
    keys = seed_keys(0, seeds)
    t0 = time.perf_counter()
    simulate(learner, adv, prob, params, ap, keys, T)
    t1 = time.perf_counter()
    simulate(learner, adv, prob, params, ap, keys, T)
    t2 = time.perf_counter()
    run = t2 - t1
    return dict(bench="l2p_rmw", impl="jaxdp", B=B, seeds=seeds, T=T, d=d, compile_s=(t1 - t0) - run, run_s=run,
                rate=seeds * T / run, us_per_seed_round=1e6 * run / (seeds * T))


def run(quick: bool = True, tiny: bool = False) -> list[dict]:
    """Both sampler benchmarks (module docstring) over their grids.

    Args:
        quick: the quick grids (3 MALA points, ``B`` up to 64, ``T = 2048``); ``False``: the full grids.
        tiny: the smoke grids of the tests (overrides ``quick``).

    Returns:
        The rows of :func:`bench_mala` and :func:`bench_l2p_rmw`.
    """
    if tiny:
        grid_m, steps, grid_b, seeds, T, d_l = [(4, 2)], 10, [1, 8], 2, 32, 2
    elif quick:
        grid_m, steps, grid_b, seeds, T, d_l = [(64, 2), (1024, 2), (1024, 16)], 100, [1, 4, 16, 64], 16, 2048, 8
    else:
        grid_m = [(c, d) for c in (1, 64, 1024, 8192) for d in (2, 16, 64)]
        steps, grid_b, seeds, T, d_l = 200, [1, 2, 4, 8, 16, 32, 64, 128], 64, 16384, 16
    rows = []
    for chains, d in grid_m:
        rows += bench_mala(chains, d, steps)
    for B in grid_b:
        rows.append(bench_l2p_rmw(B, seeds, T, d_l))
    return rows


def to_markdown(rows: list[dict]) -> str:
    """The rows of :func:`run` as two markdown tables (MALA, then L2P-RMW; a table without rows is left out).

    Args:
        rows: the rows.

    Returns:
        The markdown.
    """
    out = []
    m = [r for r in rows if r["bench"] == "mala"]
    if m:
        out += ["| impl | chains | d | steps | compile (s) | run (s) | MALA steps x chains / s |",
                "|---|---|---|---|---|---|---|"]
        out += [f"| {r['impl']} | {r['chains']} | {r['d']} | {r['steps']} | {r['compile_s']:.2f} | "
                f"{r['run_s']:.3f} | {r['rate']:.3g} |" for r in m]
    b = [r for r in rows if r["bench"] == "l2p_rmw"]
    if b:
        out += ["", "| B | seeds | T | d | compile (s) | run (s) | seed-rounds / s | us / seed-round |",
                "|---|---|---|---|---|---|---|---|"]
        out += [f"| {r['B']} | {r['seeds']} | {r['T']} | {r['d']} | {r['compile_s']:.2f} | {r['run_s']:.3f} | "
                f"{r['rate']:.3g} | {r['us_per_seed_round']:.3g} |" for r in b]
    return "\n".join(out)


if __name__ == "__main__":
    import sys

    print(to_markdown(run(quick="--full" not in sys.argv)))
