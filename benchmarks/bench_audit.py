"""Audits per minute: the vmapped JAX auditor vs a NumPy loop doing the same audit.

Two audits, each with ``n`` runs per neighbouring input (10^6 by default):

* Laplace (scale 1, eps = 1) on inputs 0 / 1 with threshold events;
* AboveThreshold (Dwork–Roth noise, eps = 2, 9 queries) with the halting-index histogram.

"JAX vmapped" is :func:`jaxdp.audit.audit` (compile time reported apart);
"NumPy loop" runs the mechanism once per run in a Python loop (a
``numpy.random.Generator`` per audit), then counts and bounds exactly like
the auditor; "NumPy vectorized" draws all runs at once, for reference.

    python benchmarks/bench_audit.py            # 10^6 runs per side
    python benchmarks/bench_audit.py --quick    # 10^4 runs per side
"""
from __future__ import annotations

import argparse
import time

import jax
import numpy as np

from jaxdp.audit import HistogramEvents, ThresholdEvents, audit
from jaxdp.audit import auditor as A
from jaxdp.audit import catalogue as C
from jaxdp.mechanisms import laplace_mech

ALPHA = 1e-7


def _lap(key, x):
    return laplace_mech(key, x, 1.0, 1.0)


def _np_laplace_one(rng, x):
    return x + rng.laplace(0.0, 1.0)


def _np_svt_one(rng, q, tau=0.0, eps=C.EPS_SVT):
    tau_hat = tau + rng.laplace(0.0, 2.0 / eps)
    for i in range(q.shape[0]):
        if q[i] + rng.laplace(0.0, 4.0 / eps) >= tau_hat:
            return i
    return q.shape[0]


def _np_threshold_audit(s0, s1, thresholds):
    names, c0, c1 = A._threshold_events(s0, s1, thresholds)
    return A._best(names, c0, c1, s0.size, s1.size, 0.0, ALPHA / (2 * len(names)))[0]


def _np_hist_audit(c0, c1, n_cells):
    h0, h1 = A._cell_counts(c0, c1, n_cells)
    return A._best(list(range(n_cells)), h0, h1, c0.size, c1.size, 0.0, ALPHA / (2 * n_cells))[0]


def _time(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def run(n: int = 1_000_000, seed: int = 0, loop_n: int | None = None) -> list[dict]:
    """Benchmark rows (dicts). ``loop_n`` caps the Python-loop runs per side (time is scaled to ``n``)."""
    loop_n = n if loop_n is None else min(loop_n, n)
    rows = []
    thr = tuple(np.linspace(-4.0, 5.0, 32))
    cases = {
        "Laplace": dict(
            jax=lambda k: audit(_lap, 0.0, 1.0, claimed_eps=1.0, n=n, key=k, events=ThresholdEvents(thresholds=thr)),
            loop=lambda rng, m: _np_threshold_audit(np.array([_np_laplace_one(rng, 0.0) for _ in range(m)]),
                                                    np.array([_np_laplace_one(rng, 1.0) for _ in range(m)]), thr),
            vec=lambda rng, m: _np_threshold_audit(rng.laplace(0.0, 1.0, m), 1.0 + rng.laplace(0.0, 1.0, m), thr),
        ),
        "AboveThreshold": dict(
            jax=lambda k: audit(C._svt_correct, C.Q0, C.Q1, claimed_eps=C.EPS_SVT, n=n, key=k,
                                events=HistogramEvents(C.M_SVT + 2)),
            loop=lambda rng, m: _np_hist_audit(np.array([_np_svt_one(rng, C.Q0) for _ in range(m)]),
                                               np.array([_np_svt_one(rng, C.Q1) for _ in range(m)]), C.M_SVT + 2),
            vec=lambda rng, m: _np_hist_audit(_np_svt_vec(rng, C.Q0, m), _np_svt_vec(rng, C.Q1, m), C.M_SVT + 2),
        ),
    }
    for name, c in cases.items():
        t_first, _ = _time(lambda: c["jax"](jax.random.key(seed)))
        t_jax, rep = _time(lambda: c["jax"](jax.random.key(seed + 1)))
        rng = np.random.default_rng(seed)
        t_loop, eps_loop = _time(lambda: c["loop"](rng, loop_n))
        t_loop *= n / loop_n
        t_vec, eps_vec = _time(lambda: c["vec"](rng, n))
        for impl, t, eps in (("JAX vmapped", t_jax, rep.eps_lower), ("NumPy loop", t_loop, eps_loop),
                             ("NumPy vectorized", t_vec, eps_vec)):
            rows.append(dict(audit=name, impl=impl, runs_per_side=n, seconds=t, audits_per_min=60.0 / t,
                             speedup_vs_loop=t_loop / t, eps_lower=max(float(eps), 0.0),
                             compile_s=(t_first - t_jax) if impl == "JAX vmapped" else 0.0,
                             extrapolated=(impl == "NumPy loop" and loop_n < n)))
    return rows


def _np_svt_vec(rng, q, m):
    tau_hat = rng.laplace(0.0, 2.0 / C.EPS_SVT, m)
    above = q[None, :] + rng.laplace(0.0, 4.0 / C.EPS_SVT, (m, q.shape[0])) >= tau_hat[:, None]
    return np.where(above.any(1), above.argmax(1), q.shape[0])


def markdown(rows: list[dict]) -> str:
    out = ["| audit | implementation | runs/side | seconds | audits/min | speed-up vs loop | eps lower | compile s |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        star = "*" if r["extrapolated"] else ""
        out.append(f"| {r['audit']} | {r['impl']} | {r['runs_per_side']:,} | {r['seconds']:.3f}{star} | "
                   f"{r['audits_per_min']:.2f} | {r['speedup_vs_loop']:.1f}x | {r['eps_lower']:.3f} | "
                   f"{r['compile_s']:.2f} |")
    if any(r["extrapolated"] for r in rows):
        out.append("\n\\* NumPy loop time measured on fewer runs and scaled linearly.")
    return "\n".join(out)


def main(argv=None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="10^4 runs per side")
    p.add_argument("--n", type=int, default=None, help="runs per side (default 10^6)")
    p.add_argument("--loop-n", type=int, default=None, help="cap on Python-loop runs per side (extrapolated)")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    n = a.n or (10_000 if a.quick else 1_000_000)
    rows = run(n, a.seed, a.loop_n)
    print(f"jax {jax.__version__} on {jax.devices()[0].platform}; alpha={ALPHA:g}")
    print(markdown(rows))
    return rows


if __name__ == "__main__":
    main()
