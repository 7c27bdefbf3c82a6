"""Benchmark: GROWTH epoch algorithm (``epoch_growth_sco``) — estimators/s vs seeds and n on CPU,

Entry point only: the benchmark lives in ``benchmarks.harness.sco`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_sco.py [--full] [--tiny]          # = python -m benchmarks.harness.sco [--full] [--tiny]
"""
import pathlib
import sys

_ROOT = str(pathlib.Path(__file__).resolve().parents[1])   # the repository root: benchmarks.harness imports from it
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

if __name__ == "__main__":
    import runpy

    runpy.run_module("benchmarks.harness.sco", run_name="__main__", alter_sys=True)
else:
    from benchmarks.harness.sco import *  # noqa: F401,F403 - run() and friends, for code that loads this file
