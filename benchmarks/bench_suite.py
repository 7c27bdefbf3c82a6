"""Accelerator benchmark suite (``benchmarks.harness.suite``) with the roofline of every case (``benchmarks.harness.report``).

    python benchmarks/bench_suite.py [--quick] [--out FILE]     # the suite part of: jaxdp bench --device-report

Prints a markdown section (``--out`` also writes it to FILE). Runs unchanged on CPU, GPU and TPU (batch
sizes up to the device-memory budget on an accelerator, a few seconds per call on CPU).
``benchmarks/run_all.py`` updates the committed ``benchmarks/SUITE_<BACKEND>.md``.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

_ROOT = str(pathlib.Path(__file__).resolve().parents[1])   # the repository root: benchmarks.harness imports from it
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from benchmarks.harness.report import run_device_report  # noqa: E402

TITLE = "Accelerator benchmark suite"

if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes (rates not representative)")
    ap.add_argument("--out", default=None, help="also write the section to this file")
    args = ap.parse_args()
    md = run_device_report(quick=args.quick)
    from benchmarks.harness.common import emit

    emit(md, args.out)
