"""Fitted label-DP estimators per second vs N and seeds on CPU: JAX (vmapped over seeds) vs NumPy/SciPy.

Entry point only: the benchmark lives in ``jaxdp.bench.label_dp`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_label_dp.py [--tiny]          # = python -m jaxdp.bench.label_dp [--tiny]
"""
if __name__ == "__main__":
    import runpy

    runpy.run_module("jaxdp.bench.label_dp", run_name="__main__", alter_sys=True)
else:
    from jaxdp.bench.label_dp import *  # noqa: F401,F403 - run() and friends, for code that loads this file
