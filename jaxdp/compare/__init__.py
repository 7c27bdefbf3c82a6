"""``jaxdp compare``: run your learners against every built-in learner of their problem class on the
benchmark instances at matched (ε, δ), audit their privacy claims, and write a leaderboard.
Classes: :data:`SUPPORTED` (``bandits``, alias ``bandit``: ``K = d`` arms with bandit feedback,
ranked by pseudo-regret).

Steps (docs/guide/compare.md):

1. **Import** the factories (``"module:function"``, a module path or a ``.py`` file
   outside the package; one or several). A factory takes any of ``d, T, T_max, eps, delta`` and
   returns a :class:`jaxdp.Learner` or a ``(Learner, params)`` pair; optional attributes:
   ``claimed_eps`` (the ε the learner claims whatever ``eps`` it is given; ``math.inf`` declares it
   non-private), ``deterministic = True`` (it ignores its keys), ``name``.
2. **Conformance** (:func:`jaxdp.testing.check_factory`): shapes, key reuse,
   purity, one compilation per grid point; for ``bandits`` also bandit feedback
   (:func:`jaxdp.bandits.testing.check_bandit_feedback`: the actions must not depend on the unplayed
   arms' losses). A failure stops the run
   (:class:`jaxdp.testing.ConformanceError`; the CLI exits with status 2).
3. **Audit**: each learner is run on neighbouring loss sequences (all-zero
   losses except the first or the middle round, which takes two different
   loss vectors) and the auditor (:func:`jaxdp.privacy.audit.learners.audit_learner`)
   searches events on the actions it plays for a lower bound on its ε. It is
   audited at the ε it claims (``claimed_eps``), else at every ε of the grid
   (a learner compared at ε claims ε-DP). A lower bound above the claim refutes it:
   the probability that a learner satisfying its claim is refuted is ≤ α = 1e-7.
4. **Runs**: the learners and every built-in learner of the class (:func:`builtin_learners`:
   the registered learners of the class with a ``compare`` entry, ``jaxdp.registry.register_learner``;
   each configured by its planner in ``certified`` mode at the
   same (ε, δ), or by its exact calibration where it has no planner; non-private
   references are marked ``ε = ∞``) on every registered benchmark instance
   (:mod:`jaxdp.instances`) with the instances' fixed seeds, at every horizon of
   the ``T`` grid (each learner tuned for its horizon). The runs form a
   :class:`jaxdp.studies.Study`, so they are chunked, saved atomically and resumed.
5. **Leaderboard**: ``leaderboard.csv`` (learner × instance × ε: regret at the
   largest T with a 95% bootstrap CI, the fitted slope of regret in T with its CI,
   switches, the certified or claimed ε, the audit's ε lower bound and verdict, the
   ``status`` and the rank), ``leaderboard.md``, ``leaderboard.json`` (the run's summary, schema
   ``docs/guide/compare.schema.json``) and ``regret_vs_T.png``. A learner is
   ranked only when its privacy is certified by a ledger (the private built-ins) or
   claimed and not refuted by the audit (yours: status ``not-refuted``); a refuted,
   unaudited or weaker claim is listed unranked (:data:`UNRANKED`); non-private
   learners (built-in references, yours with ``claimed_eps = inf``) are references,
   never ranked (:data:`REFERENCE`).

Adaptive instances (``Instance.adaptive``, column ``adaptive``): their adversary watches the actions played
(:class:`jaxdp.core.types.AdaptiveAdversary`), so each learner meets its own loss sequence, and
``expected_regret`` is NaN there (not unbiased against an adaptive adversary). The ranking rules are the
same on every instance: rank by the mean *realised* regret (against the best fixed action on the realised
sequence) at the largest ``T``, among the ranked learners only; ``expected_regret`` is kept in
``results.csv`` and never ranked on.

Below: the class settings, built-in learners, statuses and the resume logic; the factories, the audit and
the runs; the judging of each row, the leaderboard page and the plot.
"""
from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import json
import math
import os
import pathlib
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from ..core.io import atomic_write

__all__ = ["compare", "load_factory",
           "BUILTINS",  # noqa: F822  (built on first read by the module's __getattr__)
           "Builtin", "builtin_learners", "CLASS_LEARNERS", "DEFAULTS",
           "QUICK", "audit_learner", "leaderboard_markdown", "RANKED", "UNRANKED", "REFERENCE", "EXIT_OK",
           "EXIT_ERROR", "EXIT_REFUTED", "SUPPORTED", "ALIASES", "CLASS_DEFAULTS", "canonical_problem",
           "leaderboard_json"]


def __getattr__(name: str):
    if name == "BUILTINS":   # built when first read (the registry imports every learner's package), then kept
        built = globals()["BUILTINS"] = {problem: builtin_learners(problem) for problem in SUPPORTED}
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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

    Attributes:
        name: the registry name (``jaxdp compare --learners NAME``; the leaderboard's ``learner``).
        make: ``make(d, T, T_max, eps, delta, problem) -> (learner, params, eps_certified)``: the learner
            (the same object for every ``T <= T_max`` and ε, so a sweep compiles once) and its parameters
            at horizon ``T`` and privacy ``(eps, delta)``; ``eps_certified = inf`` for a non-private
            reference. Raises ``ValueError`` where the request cannot be certified.
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


# --------------------------------------------------------------------------- factories


def load_factory(spec: Union[str, Callable]) -> Callable:
    """The factory a ``MODULE:FACTORY`` string names, imported.

    A ``.py`` path is imported once per content: a rerun in the same process reuses the module (and
    its compiled learners) while the file is unchanged, and imports it again after an edit.

    Args:
        spec: ``"module:function"``, where ``module`` is a dotted module importable from the current
            directory or a path to a ``.py`` file (imported as a script: its folder is importable); or a
            callable, returned unchanged.

    Returns:
        The factory callable.

    Raises:
        ValueError: ``spec`` is not of the form ``MODULE:FACTORY``, the module (or a module it imports)
            cannot be found, or it has no callable of that name.
        FileNotFoundError: a ``.py`` path that does not exist.
    """
    if callable(spec):
        return spec
    if not isinstance(spec, str) or ":" not in spec:
        raise ValueError(f"factory must be MODULE:FACTORY (e.g. my_learner:make or path/to/file.py:make), got {spec!r}")
    mod_name, _, attr = spec.rpartition(":")
    if not mod_name or not attr:
        raise ValueError(f"factory must be MODULE:FACTORY, got {spec!r}")
    if mod_name.endswith(".py") or os.sep in mod_name or "/" in mod_name:
        path = pathlib.Path(mod_name).expanduser().resolve()
        if not path.is_file():
            raise FileNotFoundError(f"factory module {mod_name!r} not found")
        name = "jaxdp_user_" + hashlib.sha1(str(path).encode()).hexdigest()[:10]
        sha = hashlib.sha1(path.read_bytes()).hexdigest()
        mod = sys.modules.get(name)
        if mod is None or getattr(mod, "__jaxdp_source_sha1__", None) != sha:
            # imported once per source, as ``import`` would: a rerun in this process reuses its compiled learners
            mspec = importlib.util.spec_from_file_location(name, path)
            assert mspec is not None and mspec.loader is not None
            mod = importlib.util.module_from_spec(mspec)
            mod.__jaxdp_source_sha1__ = sha  # type: ignore[attr-defined]
            sys.modules[name] = mod
            # as a script would: the file's folder is importable, so it may import the modules beside it
            if str(path.parent) not in sys.path:
                sys.path.insert(0, str(path.parent))
            try:
                mspec.loader.exec_module(mod)
            except ModuleNotFoundError as e:
                sys.modules.pop(name, None)
                raise ValueError(f"cannot import {mod_name!r} for factory {spec!r}: {e}") from None
            except BaseException:
                sys.modules.pop(name, None)
                raise
    else:
        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        try:
            mod = importlib.import_module(mod_name)
        except ModuleNotFoundError as e:
            raise ValueError(f"cannot import module {mod_name!r} for factory {spec!r}: {e}") from None
    fn = getattr(mod, attr, None)
    if fn is None or not callable(fn):
        raise ValueError(f"module {mod_name!r} has no callable {attr!r}")
    return fn


def _factory_id(factory: Callable) -> dict:
    """Name and source hash of the factory (a changed learner is a different config: never mixed on resume)."""
    mod = inspect.getmodule(factory)
    try:
        src = inspect.getsource(mod) if mod is not None else inspect.getsource(factory)
    except (OSError, TypeError):
        src = ""
    return {"factory": f"{getattr(factory, '__module__', '?')}:{getattr(factory, '__qualname__', '?')}",
            "source_sha1": hashlib.sha1(src.encode()).hexdigest()[:16] if src else None}


# --------------------------------------------------------------------------- audit


def audit_learner(learner, params, *, problem_class: str, d: int, T: int, claimed_eps: float,
                  claimed_delta: float, n: int, seed: int = 0, name: str = "learner"):
    """Empirical privacy audit of a learner on neighbouring loss sequences (module docstring, step 3).

    Uses the auditor's learner audit (:func:`jaxdp.privacy.audit.learners.audit_learner`: a family of
    replace-one pairs of loss sequences, here changing the first or the middle round, and a search
    over events on the actions ``x_1..x_{T+1}``; it reads the action type, an expert index or a
    point, from the learner). For ``bandits`` the events are :func:`jaxdp.bandits.audits.bandit_events`:
    the plays of each arm, and the replays of the arm played in a changed round (what bandit feedback
    reveals).

    Args:
        learner: the :class:`jaxdp.Learner` audited.
        params: its parameters at horizon ``T`` and the claimed privacy.
        problem_class: the compared class (:data:`SUPPORTED`); a class with bandit feedback
            (:data:`BANDIT_FEEDBACK`) is audited on the bandit events.
        d: the dimension of a loss vector (experts, arms or coordinates).
        T: the audited horizon; the changed rounds are ``0`` and ``T // 2``.
        claimed_eps, claimed_delta: the ``(ε, δ)`` the learner claims; a lower bound on ε above
            ``claimed_eps`` at level ``claimed_delta`` refutes it.
        n: runs per neighbouring input.
        seed: seed of the audit's PRNG key.
        name: the learner's name in the report.

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`: the ε lower bound (``eps_lower``), whether it
        exceeds the claim (``violation``) and the verdict.
    """
    import jax

    from ..privacy.audit.learners import audit_learner as _audit_learner

    rounds = (0, T // 2)
    events = None
    if problem_class in BANDIT_FEEDBACK:
        from ..bandits.audits import bandit_events

        events = bandit_events(d, T, rounds)
    return _audit_learner(learner, params, T=T, d=d, claimed_eps=claimed_eps, claimed_delta=claimed_delta, n=n,
                          key=jax.random.key(seed), rounds=rounds, events=events, name=name)


# --------------------------------------------------------------------------- the comparison


def _as_tuple(v, cast) -> tuple:
    if isinstance(v, str):
        v = [t for t in v.replace(";", ",").split(",") if t.strip()]
    if np.ndim(v) == 0:
        v = [v]
    return tuple(cast(x) for x in v)


def _validate(problem, eps, delta, T, d, seeds):
    if problem not in SUPPORTED:
        from ..instances import PROBLEM_CLASSES

        other = [c for c in PROBLEM_CLASSES if c not in SUPPORTED]
        raise ValueError(f"problem must be one of {list(SUPPORTED)} (online classes; {other} are one-shot and not "
                         f"compared yet; alias: " + ", ".join(f"{a} = {c}" for a, c in ALIASES.items())
                         + f"), got {problem!r}")
    for e in eps:
        if not (math.isfinite(e) and e > 0):
            raise ValueError(f"eps must be positive and finite, got {e!r}")
    if not (0 < delta < 1):
        raise ValueError(f"delta must be in (0, 1) (the built-ins are compared at (eps, delta)), got {delta!r}")
    for t in T:
        if t < 16:
            raise ValueError(f"T must be integers >= 16, got {t!r}")
    if d < 2:
        raise ValueError(f"d must be an integer >= 2, got {d!r}")
    if seeds < 2:
        raise ValueError(f"seeds must be an integer >= 2 (confidence intervals), got {seeds!r}")


def _check_claim(value, where: str) -> float:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{where} must be a positive number (inf declares a non-private learner), got {value!r}")
    try:
        c = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where} must be a positive number (inf declares a non-private learner), "
                         f"got {value!r}") from None
    if not c > 0:   # NaN fails too
        raise ValueError(f"{where} must be positive (inf declares a non-private learner), got {value!r}")
    return c


def _claims(claimed_eps, n: int) -> Optional[list]:
    """``claimed_eps`` argument -> one claim per user learner (``None``: not given)."""
    if claimed_eps is None:
        return None
    if n == 0:
        raise ValueError(f"claimed_eps is the privacy your learner claims, but no learner (MODULE:FACTORY) was "
                         f"given; got claimed_eps={claimed_eps!r}")
    try:
        vals = list(_as_tuple(claimed_eps, lambda x: x))
    except TypeError:
        vals = [claimed_eps]
    vals = [_check_claim(v, "claimed_eps") for v in vals]
    if len(vals) == 1:
        vals = vals * n
    if len(vals) != n:
        raise ValueError(f"claimed_eps must be one value or one per learner ({n} learners), got {claimed_eps!r}")
    return vals


def _factories(factory) -> list:
    if factory is None:
        return []
    if isinstance(factory, str) or callable(factory):
        return [factory]
    if isinstance(factory, (list, tuple)):
        for f in factory:
            if not (isinstance(f, str) or callable(f)):
                raise TypeError(f"factory must be MODULE:FACTORY strings or callables, got {f!r}")
        return list(factory)
    raise TypeError(f"factory must be MODULE:FACTORY, a callable or a list of them, got {type(factory).__name__}")


@dataclasses.dataclass
class _User:
    """A user's learner in one comparison."""

    factory: Callable
    name: str
    label: str                   # how the user named it (as given, else module:qualname)
    claimed_eps: Optional[float]  # None: claims each eps it is run at; inf: declared non-private
    fid: dict


#: Conformance passes of this process: ``key of (learner source, sizes, instance) -> checks``.
_CONFORMANCE_PASSED: dict = {}


def compare(factory: Union[str, Callable, Sequence[Union[str, Callable]], None] = None, problem: str = "experts", *,
            eps: Union[float, Sequence[float], str, None] = None, delta: Optional[float] = None,
            T: Union[int, Sequence[int], str, None] = None, d: Optional[int] = None, seeds: Optional[int] = None,
            quick: bool = False, out: Union[str, os.PathLike, None] = None,
            claimed_eps: Union[float, Sequence[float], str, None] = None,
            learners: Optional[Sequence[str]] = None, instances: Optional[Sequence[str]] = None,
            audit: bool = True, audit_n: Optional[int] = None, progress: bool = False, plot: bool = True,
            md: Union[str, os.PathLike, None] = None, log: Optional[Callable[[str], None]] = None) -> "pd.DataFrame":
    """Compare learners with the built-in learners of ``problem`` on the benchmark instances.

    Args:
      factory: ``"module:function"`` or a callable ``(d, T, T_max, eps, delta) -> Learner | (Learner, params)``
        (any subset of the arguments; ``T_max`` is the sweep's largest horizon, for static sizes), or a
        list of them (several learners of yours in one leaderboard); ``None`` runs the built-ins only
        (the built-in leaderboard).
      problem: ``experts``, ``realizable-experts``, ``oco-ball``, ``oco-simplex`` or ``bandits`` (alias
        ``bandit``: ``K = d`` arms, bandit feedback, the pseudo-regret; a learner of yours must also
        pass the bandit-feedback check, :func:`jaxdp.bandits.testing.check_bandit_feedback`).
      eps, delta: the privacy levels every learner is run at (matched); defaults :data:`DEFAULTS`
        (``--quick``: :data:`QUICK`).
      T: the horizons (regret at the largest; the slope in T is fitted over all).
      d: the dimension of the losses: experts, arms (``K = d``) or coordinates of the OCO domain.
      seeds: seeds per instance (the first ones of each instance's fixed list).
      quick: start from the small grid :data:`QUICK` instead of :data:`DEFAULTS` and run only the
        instances marked quick; explicit arguments still override it.
      out: results directory (resumable; default: a temporary directory).
      claimed_eps: the ε your learner claims, one value or one per learner (default: the factory's
        ``claimed_eps`` attribute, else each ε it is run at); ``math.inf`` declares it non-private: it
        is shown as a reference and never ranked.
      learners, instances: subsets of the built-in learners (underscore names; a hyphenated alias is accepted) / registered instances.
      audit: run the privacy audit of your learners; an unaudited learner is listed but not ranked.
      audit_n: runs per neighbouring input of the audit (default from :data:`DEFAULTS` /
        :data:`QUICK`); more runs give a tighter ε lower bound.
      progress: show a progress bar over the study's chunks.
      plot: write ``regret_vs_T.png``.
      md: also write the Markdown leaderboard to this path (e.g. a docs page).
      log: called with each progress message (prefixed by the elapsed seconds); default silent.

    Returns:
      The leaderboard as a ``pandas.DataFrame`` (also written to ``out/leaderboard.csv``, with
      ``leaderboard.md`` and ``regret_vs_T.png``). Its column ``status`` says where each row lands
      (:data:`RANKED`, :data:`UNRANKED`, :data:`REFERENCE`); ``rank`` is set on ranked rows only.
      ``attrs["refuted"]`` lists your learners whose claim the audit refuted, ``attrs["command"]``
      the command line that resumes the run.

    Raises:
      jaxdp.testing.ConformanceError: a learner fails the conformance checks (its ``factory``
        attribute names the learner).
      ValueError: bad arguments, or a results directory holding another run (the message names each
        differing setting).
    """
    from .. import instances as inst_mod
    from ..studies.framework import Study, run_study
    from ..testing import check_factory_signature

    problem = canonical_problem(problem)
    base: dict[str, Any] = dict(QUICK if quick else DEFAULTS, **(CLASS_DEFAULTS.get(problem, {}) if isinstance(problem, str) else {}))
    eps = _as_tuple(base["eps"] if eps is None else eps, float)
    delta = float(base["delta"] if delta is None else delta)
    T = tuple(sorted(set(_as_tuple(base["T"] if T is None else T, int))))
    d = int(base["d"] if d is None else d)
    seeds = int(base["seeds"] if seeds is None else seeds)
    audit_n = int(base["audit_n"] if audit_n is None else audit_n)
    _validate(problem, eps, delta, T, d, seeds)
    specs = _factories(factory)
    claims_arg = _claims(claimed_eps, len(specs))
    t_start = time.perf_counter()
    _log = log or (lambda s: None)

    def say(msg):
        _log(f"[{time.perf_counter() - t_start:6.1f}s] {msg}")

    builtins = list(builtin_learners(problem))
    if learners is not None:
        from ..registry import canonical_name

        learners = [canonical_name(nm) for nm in learners]   # dp-exp3 is an alias of dp_exp3
        known = {b.name for b in builtins}
        for nm in learners:
            if nm not in known:
                raise ValueError(f"unknown built-in learner {nm!r} for {problem}; known: {', '.join(sorted(known))}")
        builtins = [b for b in builtins if b.name in learners]
    insts = _select_instances(problem, quick, None if instances is None else list(instances), d)
    if not insts:
        raise ValueError(f"no benchmark instance of {problem} allows d={d}")
    n_avail = min(len(i.seeds) for i in insts)
    if seeds > n_avail:
        raise ValueError(f"seeds must be <= {n_avail} (the instances' fixed seed lists), got {seeds}")
    T_max = max(T)

    # 1. the user's learners: import; the configuration; a results directory of another run is refused
    users: list[_User] = []
    taken = {b.name for b in builtins}
    for i, spec in enumerate(specs):
        fn = load_factory(spec)
        check_factory_signature(fn)   # a required argument compare cannot pass: refused before anything runs
        name = str(getattr(fn, "name", None) or getattr(fn, "__name__", "yours"))
        if name in taken:
            name = f"{name} (yours)"
        stem, k = name, 2
        while name in taken:   # two learners of yours with one name
            name, k = f"{stem} #{k}", k + 1
        taken.add(name)
        fid = _factory_id(fn)
        if isinstance(spec, str):
            fid["spec"] = spec
        if claims_arg is not None:
            c = claims_arg[i]
        elif getattr(fn, "claimed_eps", None) is not None:
            c = _check_claim(getattr(fn, "claimed_eps"), f"{name}.claimed_eps (the factory's attribute)")
        else:
            c = None
        users.append(_User(fn, name, fid.get("spec") or fid["factory"], c, fid))
    config = {"problem": problem, "eps": list(eps), "delta": delta, "T": list(T), "d": d, "seeds": seeds,
              "instances": [i.name for i in insts], "learners": [b.name for b in builtins],
              "benchmark_version": inst_mod.VERSION,
              "users": [dict(u.fid, name=u.name, claimed_eps=u.claimed_eps) for u in users],
              "claimed_eps_arg": claims_arg, "quick": bool(quick)}
    if out is None:
        out = tempfile.mkdtemp(prefix="jaxdp-compare-")
    run_opts = {"out": str(out), "audit": bool(audit), "audit_n": audit_n, "plot": bool(plot),
                "md": None if md is None else str(md)}
    command = _command(config, run_opts)
    out = pathlib.Path(out)
    _check_resumable(out, config)

    # 2. conformance: stop with a clear message before any benchmark runs (a pass is cached, in this
    #    process and in out/conformance.json, for the same learner source, sizes and instance)
    from ..testing import ConformanceError, check_factory

    first = insts[0]
    T_c = min(T_max, 64)
    cache_path = out / "conformance.json"
    try:
        on_disk = json.loads(cache_path.read_text()).get("passed", {}) if cache_path.exists() else {}
    except (OSError, ValueError):
        on_disk = {}
    passed = {}
    for u in users:
        ckey = hashlib.sha1(json.dumps({"user": u.fid, "problem": problem, "instance": first.name, "d": d, "T": T_c,
                                        "eps": list(eps), "delta": delta}, sort_keys=True,
                                       default=str).encode()).hexdigest()[:16]
        checks = _CONFORMANCE_PASSED.get(ckey) or on_disk.get(ckey)
        if checks is not None:
            say(f"conformance of {u.name}: passed before (" + ", ".join(checks) + "); not rechecked")
        else:
            adv, ap = first.build(d, T_c, eps[0])
            say(f"conformance checks of {u.name} on {first.name} ...")
            try:
                rep = check_factory(u.factory, adv, first.problem(d), ap, d=d, T=T_c, eps=eps, delta=delta)
                checks = list(rep.checks)
                if problem in BANDIT_FEEDBACK:
                    # a bandit learner may read the played arm's loss only
                    from ..bandits.testing import check_bandit_feedback

                    check_bandit_feedback(rep.learner, rep.params[0], d, adversary=adv, adv_params=ap, T=T_c)
                    checks.append("bandit feedback")
            except ConformanceError as e:
                e.factory = u.label  # type: ignore[attr-defined]
                raise
            say("conformance: passed (" + ", ".join(checks) + ")")
        _CONFORMANCE_PASSED[ckey] = list(checks)
        passed[ckey] = list(checks)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / "command.txt", command + "\n")
    if users:
        atomic_write(cache_path, json.dumps({"passed": dict(on_disk, **passed)}, indent=2))

    # 3. audit (cached in out/audit.json under the same config)
    audits = {}
    if users and audit:
        audits = _run_audits(users, problem, d, eps, delta, audit_n, config, out, say, base["audit_T"])
    elif users:
        for u in users:
            if u.claimed_eps != math.inf:
                say(f"audit of {u.name}: skipped (--no-audit): it is listed but not ranked")
    judge = _Judge(users, builtins, audits)

    # 4. runs as a study
    names = [u.name for u in users] + [b.name for b in builtins]
    by_user = {u.name: u for u in users}
    by_name = {b.name: b for b in builtins}
    by_inst = {i.name: i for i in insts}
    points = [dict(learner=nm, instance=i.name, eps=float(e), T=int(t), d=d)
              for nm in names for i in insts for e in eps for t in T]

    def build(p):
        inst = by_inst[p["instance"]]
        prob = inst.problem(p["d"])
        if p["learner"] in by_user:
            from ..testing import call_factory

            u = by_user[p["learner"]]
            lrn, params = call_factory(u.factory, d=p["d"], T=p["T"], T_max=T_max, eps=p["eps"], delta=delta)
            e_cert = judge.claim(u.name, p["eps"])
        else:
            try:
                lrn, params, e_cert = by_name[p["learner"]].make(p["d"], p["T"], T_max, p["eps"], delta, prob)
            except ValueError as e:   # the planner cannot certify this (eps, delta, T, d)
                raise _NotCertified(str(e)) from None
        adv, ap = inst.build(p["d"], p["T"], p["eps"], T_max=T_max)
        return inst, prob, lrn, params, adv, ap, e_cert

    def run(pts, seed_idx):
        return _run_chunk(pts, seed_idx, build, T_max)

    def analyze(df):
        return {"leaderboard": _leaderboard(df, judge, T_max)}

    def plot_fn(df, outdir):
        return [_plot(df, outdir, judge)]

    study = Study(name="compare", points=points, seeds=seeds, run=run, group_by=("learner", "instance", "eps"),
                  analyze=analyze, plot=plot_fn if plot else None, config=config, points_per_chunk=len(T),
                  description=f"jaxdp compare on {problem}")
    say(f"{len(names)} learners x {len(insts)} instances x {len(eps)} eps x {len(T)} horizons x {seeds} seeds "
        f"-> {out}")
    res = run_study(study, out, progress=progress, plot=plot)
    say(f"runs: {res.chunks_run} chunks run, {res.chunks_skipped} already done")
    lb = res.tables.get("leaderboard")
    if lb is None:
        raise RuntimeError(f"compare: the run in {out} is incomplete; rerun to resume: {command}")
    text = leaderboard_markdown(lb, config, audits, run=run_opts)
    atomic_write(out / "leaderboard.md", text)
    if md is not None:
        pathlib.Path(md).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(pathlib.Path(md), text)
    refuted = [u.name for u in users if any(a["violation"] for a in audits.get(u.name, {}).values())]
    atomic_write(out / "leaderboard.json", json.dumps(leaderboard_json(lb, config, audits, refuted, command), indent=2))
    say(f"leaderboard: {out / 'leaderboard.csv'}, {out / 'leaderboard.md'}, {out / 'leaderboard.json'}")
    lb.attrs.update(out=str(out), audits=audits, refuted=refuted, command=command)
    return lb


#: the leaderboard's columns as ``leaderboard.json`` types them (its schema: ``docs/guide/compare.schema.json``)
_JSON_COLUMNS = {"instance": str, "adaptive": bool, "eps": float, "rank": int, "learner": str, "kind": str, "status": str, "ranked": bool,
                 "T": int, "regret_mean": float, "regret_lo": float, "regret_hi": float, "slope": float,
                 "slope_lo": float, "slope_hi": float, "switches_mean": float, "eps_certified": float,
                 "certified": bool, "audit_eps_lower": float, "audit": str, "why": str, "n_seeds": int}


def _json_num(v):
    """A JSON number; NaN (not measured) is ``null``, an infinity the string ``"inf"`` / ``"-inf"``."""
    v = float(v)
    return None if v != v else (str(v) if math.isinf(v) else v)


def leaderboard_json(lb, config: dict, audits: dict, refuted: list, command: str) -> dict:
    """The run's summary, as written to ``out/leaderboard.json`` (and printed by ``jaxdp compare --json``).

    Args:
        lb: the leaderboard table (one row per learner, instance and ε).
        config: the run's configuration (as in its manifest).
        audits: the audit results per learner of yours and claimed ε.
        refuted: your learners whose claim the audit refuted.
        command: the command line that resumes the run.

    Returns:
        A JSON-ready dict with stable types (schema ``docs/guide/compare.schema.json``): NaN is ``null``, an
        infinity the string ``"inf"``.
    """
    import pandas as pd

    def cell(cast, v):
        if v is None or v is pd.NA or (isinstance(v, float) and v != v and cast is not float):
            return None
        return _json_num(v) if cast is float else cast(v)

    rows = [{k: cell(cast, r[k]) for k, cast in _JSON_COLUMNS.items()} for r in lb.to_dict("records")]
    return {"problem": config["problem"], "benchmark_version": config["benchmark_version"],
            "config": json.loads(json.dumps(config, default=str)), "command": command, "refuted": list(refuted),
            "exit_status": EXIT_REFUTED if refuted else EXIT_OK,
            "audits": {nm: [{"claimed_eps": _json_num(e), "claimed_delta": _json_num(a["claimed_delta"]),
                             "eps_lower": _json_num(a["eps_lower"]), "violation": bool(a["violation"]),
                             "verdict": str(a["verdict"])} for e, a in sorted(au.items())]
                       for nm, au in audits.items()},
            "rows": rows}


def _run_audits(users, problem, d, eps, delta, n, config, out, say, T_a):
    from ..testing import call_factory

    path = out / "audit.json"
    key = hashlib.sha1(json.dumps(dict(config, audit_n=n, audit_T=T_a), sort_keys=True,
                                  default=str).encode()).hexdigest()[:16]
    if path.exists():
        old = json.loads(path.read_text())
        if old.get("key") == key:
            say("audit: reusing " + str(path))
            return {nm: {float(k): v for k, v in a.items()} for nm, a in old["audits"].items()}
    res = {}
    for u in users:
        if u.claimed_eps == math.inf:
            say(f"audit of {u.name}: none (declared non-private: a reference, never ranked)")
            continue
        levels = [float(u.claimed_eps)] if u.claimed_eps is not None else list(eps)
        res[u.name] = {}
        for e in levels:
            lrn, params = call_factory(u.factory, d=d, T=T_a, T_max=T_a, eps=e, delta=delta)
            say(f"audit of {u.name} at claimed eps={e:g} ({n} runs per input, T={T_a}, d={d}) ...")
            rep = audit_learner(lrn, params, problem_class=problem, d=d, T=T_a, claimed_eps=e, claimed_delta=delta,
                                n=n, name=u.name)
            say(str(rep).splitlines()[0] + f"  (eps lower bound {rep.eps_lower:.3g})")
            res[u.name][e] = {"claimed_eps": e, "claimed_delta": delta, "eps_lower": float(rep.eps_lower),
                              "violation": bool(rep.violation), "verdict": rep.verdict, "report": str(rep)}
    atomic_write(path, json.dumps({"key": key, "audits": {nm: {str(k): v for k, v in a.items()}
                                                            for nm, a in res.items()}}, indent=2))
    return res


class _NotCertified(Exception):
    pass


def _run_chunk(pts, seed_idx, build, T_max):
    """All horizons of one (learner, instance, eps) in one vmapped call (grid over T). A point whose
    built-in cannot be certified at the requested (eps, delta) gets NaN metrics and ``certified = 0``."""
    import jax
    import jax.numpy as jnp

    from ..core import simulate

    n = len(seed_idx)
    built = []
    for p in pts:
        try:
            built.append(build(p))
        except _NotCertified as e:
            print(f"jaxdp compare: {p['learner']} at eps={p['eps']:g}, T={p['T']}: {e}", file=sys.stderr)
            built.append(None)
    ok = [b for b in built if b is not None]
    out_ok = []
    if ok:
        inst, prob, lrn, _, adv, _, _ = ok[0]
        for b in ok[1:]:
            if b[2] != lrn or b[4] != adv:
                raise RuntimeError(f"{pts[0]['learner']}: a different Learner/adversary object for another horizon; "
                                   "the factory must return the same Learner for every grid point")
        keys = inst.keys()[np.asarray(seed_idx)]
        stack = lambda *v: jnp.stack([jnp.asarray(x) for x in v])  # noqa: E731
        params = jax.tree_util.tree_map(stack, *[b[3] for b in ok])
        adv_params = jax.tree_util.tree_map(stack, *[b[5] for b in ok])
        Ts = np.asarray([p["T"] for p, b in zip(pts, built) if b is not None], np.int64)
        grid_keys = jnp.broadcast_to(keys[None], (len(ok),) + keys.shape)
        res = simulate(lrn, adv, prob, params, adv_params, jax.random.clone(grid_keys), Ts, T_max=T_max, grid=True)
        for g, b in enumerate(ok):
            out_ok.append({
                "regret": res["regret"][g].astype(float), "loss": res["loss"][g].astype(float),
                "best_loss": res["best_loss"][g].astype(float),
                "expected_regret": res["expected_regret"][g].astype(float) if "expected_regret" in res
                else np.full(n, np.nan),
                "switches": res["switches"][g].astype(float) if "switches" in res else np.full(n, np.nan),
                "eps_certified": np.full(n, b[6], float), "certified": np.ones(n)})
    nan = {k: np.full(n, np.nan) for k in ("regret", "loss", "best_loss", "expected_regret", "switches",
                                           "eps_certified")}
    it = iter(out_ok)
    return [next(it) if b is not None else dict(nan, certified=np.zeros(n)) for b in built]


# --------------------------------------------------------------------------- judging


class _Judge:
    """Where each (learner, ε) lands: ranked, not ranked (with the reason) or a non-private reference."""

    def __init__(self, users: list, builtins: list, audits: dict):
        self.users = {u.name: u for u in users}
        self.builtins = {b.name: b for b in builtins}
        self.audits = audits

    def claim(self, learner: str, eps: float) -> float:
        u = self.users.get(learner)
        if u is None:
            b = self.builtins[learner]
            return eps if b.private else math.inf
        return float(eps) if u.claimed_eps is None else float(u.claimed_eps)

    def judge(self, learner: str, eps: float, certified: bool = True, eps_cert: float = math.nan) -> dict:
        """``{"status", "why", "audit", "audit_eps_lower", "claim"}`` of ``learner`` compared at ``eps``."""
        eps = float(eps)
        res = dict(audit="", audit_eps_lower=math.nan, claim=self.claim(learner, eps))
        u = self.users.get(learner)
        if u is None:
            b = self.builtins[learner]
            if not certified:
                return dict(res, status="not-run", why="not run: its planner cannot certify this (ε, δ, T, d)")
            if not b.private:
                return dict(res, status="non-private", why="non-private reference")
            if math.isfinite(eps_cert) and eps_cert > eps * (1 + 1e-9):
                return dict(res, status="weaker-claim", why=f"certifies only ε = {eps_cert:.3g} > {eps:g}")
            return dict(res, status="certified", why="certified by its privacy ledger")
        c = res["claim"]
        if c == math.inf:
            return dict(res, status="non-private", why="declared non-private (claimed ε = ∞)",
                        audit="declared non-private")
        a = self.audits.get(learner, {}).get(c)
        if a is None:
            return dict(res, status="unaudited", why=f"claims ε = {c:g}, not audited (--no-audit)",
                        audit="not audited")
        lo = float(a["eps_lower"])
        res.update(audit_eps_lower=lo)
        if a["violation"]:
            return dict(res, status="refuted", why=f"claim refuted by the audit: ε ≥ {lo:.3g} > claimed {c:g}",
                        audit=f"REFUTED: eps >= {lo:.3g} > claimed {c:g}")
        if c > eps * (1 + 1e-9):  # type: ignore[operator]
            return dict(res, status="weaker-claim", why=f"claims only ε = {c:g} > {eps:g}",
                        audit=f"not refuted (eps >= {lo:.3g})")
        return dict(res, status="not-refuted", why="claim not refuted by the audit",
                    audit=f"not refuted (eps >= {lo:.3g})")


# --------------------------------------------------------------------------- leaderboard


def _block(status: str) -> int:
    return 0 if status in RANKED else (2 if status in REFERENCE else 1)


def _leaderboard(df, judge: _Judge, T_max):
    import pandas as pd

    from ..studies.framework import fit_slopes, summarize

    by = ["learner", "instance", "eps"]
    top = df[df["T"] == T_max]
    s = summarize(top, by, ["regret", "switches"], n_boot=1000)
    sl = fit_slopes(df, "T", "regret", by=by, upper_half=False, n_boot=300)
    lb = s.merge(sl[by + ["slope", "slope_lo", "slope_hi"]], on=by, how="left")
    lb.insert(3, "T", T_max)
    cert = top.groupby(by).agg(eps_certified=("eps_certified", "first"), certified=("certified", "min")).reset_index()
    lb = lb.merge(cert, on=by, how="left")
    lb["certified"] = lb["certified"].fillna(0).astype(bool)
    if lb.loc[lb["certified"], "switches_mean"].isna().any():   # a learner that ran without reporting `switched`:
        lb["switches_mean"] = math.nan                            # switches for every learner or for none
    from ..instances import get_instance

    lb["adaptive"] = [bool(get_instance(nm).adaptive) for nm in lb["instance"]]
    lb["kind"] = [("yours" if nm in judge.users else ("private" if judge.builtins[nm].private
                                                      else "non-private reference")) for nm in lb["learner"]]
    verdicts = [judge.judge(r["learner"], r["eps"], bool(r["certified"]), float(r["eps_certified"]))
                for _, r in lb.iterrows()]
    for col in ("status", "why", "audit", "audit_eps_lower"):
        lb[col] = [v[col] for v in verdicts]
    lb["ranked"] = lb["status"].isin(RANKED)
    lb["rank"] = pd.array([pd.NA] * len(lb), dtype="Int64")
    if lb["ranked"].any():   # the realised regret, on oblivious and adaptive instances alike
        r = lb[lb["ranked"]].groupby(["instance", "eps"])["regret_mean"].rank(method="min")
        lb.loc[r.index, "rank"] = r.fillna(0).astype(int).to_numpy()
    lb["_block"] = [_block(st) for st in lb["status"]]
    lb = lb.sort_values(["instance", "eps", "_block", "rank", "regret_mean", "learner"],
                        na_position="last").reset_index(drop=True)
    cols = ["instance", "adaptive", "eps", "rank", "learner", "kind", "status", "ranked", "T", "regret_mean", "regret_lo",
            "regret_hi", "slope", "slope_lo", "slope_hi", "switches_mean", "eps_certified", "certified",
            "audit_eps_lower", "audit", "why", "n_seeds"]
    return pd.DataFrame(lb[cols])


def _fmt(x, nd=3):
    try:
        x = float(x)
    except (TypeError, ValueError):   # None, pandas.NA
        return "–"
    if x == math.inf:
        return "∞"
    return f"{x:.{nd}g}" if math.isfinite(x) else "–"


def _user_summary(config: dict, audits: dict, run: Optional[dict]) -> list[str]:
    lines = []
    for u in config.get("users") or []:
        nm, c = u["name"], u.get("claimed_eps")
        if c is not None and float(c) == math.inf:
            lines.append(f"* **{nm}** is declared non-private (claimed ε = ∞): a reference, never ranked.")
            continue
        claim = f"claims ε = {c:g}" if c is not None else "claims each ε it is compared at"
        a = audits.get(nm) or {}
        if not a:
            lines.append(f"* **{nm}** {claim}; the audit was skipped (`--no-audit`): **unaudited, not ranked**.")
            continue
        for e, r in sorted(a.items()):
            verdict = ("**⚠ REFUTED**: the claim is false (up to probability 1e-7); not ranked" if r["violation"]
                       else "not refuted (the audit found no violation; it does not prove privacy): ranked")
            lines.append(f"* **{nm}** {claim}. Privacy audit at ε = {e:g}, δ = {r['claimed_delta']:g}: ε lower "
                         f"bound {r['eps_lower']:.3g} → {verdict}.")
    return lines


def leaderboard_markdown(lb, config: dict, audits: dict, run: Optional[dict] = None) -> str:
    """The leaderboard as Markdown: per instance, the ranked learners (privacy certified by a ledger
    or claimed and not refuted by the audit), the learners not ranked (refuted, unaudited, a weaker
    claim, not run) and the non-private references.

    Args:
        lb: the leaderboard table :func:`jaxdp.compare.compare` returns (one row per learner,
            instance and ε).
        config: the run's configuration as stored in its manifest (class, ε grid, δ, ``T`` grid,
            ``d``, seeds, instances, built-ins, your learners and their claims).
        audits: the audit results per learner of yours and claimed ε (``eps_lower``,
            ``violation``, ``claimed_delta``); empty when the audit was skipped.
        run: the run's options (``out``, ``audit``, ``audit_n``, ``plot``, ``md``) that complete
            the command line shown to resume the run.

    Returns:
        The Markdown page: the settings, the resume command, a summary of each of your learners'
        audits and, per instance, the ranked, unranked and reference tables.
    """
    from ..instances import get_instance

    metric = METRIC.get(config["problem"], "realized regret")
    lines = [f"# Leaderboard: {config['problem']}", "",
             f"Benchmark version {config['benchmark_version']}; d = {config['d']}, δ = {config['delta']:g}, "
             f"T ∈ {{{', '.join(str(t) for t in config['T'])}}}, {config['seeds']} seeds per instance "
             f"(the first of each instance's fixed seed list). Regret is the {metric} at "
             f"T = {max(config['T'])} (mean and 95% bootstrap CI over seeds); the slope is the least-squares "
             "slope of log mean regret in log T over the T grid (95% bootstrap CI); ε cert. is the ε the "
             "learner's privacy ledger certifies (built-ins, configured by their planners in certified mode), "
             "or the ε a learner of yours claims.", "",
             "A learner is **ranked** only when its privacy is certified by a ledger (built-ins) or claimed and "
             "not refuted by the privacy audit (yours). A claim the audit refutes, an unaudited claim and a "
             "claim weaker than the ε compared are listed **not ranked**; non-private learners are "
             "**references**, never ranked. The ranking is by the mean realised regret on every instance; on "
             "an instance marked *adaptive* the adversary watches the actions played, so each learner meets its "
             "own loss sequence (the expected regret is not defined there: docs/guide/compare.md#adaptive).", "",
             "Resume this run (from the directory it was started in), or reproduce it with another `--out`:", "",
             "```bash", _command(config, run), "```", ""]
    if not all((u.get("spec") for u in config.get("users") or [])):
        lines += ["(A learner was passed as a Python object: replace its `module:function` by a MODULE:FACTORY "
                  "the command line can import.)", ""]
    summary = _user_summary(config, audits, run)
    if summary:
        lines += summary + [""]
    head = {0: ["ε", "rank", "learner", "regret (95% CI)", "slope in T (95% CI)", "switches", "ε cert. / claimed",
                "audit ε ≥"],
            1: ["ε", "learner", "why not ranked", "regret (95% CI)", "slope in T (95% CI)", "switches", "ε claimed",
                "audit ε ≥"],
            2: ["ε", "learner", "regret (95% CI)", "slope in T (95% CI)", "switches"]}
    switches = bool(lb["switches_mean"].notna().any())
    if not switches:
        lines += ["No switches column: not every learner reports its action changes (the `switched` counter).", ""]

    def row(cells: list, blk: int) -> str:
        return "| " + " | ".join(c for c, h in zip(cells, head[blk]) if switches or h != "switches") + " |"
    title = {0: "Ranked", 1: "Not ranked", 2: "Non-private references (never ranked)"}
    for inst_name, g in lb.groupby("instance", sort=False):
        inst = get_instance(inst_name)
        lines += [f"## {inst_name}" + (" (adaptive)" if inst.adaptive else ""), "",
                  f"{inst.description}. {inst.reference}.", ""]
        blocks = [_block(st) for st in g["status"]]
        for blk in (0, 1, 2):
            rows = [r for (_, r), b in zip(g.iterrows(), blocks) if b == blk]
            if not rows:
                continue
            lines += [f"**{title[blk]}**", "", row(head[blk], blk), row(["---"] * len(head[blk]), blk).replace(" ", "")]
            for r in rows:
                name = f"**{r['learner']}**" if r["kind"] == "yours" else r["learner"]
                if r["status"] == "refuted":
                    name += " ⚠ REFUTED"
                regret = f"{_fmt(r['regret_mean'], 4)} [{_fmt(r['regret_lo'])}, {_fmt(r['regret_hi'])}]"
                slope = f"{_fmt(r['slope'], 2)} [{_fmt(r['slope_lo'], 2)}, {_fmt(r['slope_hi'], 2)}]"
                if r["status"] == "not-run":
                    regret = slope = ""
                cells = {0: [f"{r['eps']:g}", str(int(r["rank"])) if r["ranked"] else "–", name, regret, slope,
                             _fmt(r["switches_mean"], 4), _fmt(r["eps_certified"]), _fmt(r["audit_eps_lower"])],
                         1: [f"{r['eps']:g}", name, r["why"], regret, slope, _fmt(r["switches_mean"], 4),
                             _fmt(r["eps_certified"]), _fmt(r["audit_eps_lower"])],
                         2: [f"{r['eps']:g}", name, regret, slope, _fmt(r["switches_mean"], 4)]}[blk]
                lines.append(row(cells, blk))
            lines.append("")
    return "\n".join(lines)


#: Line styles of the plot: solid for ranked learners, dotted for references, dashed for the others.
_STYLE = {"certified": "-", "not-refuted": "-", "non-private": ":", "refuted": "--", "unaudited": "-.",
          "weaker-claim": "-.", "not-run": "-."}


def _series_label(learner: str, eps: float, verdict: dict, several_eps: bool) -> str:
    """The legend entry of one (learner, ε) curve: it says whether the curve is ranked, and why not."""
    st, c = verdict["status"], verdict["claim"]
    if st == "non-private":
        return f"{learner}: non-private" + (f" (ε={eps:g} instances)" if several_eps else "")
    if st in RANKED:
        return f"{learner} ε={eps:g}"
    if st == "refuted":
        return f"{learner} claims ε={c:g}: REFUTED by audit (not ranked)"
    if st == "unaudited":
        return f"{learner} claims ε={c:g}: unaudited (not ranked)"
    if st == "weaker-claim":
        return f"{learner} claims ε={c:g} > {eps:g} (not ranked)"
    return f"{learner} ε={eps:g} (not ranked)"


def _plot(df, outdir, judge: _Judge):
    """``regret_vs_T.png``: one panel per instance, one curve per (learner, ε), one legend that
    marks non-private references and unranked learners; the legend's labels are also stored in the
    PNG's ``Description`` text (one per line)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    from ..studies.framework import summarize

    s = summarize(df, ["learner", "instance", "eps", "T"], ["regret"], n_boot=200)
    s = s[s["regret_mean"] > 0]
    several = df["eps"].nunique() > 1
    curves = {}
    for (lrn, e), _ in s.groupby(["learner", "eps"], sort=False):
        v = judge.judge(lrn, e)
        curves[(lrn, e)] = (_series_label(lrn, e, v, several), _STYLE[v["status"]], v["status"])
    order = sorted(curves, key=lambda k: (_block(curves[k][2]), k[0], k[1]))
    colors = {lrn: f"C{i % 10}" for i, lrn in enumerate(dict.fromkeys(k[0] for k in order))}
    refs = list(dict.fromkeys(k[0] for k in order if curves[k][2] == "non-private"))
    colors.update({lrn: str(round(0.3 + 0.4 * i / max(1, len(refs) - 1), 2)) for i, lrn in enumerate(refs)})
    markers = {"-": "o", ":": ".", "--": "x", "-.": "s"}
    insts = sorted(s["instance"].unique())
    fig, axes = plt.subplots(1, max(1, len(insts)), figsize=(4.3 * max(1, len(insts)), 3.8), dpi=110,
                             squeeze=False)
    handles: dict = {}
    for ax, inst in zip(axes[0], insts):
        sub = s[s["instance"] == inst]
        for k in order:
            g = sub[(sub["learner"] == k[0]) & (sub["eps"] == k[1])].sort_values("T")
            if g.empty:
                continue
            label, ls, st = curves[k]
            color = colors[k[0]]   # references in shades of grey
            (h,) = ax.plot(g["T"], g["regret_mean"], ls, marker=markers[ls], ms=4, color=color, label=label,
                           lw=1.6 if st in RANKED else 1.2)
            ax.fill_between(g["T"], g["regret_lo"], g["regret_hi"], alpha=0.12, color=color)
            handles.setdefault(label, h)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("T")
        ax.set_ylabel("regret at T")
        ax.set_title(str(inst), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    labels = [curves[k][0] for k in order if curves[k][0] in handles]
    labels = list(dict.fromkeys(labels))
    fig.legend([handles[lb] for lb in labels], labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 0.95),
               title="solid: ranked · dotted: non-private · dashed: not ranked", title_fontsize=7)
    fig.tight_layout()
    path = pathlib.Path(outdir) / "regret_vs_T.png"
    fig.savefig(path, bbox_inches="tight", metadata={"Description": "\n".join(labels)})
    plt.close(fig)
    return path
