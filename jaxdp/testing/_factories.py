"""Factories for ``jaxdp compare``: their signature (:func:`check_factory_signature`), calling them
(:func:`call_factory`) and their conformance (:func:`check_factory`).

Import these from ``jaxdp.testing``."""
from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable, Optional, Sequence

from ..core import Adversary, Learner, Problem
from ._common import _fail
from ._learner import check_learner


@dataclasses.dataclass
class FactoryReport:
    """What :func:`check_factory` found: the learner, its params at each checked grid point, the
    factory's claimed ε (``None`` if it claims none) and whether it is deterministic.

    Attributes:
        learner: the learner the factory returns (the same object at every grid point).
        params: its params at each checked grid point.
        claimed_eps: the factory's claimed ε (``None`` if it claims none).
        deterministic: whether the learner ignores its key.
        checks: the metrics of the checks.
    """

    learner: Learner
    params: list
    claimed_eps: Optional[float]
    deterministic: bool
    checks: list


#: the arguments a ``jaxdp compare`` factory may take (by these names; any subset, or ``**kwargs``)
FACTORY_ARGS = ("d", "T", "T_max", "eps", "delta")
_FACTORY_ALIASES = {"n": "d", "n_experts": "d", "dim": "d", "k": "d", "horizon": "T", "t": "T", "n_rounds": "T",
                    "rounds": "T", "epsilon": "eps", "privacy": "eps", "t_max": "T_max", "tmax": "T_max",
                    "max_T": "T_max", "Delta": "delta"}


def check_factory_signature(factory: Callable) -> None:
    """Refuse a factory that ``jaxdp compare`` cannot call: every parameter without a default must be one of
    :data:`FACTORY_ARGS` (``d, T, T_max, eps, delta``), passed by keyword. Raises ``TypeError`` listing the
    allowed names (and the likely rename). A factory whose signature cannot be read is accepted.

    Args:
        factory: the factory.

    Raises:
        TypeError: a parameter without a default is not one of :data:`FACTORY_ARGS`.
    """
    try:
        sig = inspect.signature(factory)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return
    bad = []
    for prm in sig.parameters.values():
        if prm.kind in (prm.VAR_POSITIONAL, prm.VAR_KEYWORD) or prm.default is not prm.empty:
            continue
        if prm.kind == prm.POSITIONAL_ONLY or prm.name not in FACTORY_ARGS:
            bad.append(prm)
    if bad:
        name = getattr(factory, "__qualname__", None) or getattr(factory, "__name__", None) or repr(factory)
        hints = [f"{p.name} -> {_FACTORY_ALIASES.get(p.name, _FACTORY_ALIASES.get(p.name.lower()))}"
                 for p in bad if p.name not in FACTORY_ARGS
                 and _FACTORY_ALIASES.get(p.name, _FACTORY_ALIASES.get(p.name.lower()))]
        posonly = [p.name for p in bad if p.kind == p.POSITIONAL_ONLY and p.name in FACTORY_ARGS]
        raise TypeError(
            f"factory {name}{sig} has required parameter(s) {', '.join(p.name for p in bad)} that jaxdp cannot "
            f"pass: a factory receives, by keyword, any of {', '.join(FACTORY_ARGS)} (or **kwargs). Rename them "
            + (f"({'; '.join(hints)}) " if hints else "")
            + "or give them defaults"
            + (f"; {', '.join(posonly)} must not be positional-only (drop the '/')" if posonly else ""))


def call_factory(factory: Callable, *, d: int, T: int, eps: float, delta: float,
                 T_max: Optional[int] = None) -> tuple[Learner, Any]:
    """Call ``factory`` with the arguments it accepts among ``d, T, T_max, eps, delta``; return
    ``(learner, params)``.

    ``T`` is the horizon the run is tuned for, ``T_max >= T`` the largest horizon of the sweep
    (size static arrays, e.g. a tree, by it: the learner must not depend on ``T``).
    A factory may return a ``Learner`` (``params = None``: its hyperparameters are
    closed over) or a ``(Learner, params)`` pair. A factory with a required parameter of another
    name is refused first (:func:`check_factory_signature`).

    Args:
        factory: the factory.
        d: the number of experts (or the dimension).
        T: the horizon the run is tuned for.
        eps, delta: the privacy parameters.
        T_max: the largest horizon of the sweep (default ``T``).

    Returns:
        ``(learner, params)``.

    Raises:
        TypeError: the factory has a required parameter of another name.
    """
    if not callable(factory):
        raise TypeError(f"factory must be callable, got {type(factory).__name__}")
    check_factory_signature(factory)
    try:
        sig = inspect.signature(factory)
        accepts_kw = any(p.kind == p.VAR_KEYWORD for p in sig.parameters.values())
        names = set(sig.parameters)
    except (TypeError, ValueError):  # pragma: no cover - builtins
        accepts_kw, names = True, set()
    all_kw = dict(d=d, T=T, T_max=T if T_max is None else T_max, eps=eps, delta=delta)
    kw = {k: v for k, v in all_kw.items() if accepts_kw or k in names}
    out = factory(**kw)
    if isinstance(out, Learner):
        return out, None
    if isinstance(out, tuple) and len(out) == 2 and isinstance(out[0], Learner):
        return out[0], out[1]
    raise TypeError(f"the factory must return a jaxdp.Learner or a (Learner, params) pair, got {type(out).__name__}")


def check_factory(factory: Callable, adversary: Adversary, problem: Problem, adv_params: Any, *, d: int,
                  T: int, eps: Sequence[float], delta: float, deterministic: Optional[bool] = None,
                  seeds: int = 4) -> FactoryReport:
    """Conformance of a ``jaxdp compare`` factory (module docstring).

    The factory is called at the grid points ``(T, eps[0])``, ``(T // 2, eps[-1])``
    (two settings even if one ε is given; ``T_max = T``); the learners it returns must be the
    same object, and it must pass :func:`check_learner` over the params. A
    factory that sets ``deterministic = True`` (attribute) skips the
    key-sensitivity check.

    Args:
        factory: the ``jaxdp compare`` factory.
        adversary: the adversary.
        problem: the problem.
        adv_params: the adversary's params.
        d: the number of experts.
        T: the horizon.
        eps: the ε values to call the factory with (at least one).
        delta: the δ passed to the factory.
        deterministic: the learner ignores its key (default: the factory's ``deterministic`` attribute).
        seeds: seeds per run.

    Returns:
        A :class:`FactoryReport`.

    Raises:
        ConformanceError: the factory or its learner fails a check.
    """
    eps = list(eps)
    grid = [(T, eps[0]), (max(2, T // 2), eps[-1] if len(eps) > 1 else eps[0] * 2)]
    learners, params = [], []
    for T_i, e in grid:
        lrn, p = call_factory(factory, d=d, T=T_i, eps=e, delta=delta, T_max=T)
        learners.append(lrn)
        params.append(p)
    if learners[0] != learners[1]:
        _fail("recompiles", "the factory returned a different Learner object for another (T, eps): every grid "
                            "point would compile again. Return the same Learner (cache its constructor on static "
                            "arguments such as d, e.g. functools.lru_cache) and put T- and eps-dependent values "
                            "in a params pytree: return (learner, params)")
    if deterministic is None:
        deterministic = bool(getattr(factory, "deterministic", False))
    claimed = getattr(factory, "claimed_eps", None)
    check_learner(learners[0], adversary, problem, params, adv_params, T=min(T, 64), seeds=seeds,
                  deterministic=deterministic, d=d)
    return FactoryReport(learner=learners[0], params=params, claimed_eps=None if claimed is None else float(claimed),
                         deterministic=deterministic,
                         checks=["shapes", "host callback", "key reuse", "impure step", "recompiles", "finite",
                                 "deterministic", "key"])
