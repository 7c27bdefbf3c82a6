"""The ``jaxdp`` command line.

    jaxdp study list
    jaxdp study show NAME
    jaxdp study run NAME [--quick] [--out DIR] [--seeds N] [--set key=value ...] [--no-plot] [--processes N]
    jaxdp study plot DIR
    jaxdp study verify DIR
    jaxdp plan --list | jaxdp plan NAME --eps E [--delta D] [--T T] [--d d] [--n n] [--mode M] [--set k=v ...] [--json]
    jaxdp audit --list [--json] | jaxdp audit NAME [--quick] [--seed S] [--claim-factor F] [--json]
    jaxdp audit NAME --exact [--quick] [--json]   (exact eps on the audited pairs and the worst pair, small size)
    jaxdp audit --suite dpsniper [--out DIR]
    jaxdp bench [--quick] [--all] [--only NAME ...] [--out FILE] [--device-report]
    jaxdp compare [MODULE:FACTORY ...] --problem P [--eps 0.1,1] [--delta D] [--T 1024,4096] [--d d] [--seeds N]
                  [--quick] [--out DIR] [--claimed-eps E[,E...]|inf] [--learners a,b] [--instances a,b]
                  [--no-audit] [--md FILE] [--json] [--list]
      (exit 0: leaderboard written; 3: the audit refuted a claim of your learner, listed unranked; 2: error)

    jaxdp --version          (also: python -m jaxdp ...)
    jaxdp --no-cache COMMAND ...   (no persistent compilation cache; default: on, in $JAXDP_CACHE_DIR, else
                                    $XDG_CACHE_HOME/jaxdp/jax or ~/.cache/jaxdp/jax; JAXDP_CACHE_DIR= turns it off)

Errors print one line (``jaxdp: error: ...``) and exit with status 2; Ctrl-C
at any moment exits with status 130 ("interrupted; rerun to resume"; the
handler is installed before anything heavy is imported): an interrupted study
keeps every finished chunk and resumes when rerun. Several processes may run
one study into one shared ``--out`` directory (``jax.distributed``,
``SLURM_PROCID``/``SLURM_NTASKS`` or ``JAXDP_PROCESS_ID``/``JAXDP_NUM_PROCESSES``;
``--processes N`` starts N local ones, writes their output to ``OUT/logs/`` and,
if one of them dies, names it, stops the others and exits 1: rerun to complete);
``jaxdp study verify DIR`` checks every chunk's recorded hash without running
anything (exit 0: complete and intact, 1: damaged, 3: intact but incomplete).
"""
from __future__ import annotations

import os
import signal
import sys
import threading


class _EarlySigint:
    """Ctrl-C from the first instant of a command: the handler is installed before anything heavy is
    imported (and replaces an inherited "ignore", as a shell gives background jobs), records the
    interrupt and raises ``KeyboardInterrupt``. ``run_study`` takes over while it runs (stop after the
    chunk in flight) and starts already interrupted if this one was hit."""

    def __init__(self, exit_now: bool = False) -> None:
        self.hit = False
        self.prev: Any = None
        self.exit_now = exit_now

    def install(self) -> "_EarlySigint":
        if threading.current_thread() is threading.main_thread():
            self.prev = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self.handler)
            if not getattr(sys.unraisablehook, "_jaxdp_sigint", False):
                sys.unraisablehook = _quiet_unraisable_interrupt(sys.unraisablehook)
        return self

    def handler(self, signum, frame):
        self.hit = True
        if self.exit_now:
            # As the program, outside a study's own handling (which stops after the chunk in flight), nothing is
            # half-written: exit at once rather than unwind a KeyboardInterrupt through the import of a native
            # extension, which can crash the interpreter (SIGSEGV) instead of exiting with 130.
            try:
                sys.stderr.write("\njaxdp: interrupted; rerun to resume\n")
                sys.stderr.flush()
            finally:
                os._exit(130)
        raise KeyboardInterrupt

    def restore(self) -> None:
        if self.prev is not None:
            signal.signal(signal.SIGINT, self.prev)


def _quiet_unraisable_interrupt(prev):
    """A signal can land while Python runs a callback whose exceptions it cannot propagate (JAX's gc
    callback, a finalizer): the ``KeyboardInterrupt`` is then reported as "Exception ignored in ..." with a
    traceback. The interrupt is already recorded (``_EarlySigint.hit``, acted on at the next check), so
    that report is noise: drop it, pass everything else on."""
    def hook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            return
        prev(unraisable)
    hook._jaxdp_sigint = True
    return hook


# Installed as soon as the program imports this module, before anything else (Python's own
# startup comes first), where it only replaces Python's default handler (which also raises
# KeyboardInterrupt): Ctrl-C is then recorded from the first instant. ``main`` installs one anyway.
_PROGRAM = bool(sys.argv) and (os.path.basename(sys.argv[0]) == "jaxdp" or sys.argv[0].endswith(
    (os.path.join("jaxdp", "__main__.py"), os.path.join("jaxdp", "cli", "__main__.py"))))
_AT_IMPORT = (_EarlySigint(exit_now=_PROGRAM and not os.environ.get("JAXDP_COORDINATOR")).install()
              if signal.getsignal(signal.SIGINT) is signal.default_int_handler else None)

import argparse  # noqa: E402
import difflib  # noqa: E402
import json  # noqa: E402
import pathlib  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from typing import Any, Optional, Sequence  # noqa: E402

__all__ = ["main", "script_main"]


# --------------------------------------------------------------------------- shared: usage errors, --set, --out


class CLIError(Exception):
    """A command-line usage error (a malformed ``--set``, a missing subcommand, an unusable ``--out``).

    :func:`main` prints its first line as ``jaxdp: error: ...`` on stderr and returns status 2, like the
    ``ValueError``/``TypeError``/``OSError`` the commands raise for bad input.
    """
    pass


def _kv(items: Optional[Sequence[str]]) -> dict:
    out = {}
    for it in items or []:
        if "=" not in it:
            raise CLIError(f"--set expects key=value, got {it!r}")
        k, v = it.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def check_out(path, *, option: str = "--out", kind: str = "dir") -> pathlib.Path:
    """Refuse an output path that cannot be written, before any work: a directory (``kind="dir"``, created if
    missing) or a file (``kind="file"``) whose nearest existing folder must be writable.

    Args:
        path: the output path.
        option: the option's name, quoted in the error.
        kind: ``"dir"`` or ``"file"``.

    Returns:
        ``path`` as a ``pathlib.Path``.

    Raises:
        CLIError: naming ``option``, the path and why it cannot be written.
    """
    out = pathlib.Path(path)
    if kind == "dir" and out.exists() and not out.is_dir():
        raise CLIError(f"{option} {str(out)!r} is an existing file, not a directory: name a directory "
                       f"(it is created if missing)")
    if kind == "file" and out.is_dir():
        raise CLIError(f"{option} must be a file path, got the directory {str(out)!r}")
    target = out if (kind == "dir" and out.exists()) else None
    for parent in (out.parents if target is None else ()):
        if parent.exists():
            if not parent.is_dir():
                raise CLIError(f"{option} {str(out)!r} is inside {str(parent)!r}, which is a file, not a directory")
            target = parent
            break
    if target is not None:
        try:   # a real probe: permission bits do not bind root, and a read-only mount ignores them
            fd, probe = tempfile.mkstemp(prefix=".jaxdp-probe-", dir=target)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise CLIError(f"{option} {str(out)!r} cannot be written: {str(target)!r}: {e.strerror}") from None
    if kind == "file" and out.exists() and not os.access(out, os.W_OK):
        raise CLIError(f"{option} {str(out)!r} cannot be written: the file is read-only")
    return out


# --------------------------------------------------------------------------- jaxdp study


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
    if p.choices is not None:
        what = "one of " + ", ".join(map(str, p.choices))
    elif p.kind in ("int", "float"):
        what = p.bounds() or ("any finite number" if p.kind == "float" and not p.allow_inf else "any number")
    else:
        what = "true or false" if p.kind == "bool" else "any string"
    return what + ("; may be empty" if p.many and p.allow_empty else "")


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


# --------------------------------------------------------------------------- jaxdp plan, audit, bench, compare
# (bench and audit --suite dpsniper run the benchmark harness, in benchmarks/ of the source checkout only)


def _one_spelling(args, entry, kind: str) -> None:
    """``args.name`` becomes the registered spelling (underscores); a hyphenated alias gets a one-line note."""
    if args.name != entry.name:
        print(f"jaxdp: note: {kind} {args.name!r} is spelt {entry.name!r} (underscores, as Python names); the "
              f"hyphenated spelling is an alias", file=sys.stderr)
        args.name = entry.name


# --------------------------------------------------------------------------- plan

_PLAN_FLAGS = ("eps", "delta", "T", "d", "n", "mode")


def _planner_signature(name: str, fn) -> tuple[list, list]:
    """``(parameters, required)`` of a planner: the names it takes and those without a default."""
    import inspect

    params = [p for p in inspect.signature(fn).parameters.values()
              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    return [p.name for p in params], [p.name for p in params if p.default is p.empty]


def _option(key: str) -> str:
    return f"--{key}" if key in _PLAN_FLAGS else f"--set {key}=VALUE"


def _cmd_plan(args) -> int:
    from .. import registry

    if args.list or not args.name:
        registry.load_all()
        if not registry.PLANNERS:
            print("(no planners registered)")
        for name, e in sorted(registry.PLANNERS.items()):
            print(f"{name:<28} {e.description}")
        return 0
    entry = registry.get_planner(args.name)
    _one_spelling(args, entry, "planner")
    names, required = _planner_signature(args.name, entry.fn)
    kw = {}
    for k in _PLAN_FLAGS:
        v = getattr(args, k)
        if v is not None:
            if k not in names:
                raise CLIError(f"planner {args.name!r} takes no --{k}; its parameters: "
                               + ", ".join(_option(n) for n in names))
            kw[k] = v
    for k, v in _kv(args.set).items():
        if k not in names:
            near = difflib.get_close_matches(k, names, n=1)
            raise CLIError(f"planner {args.name!r} has no parameter {k!r} (--set {k}=...)"
                           + (f" (did you mean {near[0]!r}?)" if near else "") + "; allowed keys: " + ", ".join(names))
        kw[k] = _literal(v)
    missing = [k for k in required if k not in kw]
    if missing:
        raise CLIError(f"planner {args.name!r} needs {', '.join(_option(k) for k in missing)}; e.g. jaxdp plan "
                       f"{args.name} " + " ".join(f"{_option(k).replace('VALUE', '...')}"
                                                  + (" ..." if k in _PLAN_FLAGS else "") for k in required))
    try:
        plan = entry.fn(**kw)
    except TypeError as e:
        raise CLIError(f"planner {args.name!r}: {e}") from None
    except ArithmeticError as e:
        raise CLIError(f"planner {args.name!r} cannot compute at " + ", ".join(f"{k}={v}" for k, v in kw.items())
                       + f": a value is beyond its arithmetic ({type(e).__name__}: {e})") from None
    # the default mode must do what was asked: a plan that does not certify the request exits 3 unless its mode
    # was chosen explicitly (--mode paper asks for the paper's constants, certified or not)
    refused = getattr(plan, "certified", True) is False and args.mode is None
    if getattr(args, "json", False):
        print(plan.to_json() if hasattr(plan, "to_json") else json.dumps(plan, default=str))
        return 3 if refused else 0
    print(plan.format() if hasattr(plan, "format") else plan)
    guide = "docs/guide/privacy-ledger.md"
    if getattr(plan, "certified", True) is False:
        print(f"  see {guide}#modes: why a plan is NOT certified at the requested level, and --mode certified "
              f"for parameters that are")
    if refused:
        print(f"jaxdp plan: the {getattr(plan, 'mode', 'default')} mode's parameters do not certify the requested "
              f"(eps, delta) (exit status 3); --mode certified finds parameters that do, --mode "
              f"{getattr(plan, 'mode', 'paper')} accepts these", file=sys.stderr)
    floor = getattr(plan, "delta_float", None)
    if floor is not None and floor >= 1:
        print(f"  see {guide}#float-floor: a float32 delta floor of 1 is vacuous: the certificate above holds for "
              f"exact arithmetic only")
    elif floor is None and str(getattr(plan, "delta_float_note", "")).startswith("no valid float floor"):
        print(f"  see {guide}#float-floor: a raw float release has no float delta floor: the certificate above "
              f"holds for exact arithmetic only")
    return 3 if refused else 0


def _literal(v: str):
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    return v


# --------------------------------------------------------------------------- the benchmark harness


def _harness(module: str, what: str):
    """``benchmarks.harness.<module>`` of the source checkout this jaxdp runs from (jaxdp/_moved.py finds it)."""
    from .._moved import import_from_checkout

    try:
        return import_from_checkout(f"benchmarks.harness.{module}", f"{what} runs from a source checkout")
    except ImportError as e:
        raise CLIError(str(e)) from None


# --------------------------------------------------------------------------- audit


def _cmd_audit(args) -> int:
    from .. import registry

    if getattr(args, "suite", None):
        if args.json:
            raise CLIError("--json is for one audit (jaxdp audit NAME --json) or --list; --suite prints its table "
                           "and keeps one JSON file per mechanism in --out")
        dpsniper = _harness("dpsniper", "jaxdp audit --suite dpsniper")
        out = args.out or os.path.join("jaxdp-results", "audit-dpsniper" + ("-quick" if args.quick else ""))
        check_out(out)
        rows = dpsniper.run_suite_kept(out, quick=args.quick, seed=args.seed, log=lambda m: print(m, file=sys.stderr))
        print(dpsniper.suite_markdown(rows))
        print(f"jaxdp audit: results kept in {out} (one file per mechanism); the same command resumes",
              file=sys.stderr)
        return 0
    if getattr(args, "out", None):
        raise CLIError("--out is for --suite (a single audit keeps no results); drop it, or add --suite dpsniper")
    if getattr(args, "exact", False):
        return _cmd_audit_exact(args)
    # DP-Sniper's audits (dpsniper-<name>) are registered by the harness: listed from a checkout, needed to run one
    from .._moved import checkout_root

    listing = args.list or not args.name
    if (listing and checkout_root() is not None) or (not listing and registry.canonical_name(args.name).startswith(
            "dpsniper_")):
        _harness("dpsniper", f"jaxdp audit {'--list' if listing else args.name}")
    if listing:
        registry.load_all()
        if not registry.AUDITS:
            print("(no audits registered)")
        if args.json:
            print(json.dumps([{"name": name, "description": e.description, "broken": bool(e.extra.get("broken"))}
                              for name, e in sorted(registry.AUDITS.items())], indent=2))
            return 0
        for name, e in sorted(registry.AUDITS.items()):
            tag = " [broken on purpose]" if e.extra.get("broken") else ""
            print(f"{name:<34} {e.description}{tag}")
        return 0
    from ..compare import EXIT_REFUTED

    entry = registry.get_audit(args.name)
    _one_spelling(args, entry, "audit")
    if not args.claim_factor > 0:
        raise ValueError(f"--claim-factor must be > 0, got {args.claim_factor}")
    kw = {} if args.claim_factor == 1.0 else dict(claim_factor=args.claim_factor)
    report = entry.fn(quick=args.quick, seed=args.seed, **kw)
    code = EXIT_REFUTED if getattr(report, "violation", False) else 0
    print(json.dumps(audit_json(report, args, code), indent=2) if args.json else report)
    return code


def _exact_cases() -> list:
    """The tightness cases of every learner with an exact law (and the uncovered ones), smallest size first."""
    from ..bandits.audits import tightness_cases as bandit_cases
    from ..experts.audits import tightness_cases as expert_cases
    from ..oco.audits import tightness_cases as oco_cases

    return expert_cases(quick=False, uncovered=True) + bandit_cases(quick=False) + oco_cases()


def _cmd_audit_exact(args) -> int:
    """``jaxdp audit NAME --exact``: the exact ε of a registered learner's audited pairs and of the worst pair
    :func:`jaxdp.privacy.audit.tightness.worst_pair` finds, at the smallest size of its tightness case
    (docs/results/tightness.md); exit 2 when NAME has no exact law."""
    from .. import registry
    from ..privacy.audit.tightness import UncoveredCase, pair_eps, tightness_row

    if not args.name or args.list:
        raise CLIError("--exact needs one learner: jaxdp audit NAME --exact (NAME a registered learner or audit)")
    if args.claim_factor != 1.0:
        raise CLIError("--claim-factor is for the Monte Carlo audit; --exact computes the exact eps (drop one)")
    want = registry.canonical_name(args.name)
    cases = _exact_cases()
    hits = [c for c in cases if want in (registry.canonical_name(c.name), c.learner)]
    covered = [c for c in hits if not isinstance(c, UncoveredCase)]
    if not covered:
        if hits:
            u = hits[0]
            raise CLIError(f"{args.name!r} has no exact law: {u.reason}; bounded instead by: {u.bound}")
        names = sorted({c.learner for c in cases if not isinstance(c, UncoveredCase)})
        raise CLIError(f"no exact law for {args.name!r}; learners with one: {', '.join(names)}")
    case = covered[0]
    if args.quick:
        case = case._replace(search=dict(max_pairs=0, restarts=0, max_evals=200))
    row = tightness_row(case, run_audit=False)
    audited = {k: pair_eps(case.law, a, b, delta=case.delta) for k, (a, b) in case.audited.items()}
    out = exact_json(row, audited, args)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    print(f"{case.name} ({case.size}): exact privacy loss at delta = {case.delta:.3g}")
    print(f"  certified eps           {row['certified']:.6g}")
    for k, v in audited.items():
        print(f"  audited pair {k:<24s} exact eps {v:.6g}")
    how = "every pair" if row["exhaustive"] else "search"
    print(f"  worst pair found        exact eps {row['exact_best']:.6g} ({how}, {row['examined']:,} pairs): "
          f"{row['pair']}")
    print(f"  certified / worst       {row['ratio_best']:.4g}")
    return 0


def exact_json(row: dict, audited: dict, args) -> dict:
    """What ``jaxdp audit NAME --exact --json`` prints (``docs/guide/audit.schema.json``, ``$defs/exact``).

    Args:
        row: :func:`jaxdp.privacy.audit.tightness.tightness_row`'s row.
        audited: ``{pair label: exact ε}`` of the audited pairs.
        args: the command's arguments (``name``, ``quick``).

    Returns:
        A JSON-ready dict.
    """
    def num(v):
        v = float(v)
        return v if v == v and abs(v) != float("inf") else str(v)

    return {
        "name": args.name, "learner": row["learner"], "case": row["name"], "size": row["size"],
        "delta": num(row["delta"]), "certified": num(row["certified"]),
        "audited": [{"pair": k, "eps": num(v)} for k, v in audited.items()],
        "worst": {"eps": num(row["exact_best"]), "pair": row["pair"], "examined": int(row["examined"]),
                  "exhaustive": bool(row["exhaustive"])},
        "ratio_worst": num(row["ratio_best"]), "quick": bool(args.quick), "exit_status": 0,
    }


def audit_json(report, args, code: int) -> dict:
    """What ``jaxdp audit NAME --json`` prints (its schema: ``docs/guide/audit.schema.json``); a non-finite number
    is the string ``"inf"``, ``"-inf"`` or ``"nan"``.

    Args:
        report: the audit's :class:`jaxdp.privacy.audit.AuditReport`.
        args: the command's arguments (``name``, ``quick``, ``seed``, ``claim_factor``).
        code: the exit status (0 consistent, 3 VIOLATION).

    Returns:
        A JSON-ready dict.
    """
    def num(v):
        v = float(v)
        return v if v == v and abs(v) != float("inf") else str(v)

    ev = dict(getattr(report, "evidence", None) or {})
    ci = tuple(getattr(report, "ci", ()) or (float("nan"), float("nan")))
    return {
        "name": args.name, "verdict": report.verdict, "violation": bool(report.violation), "exit_status": code,
        "claimed": {"eps": num(report.claimed_eps), "delta": num(report.claimed_delta)},
        "eps_lower": num(report.eps_lower), "eps_interval": [num(ci[0]), num(ci[1])],
        "confidence": num(report.confidence), "n": int(report.n), "n_events": int(report.n_events),
        "n_pairs": int(getattr(report, "n_pairs", 1)), "pair": str(getattr(report, "pair", "")),
        "event": None if ev.get("event") is None else str(ev["event"]),
        "direction": None if ev.get("direction") is None else str(ev["direction"]),
        "family": str(report.family), "delta_float": num(getattr(report, "delta_float", 0.0)),
        "resolution": num(getattr(report, "resolution", float("nan"))),
        "seconds": num(getattr(report, "seconds", float("nan"))),
        "seed": int(args.seed), "quick": bool(args.quick), "claim_factor": float(args.claim_factor),
        "notes": [str(n) for n in getattr(report, "notes", ())],
    }


# --------------------------------------------------------------------------- bench


def _cmd_bench(args) -> int:
    if args.out:
        check_out(args.out, kind="file")
    report = _harness("report", "jaxdp bench")
    path = report.run_benchmarks(quick=args.quick, run_all=args.all, only=args.only, out=args.out,
                                 device_report=args.device_report)
    print(f"\nwrote {path}")
    return 0


# --------------------------------------------------------------------------- compare


def _csv(v):
    return None if v is None else [t.strip() for t in v.split(",") if t.strip()]


def _cmd_compare(args) -> int:
    from ..compare import BUILTINS, EXIT_OK, EXIT_REFUTED, canonical_problem, compare
    from ..instances import VERSION, instances
    from ..testing import ConformanceError

    args.problem = canonical_problem(args.problem)
    if args.list:
        print(f"benchmark version {VERSION}")
        for inst in instances(args.problem if args.problem else None):
            print(f"{inst.problem_class:<20} {inst.name:<28} {inst.description}")
        if args.problem in BUILTINS:
            print("built-in learners: " + ", ".join(b.name for b in BUILTINS[args.problem]))
        return 0
    problem = args.problem or "experts"
    factories = list(args.factory or [])
    tag = "+".join(f.rpartition(":")[2] for f in factories) if factories else "builtins"
    out = args.out or os.path.join("jaxdp-results", f"compare-{problem}-{tag}" + ("-quick" if args.quick else ""))
    check_out(out)
    for nm in _csv(args.learners) or []:
        if "-" in nm:
            print(f"jaxdp: note: learner {nm!r} is spelt {nm.replace('-', '_')!r} (underscores, as Python names); "
                  "the hyphenated spelling is an alias", file=sys.stderr)
    try:
        eps = [float(v) for v in _csv(args.eps)] if args.eps else None
        T = [int(float(v)) for v in _csv(args.T)] if args.T else None
    except ValueError:
        raise CLIError(f"--eps and --T take comma-separated numbers, got {args.eps!r} / {args.T!r}") from None
    t0 = time.time()
    try:
        lb = compare(factories or None, problem, eps=eps, delta=args.delta, T=T, d=args.d, seeds=args.seeds,
                     quick=args.quick, out=out, claimed_eps=args.claimed_eps, learners=_csv(args.learners),
                     instances=_csv(args.instances), audit=not args.no_audit, audit_n=args.audit_n,
                     progress=not args.no_progress, plot=not args.no_plot, md=args.md,
                     log=lambda m: print(m, file=sys.stderr))
    except ConformanceError as e:
        who = getattr(e, "factory", None) or ", ".join(factories)
        print(f"jaxdp: error: {who} fails the conformance checks (jaxdp.testing): {e}", file=sys.stderr)
        return 2
    print((pathlib.Path(out) / ("leaderboard.json" if args.json else "leaderboard.md")).read_text())
    print(f"done in {time.time() - t0:.1f}s; leaderboard: {pathlib.Path(out) / 'leaderboard.csv'}", file=sys.stderr)
    print(f"resume with: {lb.attrs['command']}", file=sys.stderr)
    if lb.attrs.get("refuted"):
        print(f"jaxdp compare: the privacy audit refuted the claim of {', '.join(lb.attrs['refuted'])}: listed "
              f"as not ranked (exit status {EXIT_REFUTED})", file=sys.stderr)
        return EXIT_REFUTED
    return EXIT_OK


# --------------------------------------------------------------------------- main


def _parser() -> argparse.ArgumentParser:
    from .. import __version__

    p = argparse.ArgumentParser(prog="jaxdp", description="Batched simulation of private online learning in JAX")
    p.add_argument("--version", action="version", version=f"jaxdp {__version__}")
    p.add_argument("--no-cache", action="store_true",
                   help="do not use the persistent compilation cache (default: on, in $JAXDP_CACHE_DIR or "
                        "~/.cache/jaxdp/jax; JAXDP_CACHE_DIR= empty also turns it off)")
    sub = p.add_subparsers(dest="cmd")

    st = sub.add_parser("study", help="list, run and plot named studies")
    ss = st.add_subparsers(dest="study_cmd")
    ss.add_parser("list", help="list the studies")
    sh = ss.add_parser("show", help="a study's parameters: types, ranges, defaults and meaning")
    sh.add_argument("name", help="the study (jaxdp study list)")
    r = ss.add_parser("run", help="run (or resume) a study")
    r.add_argument("name", help="the study (jaxdp study list; its parameters: jaxdp study show NAME)")
    r.add_argument("--quick", action="store_true", help="the small CPU-sized grid")
    r.add_argument("--out", help="results directory (default jaxdp-results/NAME[-quick])")
    r.add_argument("--seeds", type=int, help="number of seeds")
    r.add_argument("--set", action="append", metavar="KEY=VALUE",
                   help="override a study parameter (repeatable; lists as a,b,c; jaxdp study show NAME lists them)")
    r.add_argument("--no-plot", action="store_true", help="write no PNG plots")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    r.add_argument("--processes", type=int, metavar="N",
                   help="start N local processes under jax.distributed sharing the chunks of this run")
    r.add_argument("--distributed", action="store_true",
                   help="call jax.distributed.initialize() first (cluster auto-detection, e.g. under srun)")
    pl = ss.add_parser("plot", help="redraw the plots of a results directory")
    pl.add_argument("dir", help="the results directory (its results.csv and manifest.json)")
    vf = ss.add_parser("verify", help="check every chunk of a results directory (hash, rows) without running")
    vf.add_argument("dir", help="the results directory to check")

    pn = sub.add_parser("plan", help="parameters a theorem prescribes, and the privacy they certify",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        description="Parameters a theorem prescribes for a target (eps, delta), and the privacy their\n"
                                    "ledger certifies (docs/guide/planning.md, docs/guide/privacy-ledger.md). A planner\n"
                                    "names the options it needs and the keys it takes.",
                        epilog="example:\n  jaxdp plan l2p_mw --eps 0.5 --delta 1e-6 --T 100000 --d 64 --mode certified")
    pn.add_argument("name", nargs="?", help="the planner (jaxdp plan --list)")
    pn.add_argument("--list", action="store_true", help="list the planners")
    pn.add_argument("--eps", type=float, help="requested privacy epsilon (> 0)")
    pn.add_argument("--delta", type=float, help="requested privacy delta (in [0, 1); 0 for pure DP where allowed)")
    pn.add_argument("--T", type=int, help="horizon: number of rounds (or of queries)")
    pn.add_argument("--d", type=int, help="number of experts, or the dimension")
    pn.add_argument("--n", type=int, help="sample size (the private optimization planners)")
    pn.add_argument("--mode", help="paper (the formulas as printed; default), certified (parameters the ledger "
                                   "certifies at the requested level), rate, retuned: docs/guide/planning.md#modes")
    pn.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="any other parameter of the planner (repeatable); an unknown key is refused with the "
                         "list of allowed ones")
    pn.add_argument("--json", action="store_true",
                    help="print the plan (ledger, bound, privacy and utility conditions) as JSON")

    au = sub.add_parser("audit", help="empirical privacy audits")
    au.add_argument("name", nargs="?", help="the audit to run (jaxdp audit --list); exit 3 when it prints VIOLATION")
    au.add_argument("--list", action="store_true", help="list the registered audits (those broken on purpose marked)")
    au.add_argument("--quick", action="store_true", help="fewer runs per input: seconds, lower power")
    au.add_argument("--seed", type=int, default=0, help="the root seed of the audit's runs (default 0)")
    au.add_argument("--claim-factor", type=float, default=1.0,
                    help="audit the over-claim claimed_eps / F (power check: a correct mechanism should be flagged)")
    au.add_argument("--suite", choices=["dpsniper"],
                    help="run a whole benchmark suite (dpsniper: DP-Sniper's 20 mechanisms at eps = 0.1, "
                         "confidence 0.9) and print its table")
    au.add_argument("--json", action="store_true",
                    help="print the audit's result (claim, eps lower bound, verdict, best pair and event, n, seed) as "
                         "one JSON object, or with --list the audits as a JSON list (docs/guide/audit.schema.json)")
    au.add_argument("--exact", action="store_true",
                    help="instead of the Monte Carlo audit: the exact eps of NAME (a registered learner or audit with "
                         "an exact law) on its audited pairs and on the worst neighbouring pair found at a small size "
                         "(docs/results/tightness.md; --quick: a short search); exit 2 when NAME has no exact law")
    au.add_argument("--out", help="with --suite: the results directory, one kept result per mechanism; a rerun "
                                  "resumes, auditing only the mechanisms not done (default "
                                  "jaxdp-results/audit-dpsniper[-quick])")

    b = sub.add_parser("bench", help="throughput benchmarks against NumPy references")
    b.add_argument("--quick", action="store_true", help="small sizes: a minute on a laptop CPU")
    b.add_argument("--all", action="store_true",
                   help="also run every benchmark of benchmarks/harness and benchmarks/bench_*.py (a source checkout)")
    b.add_argument("--only", action="append", help="run only these benchmarks (repeatable)")
    b.add_argument("--out", help="markdown file to write (default ./jaxdp-bench.md; never the source tree)")
    b.add_argument("--device-report", action="store_true",
                   help="also run the accelerator suite (six algorithms over batch sizes: throughput, compile "
                        "time, peak memory, random-number and bytes floors, multi-device scaling) and print the "
                        "roofline prediction (this device, H100, TPU v5e) next to each measurement")

    cp = sub.add_parser("compare", help="compare your learner with every built-in one on the benchmark instances, "
                                        "with conformance checks and a privacy audit",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        epilog="ranking: a learner is ranked only when its privacy is certified by a ledger (the "
                               "private built-ins)\nor claimed and not refuted by the audit (yours); refuted, "
                               "unaudited (--no-audit) or weaker claims are\nlisted unranked; non-private learners "
                               "(hedge, ftrl, yours with --claimed-eps inf) are references.\n\n"
                               "exit status:\n  0    leaderboard written (your learners ranked, unranked as "
                               "unaudited, or references)\n  3    leaderboard written, and the audit refuted "
                               "the privacy claim of a learner of yours\n  2    error: bad arguments, a "
                               "conformance failure, or --out holds another run (the\n       message names each "
                               "differing setting and the command that resumes it)\n  130  interrupted; rerun "
                               "the same command to resume")
    cp.add_argument("factory", nargs="*", help="MODULE:FACTORY (a module importable from here or a path to a .py "
                                               "file); several compare several learners of yours; omit to run the "
                                               "built-in leaderboard")
    cp.add_argument("--problem", help="experts (default), realizable-experts, oco-ball, oco-simplex, bandits (alias "
                                      "bandit: K = --d arms, bandit feedback, pseudo-regret)")
    cp.add_argument("--eps", help="comma-separated privacy levels (matched for every learner)")
    cp.add_argument("--delta", type=float, help="the delta every private learner is planned for (default 1e-6)")
    cp.add_argument("--T", help="comma-separated horizons (regret at the largest, slope over all)")
    cp.add_argument("--d", type=int, help="experts, arms or dimension of the instances (default per problem)")
    cp.add_argument("--seeds", type=int, help="seeds per instance (default per problem; --quick: 8)")
    cp.add_argument("--quick", action="store_true", help="small CPU-sized grid")
    cp.add_argument("--out", help="results directory (default jaxdp-results/compare-PROBLEM-FACTORY[-quick])")
    cp.add_argument("--claimed-eps", help="the eps your learner claims, one value or one per learner (default: the "
                                          "factory's claimed_eps attribute, else each --eps); inf declares it "
                                          "non-private: a reference, never ranked")
    cp.add_argument("--learners", help="comma-separated subset of the built-in learners")
    cp.add_argument("--instances", help="comma-separated subset of the benchmark instances")
    cp.add_argument("--no-audit", action="store_true",
                    help="skip the privacy audit of your learners (they are then listed, not ranked)")
    cp.add_argument("--audit-n", type=int, help="audit runs per neighbouring input")
    cp.add_argument("--no-plot", action="store_true", help="write no PNG plots")
    cp.add_argument("--no-progress", action="store_true", help="no progress bar")
    cp.add_argument("--md", help="also write the Markdown leaderboard to this file")
    cp.add_argument("--list", action="store_true", help="list the benchmark instances and built-in learners")
    cp.add_argument("--json", action="store_true",
                    help="print the run's summary (settings, audits, one row per learner, instance and eps) as JSON "
                         "instead of the Markdown leaderboard; it is also written to OUT/leaderboard.json "
                         "(docs/guide/compare.schema.json)")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the ``jaxdp`` command line on ``argv`` (default ``sys.argv[1:]``) and return its exit status:
    0 success, 2 error (one line ``jaxdp: error: ...`` on stderr), 3 a privacy claim refuted (``audit`` printing
    VIOLATION, ``compare``), 130 interrupted (Ctrl-C at any moment),
    and the statuses documented per command (``study verify``, ``compare``, ``study run --processes``).
    Called without ``argv`` (as the program), an interrupted command exits the process with 130 at once.

    Args:
        argv: the arguments after the program name (``["plan", "l2p_mw", "--eps", "0.5", ...]``); ``None``
            reads ``sys.argv[1:]``.

    Returns:
        The exit status.
    """
    if argv is None and _AT_IMPORT is not None and signal.getsignal(signal.SIGINT) == _AT_IMPORT.handler:
        sigint = _AT_IMPORT          # the program's: keeps a Ctrl-C that came before main
    else:
        sigint = _EarlySigint(exit_now=argv is None and not os.environ.get("JAXDP_COORDINATOR")).install()
    try:
        code = _main(argv)
    except BaseException as e:
        if not (sigint.hit or isinstance(e, KeyboardInterrupt)) or isinstance(e, SystemExit):
            raise
        print("\njaxdp: interrupted; rerun to resume", file=sys.stderr)
        code = 130
    finally:
        sigint.restore()
    if sigint.hit and code != 130:   # a Ctrl-C that some library swallowed still counts
        print("\njaxdp: interrupted; rerun to resume", file=sys.stderr)
        code = 130
    if code == 130 and argv is None and not os.environ.get("JAXDP_COORDINATOR"):
        # as a program: exit at once. A Ctrl-C can land inside the import of a native extension, and
        # the interpreter's teardown of a half-imported one may crash; every result is already on disk.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    return code


def _main(argv: Optional[Sequence[str]]) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    args._argv = list(sys.argv[1:] if argv is None else argv)
    if args.cmd is None:
        parser.print_help()
        return 2
    _compilation_cache(args)
    try:
        if args.cmd == "study":
            if args.study_cmd is None:
                raise CLIError("usage: jaxdp study {list,show,run,plot,verify} ...")
            return _cmd_study(args)
        command = {"plan": _cmd_plan, "audit": _cmd_audit, "bench": _cmd_bench, "compare": _cmd_compare}.get(args.cmd)
        if command is not None:
            return command(args)
    except BrokenPipeError:          # e.g. ``jaxdp study show NAME | head``: the reader left
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (CLIError, ValueError, TypeError, OSError, ArithmeticError) as e:
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"jaxdp: error: {msg}", file=sys.stderr)
        return 2
    return 2


def _compilation_cache(args: argparse.Namespace) -> None:
    """The persistent compilation cache for every command but ``bench`` (its compile times would be the
    cache's), unless ``--no-cache``; an unusable cache directory is a warning, not an error."""
    from .._cache import CACHE_ENV, enable_compilation_cache

    if args.cmd == "bench":
        return
    if args.no_cache:
        os.environ[CACHE_ENV] = ""      # processes this one starts (study run --processes) inherit it
        return
    try:
        enable_compilation_cache()
    except OSError as e:
        print(f"jaxdp: warning: no compilation cache ({e}); use --no-cache or set JAXDP_CACHE_DIR",
              file=sys.stderr)


def script_main() -> None:
    """Entry point of ``python -m jaxdp`` and ``python -m jaxdp.cli``: :func:`main`, then exit.

    A process started by ``jaxdp study run --processes`` ends its log with ``jaxdp: worker finished
    (status N)`` before it waits in ``jax.distributed``'s shutdown barrier for the others: the
    launcher reads it to tell a finished process (whose results are on disk) from a working one."""
    code = main()
    if os.environ.get("JAXDP_COORDINATOR"):
        print(f"{_WORKER_DONE} (status {code})", file=sys.stderr, flush=True)
    sys.exit(code)

