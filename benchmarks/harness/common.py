"""Helpers shared by every benchmark: timing, the machine's description, markdown tables.

This module imports nothing else from :mod:`benchmarks.harness`, so every other
benchmark module can import it without a cycle.
"""
from __future__ import annotations

import math
import os
import pathlib
import platform
import time
from typing import Any, Callable, Iterable, Optional

import numpy as np

__all__ = ["machine_info", "best_time", "interleaved_best_times", "median_time", "block", "fmt", "table", "rows_to_markdown",
           "ROOT", "root_on_pythonpath"]

#: the repository root (this file is ``benchmarks/harness/common.py``): ``benchmarks.harness`` imports from it
ROOT = pathlib.Path(__file__).resolve().parents[2]


def root_on_pythonpath(env: dict) -> dict:
    """``env`` with the repository root first on ``PYTHONPATH``, for a subprocess that imports ``benchmarks.harness``.

    Args:
        env: a copy of the environment (changed in place).

    Returns:
        ``env``.
    """
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != str(ROOT)]
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + rest)
    return env


def machine_info() -> str:
    """One line describing the machine a benchmark ran on.

    Returns:
        The jax version, backend and device kind, device count, host CPU model, core count and Python version.
    """
    import jax

    dev = jax.devices()[0]
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return (f"jax {jax.__version__} on {jax.default_backend()} ({dev.device_kind}, {jax.device_count()} device(s)); "
            f"host: {cpu}, {os.cpu_count()} cores; python {platform.python_version()}")


def block(x: Any) -> Any:
    """``jax.block_until_ready`` (asynchronous dispatch: time only finished work).

    Args:
        x: a pytree of arrays (or any value).

    Returns:
        ``x``, once every array in it is computed.
    """
    import jax

    return jax.block_until_ready(x)


def best_time(f: Callable[[], Any], reps: int = 2) -> float:
    """The fastest of ``reps`` wall-clock timings of ``f()`` in seconds (its result is waited for).

    No untimed warm-up call: call ``f`` once before, or take ``reps >= 2``, when compilation must not count.

    Args:
        f: the callable timed, without arguments.
        reps: the number of timed calls.

    Returns:
        The smallest wall-clock time in seconds.
    """
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        block(f())
        best = min(best, time.perf_counter() - t0)
    return best


def interleaved_best_times(runs: dict, reps: int, cpu: Optional[dict] = None) -> dict:
    """Best of ``reps`` wall-clock timings (s) of each callable in ``runs``, after one untimed call of each.

    Each repetition times every callable in turn, so that all of them see the same machine state: timed one
    after another, a shared machine's drift over minutes moves single points by 5-10%
    (benchmarks/SCALING.md). Results are waited for.

    Args:
        runs: ``{name: callable without arguments}``.
        reps: the number of timed rounds over all callables.
        cpu: a dict to fill with ``{name: the smallest CPU time (time.process_time, all threads) in seconds}``
            (``None``: not recorded).

    Returns:
        ``{name: the smallest wall-clock time in seconds}``.
    """
    for f in runs.values():
        block(f())
    best = {k: float("inf") for k in runs}
    best_cpu = {k: float("inf") for k in runs}
    for _ in range(reps):
        for k, f in runs.items():
            t0, c0 = time.perf_counter(), time.process_time()
            block(f())
            best[k] = min(best[k], time.perf_counter() - t0)
            best_cpu[k] = min(best_cpu[k], time.process_time() - c0)
    if cpu is not None:
        cpu.update(best_cpu)
    return best


def median_time(f: Callable[[], Any], reps: int) -> float:
    """The median of ``reps`` wall-clock timings of ``f()`` in seconds (its result is waited for).

    Args:
        f: the callable timed, without arguments.
        reps: the number of timed calls (no untimed warm-up).

    Returns:
        The median wall-clock time in seconds.
    """
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        block(f())
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts))


def fmt(v: Any) -> str:
    """A table cell: 3 significant digits for large or small floats, an em dash for NaN/None.

    Floats with ``|v| >= 1e5`` or ``0 < |v| < 1e-2`` are written ``%.3g``, others with 3 decimals below 10 and 1
    above; infinities as ``∞``/``-∞``; anything else by ``str``.

    Args:
        v: the value.

    Returns:
        The cell's text.
    """
    if v is None:
        return "—"
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "—"
        if math.isinf(v):
            return "∞" if v > 0 else "-∞"
        if v != 0 and (abs(v) >= 1e5 or abs(v) < 1e-2):
            return f"{v:.3g}"
        return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def table(rows: Iterable[dict], cols: list[str], headers: Optional[list[str]] = None) -> str:
    """A markdown table of ``rows`` (dicts) restricted to ``cols``; missing cells are empty.

    Args:
        rows: the rows, each a dict from column name to value (cells formatted by :func:`fmt`).
        cols: the columns, in order.
        headers: the header texts (``None``: the column names).

    Returns:
        The table's markdown, lines joined by newlines (no trailing newline).
    """
    rows = list(rows)
    head = headers or cols
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(fmt(r[c]) if c in r else "" for c in cols) + " |" for r in rows]
    return "\n".join(out)


def rows_to_markdown(rows: list[dict], title: str) -> str:
    """``### title`` and a table of every key of the first row.

    Args:
        rows: the rows (dicts; the first one's keys are the columns).
        title: the section title.

    Returns:
        The markdown section (``(no rows)`` when ``rows`` is empty), ending with a newline.
    """
    if not rows:
        return f"### {title}\n\n(no rows)\n"
    return f"### {title}\n\n{table(rows, list(rows[0].keys()))}\n"


def emit(md: str, out: Optional[str]) -> None:
    """Print a benchmark's Markdown report and, if ``out`` is given, write it there atomically.

    Args:
        md: the report.
        out: the file to write (``--out``), or ``None`` to print only.
    """
    print(md)
    if out:
        from jaxdp.core.io import atomic_write

        atomic_write(out, md)
