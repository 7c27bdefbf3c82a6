"""Benchmark of sparse-vector experts (REAL Alg. 1, jaxdp.experts) on CPU.

Entry point only: the benchmark lives in ``jaxdp.bench.realizable`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_realizable.py [--tiny]          # = python -m jaxdp.bench.realizable [--tiny]
"""
if __name__ == "__main__":
    import runpy

    runpy.run_module("jaxdp.bench.realizable", run_name="__main__", alter_sys=True)
else:
    from jaxdp.bench.realizable import *  # noqa: F401,F403 - run() and friends, for code that loads this file
