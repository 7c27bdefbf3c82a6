"""Throughput of the engine's adaptive path (``AdaptiveAdversary``) against the oblivious one: Hedge,
d = 10, 1024 seeds, T = 4096, one compiled ``simulate`` per case, timed interleaved (best of ``--reps``).

    python benchmarks/bench_adaptive.py [--seeds 1024] [--T 4096] [--d 10] [--reps 5] [--out benchmarks/ADAPTIVE.md]

Cases: ``oblivious`` (``bernoulli_experts``, the engine's oblivious path); ``blind adaptive`` (the same
adversary wrapped as an ``AdaptiveAdversary`` that ignores what it sees: the same losses, so the ratio
is the cost of carrying the adversary's state and calling ``observe``); ``punish_last_action`` (a cheap
adaptive adversary: a one-hot of the last action, no random draws). Wall and CPU seconds of the call,
seed-rounds per second, and the ratio to the oblivious throughput (goal >= 0.8). Timings are never
asserted by tests.
"""
import argparse
import os
import pathlib
import sys
import time

_ROOT = str(pathlib.Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=1024)
    ap.add_argument("--T", type=int, default=4096)
    ap.add_argument("--d", type=int, default=10)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)

    import jax
    import jax.numpy as jnp
    import numpy as np

    from jaxdp.core import AdaptiveAdversary, seed_keys, simulate
    from jaxdp.experts import BernoulliParams, bernoulli_experts, experts_problem, hedge, hedge_params
    from jaxdp.experts.adaptive import punish_last_action

    d, T, S = a.d, a.T, a.seeds
    obl = bernoulli_experts(d)
    blind = AdaptiveAdversary(init=obl.init, loss=obl.loss, observe=lambda s, t, x, out: s)
    ap_ = BernoulliParams(gap=jnp.float32(0.1))
    cases = {"oblivious (bernoulli_experts)": (obl, ap_), "blind adaptive (same losses)": (blind, ap_),
             "punish_last_action": (punish_last_action(d), None)}
    prob, hp, keys = experts_problem(), hedge_params(d, T), seed_keys(0, S)
    for adv, p in cases.values():      # compile and warm up
        simulate(hedge(d), adv, prob, hp, p, keys, T)
    best = {k: (np.inf, np.inf) for k in cases}
    for _ in range(a.reps):
        for name, (adv, p) in cases.items():
            w0, c0 = time.perf_counter(), time.process_time()
            simulate(hedge(d), adv, prob, hp, p, keys, T)
            w, c = time.perf_counter() - w0, time.process_time() - c0
            best[name] = (min(best[name][0], w), min(best[name][1], c))
    ref = S * T / best["oblivious (bernoulli_experts)"][0]
    lines = [f"Hedge d={d}, {S} seeds, T={T}; backend {jax.default_backend()}, {jax.device_count()} device(s), "
             f"{os.cpu_count()} CPU(s) visible; best of {a.reps} interleaved runs.", "",
             "| adversary | wall s | CPU s | seed-rounds/s | ratio to oblivious |", "|---|---|---|---|---|"]
    for name, (w, c) in best.items():
        lines.append(f"| {name} | {w:.3f} | {c:.3f} | {S * T / w:.3e} | {S * T / w / ref:.2f} |")
    text = "\n".join(lines)
    print(text)
    if a.out:
        pathlib.Path(a.out).write_text("# Adaptive adversaries: engine throughput\n\n"
                                       "`python benchmarks/bench_adaptive.py --out benchmarks/ADAPTIVE.md`\n\n"
                                       + text + "\n")


if __name__ == "__main__":
    main()
