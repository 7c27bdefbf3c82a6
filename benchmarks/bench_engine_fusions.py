"""What the engine adds to a learner's compiled program: XLA fusions, compile and run CPU seconds.

    python benchmarks/bench_engine_fusions.py [--seeds 256] [--T 1000]

For UCB1 (``K = 9`` Bernoulli arms, pseudo-regret) and Hedge (``d = 16`` Bernoulli experts, no gap) this compiles
the engine's per-seed rollout (``jax.vmap`` over seeds of the function ``simulate`` runs, with its invalid-action
flag), the same with one part of the engine taken out, and a hand-written ``vmap``-of-``scan`` of the same learner
that returns the same regret. Each row: the number of fusion instructions in the optimized HLO
(``jax.jit(f).lower(...).compile().as_text()``), the CPU seconds of the compile, and the median CPU seconds of a
call (3 calls after one warm-up).

The variants are measured in this process only (module attributes are patched while a variant is traced and put
back after); nothing in jaxdp changes:

* ``no action flag``: without the check that an index action lies in ``[0, d)`` (``flag_actions=False`` and no
  action count), which ``simulate`` uses to name a learner that plays an invalid action.
* ``no Kahan``: the regret accumulators are plain sums instead of compensated ones (``kahan_add``).
* ``no checkpoint cond``: the ``lax.cond`` writing the regret at the log-spaced checkpoints never writes.
* ``all three out``: the three together.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks.harness from the repository root


def _cpu() -> float:
    return time.process_time()


def _measure(fn, *args) -> tuple[int, float, float]:
    """``(fusions, compile CPU s, median call CPU s)`` of ``jax.jit(fn)(*args)``."""
    import jax

    lowered = jax.jit(fn).lower(*args)
    t0 = _cpu()
    compiled = lowered.compile()
    t_compile = _cpu() - t0
    n = len(re.findall(r"\bfusion\(", compiled.as_text()))
    jax.block_until_ready(compiled(*args))
    runs = []
    for _ in range(3):
        t0 = _cpu()
        jax.block_until_ready(compiled(*args))
        runs.append(_cpu() - t0)
    return n, t_compile, statistics.median(runs)


@contextlib.contextmanager
def _variant(no_flag: bool, no_kahan: bool, no_cond: bool):
    """Patch jaxdp.core.simulate for one variant while it is traced (undone after)."""
    import jax

    sim = importlib.import_module("jaxdp.core.simulate")   # the module: jaxdp.core's `simulate` is the function

    saved = (sim.kahan_add, sim.n_index_actions, jax.lax.cond)
    try:
        if no_kahan:
            sim.kahan_add = lambda s, c, x: (s + x, c)
        if no_flag:
            sim.n_index_actions = lambda *a, **k: None
        if no_cond:
            orig = jax.lax.cond

            def cond(pred, true_fun, false_fun, *ops, **kw):
                if getattr(true_fun, "__name__", "") == "write" and true_fun.__qualname__.startswith("_rollout_impl"):
                    return false_fun(*ops)
                return orig(pred, true_fun, false_fun, *ops, **kw)

            jax.lax.cond = cond
        yield
    finally:
        sim.kahan_add, sim.n_index_actions, jax.lax.cond = saved


def _engine_fn(learner, adversary, problem, params, adv_params, T: int, no_flag: bool, no_kahan: bool, no_cond: bool):
    import jax

    sim = importlib.import_module("jaxdp.core.simulate")   # the module: jaxdp.core's `simulate` is the function

    ckpts = tuple(int(r) for r in sim.checkpoint_rounds(T, 24))

    def f(keys):
        with _variant(no_flag, no_kahan, no_cond):
            return jax.vmap(lambda k: sim._rollout_impl(learner, adversary, problem, T, ckpts, params, adv_params, k,
                                                        T, flag_actions=not no_flag))(keys)   # every output, as simulate
    return f


def _hand_ucb1(mu, c: float, T: int):
    """UCB1 written directly: per seed a scan over rounds of (pulls, reward sums, pseudo-regret); the whole
    reward vector drawn each round, as an oblivious adversary does."""
    import jax
    import jax.numpy as jnp

    K = mu.shape[0]
    gap = jnp.max(mu) - mu

    def one(key):
        def body(carry, t):
            N, S, reg = carry
            n = t.astype(jnp.float32) + 1.0
            safe = jnp.maximum(N, 1.0)
            index = jnp.where(N > 0, S / safe + jnp.sqrt(c * jnp.log(n) / safe), jnp.inf)
            x = jnp.argmax(index)
            r = jax.random.bernoulli(jax.random.fold_in(key, t), mu).astype(jnp.float32)
            hit = jnp.arange(K) == x
            return (N + hit, S + jnp.where(hit, r, 0.0), reg + gap[x]), None

        z = jnp.zeros(K, jnp.float32)
        (_, _, reg), _ = jax.lax.scan(body, (z, z, jnp.float32(0.0)), jnp.arange(T, dtype=jnp.int32))
        return reg

    return jax.vmap(one)


def _hand_hedge(d: int, eta: float, T: int):
    """Hedge written directly: per seed a scan of (cumulative losses, realized loss, expected loss); losses
    Bernoulli(1/2) per expert and round, the action drawn from the weights; returns realized regret."""
    import jax
    import jax.numpy as jnp

    def one(key):
        def body(carry, t):
            L, got, exp = carry
            k1, k2 = jax.random.split(jax.random.fold_in(key, t))
            logits = -eta * (L - jnp.min(L))
            p = jax.nn.softmax(logits)
            x = jax.random.categorical(k1, logits)
            loss = jax.random.bernoulli(k2, 0.5, (d,)).astype(jnp.float32)
            return (L + loss, got + loss[x], exp + p @ loss), None

        z = jnp.float32(0.0)
        (L, got, _), _ = jax.lax.scan(body, (jnp.zeros(d, jnp.float32), z, z), jnp.arange(T, dtype=jnp.int32))
        return got - jnp.min(L)

    return jax.vmap(one)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=256)
    ap.add_argument("--T", type=int, default=1000)
    args = ap.parse_args(argv)
    import jax
    import jax.numpy as jnp

    from jaxdp import seed_keys
    from jaxdp.bandits import BernoulliArmsParams, UCB1Params, bandit_problem, bernoulli_arms, ucb1
    from jaxdp.experts import BernoulliParams, bernoulli_experts, experts_problem, hedge, hedge_eta
    from jaxdp.experts import HedgeParams

    S, T = args.seeds, args.T
    keys = seed_keys(0, S)
    K, d = 9, 16
    mu = jnp.linspace(0.1, 0.9, K, dtype=jnp.float32)
    eta = float(hedge_eta(d, T))
    cases = {
        "UCB1": ((ucb1(K), bernoulli_arms(K), bandit_problem("pseudo"), UCB1Params(jnp.float32(2.0)),
                  BernoulliArmsParams(mu)), _hand_ucb1(mu, 2.0, T)),
        "Hedge": ((hedge(d), bernoulli_experts(d), experts_problem(), HedgeParams(eta=jnp.float32(eta)),
                   BernoulliParams(gap=jnp.float32(0.0))), _hand_hedge(d, eta, T)),
    }
    variants = [("engine (as `simulate` runs it)", (False, False, False)), ("no action flag", (True, False, False)),
                ("no Kahan", (False, True, False)), ("no checkpoint cond", (False, False, True)),
                ("all three out", (True, True, True))]
    lines = [f"{S} seeds, T = {T}; jax {jax.__version__}, {jax.device_count()} device(s).", "",
             "| learner | program | fusions | compile CPU s | call CPU s |", "|---|---|---:|---:|---:|"]
    for name, (parts, hand) in cases.items():
        for label, flags in variants:
            n, tc, tr = _measure(_engine_fn(*parts, T, *flags), keys)
            lines.append(f"| {name} | {label} | {n} | {tc:.2f} | {tr:.3f} |")
        n, tc, tr = _measure(hand, jax.random.split(jax.random.key(0), S))
        lines.append(f"| {name} | hand-written `vmap` of `scan` | {n} | {tc:.2f} | {tr:.3f} |")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
