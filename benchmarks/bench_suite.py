"""Accelerator benchmark suite (``jaxdp.bench_suite``): throughput, compile time, peak memory, two floors.

Usage: ``python benchmarks/bench_suite.py [--quick] [--out FILE]``: prints a markdown section
(append it to a results file with ``>>``; ``--out`` also writes it to FILE). Runs unchanged on CPU
and GPU (batch sizes up to the device-memory budget on GPU, a few seconds per call on CPU).
"""
from __future__ import annotations

import argparse
import pathlib

from jaxdp.bench_suite import run_suite, suite_to_markdown

TITLE = "Accelerator benchmark suite"


def run(quick: bool = False) -> list[dict]:
    return run_suite(quick=quick)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (rates not representative)")
    ap.add_argument("--out", default=None, help="also write the section to this file")
    args = ap.parse_args()
    md = suite_to_markdown(run_suite(quick=args.quick),
                           TITLE + (" (quick: tiny sizes, rates not representative)" if args.quick else ""))
    print(md)
    if args.out:
        pathlib.Path(args.out).write_text(md)
