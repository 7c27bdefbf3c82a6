"""Benchmark of sparse-vector experts (REAL Alg. 1, jaxdp.experts) on CPU.

Entry point only: the benchmark lives in ``benchmarks.harness.realizable`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_realizable.py [--tiny]          # = python -m benchmarks.harness.realizable [--tiny]
"""
import pathlib
import sys

_ROOT = str(pathlib.Path(__file__).resolve().parents[1])   # the repository root: benchmarks.harness imports from it
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

if __name__ == "__main__":
    import runpy

    runpy.run_module("benchmarks.harness.realizable", run_name="__main__", alter_sys=True)
else:
    from benchmarks.harness.realizable import *  # noqa: F401,F403 - run() and friends, for code that loads this file
