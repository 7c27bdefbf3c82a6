"""simulate(hedge) vs NumPy references: seeds in {1, 16, 256, 4096, 16384}, d in {10, 100, 1000}, T = 1000.

    python benchmarks/bench_hedge.py [--quick] [--out FILE]     # same as: jaxdp bench [--quick] [--out FILE]

Prints the table; writes FILE (default ./jaxdp-bench.md). What is measured: ``jaxdp.bench.hedge``.
``benchmarks/run_all.py`` updates the committed ``benchmarks/RESULTS.md``.
"""
import argparse

from jaxdp.bench import run_benchmarks

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (rates not representative)")
    ap.add_argument("--out", default=None, help="markdown file to write (default ./jaxdp-bench.md)")
    args = ap.parse_args()
    print(run_benchmarks(quick=args.quick, only=["hedge"], out=args.out))
