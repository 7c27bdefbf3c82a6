"""simulate(hedge) vs NumPy references: seeds in {1, 16, 256, 4096, 16384}, d in {10, 100, 1000}, T = 1000.

    python benchmarks/bench_hedge.py [--quick]      # or: jaxdp bench [--quick]

Writes benchmarks/RESULTS.md (see jaxdp/bench.py for what is measured).
"""
import sys

from jaxdp.bench import run_benchmarks

if __name__ == "__main__":
    print(run_benchmarks(quick="--quick" in sys.argv, only=["hedge"]))
