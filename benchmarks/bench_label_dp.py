"""Fitted label-DP estimators per second vs N and seeds on CPU: JAX (vmapped over seeds) vs NumPy/SciPy.

Entry point only: the benchmark lives in ``benchmarks.harness.label_dp`` (also run by ``jaxdp bench --all``).

    python benchmarks/bench_label_dp.py [--tiny]          # = python -m benchmarks.harness.label_dp [--tiny]
"""
import pathlib
import sys

_ROOT = str(pathlib.Path(__file__).resolve().parents[1])   # the repository root: benchmarks.harness imports from it
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

if __name__ == "__main__":
    import runpy

    runpy.run_module("benchmarks.harness.label_dp", run_name="__main__", alter_sys=True)
else:
    from benchmarks.harness.label_dp import *  # noqa: F401,F403 - run() and friends, for code that loads this file
