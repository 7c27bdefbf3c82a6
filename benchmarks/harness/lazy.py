"""Benchmark of L2P-MW (jaxdp.experts) on CPU.

1. Throughput (rounds x seeds per second) vs number of seeds and d, against a
   NumPy implementation of the same algorithm (vectorized over seeds, Python
   loop over rounds). Compile time is reported apart.
2. Per-round cost vs the cost of a fresh sample: an artificially expensive
   measure (``sample`` runs ``K`` extra passes over the logits) in block mode
   (fresh samples once per batch, engine nested scan): the time per round
   should not grow with ``K`` beyond ``K/B`` passes.

Usage: ``python benchmarks/bench_lazy.py [--tiny]``; ``run(tiny=True)`` is called by a test.
"""
from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

from .common import best_time as _time

from jaxdp.core import sample_categorical, seed_keys, simulate
from jaxdp.experts import AlternatingParams, adv_alternating_batches, experts_problem
from jaxdp.experts import LazyMeasure, l2p, l2p_mw, l2p_mw_params, mw_measure


def numpy_l2p_mw(losses_fn, T, d, S, eta, p, B, rng):
    """L2P-MW (LAZY Alg. 1 with multiplicative weights) in NumPy, vectorized over ``S`` seeds: the reference timed.

    Every seed sees the same loss vectors. Played ``x`` and shadow ``y`` start from the MW measure; at each
    batch boundary ``x`` is kept with probability ``(1 - p) min(1, e^{-η(Λ(x) - Λ(y)) - 2Bη})`` (``Λ`` the last
    batch's losses), else redrawn, and ``y`` is kept with probability ``1 - p``, else redrawn; draws are from
    ``∝ exp(-η cum)`` by inverse CDF.

    Args:
        losses_fn: ``t -> (d,)`` loss vector of round ``t``.
        T: the number of rounds.
        d: the number of experts.
        S: the number of seeds.
        eta: the learning rate ``η``.
        p: the probability of a fresh draw at each batch boundary.
        B: the batch length in rounds.
        rng: the ``numpy.random.Generator``.

    Returns:
        The ``(S,)`` total loss of the played experts per seed.
    """
    cum = np.zeros(d)

    def draw(cum, n):
        w = np.exp(-eta * (cum - cum.min()))
        c = np.cumsum(w / w.sum())
        return np.minimum(np.searchsorted(c, rng.random(n)), d - 1)

    x, y = draw(cum, S), draw(cum, S)
    blx = np.zeros(S)
    bly = np.zeros(S)
    total = np.zeros(S)
    for t in range(T):
        ell = losses_fn(t)
        total += ell[x]
        blx -= eta * ell[x]
        bly -= eta * ell[y]
        cum = cum + ell
        if (t + 1) % B == 0 and t + 1 < T:
            S_ = np.log(rng.random(S)) < np.minimum(0.0, blx - bly - 2 * B * eta)
            Sp = rng.random(S) >= p
            A = rng.random(S) >= p
            x = np.where(S_ & Sp, x, draw(cum, S))
            y = np.where(A, y, draw(cum, S))
            blx[:] = 0
            bly[:] = 0
    return total




def throughput(T, Ss, ds, B=16, eta=0.02, p=0.2):
    """L2P-MW throughput (seed-rounds per second) against :func:`numpy_l2p_mw`, for every ``(d, seeds)``.

    ``simulate(l2p_mw(d, B))`` on the alternating-batches adversary (experts 0 and 1 lose in turn, batch by
    batch); compile time is the first call minus the best warm one. The NumPy reference runs the same losses
    on ``min(T, 512)`` rounds, its time scaled to ``T``.

    Args:
        T: the rounds per seed.
        Ss: the numbers of seeds.
        ds: the numbers of experts.
        B: the batch length.
        eta: the learning rate.
        p: the probability of a fresh draw at each batch boundary.

    Returns:
        One row per ``(d, seeds)``: ``compile_s``, ``jax_s``, ``jax_Mrounds_per_s``, ``numpy_s``,
        ``numpy_Mrounds_per_s`` and ``speedup``.
    """
    rows = []
    for d in ds:
        L = l2p_mw(d, B)
        adv = adv_alternating_batches(d)
        params = l2p_mw_params(eta, p, B)
        ap = AlternatingParams(B=jnp.int32(B))
        for S in Ss:
            keys = seed_keys(0, S)
            t0 = time.perf_counter()
            simulate(L, adv, experts_problem(), params, ap, keys, T)
            first = time.perf_counter() - t0
            run_s = _time(lambda: simulate(L, adv, experts_problem(), params, ap, keys, T))
            ell = np.ones(d)

            def loss_np(t):
                ell[:] = 1.0
                s = (t // B) % 2
                ell[0], ell[1] = float(s == 0), float(s == 1)
                return ell

            Tn = min(T, 512)
            np_s = _time(lambda: numpy_l2p_mw(loss_np, Tn, d, S, eta, p, B, np.random.default_rng(0)), reps=1) * T / Tn
            rows.append({"d": d, "seeds": S, "T": T, "compile_s": first - run_s, "jax_s": run_s,
                         "jax_Mrounds_per_s": S * T / run_s / 1e6, "numpy_s": np_s,
                         "numpy_Mrounds_per_s": S * T / np_s / 1e6, "speedup": np_s / run_s})
    return rows


def expensive_measure(d: int, K: int) -> LazyMeasure:
    """MW whose ``sample`` burns ``K`` extra O(d) passes (an artificially expensive fresh sample).

    The passes add ``1e-30 · Σ tanh(·)`` to the logits, so the sample's law is MW's up to float rounding.

    Args:
        d: the number of experts.
        K: the number of extra passes over the logits per fresh sample.

    Returns:
        The :class:`jaxdp.experts.LazyMeasure` (MW's statistics, ratio and summary; the slow ``sample``).
    """
    base = mw_measure(d)

    def sample(key, cum, mp):
        logits = -mp.eta * cum

        def body(i, z):
            return z + 1e-30 * jnp.tanh(logits + z).sum()

        z = jax.lax.fori_loop(0, K, body, jnp.zeros((), logits.dtype))
        return sample_categorical(key, logits + z)

    return LazyMeasure(base.stats_init, base.stats_update, base.log_ratio, sample, base.summary, base.expected_loss)


_MEASURES: dict = {}


def per_round_cost(T, S, d, B, Ks, eta=0.02, p=0.2):
    """Time per round of L2P with an expensive fresh sample (:func:`expensive_measure`), block vs per-round mode.

    In block mode (``l2p(measure, B)``: fresh samples once per batch, engine nested scan) the time per round
    should not grow with ``K`` beyond ``K/B`` passes; the per-round mode (``block_size=None``, traced ``B``)
    is timed alongside.

    Args:
        T: the rounds per seed.
        S: the number of seeds.
        d: the number of experts.
        B: the batch length.
        Ks: the extra passes per fresh sample.
        eta: the learning rate.
        p: the probability of a fresh draw at each batch boundary.

    Returns:
        One row per ``(K, mode)``: ``mode``, ``K_sample_passes``, ``B`` and ``us_per_round_per_seed``.
    """
    rows = []
    adv = adv_alternating_batches(d)
    params = l2p_mw_params(eta, p, B)
    ap = AlternatingParams(B=jnp.int32(B))
    keys = seed_keys(1, S)
    for K in Ks:
        m = _MEASURES.setdefault((d, K), expensive_measure(d, K))
        for mode, bs in (("block", B), ("per-round (traced B)", None)):
            L = l2p(m, bs)
            simulate(L, adv, experts_problem(), params, ap, keys, T)
            s = _time(lambda: simulate(L, adv, experts_problem(), params, ap, keys, T))
            rows.append({"mode": mode, "K_sample_passes": K, "B": B, "us_per_round_per_seed": s / (T * S) * 1e6})
    return rows


def run(tiny: bool = False) -> dict:
    """Both L2P-MW benchmarks (module docstring) at full or test size.

    Args:
        tiny: test size (``T = 256``, 8 seeds, ``d = 8``) instead of ``T = 4096`` over several seeds and ``d``.

    Returns:
        ``{"throughput": rows of :func:`throughput`, "per_round_cost": rows of :func:`per_round_cost`}``.
    """
    if tiny:
        tp = throughput(T=256, Ss=[8], ds=[8])
        pc = per_round_cost(T=256, S=8, d=8, B=16, Ks=[0, 64])
    else:
        tp = throughput(T=4096, Ss=[1, 64, 1024], ds=[16, 256])
        pc = per_round_cost(T=4096, S=256, d=64, B=64, Ks=[0, 64, 512])
    return {"throughput": tp, "per_round_cost": pc}


def _print(rows):
    if not rows:
        return
    keys = list(rows[0])
    print("  ".join(f"{k:>20}" for k in keys))
    for r in rows:
        print("  ".join(f"{v:>20.4g}" if isinstance(v, float) else f"{v!s:>20}" for v in r.values()))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiny", action="store_true")
    res = run(tiny=ap.parse_args().tiny)
    print(f"L2P-MW throughput (CPU, {jax.devices()[0].platform})")
    _print(res["throughput"])
    print("\nper-round cost vs fresh-sample cost (K extra O(d) passes per fresh sample)")
    _print(res["per_round_cost"])
