"""The ``jaxdp`` command line.

    jaxdp study list
    jaxdp study run NAME [--quick] [--out DIR] [--seeds N] [--set key=value ...] [--no-plot] [--processes N]
    jaxdp study plot DIR
    jaxdp study verify DIR
    jaxdp plan --list | jaxdp plan NAME --eps E [--delta D] [--T T] [--d d] [--n n] [--mode M] [--set k=v ...] [--json]
    jaxdp audit --list | jaxdp audit NAME [--quick] [--seed S] [--claim-factor F]
    jaxdp bench [--quick] [--all] [--only NAME ...] [--out FILE] [--device-report]
    jaxdp compare [MODULE:FACTORY] --problem P [--eps 0.1,1] [--delta D] [--T 1024,4096] [--d d] [--seeds N]
                  [--quick] [--out DIR] [--claimed-eps E] [--learners a,b] [--instances a,b] [--no-audit]
                  [--md FILE] [--list]

Errors print one line (``jaxdp: error: ...``) and exit with status 2; Ctrl-C
exits with status 130 ("interrupted; rerun to resume"): an interrupted study
keeps every finished chunk and resumes when rerun. Several processes may run
one study into one shared ``--out`` directory (``jax.distributed``,
``SLURM_PROCID``/``SLURM_NTASKS`` or ``JAXDP_PROCESS_ID``/``JAXDP_NUM_PROCESSES``;
``--processes N`` starts N local ones); ``jaxdp study verify DIR`` checks every
chunk's recorded hash without running anything (exit 0: complete and intact,
1: damaged, 3: intact but incomplete).
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
    if args.study_cmd == "verify":
        return _study_verify(args)
    raise CLIError("usage: jaxdp study {list,run,plot,verify}")


def _build(name: str, quick: bool, overrides: dict):
    from . import registry
    from .studies.framework import resolve_config

    entry = registry.get_study(name)
    cfg = resolve_config(name, entry.extra["defaults"], entry.extra["quick"], quick, overrides)
    return entry.fn(cfg), cfg


def _init_distributed(args) -> None:
    """``jax.distributed`` for ``--distributed`` (cluster auto-detection) or a launcher's
    ``JAXDP_COORDINATOR`` (``--processes``); must precede any JAX computation."""
    coord = os.environ.get("JAXDP_COORDINATOR")
    if not coord and not getattr(args, "distributed", False):
        return
    import jax

    if coord:
        jax.distributed.initialize(coord, num_processes=int(os.environ["JAXDP_NUM_PROCESSES"]),
                                   process_id=int(os.environ["JAXDP_PROCESS_ID"]))
    else:
        jax.distributed.initialize()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch_processes(args, argv: list, n: int, out: pathlib.Path) -> int:
    """Start ``n`` local processes under ``jax.distributed`` on one results directory; wait for them."""
    import signal
    import subprocess

    port = _free_port()
    procs = []
    print(f"starting {n} processes (jax.distributed on 127.0.0.1:{port})", file=sys.stderr)
    for i in range(n):
        env = dict(os.environ, JAXDP_COORDINATOR=f"127.0.0.1:{port}", JAXDP_PROCESS_ID=str(i),
                   JAXDP_NUM_PROCESSES=str(n), JAXDP_NO_MERGE="1")
        procs.append(subprocess.Popen([sys.executable, "-m", "jaxdp.cli", *argv], env=env))
    try:
        codes = [p.wait() for p in procs]
    except KeyboardInterrupt:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            p.wait()
        raise
    bad = [(i, c) for i, c in enumerate(codes) if c != 0]
    if bad:
        i, c = bad[0]
        if c == 130:
            raise KeyboardInterrupt
        print(f"jaxdp: error: process {i} of {n} exited with status {c}; finished chunks are kept in {out}; "
              f"rerun the same command to complete the missing ones", file=sys.stderr)
        return c if c in (1, 2) else 1
    return 0


def _study_run(args) -> int:
    from .studies.framework import StudyInterrupted, format_table, run_study

    overrides = _kv(args.set)
    if args.seeds is not None:
        if args.seeds < 1:
            raise CLIError(f"--seeds must be a positive integer, got {args.seeds}")
        overrides["seeds"] = args.seeds
    if args.processes is not None and args.processes < 1:
        raise CLIError(f"--processes must be a positive integer, got {args.processes}")
    _init_distributed(args)
    study, cfg = _build(args.name, args.quick, overrides)
    out = pathlib.Path(args.out or os.path.join("jaxdp-results", args.name + ("-quick" if args.quick else "")))
    from .studies.framework import validate_study

    validate_study(study)   # before any directory is created or anything compiled
    print(f"study {study.name}: {len(study.points)} grid points x {study.seeds} seeds -> {out}", file=sys.stderr)
    t0 = time.time()
    if args.processes is not None and args.processes > 1:
        argv = [a for a in (args._argv or [])]
        i = argv.index("--processes") if "--processes" in argv else None
        if i is not None:
            del argv[i:i + 2]
        else:
            argv = [a for a in argv if not a.startswith("--processes=")]
        if "--out" not in argv and not any(a.startswith("--out=") for a in argv):
            argv += ["--out", str(out)]
        code = _launch_processes(args, argv, args.processes, out)
        if code:
            return code
    try:
        res = run_study(study, out, progress=not args.no_progress, plot=not args.no_plot,
                        merge=not os.environ.get("JAXDP_NO_MERGE"))
    except (StudyInterrupted, KeyboardInterrupt):
        print(f"\njaxdp: interrupted; rerun to resume (finished chunks are kept in {out})", file=sys.stderr)
        return 130
    rank, nproc, source = res.process
    who = f" [process {rank} of {nproc}, {source}]" if nproc > 1 else ""
    print(f"done in {time.time() - t0:.1f}s ({res.chunks_run} chunks run, {res.chunks_skipped} already done"
          + (f", {len(res.damaged)} damaged and recomputed" if res.damaged else "") + f"){who}", file=sys.stderr)
    if not res.complete:
        print(f"chunks still in progress in other processes; the last one to finish writes "
              f"{out / 'results.csv'}", file=sys.stderr)
        return 0
    if not res.merged:
        print(f"every chunk is done; {out / 'results.csv'} is written by "
              + ("the launcher" if os.environ.get("JAXDP_NO_MERGE") else "another process"), file=sys.stderr)
        return 0
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


def _study_verify(args) -> int:
    from .studies.framework import verify_study

    rep = verify_study(args.dir)
    print(rep.format())
    if not rep.intact:
        return 1
    return 0 if rep.complete else 3


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
    if getattr(args, "json", False):
        print(plan.to_json() if hasattr(plan, "to_json") else json.dumps(plan, default=str))
    else:
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
    if not args.claim_factor > 0:
        raise ValueError(f"--claim-factor must be > 0, got {args.claim_factor}")
    kw = {} if args.claim_factor == 1.0 else dict(claim_factor=args.claim_factor)
    report = entry.fn(quick=args.quick, seed=args.seed, **kw)
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


# --------------------------------------------------------------------------- compare


def _csv(v):
    return None if v is None else [t.strip() for t in v.split(",") if t.strip()]


def _cmd_compare(args) -> int:
    from .compare import BUILTINS, compare
    from .instances import VERSION, instances
    from .testing import ConformanceError

    if args.list:
        print(f"benchmark version {VERSION}")
        for inst in instances(args.problem if args.problem else None):
            print(f"{inst.problem_class:<20} {inst.name:<28} {inst.description}")
        if args.problem in BUILTINS:
            print("built-in learners: " + ", ".join(b.name for b in BUILTINS[args.problem]))
        return 0
    problem = args.problem or "experts"
    tag = args.factory.rpartition(":")[2] if args.factory else "builtins"
    out = args.out or os.path.join("jaxdp-results", f"compare-{problem}-{tag}" + ("-quick" if args.quick else ""))
    try:
        eps = [float(v) for v in _csv(args.eps)] if args.eps else None
        T = [int(float(v)) for v in _csv(args.T)] if args.T else None
    except ValueError:
        raise CLIError(f"--eps and --T take comma-separated numbers, got {args.eps!r} / {args.T!r}") from None
    t0 = time.time()
    try:
        lb = compare(args.factory, problem, eps=eps, delta=args.delta, T=T, d=args.d, seeds=args.seeds,
                     quick=args.quick, out=out, claimed_eps=args.claimed_eps, learners=_csv(args.learners),
                     instances=_csv(args.instances), audit=not args.no_audit, audit_n=args.audit_n,
                     progress=not args.no_progress, plot=not args.no_plot, md=args.md,
                     log=lambda m: print(m, file=sys.stderr))
    except ConformanceError as e:
        print(f"jaxdp: error: {args.factory} fails the conformance checks (jaxdp.testing): {e}", file=sys.stderr)
        return 2
    print((pathlib.Path(out) / "leaderboard.md").read_text())
    print(f"done in {time.time() - t0:.1f}s; leaderboard: {pathlib.Path(out) / 'leaderboard.csv'}", file=sys.stderr)
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
    r.add_argument("--processes", type=int, metavar="N",
                   help="start N local processes under jax.distributed sharing the chunks of this run")
    r.add_argument("--distributed", action="store_true",
                   help="call jax.distributed.initialize() first (cluster auto-detection, e.g. under srun)")
    pl = ss.add_parser("plot", help="redraw the plots of a results directory")
    pl.add_argument("dir")
    vf = ss.add_parser("verify", help="check every chunk of a results directory (hash, rows) without running")
    vf.add_argument("dir")

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
    pn.add_argument("--json", action="store_true",
                    help="print the plan (ledger, bound, privacy and utility conditions) as JSON")

    au = sub.add_parser("audit", help="empirical privacy audits")
    au.add_argument("name", nargs="?")
    au.add_argument("--list", action="store_true")
    au.add_argument("--quick", action="store_true")
    au.add_argument("--seed", type=int, default=0)
    au.add_argument("--claim-factor", type=float, default=1.0,
                    help="audit the over-claim claimed_eps / F (power check: a correct mechanism should be flagged)")

    b = sub.add_parser("bench", help="throughput benchmarks against NumPy references")
    b.add_argument("--quick", action="store_true")
    b.add_argument("--all", action="store_true",
                   help="also run every benchmark of jaxdp.bench (and benchmarks/bench_*.py of a source checkout)")
    b.add_argument("--only", action="append", help="run only these benchmarks (repeatable)")
    b.add_argument("--out", help="markdown file to write (default ./jaxdp-bench.md; never the source tree)")
    b.add_argument("--device-report", action="store_true",
                   help="also run the accelerator suite (six algorithms over batch sizes: throughput, compile "
                        "time, peak memory, random-number and bytes floors, multi-device scaling) and print the "
                        "roofline prediction (this device, H100, TPU v5e) next to each measurement")

    cp = sub.add_parser("compare", help="compare your learner with every built-in one on the benchmark instances, "
                                        "with conformance checks and a privacy audit")
    cp.add_argument("factory", nargs="?", help="MODULE:FACTORY (a module importable from here or a path to a .py "
                                               "file); omit to run the built-in leaderboard")
    cp.add_argument("--problem", help="experts (default), realizable-experts, oco-ball, oco-simplex")
    cp.add_argument("--eps", help="comma-separated privacy levels (matched for every learner)")
    cp.add_argument("--delta", type=float)
    cp.add_argument("--T", help="comma-separated horizons (regret at the largest, slope over all)")
    cp.add_argument("--d", type=int)
    cp.add_argument("--seeds", type=int)
    cp.add_argument("--quick", action="store_true", help="small CPU-sized grid")
    cp.add_argument("--out", help="results directory (default jaxdp-results/compare-PROBLEM-FACTORY[-quick])")
    cp.add_argument("--claimed-eps", type=float, help="the eps your learner claims (default: the factory's "
                                                      "claimed_eps attribute, else each --eps)")
    cp.add_argument("--learners", help="comma-separated subset of the built-in learners")
    cp.add_argument("--instances", help="comma-separated subset of the benchmark instances")
    cp.add_argument("--no-audit", action="store_true")
    cp.add_argument("--audit-n", type=int, help="audit runs per neighbouring input")
    cp.add_argument("--no-plot", action="store_true")
    cp.add_argument("--no-progress", action="store_true")
    cp.add_argument("--md", help="also write the Markdown leaderboard to this file")
    cp.add_argument("--list", action="store_true", help="list the benchmark instances and built-in learners")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    args._argv = list(sys.argv[1:] if argv is None else argv)
    if args.cmd is None:
        parser.print_help()
        return 2
    try:
        if args.cmd == "study":
            if args.study_cmd is None:
                raise CLIError("usage: jaxdp study {list,run,plot,verify} ...")
            return _cmd_study(args)
        if args.cmd == "plan":
            return _cmd_plan(args)
        if args.cmd == "audit":
            return _cmd_audit(args)
        if args.cmd == "bench":
            return _cmd_bench(args)
        if args.cmd == "compare":
            return _cmd_compare(args)
    except (CLIError, ValueError, TypeError, FileNotFoundError) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"jaxdp: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\njaxdp: interrupted; rerun to resume", file=sys.stderr)
        return 130
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
