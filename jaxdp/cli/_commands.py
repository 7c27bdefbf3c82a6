"""``jaxdp plan``, ``jaxdp audit``, ``jaxdp bench`` and ``jaxdp compare``.

``jaxdp bench`` and ``jaxdp audit --suite dpsniper`` run the benchmark harness, which lives in ``benchmarks/``
of the source checkout (not in the installed package): they import it from there, or exit with status 2.
"""
from __future__ import annotations

import difflib
import json
import os
import pathlib
import sys
import time

from ._common import CLIError, _kv, check_out


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
    print(report)
    return EXIT_REFUTED if getattr(report, "violation", False) else 0


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
    print((pathlib.Path(out) / "leaderboard.md").read_text())
    print(f"done in {time.time() - t0:.1f}s; leaderboard: {pathlib.Path(out) / 'leaderboard.csv'}", file=sys.stderr)
    print(f"resume with: {lb.attrs['command']}", file=sys.stderr)
    if lb.attrs.get("refuted"):
        print(f"jaxdp compare: the privacy audit refuted the claim of {', '.join(lb.attrs['refuted'])}: listed "
              f"as not ranked (exit status {EXIT_REFUTED})", file=sys.stderr)
        return EXIT_REFUTED
    return EXIT_OK
