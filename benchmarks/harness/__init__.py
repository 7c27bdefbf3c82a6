"""The benchmark harness (``jaxdp.bench`` before jaxdp 1.0): timing, NumPy references, the accelerator suite,
the export check and DP-Sniper's audit suite. It lives in the source checkout, not in the installed package:
``jaxdp bench`` and ``jaxdp audit --suite dpsniper`` import it from there (the repository root on ``sys.path``).

Modules (each imports only those above it, so there is no import cycle):

* :mod:`~benchmarks.harness.common`: timing helpers, the machine's description, markdown tables;
* :mod:`~benchmarks.harness.numpy_refs`: NumPy references of the benchmarked workloads;
* :mod:`~benchmarks.harness.accuracy`: the 10^7-round accuracy scenario of the cumulative losses (tests and
  ``benchmarks/bench_hedge.py --accuracy`` share it);
* :mod:`~benchmarks.harness.hedge`: ``simulate(hedge)`` against the NumPy references;
* :mod:`~benchmarks.harness.hlo`: reading an exported StableHLO module (violations, random words, carry bytes);
* :mod:`~benchmarks.harness.roofline`: published device figures and roofline predictions;
* :mod:`~benchmarks.harness.suite`: the accelerator suite (six algorithms over batch sizes, floors, scaling);
* :mod:`~benchmarks.harness.export`: every suite case and every study exported for ``cuda`` and ``tpu``;
* :mod:`~benchmarks.harness.report`: the ``jaxdp bench`` driver and the device report;
* :mod:`~benchmarks.harness.dpsniper`: DP-Sniper's twenty mechanisms as registered audits
  (``jaxdp audit --suite dpsniper``; ``jaxdp.privacy.audit.dpsniper`` before jaxdp 1.0), with its exact
  integer primitives (``_dpsniper_primitives``) and published bounds (``_dpsniper_report``).

``jaxdp bench`` writes to ``--out`` or ``./jaxdp-bench.md``, never into the
source tree; ``benchmarks/run_all.py`` (maintainers) rewrites the committed
tables. See docs/guide/benchmarks.md.

The submodules are imported on first use, so importing :mod:`benchmarks.harness` is cheap.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["best_time", "machine_info", "rows_to_markdown", "numpy_hedge_per_seed", "numpy_hedge_vectorized",
           "bench_hedge", "run_benchmarks", "run_device_report", "run_suite", "suite_to_markdown",
           "analyze_module", "export_jitted", "suite_exports", "study_exports"]

_WHERE = {
    "best_time": "common", "machine_info": "common", "rows_to_markdown": "common",
    "numpy_hedge_per_seed": "numpy_refs", "numpy_hedge_vectorized": "numpy_refs",
    "bench_hedge": "hedge", "run_benchmarks": "report", "run_device_report": "report",
    "run_suite": "suite", "suite_to_markdown": "suite",
    "analyze_module": "hlo", "export_jitted": "export", "suite_exports": "export", "study_exports": "export",
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_WHERE))
