"""Benchmark of L2P-MW (jaxdp.lazy) on CPU.

Entry point only: the benchmark lives in ``jaxdp.bench.lazy`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_lazy.py [--tiny]          # = python -m jaxdp.bench.lazy [--tiny]
"""
import runpy

from jaxdp.bench.lazy import *  # noqa: F401,F403 - run() and friends, for scripts that load this file

if __name__ == "__main__":
    runpy.run_module("jaxdp.bench.lazy", run_name="__main__", alter_sys=True)
