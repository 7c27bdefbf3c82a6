"""Registries behind the command line: studies, planners, audits and learners.

The registry imports nothing else from jaxdp at module level (it is the lowest layer). Modules register
themselves at import time with the decorators below (learners with :func:`register_learner`,
next to their definition); ``load_all()`` imports every subpackage and its public modules so the CLI,
``jaxdp compare`` and the tests see all of them. A module owns its entries; nothing here knows about any paper.

A lookup of one name (:func:`get_study`, :func:`get_planner`, :func:`get_audit`, :func:`get_learner`) imports
only the module that registers it where that module can be found without importing anything: a study's module
is ``jaxdp.studies.<name, hyphens as underscores>``, and a planner, audit or learner registered with its name
written out (``@register_planner("name", ...)``) is found by reading the package's source. Any other name, and
every listing, loads everything (``load_all``). A new process running one study so imports only what that study
uses (benchmarks/FIRST_CHUNK.md).
"""
from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import pathlib
import pkgutil
import re
from typing import Any, Callable, Mapping, Optional

__all__ = [
    "PLANNERS", "STUDIES", "AUDITS", "LEARNERS", "register_planner", "register_study", "register_audit",
    "register_learner", "get_planner", "get_study", "get_audit", "get_learner", "learners", "learner_for_plan",
    "LearnerEntry", "ConformanceCase", "CompareBuiltin", "LEARNER_PROBLEMS", "load_all", "canonical_name",
]


def canonical_name(name: str) -> str:
    """The one spelling of a planner's, audit's or learner's name: underscores, as a Python name
    (``dp-exp3`` -> ``dp_exp3``). The hyphenated spelling is an alias every lookup accepts. Studies keep
    their hyphenated names (they are directories and pages) and are not normalised.

    Args:
        name: a registered name, in either spelling.

    Returns:
        ``name`` with every ``-`` replaced by ``_``.

    Raises:
        TypeError: ``name`` is not a string.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, got {type(name).__name__}")
    return name.replace("-", "_")


class _Names(dict):
    """A registry table keyed by the underscore spelling (:func:`canonical_name`) that also finds the
    hyphenated alias: ``PLANNERS["dp-exp3"] is PLANNERS["dp_exp3"]``, ``"dp-exp3" in PLANNERS``."""

    def __missing__(self, key):
        if isinstance(key, str) and "-" in key and dict.__contains__(self, canonical_name(key)):
            return dict.__getitem__(self, canonical_name(key))
        raise KeyError(key)

    def __contains__(self, key) -> bool:
        return dict.__contains__(self, key) or (isinstance(key, str) and dict.__contains__(self, canonical_name(key)))

    def get(self, key, default=None):
        return self[key] if key in self else default


@dataclasses.dataclass
class Entry:
    """One registered planner, study or audit (:data:`PLANNERS`, :data:`STUDIES`, :data:`AUDITS`).

    Attributes:
        name: the registered name (``jaxdp plan NAME``, ``jaxdp study run NAME``, ``jaxdp audit NAME``).
        fn: the registered function: a planner ``fn(*, eps, delta, T, d, mode, **kw) -> Plan``, a study's
            ``build(cfg) -> Study`` (wrapped to fill in missing configuration keys from ``defaults``), or an
            audit ``fn(*, quick, seed) -> report``.
        description: one line for the listings.
        extra: the registration's further fields: ``defaults`` and ``quick`` of a study, ``claimed_eps`` and
            ``broken`` of an audit (empty for a planner).
    """
    name: str
    fn: Callable[..., Any]
    description: str
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


PLANNERS: dict[str, Entry] = _Names()
STUDIES: dict[str, Entry] = {}
AUDITS: dict[str, Entry] = _Names()


def _register(table: dict, kind: str, name: str, description: str, **extra):
    if isinstance(table, _Names):
        name = canonical_name(name)

    def deco(fn):
        if name in table and table[name].fn is not fn:
            raise ValueError(f"{kind} {name!r} registered twice")
        table[name] = Entry(name, fn, description, extra)
        return fn

    return deco


_LOADED = False


def load_all() -> None:
    """Import every ``jaxdp`` subpackage (those of ``jaxdp.privacy`` too), every module under ``jaxdp.studies``,
    then every public module (no leading underscore) of each subpackage (populates the registries).

    The last pass finds a module that registers itself though its package's ``__init__`` does not import it: a
    new learner is one module plus its test (docs/guide/add-a-learner.md). It runs last, so the entries of the
    packages keep their registration order and a new module's come after them.

    Returns:
        None; the registries are filled.
    """
    global _LOADED
    if _LOADED:
        return
    import jaxdp

    packages = []
    for mod in pkgutil.iter_modules(jaxdp.__path__):
        if mod.ispkg:
            packages.append(importlib.import_module(f"jaxdp.{mod.name}"))
    import jaxdp.privacy as pv

    for mod in pkgutil.iter_modules(pv.__path__):
        packages.append(importlib.import_module(f"jaxdp.privacy.{mod.name}"))
    import jaxdp.studies as st

    for mod in pkgutil.iter_modules(st.__path__):
        importlib.import_module(f"jaxdp.studies.{mod.name}")
    for pkg in packages:
        for mod in pkgutil.iter_modules(getattr(pkg, "__path__", [])):
            if not mod.name.startswith("_"):
                importlib.import_module(f"{pkg.__name__}.{mod.name}")
    _LOADED = True


_ROOT = pathlib.Path(__file__).resolve().parent
_SOURCES: Optional[list[tuple[str, str]]] = None


def _sources() -> list[tuple[str, str]]:
    """``(module to import, source text)`` of every ``.py`` file ``load_all`` reaches (read once, nothing
    imported). A private module (``_registry.py``) is reached through the package that imports it; the
    command line and ``__main__`` are left out."""
    global _SOURCES
    if _SOURCES is None:
        out = []
        for path in sorted(_ROOT.rglob("*.py")):
            parts = list(path.relative_to(_ROOT.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            for i, part in enumerate(parts[1:], start=1):
                if part.startswith("_"):
                    parts = parts[:i]
                    break
            if len(parts) < 2 or parts[1] == "cli":
                continue
            try:
                out.append((".".join(parts), path.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):   # pragma: no cover - an unreadable file: load_all finds it
                continue
        _SOURCES = out
    return _SOURCES


def _import_home(kind: str, name: str, table: Mapping) -> None:
    """Import the module that registers the ``kind`` ``name`` (into ``table``), where it can be found without
    importing anything else: ``jaxdp.studies.<name>`` for a study; for the others the modules whose source
    registers the name written out (``register_planner("name"``, either spelling), then, until the name is
    registered, those that call ``register_<kind>`` (or a helper named ``..register.._<kind>..``) and hold the name in
    quotes (a registration through a local decorator, a helper or a loop). Imports nothing when none is found; an error importing a candidate is left for
    ``load_all`` to raise."""
    if kind == "study":
        module = f"jaxdp.studies.{name.replace('-', '_')}"
        if not module.rpartition(".")[2].isidentifier():
            return
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):   # pragma: no cover
            found = False
        if found:
            importlib.import_module(module)
        return
    alt = "|".join(re.escape(s) for s in sorted({name, name.replace("-", "_"), name.replace("_", "-")}))
    written_out = re.compile(rf"register_{kind}\(\s*[\"'](?:{alt})[\"']")
    quoted = re.compile(rf"[\"'](?:{alt})[\"']")
    first = [m for m, text in _sources() if written_out.search(text)]
    registers = re.compile(rf"register\w*{kind}\w*\(")
    then = [m for m, text in _sources() if m not in first and registers.search(text) and quoted.search(text)]
    for module in first + then:
        try:
            importlib.import_module(module)
        except ImportError:   # pragma: no cover - load_all reports it
            return
        if name in table:
            return


def _get(table: dict, kind: str, name: str) -> Entry:
    if not isinstance(name, str):
        raise TypeError(f"name must be a string naming a {kind}, got {type(name).__name__}")
    if name not in table and not _LOADED:
        _import_home(kind, name, table)
    if name not in table:
        load_all()
    if name not in table:
        raise ValueError(f"unknown {kind} {name!r}; known: {', '.join(sorted(table)) or '(none)'}")
    return table[name]


def register_planner(name: str, description: str = ""):
    """Register ``fn(*, eps, delta, T, d, mode, **kw) -> Plan`` as ``jaxdp plan NAME``.

    Args:
        name: the registered name.
        description: one line for the listing.

    Returns:
        A decorator registering the planner function.
    """
    return _register(PLANNERS, "planner", name, description)


def get_planner(name: str) -> Entry:
    """The registered planner ``name`` (imports the module that registers it, or every subpackage where that
    module cannot be found by its source).

    Args:
        name: the planner's name (underscores; the hyphenated spelling is accepted as an alias).

    Returns:
        Its registry entry, whose ``fn`` is the planner function.

    Raises:
        ValueError: no planner of that name.
    """
    return _get(PLANNERS, "planner", name)


def register_study(name: str, *, defaults: dict, quick: Optional[dict] = None, description: str = ""):
    """Register ``build(cfg: dict) -> jaxdp.studies.Study`` as ``jaxdp study run NAME``.

    ``defaults`` lists every configurable key (``--set key=value`` may only
    change these); ``quick`` overrides some of them for ``--quick``.

    Args:
        name: the registered name.
        defaults: every configurable key and its default.
        quick: overrides of some defaults for ``--quick``.
        description: one line for the listing.

    Returns:
        A decorator registering the ``build`` function.
    """
    defaults = dict(defaults)
    inner = _register(STUDIES, "study", name, description, defaults=defaults, quick=dict(quick or {}))

    def deco(build):
        # a configuration kept by an older version lacks keys added since: they take today's defaults
        @functools.wraps(build)
        def with_defaults(cfg: dict):
            return build({**defaults, **dict(cfg)})

        inner(with_defaults)
        return build

    return deco


def get_study(name: str) -> Entry:
    """The registered study ``name`` (imports its module ``jaxdp.studies.<name with _ for ->``, or every
    subpackage where there is no such module or it does not register ``name``).

    Args:
        name: the study's name.

    Returns:
        Its registry entry; ``extra`` holds the study's ``defaults`` and ``quick`` configuration.

    Raises:
        ValueError: no study of that name.
    """
    return _get(STUDIES, "study", name)


def register_audit(name: str, description: str = "", claimed_eps: Optional[float] = None, broken: bool = False):
    """Register ``fn(*, quick: bool, seed: int) -> report`` (``str(report)`` is printed) as ``jaxdp audit NAME``.

    Args:
        name: the registered name.
        description: one line for the listing.
        claimed_eps: the ε the audited mechanism claims.
        broken: the mechanism is deliberately broken (the audit must flag it).

    Returns:
        A decorator registering the audit function.
    """
    return _register(AUDITS, "audit", name, description, claimed_eps=claimed_eps, broken=broken)


def get_audit(name: str) -> Entry:
    """The registered audit ``name`` (imports the module that registers it, or every subpackage where that
    module cannot be found by its source).

    Args:
        name: the audit's name (underscores; the hyphenated spelling is accepted as an alias).

    Returns:
        Its registry entry; ``extra`` holds ``claimed_eps`` and ``broken``.

    Raises:
        ValueError: no audit of that name.
    """
    return _get(AUDITS, "audit", name)


# --------------------------------------------------------------------------- learners

#: The problem classes a learner is registered for: ``experts`` (an expert index in ``[0, d)``, losses
#: in ``[0, 1]^d``), ``realizable-experts`` (experts learners built for a zero-loss expert), ``oco``
#: (a point of a convex domain, gradients from the problem) and ``bandits`` (an arm index, bandit
#: feedback: ``jaxdp.bandits``).
LEARNER_PROBLEMS = ("experts", "realizable-experts", "oco", "bandits")


_BUILD_REF = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")


@dataclasses.dataclass(frozen=True)
class ConformanceCase:
    """A quick conformance case of a registered learner: a small problem on which the learner passes
    :func:`jaxdp.testing.check_learner` (tests/test_learner_registry.py runs every learner's case).

    Attributes:
      build: ``build(d, T) -> (learner, adversary, problem, params_list, adv_params)``: the learner
        for ``d`` experts (or dimensions) sized for horizons up to ``T``, at least two parameter
        settings of one pytree structure (grid points: the check runs them with one compilation),
        and an adversary of the learner's problem class with its parameters. Either the function, or a
        reference ``"module:function"`` to it, imported on first use (:meth:`builder`): jaxdp's learners name
        a builder in their problem class's ``conformance`` module (``"jaxdp.experts.conformance:l2p_mw_case"``),
        so an algorithm module imports no adversary only for its test problem.
      d, T, seeds: the case's size (small: the check compiles one engine run per case).
      check: further keyword arguments of ``check_learner``: ``deterministic=True`` for a learner
        that ignores its key, ``loss_range`` for losses outside ``[0, 1]``, ...
    """

    build: Callable[[int, int], tuple] | str
    d: int = 4
    T: int = 16
    seeds: int = 2
    check: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        if isinstance(self.build, str):
            if not _BUILD_REF.match(self.build):
                raise ValueError(f"conformance case build={self.build!r}: a reference must be 'module:function' "
                                 "(a dotted module path, a colon, a function name)")
        elif not callable(self.build):
            raise TypeError(f"conformance case build must be a callable build(d, T) or a 'module:function' "
                            f"string, got {type(self.build).__name__}")

    def builder(self) -> Callable[[int, int], tuple]:
        """The ``build`` function; a ``"module:function"`` reference is imported here (``importlib``), on first
        use, like the registry's other lazy loads.

        Returns:
            The callable ``build(d, T)``.

        Raises:
            ValueError: the reference does not resolve (its module cannot be imported, or has no such
                function); the message names the case's reference.
        """
        if not isinstance(self.build, str):
            return self.build
        module, _, attr = self.build.partition(":")
        try:
            mod = importlib.import_module(module)
        except ImportError as e:
            raise ValueError(f"conformance case build={self.build!r}: cannot import module {module!r} "
                             f"({type(e).__name__}: {e})") from e
        fn = getattr(mod, attr, None)
        if not callable(fn):
            raise ValueError(f"conformance case build={self.build!r}: module {module!r} has no function "
                             f"{attr!r}" + ("" if fn is None else f" (it is a {type(fn).__name__})"))
        return fn

    def parts(self, d: Optional[int] = None, T: Optional[int] = None) -> tuple:
        """``(learner, adversary, problem, params_list, adv_params)`` at ``d``, ``T`` (default: the case's).

        Args:
            d: the number of experts, dimensions or arms (default: the case's ``d``).
            T: the horizon (default: the case's ``T``).

        Returns:
            The five values ``build(d, T)`` returns.

        Raises:
            ValueError: ``build`` is a reference that does not resolve, or returns another number of values.
        """
        parts = tuple(self.builder()(int(d or self.d), int(T or self.T)))
        if len(parts) != 5:
            raise ValueError("a conformance case's build(d, T) must return (learner, adversary, problem, "
                             f"params_list, adv_params), got {len(parts)} values")
        return parts


@dataclasses.dataclass(frozen=True)
class CompareBuiltin:
    """How ``jaxdp compare`` runs a registered learner as a built-in of its problem class.

    Attributes:
        make: ``make(d, T, T_max, eps, delta, problem) -> (learner, params, eps_certified)``: the learner (the
            same object for every ``T <= T_max`` and ε, so a sweep compiles once), its parameters at horizon
            ``T`` and privacy ``(eps, delta)`` (from its planner in ``certified`` mode, or its exact
            calibration), and the ε its ledger certifies (``inf`` for a non-private reference). Raises
            ``ValueError`` where the request cannot be certified.
        how: one line for the listing.
    """

    make: Callable[..., tuple]
    how: str = ""


@dataclasses.dataclass(frozen=True)
class LearnerEntry:
    """A registered learner (:func:`register_learner`); see docs/guide/add-a-learner.md.

    Attributes:
      name: the registry name (``jaxdp compare --learners NAME`` for a built-in).
      factory: the learner's constructor: shape-fixing arguments (``d``, ``T_max``, a problem, ...)
        -> :class:`jaxdp.Learner`, cached so equal arguments give the same object.
      params_type: the ``NamedTuple`` of its hyperparameters (``jnp`` arrays, traced).
      problem: one of :data:`LEARNER_PROBLEMS`.
      conformance: its quick :class:`ConformanceCase` (every registered learner has one).
      description, reference: one line each (the paper and theorem, where there is one).
      private: a differentially private algorithm (``False``: a non-private reference).
      planner: the registered planner (``jaxdp plan NAME``) whose plans configure it, if any.
      plans: the ``Plan.algorithm`` names whose parameters it takes (default: ``(planner,)``).
      from_plan: ``plan -> params_type`` (the one conversion; see :meth:`params_from_plan`).
      static: ``plan -> dict`` of the constructor's keyword arguments the plan fixes (a tree's size).
      compare: how ``jaxdp compare`` runs it as a built-in (``None``: not a built-in).
    """

    name: str
    factory: Callable[..., Any]
    params_type: type
    problem: str
    conformance: Optional[ConformanceCase]
    description: str
    private: bool
    reference: str = ""
    planner: Optional[str] = None
    plans: tuple = ()
    from_plan: Optional[Callable[[Any], Any]] = None
    static: Optional[Callable[[Any], dict]] = None
    compare: Optional[CompareBuiltin] = None

    def _check_plan(self, plan) -> None:
        if canonical_name(plan.algorithm) not in {canonical_name(p) for p in self.plans}:
            want = ", ".join(repr(a) for a in self.plans) or "none (it has no planner)"
            raise ValueError(f"learner {self.name!r} takes the parameters of plans {want}, got a plan of "
                             f"{plan.algorithm!r}")

    def params_from_plan(self, plan):
        """The learner's typed, validated ``params_type`` for ``plan`` (a :class:`jaxdp.privacy.accounting.Plan` of its planner).

        The one way a plan becomes parameters: ``Plan.to_params()`` and the older helpers
        (``jaxdp.experts.params_from_plan``, ``jaxdp.oco.l2p_rmw_from_plan``) call it.
        """
        self._check_plan(plan)
        return self.from_plan(plan)

    def static_from_plan(self, plan) -> dict:
        """The constructor's keyword arguments that ``plan`` fixes (empty for most learners)."""
        self._check_plan(plan)
        return dict(self.static(plan)) if self.static is not None else {}

    def learner_from_plan(self, plan, *args, **kw) -> tuple:
        """``(factory(*args, **static, **kw), params_from_plan(plan))``: ``kw`` override the plan's
        static arguments (e.g. ``capacity=T_max``)."""
        return self.factory(*args, **dict(self.static_from_plan(plan), **kw)), self.params_from_plan(plan)

    def certified_plan(self, **kw):
        """Its planner's plan in ``certified`` mode; ``ValueError`` if it cannot certify the request."""
        if self.planner is None:
            raise ValueError(f"learner {self.name!r} has no planner")
        plan = get_planner(self.planner).fn(mode="certified", **kw)
        if not plan.certified:
            raise ValueError(f"{self.planner}: the planner cannot certify eps={kw.get('eps')}, "
                             f"delta={kw.get('delta')}")
        return plan


LEARNERS: dict[str, LearnerEntry] = _Names()


def register_learner(name: str, *, factory: Callable[..., Any], params_type: type, problem: str,
                     conformance: Optional[ConformanceCase], description: str, private: bool, reference: str = "",
                     planner: Optional[str] = None, plans: tuple = (), from_plan: Optional[Callable] = None,
                     static: Optional[Callable] = None, compare: Optional[CompareBuiltin] = None) -> LearnerEntry:
    """Register a learner under ``name`` (called next to its definition, at import time). Registering the same
    factory again under the same name is a no-op; another factory under a taken name is an error.

    Args:
        name: the learner's name.
        factory: builds the :class:`jaxdp.Learner`.
        params_type: the learner's hyperparameter ``NamedTuple``.
        problem: one of :data:`LEARNER_PROBLEMS`.
        conformance: its quick :class:`ConformanceCase` (or ``None``).
        description: one line for listings.
        private: whether the learner is differentially private.
        reference: the paper (tag and theorem) it implements.
        planner: the registered planner that configures it.
        plans: plan algorithms it takes besides its planner's.
        from_plan: ``plan -> params_type`` (required with a planner or ``plans``).
        static: ``plan -> constructor kwargs``.
        compare: makes it a ``jaxdp compare`` built-in of its problem class.

    Returns:
        The :class:`LearnerEntry`.

    Raises:
        ValueError: another factory is registered under ``name``, or an argument is invalid.
    """
    if problem not in LEARNER_PROBLEMS:
        raise ValueError(f"learner {name!r}: problem must be one of {list(LEARNER_PROBLEMS)}, got {problem!r}")
    name = canonical_name(name)
    planner = canonical_name(planner) if planner else planner
    plans = tuple(dict.fromkeys(((planner,) if planner else ()) + tuple(plans)))
    if plans and from_plan is None:
        raise ValueError(f"learner {name!r}: a learner configured by plans {list(plans)} needs from_plan")
    if name in LEARNERS:
        if LEARNERS[name].factory is not factory:
            raise ValueError(f"learner {name!r} registered twice")
        return LEARNERS[name]
    entry = LearnerEntry(name=name, factory=factory, params_type=params_type, problem=problem,
                         conformance=conformance, description=description, private=bool(private),
                         reference=reference, planner=planner, plans=plans, from_plan=from_plan, static=static,
                         compare=compare)
    LEARNERS[name] = entry
    return entry


def get_learner(name: str) -> LearnerEntry:
    """The registered learner ``name``; if it is not registered yet, imports the module that registers it, or
    every subpackage where that module cannot be found by its source.

    Args:
        name: the learner's name (underscores; the hyphenated spelling is accepted as an alias).

    Returns:
        Its :class:`LearnerEntry`.

    Raises:
        ValueError: no learner of that name.
    """
    if isinstance(name, str) and name not in LEARNERS and not _LOADED:
        _import_home("learner", name, LEARNERS)
    if name not in LEARNERS:
        load_all()
    if name not in LEARNERS:
        raise ValueError(f"unknown learner {name!r}; known: {', '.join(sorted(LEARNERS)) or '(none)'}")
    return LEARNERS[name]


def learners(problem: Optional[str] = None) -> list[LearnerEntry]:
    """Every registered learner (of ``problem``), in registration order.

    Args:
        problem: a problem class (:data:`LEARNER_PROBLEMS`), or ``None`` for all.

    Returns:
        The :class:`LearnerEntry` list.
    """
    load_all()
    return [e for e in LEARNERS.values() if problem is None or e.problem == problem]


def learner_for_plan(plan) -> LearnerEntry:
    """The registered learner that takes the parameters of ``plan`` (by ``plan.algorithm``).

    Args:
        plan: a :class:`jaxdp.privacy.accounting.Plan`.

    Returns:
        The :class:`LearnerEntry`.

    Raises:
        ValueError: no registered learner takes the plan's algorithm.
    """
    def find():
        algo = canonical_name(plan.algorithm)
        return [e for e in LEARNERS.values() if algo in {canonical_name(p) for p in e.plans}]

    found = find()
    if not found:
        load_all()
        found = find()
    if not found:
        raise ValueError(f"no registered learner takes the parameters of a {plan.algorithm!r} plan")
    if len({(e.from_plan, e.params_type) for e in found}) > 1:
        raise ValueError(f"several learners take {plan.algorithm!r} plans ({', '.join(e.name for e in found)}): "
                         "name one, plan.to_params(learner=NAME)")
    return found[0]


