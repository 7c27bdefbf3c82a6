"""ε_lower of the whole-learner audits in the adaptive privacy game (``jaxdp.privacy.audit.adaptive``), against each
learner's certificate, and the oblivious-only learner in both games.

    python benchmarks/bench_audit_adaptive.py [--full] [--seed 0] [--out benchmarks/AUDIT_ADAPTIVE.md]

Rows: the registered audits ``l2p-mw-adaptive``, ``sparse-vector-experts-adaptive``, ``tree-ftrl-experts-adaptive``,
``dp-ftrl-adaptive`` (correct: must be consistent), ``prefetch-noise-oblivious`` (the broken twin on fixed pairs: must
pass) and ``prefetch-noise-adaptive`` (the broken twin in the adaptive game: must be flagged), each at its quick size
(``--full``: its full size) and seed ``--seed``; the claim, ε_lower, the strategy (pair) and event of the best test,
the verdict and the wall time. For the four correct learners, the column "oblivious reference" is the same audit
(learner, size, runs, events, seed) on three fixed pairs (``oblivious=True``): what adaptivity adds.
``benchmarks/AUDIT_ADAPTIVE.md`` keeps the tables of two runs, quick and ``--full``. Timings are never asserted by tests.
"""
import argparse
import pathlib
import sys
import time

_ROOT = str(pathlib.Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

#: the audits with an oblivious reference (``oblivious=True``: the same learner, size, runs and events on fixed pairs)
REFERENCE = ("l2p-mw-adaptive", "sparse-vector-experts-adaptive", "tree-ftrl-experts-adaptive", "dp-ftrl-adaptive")
AUDITS = ("l2p-mw-adaptive", "sparse-vector-experts-adaptive", "tree-ftrl-experts-adaptive", "dp-ftrl-adaptive",
          "prefetch-noise-oblivious", "prefetch-noise-adaptive")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the audits' full sizes (default: quick)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", nargs="*", default=None, help="run only these audits")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)

    from benchmarks.harness.common import emit
    from jaxdp import registry

    rows = []
    for name in a.only or AUDITS:
        e = registry.get_audit(name)
        t0 = time.perf_counter()
        r = e.fn(quick=not a.full, seed=a.seed)
        dt = time.perf_counter() - t0
        ref = "-"
        if name in REFERENCE:     # the same learner, size, runs and events on three fixed pairs
            ro = e.fn(quick=not a.full, seed=a.seed, oblivious=True)
            ref = f"{ro.eps_lower:.4f} ({ro.pair})"
        expected = "flag" if e.extra["broken"] else "consistent"
        ok = r.violation == bool(e.extra["broken"])
        ev = str(r.evidence.get("event", "-"))
        ev = ev if len(ev) <= 32 else ev[:29] + "..."
        rows.append(f"| `{e.name}` | ({r.claimed_eps:.3g}, {r.claimed_delta:.2g}) | {r.n_pairs} | {r.n:,} | "
                    f"{r.eps_lower:.4f} | {r.pair or '-'} | `{ev}` | {ref} | {r.verdict} | "
                    f"{expected}: {'yes' if ok else 'NO'} | {dt:.0f} s |")
        print(rows[-1], flush=True)
    import jax
    md = (f"# Audits in the adaptive privacy game\n\n"
          f"`python benchmarks/bench_audit_adaptive.py{' --full' if a.full else ''} --seed {a.seed}` "
          f"({'full' if a.full else 'quick'} sizes; JAX {jax.__version__}, {jax.default_backend()}). "
          "Family-wise error α = 1e-7 per audit. Strategies: docs/guide/auditing.md#adaptive-game.\n\n"
          "| audit | claim (ε, δ) | strategies / pairs | runs per world | ε lower | best strategy | best event | "
          "oblivious reference: ε lower (best pair) | verdict | expected | time (both) |\n"
          "|---|---|---:|---:|---:|---|---|---|---|---|---:|\n" + "\n".join(rows) + "\n")
    emit(md, a.out)


if __name__ == "__main__":
    main()
