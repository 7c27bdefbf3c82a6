"""Benchmark of DP-FTRL (REAL Alg. 3, ``jaxdp.oco.dp_ftrl``) on CPU.

Entry point only: the benchmark lives in ``jaxdp.bench.oco`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_oco.py [--tiny]          # = python -m jaxdp.bench.oco [--tiny]
"""
if __name__ == "__main__":
    import runpy

    runpy.run_module("jaxdp.bench.oco", run_name="__main__", alter_sys=True)
else:
    from jaxdp.bench.oco import *  # noqa: F401,F403 - run() and friends, for code that loads this file
