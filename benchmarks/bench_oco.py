"""Benchmark of DP-FTRL (REAL Alg. 3, ``jaxdp.oco.dp_ftrl``) on CPU.

Entry point only: the benchmark lives in ``benchmarks.harness.oco`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_oco.py [--tiny]          # = python -m benchmarks.harness.oco [--tiny]
"""
import pathlib
import sys

_ROOT = str(pathlib.Path(__file__).resolve().parents[1])   # the repository root: benchmarks.harness imports from it
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

if __name__ == "__main__":
    import runpy

    runpy.run_module("benchmarks.harness.oco", run_name="__main__", alter_sys=True)
else:
    from benchmarks.harness.oco import *  # noqa: F401,F403 - run() and friends, for code that loads this file
