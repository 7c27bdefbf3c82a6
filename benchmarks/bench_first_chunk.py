"""CPU seconds a study run spends before its first chunk starts computing, cold and warm cache.

    python benchmarks/bench_first_chunk.py [--out benchmarks/FIRST_CHUNK.md] [--warm 3] [--profile]

Runs ``jaxdp study run hedge-baseline --quick`` in fresh processes sharing one ``JAXDP_CACHE_DIR`` (a new
directory): X1 cold (fills the cache), X2 warm (``--warm`` processes; the table shows their median), X3
``--no-cache``. Each process records its own ``getrusage`` user + system CPU seconds when the runner first enters a
chunk (everything before: interpreter, imports, parsing, checks, planning, the manifest) and at its end; "first
chunk" is the time from entering it to leaving it (its compile or cache load, its run, and turning its rows into
CSV). Each process also records the CPU seconds at stages on the way (interpreter start, ``import jax``, the
command line, ``registry.get_study``) and which heavy third-party modules are loaded when the first chunk starts.

The processes share a new Python bytecode cache (``PYTHONPYCACHEPREFIX`` in the same temporary directory, with
``PYTHONDONTWRITEBYTECODE`` unset), filled first by a process that imports every jaxdp module and compiles nothing
(``JAXDP_CACHE_DIR`` empty): every run reads bytecode, as an installed package has its ``.pyc`` files, and X1 is
cold for the JAX cache only. ``--profile`` runs one more warm process under cProfile, stopped when the first chunk
starts, and prints its top functions by cumulative time (not written to ``--out``).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # benchmarks.harness from the repository root

PROSE = "<!-- notes -->"   # the hand-written part of the page from here on, kept by each run
HEAVY = ("scipy", "scipy.stats", "scipy.special", "scipy.optimize", "pandas", "optax", "matplotlib", "sklearn")

CHILD = r"""
import resource, sys
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
marks = {"start": cpu()}
import json, os
HEAVY = %r
import jax
marks["jax"] = cpu()
import jaxdp.studies.runner as runner
from jaxdp import registry
from jaxdp.cli import main
marks["cli"] = cpu()
inner_get = registry.get_study
def get_study(name):
    a = cpu()
    try:
        return inner_get(name)
    finally:
        marks["get_study"] = marks.get("get_study", 0.0) + cpu() - a
registry.get_study = get_study
inner = runner._chunk_frame
def frame(*a, **k):
    first = "enter" not in marks
    if first:
        marks["enter"] = cpu()
        marks["heavy"] = [m for m in HEAVY if m in sys.modules]
    out = inner(*a, **k)
    if first:
        marks["leave"] = cpu()
    return out
runner._chunk_frame = frame
profile = os.environ.get("BENCH_FIRST_CHUNK_PROFILE")
if profile:
    import cProfile, pstats
    class Stop(Exception):
        pass
    def stop(*a, **k):
        raise Stop
    runner._chunk_frame = stop
    pr = cProfile.Profile()
    pr.enable()
    try:
        main(sys.argv[2:])
    except Stop:
        pass
    pr.disable()
    pstats.Stats(pr, stream=open(profile, "w")).sort_stats("cumulative").print_stats(45)
    sys.exit(0)
try:
    status = main(sys.argv[2:])
except SystemExit as e:
    status = e.code
marks["end"] = cpu()
marks["status"] = status
marks["devices"] = jax.device_count()
open(sys.argv[1], "w").write(json.dumps(marks))
""" % (HEAVY,)


def _env(cache: Path, pycache: Path, profile: str = "") -> dict:
    env = dict(os.environ, JAXDP_CACHE_DIR=str(cache), PYTHONPYCACHEPREFIX=str(pycache))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if profile:
        env["BENCH_FIRST_CHUNK_PROFILE"] = profile
    return env


def _argv(out: Path, tag: str, extra: list[str]) -> list[str]:
    return [*extra, "study", "run", "hedge-baseline", "--quick", "--out", str(out / tag), "--no-plot", "--no-progress"]


def _run(tag: str, out: Path, cache: Path, pycache: Path, extra: list[str]) -> dict:
    marks = out / f"{tag}.json"
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", CHILD, str(marks), *_argv(out, tag, extra)], env=_env(cache, pycache),
                   check=True, stdout=subprocess.DEVNULL)
    m = json.loads(marks.read_text())
    if m["status"] not in (0, None):
        raise SystemExit(f"{tag}: jaxdp exited with status {m['status']}")
    m["wall"] = time.perf_counter() - t0
    return m


def _median(runs: list[dict]) -> dict:
    """The median of each number over ``runs`` (the heavy modules and devices of the first)."""
    keys = ("start", "jax", "cli", "get_study", "enter", "leave", "end", "wall")
    return dict(runs[0], **{k: statistics.median(r[k] for r in runs) for k in keys},
                **{"leave_minus_enter": statistics.median(r["leave"] - r["enter"] for r in runs)})


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="write the table to this Markdown file")
    ap.add_argument("--warm", type=int, default=3, help="warm processes (X2 is their median)")
    ap.add_argument("--profile", action="store_true", help="also profile one warm process up to its first chunk")
    args = ap.parse_args(argv)
    if args.warm < 1:
        raise SystemExit(f"--warm must be a positive integer, got {args.warm}")
    load0 = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_p = Path(tmp)
        cache, pycache = tmp_p / "cache", tmp_p / "pycache"
        # bytecode first, in a process that compiles nothing into the JAX cache: X1 is cold for JAX only
        subprocess.run([sys.executable, "-c", "import jax, pandas, jaxdp.cli\nfrom jaxdp import registry\n"
                        "registry.load_all()"], env=_env(Path(""), pycache) | {"JAXDP_CACHE_DIR": ""}, check=True)
        x1 = _run("X1", tmp_p, cache, pycache, [])
        warm = [_run(f"X2-{i}", tmp_p, cache, pycache, []) for i in range(args.warm)]
        x3 = _run("X3", tmp_p, cache, pycache, ["--no-cache"])
        tags = ["X1", *(f"X2-{i}" for i in range(args.warm)), "X3"]
        same = len({(tmp_p / t / "results.csv").read_bytes() for t in tags}) == 1
        if args.profile:
            prof = tmp_p / "profile.txt"
            subprocess.run([sys.executable, "-c", CHILD, str(tmp_p / "P.json"), *_argv(tmp_p, "P", [])],
                           env=_env(cache, pycache, str(prof)), check=True, stdout=subprocess.DEVNULL)
            print(prof.read_text(), file=sys.stderr)
    load1 = os.getloadavg()
    x2 = _median(warm)
    for m in (x1, x3):
        m["leave_minus_enter"] = m["leave"] - m["enter"]
    rows = [("X1", "cold (fills the cache)", x1), ("X2", f"warm (median of {args.warm})", x2),
            ("X3", "`--no-cache`", x3)]
    lines = [
        "# CPU seconds before the first chunk",
        "",
        f"Written by `python benchmarks/bench_first_chunk.py` ({time.strftime('%Y-%m-%d %H:%M')}; load average "
        f"{load0[0]:.1f} / {load0[1]:.1f} / {load0[2]:.1f} before, {load1[0]:.1f} / {load1[1]:.1f} / {load1[2]:.1f} "
        f"after; {x1['devices']} JAX device(s)). `jaxdp study run hedge-baseline --quick --no-plot` in fresh processes "
        "sharing one new `JAXDP_CACHE_DIR` and one Python bytecode cache (`PYTHONPYCACHEPREFIX`, filled first by a "
        "process that compiles nothing, as an installed package has its `.pyc` files); each process's own user + system CPU seconds (`getrusage`) when the runner "
        "enters its first chunk, what that chunk costs (compile or cache load, the run, its rows as CSV), and the "
        "whole process.",
        "",
        "| run | cache | CPU s before the first chunk | first chunk CPU s | process CPU s | wall s |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for tag, what, m in rows:
        lines.append(f"| {tag} | {what} | {m['enter']:.2f} | {m['leave_minus_enter']:.2f} | {m['end']:.2f} | "
                     f"{m['wall']:.1f} |")
    lines += [
        "",
        "The warm processes one by one, CPU s before the first chunk: "
        + ", ".join(f"{m['enter']:.2f}" for m in warm) + ". "
        f"The {len(tags)} results.csv files are {'byte-identical' if same else 'DIFFERENT'}.",
        "",
        "Where the CPU seconds before the first chunk go, by stage (cumulative marks inside each process; X2: "
        "medians):",
        "",
        "| run | interpreter start | `import jax` | jaxdp command line | `registry.get_study` | the rest | "
        "heavy modules loaded at the first chunk |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for tag, _, m in rows:
        rest = m["enter"] - m["cli"] - m["get_study"]
        heavy = ", ".join(f"`{h}`" for h in m["heavy"]) or "none"
        lines.append(f"| {tag} | {m['start']:.2f} | {m['jax'] - m['start']:.2f} | {m['cli'] - m['jax']:.2f} | "
                     f"{m['get_study']:.2f} | {rest:.2f} | {heavy} |")
    lines += [
        "",
        "Stages: interpreter start is the CPU time before the first line runs; the command line is `jaxdp.cli` "
        "and the study runner; `registry.get_study` imports the study's module and everything it imports; the "
        "rest is the configuration, the study's build and checks, the manifest and JAX's backend start.",
        "",
    ]
    text = "\n".join(lines)
    if args.out and Path(args.out).is_file():   # the hand-written part of the page stays
        old = Path(args.out).read_text()
        if PROSE in old:
            text += "\n" + old[old.index(PROSE):]
    from benchmarks.harness.common import emit

    emit(text, args.out)


if __name__ == "__main__":
    main()
