"""Benchmark: GROWTH epoch algorithm (``epoch_growth_sco``) — estimators/s vs seeds and n on CPU,

Entry point only: the benchmark lives in ``jaxdp.bench.sco`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_sco.py [--full] [--tiny]          # = python -m jaxdp.bench.sco [--full] [--tiny]
"""
if __name__ == "__main__":
    import runpy

    runpy.run_module("jaxdp.bench.sco", run_name="__main__", alter_sys=True)
else:
    from jaxdp.bench.sco import *  # noqa: F401,F403 - run() and friends, for code that loads this file
