"""Benchmark of L2P-MW (jaxdp.experts) on CPU.

Entry point only: the benchmark lives in ``jaxdp.bench.lazy`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_lazy.py [--tiny]          # = python -m jaxdp.bench.lazy [--tiny]
"""
if __name__ == "__main__":
    import runpy

    runpy.run_module("jaxdp.bench.lazy", run_name="__main__", alter_sys=True)
else:
    from jaxdp.bench.lazy import *  # noqa: F401,F403 - run() and friends, for code that loads this file
