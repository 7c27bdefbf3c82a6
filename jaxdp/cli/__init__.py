"""The ``jaxdp`` command line.

    jaxdp study list
    jaxdp study show NAME
    jaxdp study run NAME [--quick] [--out DIR] [--seeds N] [--set key=value ...] [--no-plot] [--processes N]
    jaxdp study plot DIR
    jaxdp study verify DIR
    jaxdp plan --list | jaxdp plan NAME --eps E [--delta D] [--T T] [--d d] [--n n] [--mode M] [--set k=v ...] [--json]
    jaxdp audit --list | jaxdp audit NAME [--quick] [--seed S] [--claim-factor F] | jaxdp audit --suite dpsniper
    jaxdp bench [--quick] [--all] [--only NAME ...] [--out FILE] [--device-report]
    jaxdp compare [MODULE:FACTORY ...] --problem P [--eps 0.1,1] [--delta D] [--T 1024,4096] [--d d] [--seeds N]
                  [--quick] [--out DIR] [--claimed-eps E[,E...]|inf] [--learners a,b] [--instances a,b]
                  [--no-audit] [--md FILE] [--list]
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
from typing import Any, Optional, Sequence  # noqa: E402

__all__ = ["main", "script_main"]

from ._common import CLIError  # noqa: E402
from ._study import _cmd_study, _WORKER_DONE  # noqa: E402
from ._commands import _cmd_plan, _cmd_audit, _cmd_bench, _cmd_compare  # noqa: E402


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

