"""Fitted label-DP estimators per second vs N and seeds on CPU: JAX (vmapped over seeds) vs NumPy/SciPy.

Entry point only: the benchmark lives in ``jaxdp.bench.label_dp`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_label_dp.py [--tiny]          # = python -m jaxdp.bench.label_dp [--tiny]
"""
import runpy

from jaxdp.bench.label_dp import *  # noqa: F401,F403 - run() and friends, for scripts that load this file

if __name__ == "__main__":
    runpy.run_module("jaxdp.bench.label_dp", run_name="__main__", alter_sys=True)
