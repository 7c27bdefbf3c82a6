"""simulate(hedge) vs NumPy references: seeds in {1, 16, 256, 4096, 16384}, d in {10, 100, 1000}, T = 1000.

    python benchmarks/bench_hedge.py [--quick] [--out FILE]     # same as: jaxdp bench [--quick] [--out FILE]
    python benchmarks/bench_hedge.py --ab [--d 100] [--seeds 4096] [--T 1000] [--reps 9]
    python benchmarks/bench_hedge.py --accuracy

Prints the table; writes FILE (default ./jaxdp-bench.md). What is measured: ``benchmarks.harness.hedge``.
``benchmarks/run_all.py`` updates the committed ``benchmarks/RESULTS.md``.

``--ab`` times, in one process and interleaved (best of ``--reps``, untiled), three ways of
keeping Hedge's and the comparator's cumulative losses: the library's (packed compensated
leader-relative gaps, packed compensated comparator), the previous one (compensated totals in
two arrays each: ``jaxdp.core.accumulate.Compensated``), and plain float32 sums (no
compensation; not accurate at long horizons). ``--accuracy`` runs d = 3 for T = 10^7 rounds on a
constant-loss comeback sequence plus a uniform expert (``benchmarks.harness.accuracy``, shared with
tests/core/test_accumulators.py) and prints,
for each, the totals' error in float32 ulps and the final weights' relative error against
float64. Timings are never asserted by tests.
"""
import argparse
import functools
import os
import pathlib
import sys
from typing import NamedTuple

_ROOT = str(pathlib.Path(__file__).resolve().parents[1])   # the repository root: benchmarks.harness imports from it
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


def _reference_learners(d: int):
    """The previous Hedge and comparator (two-array compensated totals) and plain float32 ones."""
    import jax
    import jax.numpy as jnp

    from jaxdp.core import Learner, Problem
    from jaxdp.core.accumulate import comp_add, comp_total, comp_zeros, kahan_add
    from jaxdp.core.random import sample_categorical, sample_from_weights
    from jaxdp.experts import experts_problem

    class TotalsState(NamedTuple):
        x: jax.Array
        cum: jax.Array
        p: jax.Array
        cum_c: jax.Array

    def init(key, params):
        z = jnp.zeros((d,), jnp.float32)
        return TotalsState(sample_categorical(key, jnp.zeros((d,))), z, jnp.full((d,), 1.0 / d, jnp.float32), z)

    def make_step(compensated: bool):
        def step(key, state, loss, params):
            expected = jnp.dot(state.p, loss)
            if compensated:
                cum, cum_c = kahan_add(state.cum, state.cum_c, loss)
            else:
                cum, cum_c = state.cum + loss, state.cum_c
            logits = -params.eta * cum
            w = jnp.exp(logits - jnp.max(logits))
            total = jnp.sum(w)
            x = sample_from_weights(key, w, total)
            return TotalsState(x, cum, w / total, cum_c), {"expected_loss": expected, "switched": x != state.x}
        return step

    base = experts_problem()
    two_arrays = Problem(value=base.value, grad=None, stats_init=lambda l: comp_zeros(l, jnp.float32),
                         stats_update=comp_add, best=lambda s: jnp.min(comp_total(s)),
                         best_action=lambda s: jnp.argmin(comp_total(s)))
    plain = Problem(value=base.value, grad=None, stats_init=lambda l: jnp.zeros(jnp.shape(l), jnp.float32),
                    stats_update=lambda s, l: s + l, best=jnp.min, best_action=jnp.argmin)
    return {"previous: compensated totals, two arrays": (Learner(init, make_step(True)), two_arrays),
            "plain float32 (no compensation)": (Learner(init, make_step(False)), plain)}


def ab(d: int, seeds: int, T: int, reps: int) -> str:
    import jax.numpy as jnp

    from benchmarks.harness.common import interleaved_best_times
    from jaxdp.core import seed_keys, simulate
    from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, hedge

    variants = {"library: packed compensated gaps": (hedge(d), experts_problem())}
    variants.update(_reference_learners(d))
    keys, adv = seed_keys(0, seeds), bernoulli_experts(d)
    hp, ap = HedgeParams(jnp.float32(0.1)), BernoulliParams(gap=jnp.float32(0.1))
    runs = {k: functools.partial(simulate, lrn, adv, prob, hp, ap, keys, T, tile=2 ** 30)
            for k, (lrn, prob) in variants.items()}
    load0 = os.getloadavg()
    best = interleaved_best_times(runs, reps)
    load1 = os.getloadavg()
    ref = "previous: compensated totals, two arrays"
    lines = [f"Hedge d={d}, {seeds} seeds, T={T}, untiled, best of {reps} interleaved calls; "
             f"load average {load0[0]:.2f} before, {load1[0]:.2f} after", "",
             "| representation | seed-rounds/s | vs previous |", "|---|---|---|"]
    for k in runs:
        lines.append(f"| {k} | {seeds * T / best[k]:.3g} | {best[ref] / best[k]:.3f}x |")
    return "\n".join(lines)


def accuracy(T: int = 10 ** 7) -> str:
    import numpy as np

    from benchmarks.harness.accuracy import run_cheaper_sums, run_hedge_switch, switch_reference
    from jaxdp.core.accumulate import comp_total
    from jaxdp.experts import experts_problem

    assert T == 10 ** 7, "the scenario is built for T = 10^7"
    eta = np.float32(np.sqrt(8 * np.log(3) / T))
    ref = switch_reference()
    lg = -float(eta) * (ref - ref.min())
    p_ref = np.exp(lg) / np.exp(lg).sum()
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    prob = experts_problem()

    def weights(x):
        lgx = -eta * np.asarray(x, np.float32)
        w = np.exp((lgx - lgx.max()).astype(np.float32)).astype(np.float64)
        return w / w.sum()

    st, stats = run_hedge_switch(float(eta), T)
    gap, lead, lead_c, s, sc, plain = run_cheaper_sums(T)
    rows = {
        "library: packed compensated gaps": (np.asarray(st.cum, np.float64), np.asarray(st.p, np.float64)),
        "previous: compensated totals": (np.asarray(s, np.float64) - np.asarray(sc, np.float64), weights(s)),
        "plain float32 gaps (leader-relative)": ((float(lead) - float(lead_c)) + np.asarray(gap, np.float64),
                                                 weights(gap)),
        "plain float32 totals": (np.asarray(plain, np.float64), weights(plain)),
    }
    out = [f"T = 10^7, d = 3 (A: 0.5 then 0.7; B: 0.6 then 0.55, 6e5 behind at the switch and tied at the end; "
           f"C: uniform in [0.3, 0.9]), eta = {float(eta):.3g}. Comparator (packed): best_loss "
           f"{abs(float(prob.best(stats)) - ref.min()) / ulp.min():.2f} ulps from float64; "
           f"totals {np.round(np.abs(np.asarray(comp_total(stats), np.float64) - ref) / ulp, 2).tolist()} ulps.", "",
           "| representation | totals: error in float32 ulps (A, B, C) | weights of A, B: max relative error |",
           "|---|---|---|"]
    for k, (tot, p) in rows.items():
        out.append(f"| {k} | {np.round(np.abs(tot - ref) / ulp, 2).tolist()} | "
                   f"{np.max(np.abs(p[:2] - p_ref[:2]) / p_ref[:2]):.2g} |")
    return "\n".join(out)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (rates not representative)")
    ap.add_argument("--out", default=None, help="markdown file to write (default ./jaxdp-bench.md)")
    ap.add_argument("--ab", action="store_true", help="time the library's cumulative losses against the previous "
                                                      "and plain ones, in one process")
    ap.add_argument("--accuracy", action="store_true", help="their accuracy against float64 at T = 10^7")
    ap.add_argument("--d", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=4096)
    ap.add_argument("--T", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=9)
    args = ap.parse_args()
    if args.ab or args.accuracy:
        if args.ab:
            print(ab(args.d, args.seeds, args.T, args.reps))
        if args.accuracy:
            print(accuracy())
    else:
        from benchmarks.harness import run_benchmarks

        print(run_benchmarks(quick=args.quick, only=["hedge"], out=args.out))
