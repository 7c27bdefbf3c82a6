"""CPU seconds a study run spends before its first chunk starts computing, cold and warm cache.

    python benchmarks/bench_first_chunk.py [--out benchmarks/FIRST_CHUNK.md]

Runs ``jaxdp study run hedge-baseline --quick`` three times, each in a fresh process and in the same
``JAXDP_CACHE_DIR`` (a new directory): X1 cold (fills the cache), X2 warm, X3 ``--no-cache``. Each process records
its own ``getrusage`` user + system CPU seconds when the runner first enters a chunk (everything before: interpreter,
imports, parsing, checks, planning, the manifest) and at its end; "first chunk" is the time from entering it to
leaving it (its compile or cache load, and its run).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks.harness from the repository root

CHILD = r"""
import json, resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
marks = {}
import jaxdp.studies.runner as runner
inner = runner._chunk_frame
def frame(*a, **k):
    first = "enter" not in marks
    if first:
        marks["enter"] = cpu()
    out = inner(*a, **k)
    if first:
        marks["leave"] = cpu()
    return out
runner._chunk_frame = frame
from jaxdp.cli import main
try:
    status = main(sys.argv[2:])
except SystemExit as e:
    status = e.code
marks["end"] = cpu()
marks["status"] = status
open(sys.argv[1], "w").write(json.dumps(marks))
"""


def _run(tag: str, out: Path, cache: Path, extra: list[str]) -> dict:
    marks = out / f"{tag}.json"
    env = dict(os.environ, JAXDP_CACHE_DIR=str(cache))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", CHILD, str(marks), *extra, "study", "run", "hedge-baseline", "--quick",
                    "--out", str(out / tag), "--no-plot", "--no-progress"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    m = json.loads(marks.read_text())
    if m["status"] not in (0, None):
        raise SystemExit(f"{tag}: jaxdp exited with status {m['status']}")
    m["wall"] = time.perf_counter() - t0
    return m


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="write the table to this Markdown file")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_p = Path(tmp)
        cache = tmp_p / "cache"
        rows = [("X1", "cold (fills the cache)", _run("X1", tmp_p, cache, [])),
                ("X2", "warm", _run("X2", tmp_p, cache, [])),
                ("X3", "`--no-cache`", _run("X3", tmp_p, cache, ["--no-cache"]))]
        same = len({(tmp_p / t / "results.csv").read_bytes() for t, _, _ in rows}) == 1
    load = os.getloadavg()
    lines = [
        "# CPU seconds before the first chunk",
        "",
        f"Written by `python benchmarks/bench_first_chunk.py` ({time.strftime('%Y-%m-%d %H:%M')}; load average "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}). `jaxdp study run hedge-baseline --quick --no-plot` in three "
        "fresh processes sharing one new `JAXDP_CACHE_DIR`; each process's own user + system CPU seconds "
        "(`getrusage`) when the runner enters its first chunk, what that chunk costs (compile or cache load, and "
        "the run), and the whole process.",
        "",
        "| run | cache | CPU s before the first chunk | first chunk CPU s | process CPU s | wall s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for tag, what, m in rows:
        lines.append(f"| {tag} | {what} | {m['enter']:.2f} | {m['leave'] - m['enter']:.2f} | {m['end']:.2f} | "
                     f"{m['wall']:.1f} |")
    lines += ["", f"The three results.csv files are {'byte-identical' if same else 'DIFFERENT'}.", ""]
    text = "\n".join(lines)
    from benchmarks.harness.common import emit

    emit(text, args.out)


if __name__ == "__main__":
    main()
