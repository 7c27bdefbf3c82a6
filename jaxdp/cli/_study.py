"""``jaxdp study {list,show,run,plot,verify}``: the study commands, and the ``--processes`` launcher that runs
one study in several local processes under ``jax.distributed``."""
from __future__ import annotations

import json
import os
import pathlib
import signal
import sys
import threading
import time
from typing import Optional

from ._common import CLIError, _kv, check_out


def _cmd_study(args) -> int:
    if args.study_cmd == "list":
        from .. import registry

        registry.load_all()
        for name, e in sorted(registry.STUDIES.items()):
            print(f"{name:<22} {e.description}")
        return 0
    command = {"show": _study_show, "run": _study_run, "plot": _study_plot, "verify": _study_verify}.get(args.study_cmd)
    if command is not None:
        return command(args)
    raise CLIError("usage: jaxdp study {list,show,run,plot,verify}")


# what the parameters most studies share mean (a study's own ``Param(help=...)`` comes first)
_PARAM_MEANINGS = {
    "seeds": "independent runs per grid point (also --seeds N)",
    "seed": "base random seed: seed index i runs with the key fold_in(key(seed), i)",
    "T": "horizon(s): number of rounds",
    "d": "number of experts (or the dimension)",
    "eps": "privacy parameter epsilon",
    "delta": "privacy parameter delta",
    "learners": "the learners to run",
    "adversaries": "the adversaries (loss sequences) to run them on",
    "mode": "planner mode (docs/guide/planning.md#modes)",
}


def _fmt_value(v) -> str:
    if isinstance(v, (list, tuple)):
        return ",".join(_fmt_value(x) for x in v) if v else "(empty)"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _param_kind(p) -> str:
    return ("list of " if p.many else "") + p.kind


def _param_range(p) -> str:
    from ..studies.spec import _num

    if p.choices is not None:
        what = "one of " + ", ".join(map(str, p.choices))
    elif p.kind in ("int", "float"):
        if p.lo is not None and p.hi is not None:
            what = f"in {'(' if p.lo_open else '['}{_num(p.lo)}, {_num(p.hi)}{')' if p.hi_open else ']'}"
        elif p.lo is not None:
            what = f"{'>' if p.lo_open else '>='} {_num(p.lo)}"
        elif p.hi is not None:
            what = f"{'<' if p.hi_open else '<='} {_num(p.hi)}"
        else:
            what = "any finite number" if p.kind == "float" and not p.allow_inf else "any number"
    elif p.kind == "bool":
        what = "true or false"
    else:
        what = "any string"
    if p.many:
        what += "; may be empty" if p.allow_empty else ""
    return what


def _study_show(args) -> int:
    """``jaxdp study show NAME``: the study's description and every parameter ``--set`` accepts,
    with its type, allowed range, default (and ``--quick`` value) and meaning."""
    import inspect

    from .. import registry
    from ..studies.framework import PARAM_SPECS, inferred_params

    entry = registry.get_study(args.name)
    defaults, quick = entry.extra["defaults"], entry.extra["quick"]
    spec = PARAM_SPECS.get(args.name) or inferred_params(defaults)
    print(f"{args.name}: {entry.description}")
    print(f"\nparameters (jaxdp study run {args.name} [--quick] --set KEY=VALUE ...; lists as a,b,c):")
    width = max(len(k) for k in defaults) + 2
    for key, default in defaults.items():
        p = spec.get(key)
        if p is None:
            kind, allowed = type(default).__name__, ""
        else:
            kind, allowed = _param_kind(p), _param_range(p)
        print(f"  {key:<{width}}{kind}" + (f", {allowed}" if allowed else ""))
        q = f"   (--quick: {_fmt_value(quick[key])})" if key in quick and quick[key] != default else ""
        print(f"  {'':<{width}}default {_fmt_value(default)}{q}")
        meaning = (p.help if p is not None and p.help else "") or _PARAM_MEANINGS.get(key, "")
        if meaning:
            print(f"  {'':<{width}}{meaning}")
    module = inspect.getmodule(entry.fn)
    doc = inspect.cleandoc(module.__doc__) if module is not None and module.__doc__ else ""
    if doc:
        print("\nabout (" + getattr(module, "__name__", "?") + "):")
        print("\n".join(("  " + ln).rstrip() for ln in doc.splitlines()))
    return 0


def _build(name: str, quick: bool, overrides: dict):
    from .. import registry
    from ..studies.framework import resolve_config

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


# The last line a ``--processes`` worker writes to its log once its share of the study is done or
# stopped: ``jaxdp: worker finished (status N)``; it then waits in jax.distributed's shutdown
# barrier for the others.
_WORKER_DONE = "jaxdp: worker finished"
# How long the launcher waits for the other processes to finish their chunk in flight after one
# of them failed (jax.distributed's heartbeat check would end them after 100 s anyway).
_STOP_GRACE_S = 60.0


def _worker_status(log: pathlib.Path) -> Optional[int]:
    """The status a worker reported at the end of its log, or None while it works."""
    import re

    try:
        with open(log, "rb") as f:
            f.seek(max(0, os.path.getsize(log) - 4096))
            m = re.findall(re.escape(_WORKER_DONE).encode() + rb" \(status (-?\d+)\)", f.read())
    except OSError:
        return None
    return int(m[-1]) if m else None


def _log_last_line(log: pathlib.Path) -> str:
    """The worker's own last error line (``jaxdp: error: ...`` or a traceback's last line), for the report."""
    try:
        lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines()
                 if ln.strip() and not ln.startswith(_WORKER_DONE)]
    except OSError:
        return ""
    errs = [ln for ln in lines if ln.startswith("jaxdp: error:")]
    line = errs[-1] if errs else (lines[-1] if lines else "")
    return line if len(line) <= 300 else line[:297] + "..."


def _how(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _first_failure(bad: list) -> tuple:
    """Of the processes found failed in one poll, the one that caused it: one killed by a signal
    (other than SIGABRT, which is how jax.distributed ends the survivors of a dead peer) first, then
    an error, then an abort, then an interrupted one; ties by process index."""
    def rank(item):
        i, c = item
        if c < 0 and c != -signal.SIGABRT:
            return (0, i)
        if c > 0 and c != 130:
            return (1, i)
        return (2 if c < 0 else 3, i)

    return min(bad, key=rank)


def _launch_processes(argv: list, n: int, out: pathlib.Path, study, progress: bool) -> int:
    """Start ``n`` local processes under ``jax.distributed`` on one results directory and watch them.

    Their output goes to ``out/logs/process-<i>.log``. If one of them fails (killed, crashed, an
    error), the launcher names it at once, stops the others (one SIGINT each: they finish their chunk
    in flight; SIGKILL once every one still running has finished, since jax.distributed's shutdown
    barrier would wait for the dead one, or after ``_STOP_GRACE_S`` s) and returns 1 (2 for a
    worker's usage error); finished chunks are kept and a rerun completes the rest. Ctrl-C stops
    them the same way (a second one at once) and raises ``KeyboardInterrupt``. Returns 0 when every
    process succeeded.
    """
    import subprocess

    from ..studies.runner import _progress_bar
    from ..studies.store import _chunk_id, _chunks

    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    paths = [logs / f"process-{i}.log" for i in range(n)]
    port = _free_port()
    print(f"starting {n} processes (jax.distributed on 127.0.0.1:{port}); their output: "
          f"{logs / 'process-*.log'}", file=sys.stderr)
    sidecars = [out / "chunks" / f"{_chunk_id(study, *c)}.json" for c in _chunks(study)]
    procs: list = []
    bar = None
    failed = None                 # (index, status) of the process that failed first
    interrupts = 0
    stopping_since = None
    signalled: set = set()
    # Ctrl-C must reach the polling loop below as KeyboardInterrupt (to forward it to the workers), not end
    # the launcher at once as the program's early handler does outside a study
    prev_sigint = None
    if threading.current_thread() is threading.main_thread():
        prev_sigint = signal.getsignal(signal.SIGINT)
        signal.signal(signal.SIGINT, signal.default_int_handler)

    def stop(force: bool) -> None:
        """Called every poll while stopping: one SIGINT per working process (a second would interrupt
        its chunk in flight); SIGKILL for all once none is working any more, or when ``force``."""
        running = [i for i, p in enumerate(procs) if p.poll() is None]
        if force or all(_worker_status(paths[i]) is not None for i in running):
            for i in running:
                procs[i].kill()
            return
        for i in running:
            if i not in signalled and _worker_status(paths[i]) is None:
                procs[i].send_signal(signal.SIGINT)
                signalled.add(i)

    try:
        for i in range(n):
            env = dict(os.environ, JAXDP_COORDINATOR=f"127.0.0.1:{port}", JAXDP_PROCESS_ID=str(i),
                       JAXDP_NUM_PROCESSES=str(n), JAXDP_NO_MERGE="1")
            with open(paths[i], "wb") as log:
                # own session: the terminal's Ctrl-C reaches the launcher only, which forwards one SIGINT
                procs.append(subprocess.Popen([sys.executable, "-m", "jaxdp.cli", *argv], env=env,
                                              stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                              start_new_session=True))
        done = sum(s.exists() for s in sidecars)
        bar = _progress_bar(len(sidecars), done, progress, f"{study.name} [{n} processes]")
        while True:
            try:
                codes = [p.poll() for p in procs]
                if failed is None and not interrupts:
                    bad = [(i, c if c is not None else _worker_status(paths[i])) for i, c in enumerate(codes)]
                    bad = [(i, c) for i, c in bad if c not in (None, 0)]
                    if bad:
                        failed = _first_failure(bad)
                        i, c = failed
                        if bar is not None:
                            bar.clear()
                        print(f"jaxdp: process {i} of {n} (pid {procs[i].pid}) {_how(c)}; stopping the others "
                              f"after their chunk in flight", file=sys.stderr, flush=True)
                        stopping_since = time.time()
                if all(c is not None for c in codes):
                    break
                if stopping_since is not None:
                    stop(force=time.time() - stopping_since > _STOP_GRACE_S)
                now = sum(s.exists() for s in sidecars)
                if bar is not None and now > done:
                    bar.update(now - done)
                done = now
                time.sleep(0.1)
            except KeyboardInterrupt:
                interrupts += 1
                if interrupts == 1:
                    print("\njaxdp: Ctrl-C: stopping the processes after their chunk in flight (press again to "
                          "stop at once)", file=sys.stderr, flush=True)
                    stopping_since = time.time()
                stop(force=interrupts > 1)
    finally:
        for p in procs:           # whatever happened, no process outlives the launcher
            if p.poll() is None:
                p.kill()
            p.wait()
        if bar is not None:
            bar.close()
        if prev_sigint is not None:
            signal.signal(signal.SIGINT, prev_sigint)
    if interrupts or (failed is not None and failed[1] == 130):
        raise KeyboardInterrupt
    if failed is not None:
        i, c = failed
        why = _how(c)
        if c > 0:
            last = _log_last_line(paths[i])
            why += f" ({last})" if last else ""
        print(f"jaxdp: error: process {i} of {n} {why}; the other processes were stopped; finished chunks are "
              f"kept in {out}: rerun the same command to complete the rest (process logs: {logs})",
              file=sys.stderr)
        return 2 if c == 2 else 1
    for log_path in paths:        # each process's summary ("done in ... [process i of n]")
        try:
            for ln in log_path.read_text(errors="replace").splitlines():
                if ln.startswith("done in "):
                    print(ln, file=sys.stderr)
        except OSError:
            pass
    return 0


def _study_run(args) -> int:
    overrides = _kv(args.set)
    if args.seeds is not None:
        if args.seeds < 1:
            raise CLIError(f"--seeds must be a positive integer, got {args.seeds}")
        overrides["seeds"] = args.seeds
    if args.processes is not None and args.processes < 1:
        raise CLIError(f"--processes must be a positive integer, got {args.processes}")
    out = pathlib.Path(args.out or os.path.join("jaxdp-results", args.name + ("-quick" if args.quick else "")))
    check_out(out)   # before anything is imported or built
    from ..studies.framework import StudyInterrupted, format_table, run_study, validate_study

    _init_distributed(args)
    study, cfg = _build(args.name, args.quick, overrides)
    validate_study(study)   # before any directory is created or anything compiled
    print(f"study {study.name}: {len(study.points)} grid points x {study.seeds} seeds -> {out}", file=sys.stderr)
    t0 = time.time()
    try:
        if args.processes is not None and args.processes > 1:
            argv = [a for a in (args._argv or [])]
            i = argv.index("--processes") if "--processes" in argv else None
            if i is not None:
                del argv[i:i + 2]
            else:
                argv = [a for a in argv if not a.startswith("--processes=")]
            if "--out" not in argv and not any(a.startswith("--out=") for a in argv):
                argv += ["--out", str(out)]
            if "--no-progress" not in argv:
                argv.append("--no-progress")   # the launcher shows one progress bar for all of them
            code = _launch_processes(argv, args.processes, out, study, progress=not args.no_progress)
            if code:
                return code
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
    from ..studies.framework import load_results

    d = pathlib.Path(args.dir)
    mpath = d / "manifest.json"
    if not mpath.exists():
        raise CLIError(f"{str(d)!r} is not a study results directory (no manifest.json)")
    m = json.loads(mpath.read_text())
    from .. import registry

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
    from ..studies.framework import verify_study

    rep = verify_study(args.dir)
    print(rep.format())
    if not rep.intact:
        return 1
    return 0 if rep.complete else 3
