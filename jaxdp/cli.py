"""The ``jaxdp`` command line.

    jaxdp study list
    jaxdp study run NAME [--quick] [--out DIR] [--seeds N] [--set key=value ...] [--no-plot]
    jaxdp study plot DIR
    jaxdp plan --list | jaxdp plan NAME --eps E [--delta D] [--T T] [--d d] [--n n] [--mode M] [--set k=v ...]
    jaxdp audit --list | jaxdp audit NAME [--quick] [--seed S]
    jaxdp bench [--quick] [--all] [--only NAME ...] [--out FILE]

Errors print one line (``jaxdp: error: ...``) and exit with status 2; an
interrupted study keeps every finished chunk and resumes when rerun.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import time
from typing import Optional, Sequence

__all__ = ["main"]


class CLIError(Exception):
    pass


def _kv(items: Optional[Sequence[str]]) -> dict:
    out = {}
    for it in items or []:
        if "=" not in it:
            raise CLIError(f"--set expects key=value, got {it!r}")
        k, v = it.split("=", 1)
        out[k.strip()] = v.strip()
    return out


# --------------------------------------------------------------------------- study


def _cmd_study(args) -> int:
    from . import registry

    if args.study_cmd == "list":
        registry.load_all()
        for name, e in sorted(registry.STUDIES.items()):
            print(f"{name:<22} {e.description}")
        return 0
    if args.study_cmd == "run":
        return _study_run(args)
    if args.study_cmd == "plot":
        return _study_plot(args)
    raise CLIError("usage: jaxdp study {list,run,plot}")


def _build(name: str, quick: bool, overrides: dict):
    from . import registry
    from .studies.framework import resolve_config

    entry = registry.get_study(name)
    cfg = resolve_config(name, entry.extra["defaults"], entry.extra["quick"], quick, overrides)
    return entry.fn(cfg), cfg


def _study_run(args) -> int:
    from .studies.framework import format_table, run_study

    overrides = _kv(args.set)
    if args.seeds is not None:
        if args.seeds < 1:
            raise CLIError(f"--seeds must be a positive integer, got {args.seeds}")
        overrides["seeds"] = args.seeds
    study, cfg = _build(args.name, args.quick, overrides)
    out = pathlib.Path(args.out or os.path.join("jaxdp-results", args.name + ("-quick" if args.quick else "")))
    print(f"study {study.name}: {len(study.points)} grid points x {study.seeds} seeds -> {out}", file=sys.stderr)
    t0 = time.time()
    try:
        res = run_study(study, out, progress=not args.no_progress, plot=not args.no_plot)
    except KeyboardInterrupt:
        print(f"\njaxdp: interrupted; finished chunks are saved in {out}; rerun the same command to resume",
              file=sys.stderr)
        return 130
    print(f"done in {time.time() - t0:.1f}s ({res.chunks_run} chunks run, {res.chunks_skipped} already done)",
          file=sys.stderr)
    if res.tables:
        first = next(iter(res.tables))
        print(f"\n{first}:")
        print(format_table(res.tables[first], max_rows=60))
    print(f"\nresults: {out / 'results.csv'}")
    for p in res.plots:
        print(f"plot:    {p}")
    return 0


def _study_plot(args) -> int:
    from .studies.framework import load_results

    d = pathlib.Path(args.dir)
    mpath = d / "manifest.json"
    if not mpath.exists():
        raise CLIError(f"{str(d)!r} is not a study results directory (no manifest.json)")
    m = json.loads(mpath.read_text())
    from . import registry

    entry = registry.get_study(m["study"])
    cfg = dict(m["config"])
    study = entry.fn(cfg)
    df = load_results(d, study)
    if len(df) == 0:
        raise CLIError(f"no finished chunks in {str(d)!r}")
    if study.plot is None:
        raise CLIError(f"study {study.name!r} has no plots")
    import matplotlib

    matplotlib.use("Agg")
    for p in study.plot(df, d) or []:
        print(f"plot: {p}")
    return 0


# --------------------------------------------------------------------------- plan


def _cmd_plan(args) -> int:
    from . import registry

    if args.list or not args.name:
        registry.load_all()
        if not registry.PLANNERS:
            print("(no planners registered)")
        for name, e in sorted(registry.PLANNERS.items()):
            print(f"{name:<28} {e.description}")
        return 0
    entry = registry.get_planner(args.name)
    kw = {}
    for k in ("eps", "delta", "T", "d", "n", "mode"):
        v = getattr(args, k)
        if v is not None:
            kw[k] = v
    for k, v in _kv(args.set).items():
        kw[k] = _literal(v)
    try:
        plan = entry.fn(**kw)
    except TypeError as e:
        raise CLIError(f"planner {args.name!r}: {e}") from None
    print(plan.format() if hasattr(plan, "format") else plan)
    return 0


def _literal(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    return v


# --------------------------------------------------------------------------- audit


def _cmd_audit(args) -> int:
    from . import registry

    if args.list or not args.name:
        registry.load_all()
        if not registry.AUDITS:
            print("(no audits registered)")
        for name, e in sorted(registry.AUDITS.items()):
            tag = " [broken on purpose]" if e.extra.get("broken") else ""
            print(f"{name:<34} {e.description}{tag}")
        return 0
    entry = registry.get_audit(args.name)
    t0 = time.time()
    report = entry.fn(quick=args.quick, seed=args.seed)
    print(report)
    print(f"({time.time() - t0:.1f}s)", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- bench


def _cmd_bench(args) -> int:
    from .bench import run_benchmarks

    path = run_benchmarks(quick=args.quick, run_all=args.all, only=args.only, out=args.out,
                          device_report=args.device_report)
    print(f"\nwrote {path}")
    return 0


# --------------------------------------------------------------------------- main


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="jaxdp", description="Batched simulation of private online learning in JAX")
    sub = p.add_subparsers(dest="cmd")

    st = sub.add_parser("study", help="list, run and plot named studies")
    ss = st.add_subparsers(dest="study_cmd")
    ss.add_parser("list", help="list the studies")
    r = ss.add_parser("run", help="run (or resume) a study")
    r.add_argument("name")
    r.add_argument("--quick", action="store_true", help="the small CPU-sized grid")
    r.add_argument("--out", help="results directory (default jaxdp-results/NAME[-quick])")
    r.add_argument("--seeds", type=int, help="number of seeds")
    r.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a study parameter (repeatable)")
    r.add_argument("--no-plot", action="store_true")
    r.add_argument("--no-progress", action="store_true")
    pl = ss.add_parser("plot", help="redraw the plots of a results directory")
    pl.add_argument("dir")

    pn = sub.add_parser("plan", help="parameters a theorem prescribes, and the privacy they certify")
    pn.add_argument("name", nargs="?")
    pn.add_argument("--list", action="store_true")
    pn.add_argument("--eps", type=float)
    pn.add_argument("--delta", type=float)
    pn.add_argument("--T", type=int)
    pn.add_argument("--d", type=int)
    pn.add_argument("--n", type=int)
    pn.add_argument("--mode")
    pn.add_argument("--set", action="append", metavar="KEY=VALUE")

    au = sub.add_parser("audit", help="empirical privacy audits")
    au.add_argument("name", nargs="?")
    au.add_argument("--list", action="store_true")
    au.add_argument("--quick", action="store_true")
    au.add_argument("--seed", type=int, default=0)

    b = sub.add_parser("bench", help="throughput benchmarks against NumPy references")
    b.add_argument("--quick", action="store_true")
    b.add_argument("--all", action="store_true", help="also run every benchmarks/bench_*.py")
    b.add_argument("--only", action="append", help="run only these benchmarks (repeatable)")
    b.add_argument("--out", help="markdown file to write (default benchmarks/RESULTS.md)")
    b.add_argument("--device-report", action="store_true",
                   help="also run the accelerator suite (six algorithms over batch sizes: throughput, compile "
                        "time, peak memory, random-number and bytes floors, multi-device scaling)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.cmd is None:
        parser.print_help()
        return 2
    try:
        if args.cmd == "study":
            if args.study_cmd is None:
                raise CLIError("usage: jaxdp study {list,run,plot} ...")
            return _cmd_study(args)
        if args.cmd == "plan":
            return _cmd_plan(args)
        if args.cmd == "audit":
            return _cmd_audit(args)
        if args.cmd == "bench":
            return _cmd_bench(args)
    except (CLIError, ValueError, TypeError, FileNotFoundError) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"jaxdp: error: {msg}", file=sys.stderr)
        return 2
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
