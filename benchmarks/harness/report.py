"""The ``jaxdp bench`` driver: run benchmarks, print markdown, write it where the user says.

``run_benchmarks`` writes to ``--out`` or to ``jaxdp-bench.md`` in the current
directory, never into the source tree: the committed tables under
``benchmarks/`` are rewritten only by the maintainers' script
``benchmarks/run_all.py``, which passes their paths explicitly.

``--device-report`` runs the accelerator suite (:mod:`benchmarks.harness.suite`),
exports every suite case for ``cuda`` and ``tpu`` (:mod:`benchmarks.harness.export`)
and prints, next to each measurement, the roofline prediction from the
exported module's counts (:mod:`benchmarks.harness.roofline`) for this device
(measured ceilings) and for the published H100 and TPU v5e figures.
"""
from __future__ import annotations

import importlib
import importlib.util
import inspect
import math
import pathlib
import time
from typing import Iterable, Optional, Sequence

from .common import machine_info, rows_to_markdown, table

__all__ = ["run_benchmarks", "run_device_report", "roofline_rows", "roofline_markdown", "export_markdown",
           "device_memory_report", "DEFAULT_OUT"]

DEFAULT_OUT = "jaxdp-bench.md"
# benchmarks of this harness run by --all (each has ``run(...)`` returning rows); ``benchmarks/bench_NAME.py``
# is their entry point
PACKAGE_BENCHMARKS = ("lazy", "oco", "realizable", "samplers", "sco", "label_dp")
# scripts in benchmarks/ that are entry points of this harness, not benchmarks of their own
_ENTRY_POINTS = {"bench_hedge", "bench_suite"} | {f"bench_{n}" for n in PACKAGE_BENCHMARKS}


def _source_benchmarks_dir() -> Optional[pathlib.Path]:
    """``benchmarks/``, the harness's parent (read only: scripts are discovered there, never written)."""
    d = pathlib.Path(__file__).resolve().parents[1]
    return d if d.is_dir() else None


def _discover() -> dict:
    """``{name: module}``: the harness's benchmarks, then any other ``benchmarks/bench_*.py`` with a ``run``."""
    mods = {n: importlib.import_module(f"{__package__}.{n}") for n in PACKAGE_BENCHMARKS}
    d = _source_benchmarks_dir()
    if d is None:
        return mods
    for f in sorted(d.glob("bench_*.py")):
        if f.stem in _ENTRY_POINTS:
            continue
        spec = importlib.util.spec_from_file_location(f"jaxdp_benchmarks_{f.stem}", f)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if hasattr(mod, "run"):
            mods[f.stem[len("bench_"):]] = mod
    return mods


def _call_bench(name: str, mod, quick: bool) -> list:
    """Call a ``benchmarks/bench_*.py`` module's ``run`` with its own size flag; return [(title, rows)]."""
    params = inspect.signature(mod.run).parameters
    if "tiny" in params:
        kw = {"tiny": quick}
        if "quick" in params:
            kw["quick"] = bool(quick)
        res = mod.run(**kw)
    elif "quick" in params:
        res = mod.run(quick=quick)
    elif "n" in params:  # audits: runs per side
        res = mod.run(n=10_000 if quick else 1_000_000)
    else:
        res = mod.run()
    title = getattr(mod, "TITLE", name)
    if isinstance(res, dict):
        return [(f"{title}: {k}", v) for k, v in res.items()]
    return [(title, res)]


# --------------------------------------------------------------------------- device report


def device_memory_report() -> str:
    """Peak device memory as reported by the backend (GPU/TPU; CPU reports none).

    Returns:
        A markdown section ``### device memory`` with one line per local device: its peak bytes in use and
        its limit in GiB, or that the backend reports no memory statistics.
    """
    import jax

    lines = ["### device memory", ""]
    for dev in jax.local_devices():
        stats = None
        try:
            stats = dev.memory_stats()
        except Exception:  # pragma: no cover
            pass
        if not stats:
            lines.append(f"- {dev}: the backend reports no memory statistics")
        else:
            lines.append(f"- {dev}: peak {stats.get('peak_bytes_in_use', math.nan) / 2**30:.3f} GiB, "
                         f"limit {stats.get('bytes_limit', math.nan) / 2**30:.1f} GiB")
    return "\n".join(lines) + "\n"


def roofline_rows(suite_rows: list[dict], exports: list) -> list[dict]:
    """One row per suite case: its best measured throughput next to the roofline predictions.

    For each exported case: random bits and carry bytes per round, whether it lowers for ``cuda`` and
    ``tpu``, and the throughput :func:`benchmarks.harness.roofline.predict` gives for this device (the ceilings the
    suite measured) and for the published H100 and TPU v5e figures; the measurement is the case's row of
    most seed-rounds per second.

    Args:
        suite_rows: the rows of :func:`benchmarks.harness.suite.run_suite`.
        exports: the records of :func:`benchmarks.harness.export.suite_exports` (same ``quick``).

    Returns:
        The rows for :func:`roofline_markdown`.
    """
    import jax

    from .roofline import PUBLISHED, measured_device, predict

    by_case: dict = {}
    for r in suite_rows:
        if r.get("case") == "scaling" or "seed_rounds_per_s" not in r:
            continue
        if r["case"] not in by_case or r["seed_rounds_per_s"] > by_case[r["case"]]["seed_rounds_per_s"]:
            by_case[r["case"]] = r
    out = []
    for rec in exports:
        case = rec.module.split(":", 1)[1]
        m = by_case.get(case)
        st = rec.stats or {}
        row = {"case": case, "config": rec.label, "unit": "seed-rounds/s" if rec.rounds else "estimators/s",
               "export": "cuda, tpu" if rec.ok else ("FAILED: " + "; ".join(rec.errors.values() or
                                                                       st.get("violations", []))),
               "rand_bits_per_round": 32 * rec.per_round("rng_words"),
               "carry_bytes_per_round": rec.per_round("carry_bytes")}
        if st:
            if m is not None:
                here = measured_device(jax.devices()[0].device_kind, m["bw_ceiling_bytes_per_s"],
                                       m["rng_generated_ceiling_words_per_s"])
                p = predict(st["rng_words"], st["carry_bytes"], rec.rounds, here)
                row.update({"seeds": m["seeds"], "measured": m["seed_rounds_per_s"], "predicted_here": p["throughput"],
                            "measured/predicted": m["seed_rounds_per_s"] / p["throughput"], "bound_here": p["bound"]})
            for dev, key in zip(PUBLISHED, ("predicted_H100", "predicted_TPU_v5e")):
                # with no loop state and no published generator rate there is no floor to predict from
                row[key] = (predict(st["rng_words"], st["carry_bytes"], rec.rounds, dev)["throughput"]
                            if st["carry_bytes"] > 0 or dev.rng_words_per_s else float("nan"))
        out.append(row)
    return out


def roofline_markdown(rows: list[dict]) -> str:
    """The roofline table (measured vs predicted throughput per suite case), with its explanation.

    Args:
        rows: the rows of :func:`roofline_rows`.

    Returns:
        The markdown section ``### Roofline: measured vs predicted``.
    """
    from .roofline import H100, TPU_V5E

    cols = ["case", "config", "export", "rand_bits_per_round", "carry_bytes_per_round", "seeds", "measured",
            "predicted_here", "measured/predicted", "bound_here", "predicted_H100", "predicted_TPU_v5e", "unit"]
    heads = ["case", "config", "lowers for", "random bits/round", "carry bytes/round", "seeds (best)", "measured",
             "predicted here", "measured/predicted", "bound here", "predicted H100", "predicted TPU v5e", "unit"]
    parts = ["### Roofline: measured vs predicted", "",
             "Per seed and round, from the module exported for `cuda` and `tpu` (`benchmarks.harness.export`): random bits "
             "drawn (threefry output, key derivations included) and bytes of loop state changed (read and written) "
             "per round. Predicted "
             "throughput = rounds / max(random words / generator rate, carry bytes / bandwidth), with enough seeds in "
             "flight to fill the device. *Here*: the ceilings measured above (generator rate in threefry words as "
             "counted in `jax.random.bits`'s own module). "
             f"*H100*: {H100.source}. *TPU v5e*: {TPU_V5E.source}. For these two the prediction is the bandwidth "
             "bound alone (an upper bound on throughput): where `bound here` is `rng`, expect less. "
             "One-shot estimators (`label_dp`) have no loop state: their prediction is the random-number floor only.",
             "", table(rows, cols, heads), ""]
    return "\n".join(parts) + "\n"


def run_device_report(quick: bool = False, scaling: bool = True, cases: Optional[Sequence[str]] = None) -> str:
    """Run the accelerator suite, export its cases and return the markdown report (suite, roofline, memory).

    Args:
        quick: the quick suite's sizes.
        scaling: also run the suite's multi-device scaling rows.
        cases: only the suite cases of these names (``None``: all).

    Returns:
        The report's markdown.
    """
    from .export import suite_exports
    from .suite import run_suite, suite_to_markdown

    rows = run_suite(quick=quick, scaling=scaling, cases=list(cases) if cases else None)
    exports = suite_exports(quick=quick, cases=cases)
    return suite_to_markdown(rows) + "\n" + roofline_markdown(roofline_rows(rows, exports)) + "\n" + \
        device_memory_report()


# --------------------------------------------------------------------------- export table


def export_markdown(records: list, title: str = "Accelerator export check") -> str:
    """The per-module table of ``benchmarks/EXPORT.md``.

    One row per record: the platforms it lowers for, whether it is free of host callbacks and CPU-only
    calls, random bits and carry bytes per round, the predicted H100 and TPU v5e throughput, and notes
    (float64, traced trip counts, capture remarks).

    Args:
        records: the :class:`benchmarks.harness.export.ExportRecord` s.
        title: the section title.

    Returns:
        The markdown section.
    """
    from .roofline import H100, TPU_V5E, predict

    rows = []
    for r in records:
        st = r.stats or {}
        notes = []
        if st.get("uses_f64"):
            notes.append("float64 (TPUs emulate it)")
        if st.get("unknown_trip_loops"):
            notes.append(f"{st['unknown_trip_loops']} loop(s) with a traced trip count, counted once")
        if r.note:
            notes.append(r.note)
        bad = list(r.errors.values()) + list(st.get("violations", []))
        row = {"module": r.module, "point": r.label, "platforms": ", ".join(r.platforms_ok) or "none",
               "ok": "yes" if r.ok else "NO: " + "; ".join(bad),
               "rounds": r.rounds if r.rounds else "per call",
               "bits": 32 * r.per_round("rng_words") if st else float("nan"),
               "carry": r.per_round("carry_bytes") if st else float("nan"),
               "notes": "; ".join(notes)}
        if st and st["carry_bytes"] > 0:
            row["h100"] = predict(st["rng_words"], st["carry_bytes"], r.rounds, H100)["throughput"]
            row["v5e"] = predict(st["rng_words"], st["carry_bytes"], r.rounds, TPU_V5E)["throughput"]
        elif st:
            row["h100"] = row["v5e"] = "— (no loop state)"
        rows.append(row)
    cols = ["module", "point", "platforms", "ok", "rounds", "bits", "carry", "h100", "v5e", "notes"]
    heads = ["module", "grid point / config", "lowers for", "no callbacks or CPU-only calls", "rounds/call",
             "random bits/round", "carry bytes/round", "predicted H100 (seed-rounds/s or estimators/s)",
             "predicted TPU v5e", "notes"]
    return f"### {title}\n\n{table(rows, cols, heads)}\n"


# --------------------------------------------------------------------------- driver


def run_benchmarks(quick: bool = False, run_all: bool = False, only: Optional[Iterable[str]] = None,
                   out: Optional[str] = None, device_report: bool = False) -> pathlib.Path:
    """The ``jaxdp bench`` driver: run the benchmarks, print each table and write them all to one file.

    Runs the Hedge benchmark; with ``run_all``, also every benchmark of this harness and any other
    ``benchmarks/bench_*.py``; with ``device_report``, the accelerator suite and its
    roofline (:func:`run_device_report`). The file starts with the machine (:func:`machine_info`) and the date.

    Args:
        quick: tiny sizes (rates not representative).
        run_all: also run every discovered benchmark.
        only: run just the benchmarks of these names (``"hedge"`` or a discovered one; a discovered name runs
            even without ``run_all``).
        out: the file to write (``None``: ``./jaxdp-bench.md``).
        device_report: append the accelerator suite, roofline and memory report.

    Returns:
        The path written.

    Raises:
        ValueError: ``out`` is a directory.
    """
    from .hedge import TITLE, bench_hedge

    path = pathlib.Path(out) if out else pathlib.Path.cwd() / DEFAULT_OUT
    if path.is_dir():
        raise ValueError(f"--out must be a file path, got the directory {str(path)!r}")
    sections = [f"# jaxdp benchmark results\n\nMachine: {machine_info()}\n\nDate: {time.strftime('%Y-%m-%d %H:%M')}"
                f"{'  (quick mode: tiny sizes, rates not representative)' if quick else ''}\n"]
    only = set(only or [])
    if not only or "hedge" in only:
        if quick:
            rows = bench_hedge(seeds_list=(1, 16), d_list=(10,), T=100, numpy_max_seed_rounds=2e3,
                               loop_budget=0.05)
        else:
            rows = bench_hedge()
        md = rows_to_markdown(rows, TITLE)
        print(md)
        sections.append(md)
    if run_all or only - {"hedge"}:
        mods = _discover()
        for name, mod in mods.items():
            if only and name not in only:
                continue
            t0 = time.perf_counter()
            for title, rows in _call_bench(name, mod, quick):
                md = rows_to_markdown(rows, title)
                print(md)
                sections.append(md)
            print(f"({name}: {time.perf_counter() - t0:.1f}s)")
    if device_report:
        md = run_device_report(quick=quick)
        print(md)
        sections.append(md)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(sections))
    return path

