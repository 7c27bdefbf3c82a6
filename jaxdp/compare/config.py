"""The settings of ``jaxdp compare`` (:mod:`jaxdp.compare`): the compared problem classes, their
default grids, the built-in learners of each class, the leaderboard statuses and exit codes, and the
resume logic: the refusal of a results directory that holds another run and the command line that
resumes (or reproduces) a run.
"""
from __future__ import annotations

import dataclasses
import json
import math
import pathlib
from typing import Callable, Optional

DEFAULTS = dict(eps=(0.1, 1.0), delta=1e-6, T=(1024, 4096, 16384), d=16, seeds=64, audit_n=200_000, audit_T=32)
QUICK = dict(eps=(1.0,), delta=1e-6, T=(256, 1024), d=8, seeds=8, audit_n=20_000, audit_T=16)
SUPPORTED = ("experts", "realizable-experts", "oco-ball", "oco-simplex", "bandits")
#: other spellings of a compared class (``--problem bandit``)
ALIASES = {"bandit": "bandits"}
#: per-class changes of :data:`DEFAULTS` / :data:`QUICK`: bandits compare K = 9 arms (``d``), the
#: standard Bernoulli instance of SMPyBandits and of the ``bandits`` study
CLASS_DEFAULTS = {"bandits": dict(d=9)}
#: classes with bandit feedback: a learner of yours must also pass
#: :func:`jaxdp.bandits.testing.check_bandit_feedback` (it reads the played arm's loss only)
BANDIT_FEEDBACK = ("bandits",)
#: the metric reported per class (``regret`` is the engine's regret of the class's problem)
METRIC = {"bandits": "pseudo-regret"}


# --------------------------------------------------------------------------- built-in learners


@dataclasses.dataclass(frozen=True)
class Builtin:
    """A built-in learner of a problem class: a registered learner with a
    :class:`jaxdp.registry.CompareBuiltin` (``register_learner(..., compare=...)``).

    ``make(d, T, T_max, eps, delta, problem) -> (learner, params, eps_certified)``: the learner
    (the same object for every ``T <= T_max`` and ε, so a sweep compiles once) and its parameters
    at horizon ``T`` and privacy ``(eps, delta)``; ``eps_certified = inf`` for a non-private
    reference. Raises ``ValueError`` where the request cannot be certified.

    Attributes:
        name: the registry name (``jaxdp compare --learners NAME``; the leaderboard's ``learner``).
        make: ``make(d, T, T_max, eps, delta, problem) -> (learner, params, eps_certified)``.
        private: whether the learner is private; a non-private one is a reference, never ranked.
        how: one line saying how it is configured (its planner, or its exact calibration).
    """

    name: str
    make: Callable[..., tuple]
    private: bool
    how: str


#: The registered learners' problem classes (``register_learner(problem=...)``) offered as built-ins
#: of each compared class: experts learners are also built-ins of the realizable class.
CLASS_LEARNERS = {"experts": ("experts",), "realizable-experts": ("experts", "realizable-experts"),
                  "oco-ball": ("oco",), "oco-simplex": ("oco",), "bandits": ("bandits",)}


def canonical_problem(problem):
    """The compared class's name for a spelling of it (``"bandit"`` -> ``"bandits"``).

    Args:
        problem: a class name or one of its aliases (:data:`ALIASES`); anything that is not a
            string is returned unchanged (the argument check reports it).

    Returns:
        ``problem`` with an alias replaced by the class's name.
    """
    return ALIASES.get(problem, problem) if isinstance(problem, str) else problem


def builtin_learners(problem: str) -> tuple:
    """The built-in learners of a compared class, from the learner registry.

    Args:
        problem: the compared class (:data:`SUPPORTED`, or an alias of one).

    Returns:
        The :class:`Builtin` of every registered learner with a ``compare`` entry of each of the
        class's learner classes (:data:`CLASS_LEARNERS`), in that order: per learner class the
        non-private references first, then the private learners, each in registration order.
    """
    from .. import registry

    out = []
    for group in CLASS_LEARNERS[canonical_problem(problem)]:
        entries = [e for e in registry.learners(group) if e.compare is not None]
        out += [Builtin(e.name, e.compare.make, e.private, e.compare.how)  # type: ignore[union-attr]
                for e in sorted(entries, key=lambda e: e.private)]
    return tuple(out)


# --------------------------------------------------------------------------- statuses


#: Where a learner lands on the leaderboard (column ``status``): ranked, not ranked, or a reference.
RANKED = ("certified", "not-refuted")
UNRANKED = ("refuted", "unaudited", "weaker-claim", "not-run")
REFERENCE = ("non-private",)
STATUSES = RANKED + UNRANKED + REFERENCE

#: ``jaxdp compare`` exit statuses (docs/guide/compare.md#exit-status).
EXIT_OK, EXIT_ERROR, EXIT_REFUTED = 0, 2, 3


# --------------------------------------------------------------------------- instances


def _select_instances(problem: str, quick: bool, names, d: int) -> list:
    from .. import instances as inst_mod

    insts = inst_mod.instances(problem)
    if names is None and quick:
        insts = [i for i in insts if i.quick]
    if names is not None:
        known = {i.name for i in insts}
        for nm in names:
            if nm not in known:
                raise ValueError(f"unknown instance {nm!r} for {problem}; known: {', '.join(sorted(known))}")
        insts = [i for i in insts if i.name in names]
    return [i for i in insts if d >= i.min_d]


# --------------------------------------------------------------------------- resuming


#: The option that sets each configuration entry (for the refusal message).
_OPTION = {"problem": "--problem", "eps": "--eps", "delta": "--delta", "T": "--T", "d": "--d", "seeds": "--seeds",
           "instances": "--instances", "learners": "--learners", "quick": "--quick",
           "claimed_eps_arg": "--claimed-eps", "benchmark_version": "benchmark version (jaxdp.instances.VERSION)"}


def _show(v) -> str:
    if isinstance(v, bool):
        return "given" if v else "not given"
    if v is None:
        return "not given"
    if isinstance(v, (list, tuple)):
        return ",".join(_show(x) for x in v) if v else "(none)"
    if isinstance(v, float):
        return _num(v)
    return str(v)


def _config_diff(old: dict, new: dict) -> list[str]:
    """Each setting in which two compare configurations differ, as ``"OPTION: OLD there, NEW now"``."""
    from ..studies.config import _normalized

    diffs = []
    keys = list(new) + [k for k in old if k not in new]
    for k in keys:
        a, b = old.get(k), new.get(k)
        if _normalized(a) == _normalized(b):
            continue
        if k == "users":
            a, b = a or [], b or []
            if len(a) != len(b) or any(x.get("name") != y.get("name") for x, y in zip(a, b)):
                diffs.append(f"your learners: {_show([x.get('name') for x in a])} there, "
                             f"{_show([y.get('name') for y in b])} now")
                continue
            for x, y in zip(a, b):
                for f in sorted(set(x) | set(y)):
                    if _normalized(x.get(f)) == _normalized(y.get(f)):
                        continue
                    what = {"source_sha1": "source of its module (the learner's code changed)",
                            "claimed_eps": "claimed eps", "spec": "MODULE:FACTORY",
                            "factory": "factory"}.get(f, f)
                    diffs.append(f"{x.get('name')}: {what}: {_show(x.get(f))} there, {_show(y.get(f))} now")
            continue
        diffs.append(f"{_OPTION.get(k, k)}: {_show(a)} there, {_show(b)} now")
    return diffs


def _check_resumable(out: pathlib.Path, config: dict) -> None:
    """Refuse a results directory that holds another run, naming every differing setting and the
    command that resumes the run it holds."""
    manifest = out / "manifest.json"
    if not manifest.exists():
        return
    old = json.loads(manifest.read_text())
    new = json.loads(json.dumps(config, default=str))
    if old.get("study") != "compare":
        raise ValueError(f"results directory {str(out)!r} holds another run (study {old.get('study')!r}, not a "
                         "compare run); use another --out or delete it")
    diffs = _config_diff(old.get("config") or {}, new)
    if not diffs:
        return
    prev = out / "command.txt"
    hint = (f" Resume it with: {_with_out(prev.read_text().strip(), out)}   (or use another --out, or delete the "
            "directory)" if prev.exists() else " Use another --out, or delete the directory")
    raise ValueError(f"results directory {str(out)!r} holds another run; the settings differ: " + "; ".join(diffs)
                     + "." + hint)


def _with_out(command: str, out: pathlib.Path) -> str:
    """The command line saved in a results directory, with ``--out`` naming where that directory is now
    (it may have been copied or moved since the run wrote it)."""
    import shlex

    try:
        parts = shlex.split(command)
    except ValueError:   # not a command line we wrote: shown as it is
        return command
    if "--out" in parts[:-1]:
        parts[parts.index("--out") + 1] = str(out)
    else:
        parts += ["--out", str(out)]
    return " ".join(shlex.quote(p) for p in parts)


def _num(x) -> str:
    """A number as the CLI reads it back exactly (``inf``, integers without ``.0``, else the shortest repr)."""
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def _command(config: dict, run: Optional[dict] = None) -> str:
    """The ``jaxdp compare`` command line that resumes a run of this configuration (same results
    directory, same audit settings) or, in another directory, reproduces it."""
    import shlex

    run = run or {}
    users = config.get("users") or []
    quick = bool(config.get("quick"))
    problem = config["problem"]
    parts = ["jaxdp", "compare"] + [u.get("spec") or u.get("factory") for u in users] + ["--problem", problem]
    if quick:
        parts.append("--quick")
    parts += ["--eps", ",".join(_num(e) for e in config["eps"]), "--delta", _num(config["delta"]),
              "--T", ",".join(str(int(t)) for t in config["T"]), "--d", str(config["d"]),
              "--seeds", str(config["seeds"])]
    try:
        default_insts = [i.name for i in _select_instances(problem, quick, None, int(config["d"]))]
    except ValueError:   # pragma: no cover - an instance registry without this class
        default_insts = None
    if list(config.get("instances") or []) != default_insts:
        parts += ["--instances", ",".join(config.get("instances") or [])]
    if list(config.get("learners") or []) != [b.name for b in
                                              (builtin_learners(problem) if problem in CLASS_LEARNERS else ())]:
        parts += ["--learners", ",".join(config.get("learners") or [])]
    if config.get("claimed_eps_arg") is not None:
        parts += ["--claimed-eps", ",".join(_num(c) for c in config["claimed_eps_arg"])]
    base = QUICK if quick else DEFAULTS
    if users and run.get("audit") is False:
        parts.append("--no-audit")
    elif users and run.get("audit_n") is not None and int(run["audit_n"]) != base["audit_n"]:
        parts += ["--audit-n", str(int(run["audit_n"]))]
    if run.get("plot") is False:
        parts.append("--no-plot")
    if run.get("md"):
        parts += ["--md", run["md"]]
    if run.get("out"):
        parts += ["--out", run["out"]]
    return " ".join(shlex.quote(str(p)) for p in parts)

