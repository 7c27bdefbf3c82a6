"""Sampler and L2P-RMW throughput.

Entry point only: the benchmark lives in ``jaxdp.bench.samplers`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_samplers.py [--full]          # = python -m jaxdp.bench.samplers [--full]
"""
if __name__ == "__main__":
    import runpy

    runpy.run_module("jaxdp.bench.samplers", run_name="__main__", alter_sys=True)
else:
    from jaxdp.bench.samplers import *  # noqa: F401,F403 - run() and friends, for code that loads this file
