"""Registries behind the command line: studies, planners and audits.

Modules register themselves at import time with the decorators below;
``load_all()`` imports every subpackage so the CLI sees all of them. A module
owns its entries; nothing here knows about any paper.
"""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any, Callable, Optional

__all__ = [
    "Plan", "PLANNERS", "STUDIES", "AUDITS", "register_planner", "register_study", "register_audit",
    "get_planner", "get_study", "get_audit", "load_all", "PLAN_MODES",
]

PLAN_MODES = ("paper", "certified", "rate", "retuned")


@dataclasses.dataclass
class Plan:
    """What a planner returns: parameters for an algorithm and the privacy they certify.

    * ``params``: name -> value (host floats/ints), ready to build the algorithm's ``Params``.
    * ``eps``, ``delta``: the requested (nominal) privacy.
    * ``eps_certified``, ``delta_certified``: what the paper's own privacy
      statement, with its explicit constants, certifies for ``params``
      (``inf`` where nothing is certified).
    * ``mode``: one of ``paper``, ``certified``, ``rate``, ``retuned`` (spec §0.4).
    * ``conditions``: each side condition of the theorem -> whether it holds.
    * ``reference``: paper file and theorem, e.g. ``"lazy-private-online-learning.txt Thm 3.10"``.
    * ``notes``: anything a user must know (degenerate regimes, clipping).
    """

    algorithm: str
    mode: str
    params: dict[str, Any]
    eps: float
    delta: float
    eps_certified: float
    delta_certified: float
    conditions: dict[str, bool] = dataclasses.field(default_factory=dict)
    reference: str = ""
    notes: list[str] = dataclasses.field(default_factory=list)

    @property
    def certified(self) -> bool:
        """The request is certified: every condition holds and the certified (ε, δ) is within the request."""
        return (all(self.conditions.values()) and self.eps_certified <= self.eps * (1 + 1e-9)
                and self.delta_certified <= self.delta * (1 + 1e-9) + 1e-300)

    def format(self) -> str:
        lines = [f"{self.algorithm}  (mode={self.mode})  {self.reference}".rstrip()]
        lines.append(f"  requested   eps={self.eps:.6g}  delta={self.delta:.3g}")
        lines.append(f"  certified   eps={self.eps_certified:.6g}  delta={self.delta_certified:.3g}"
                     f"  -> {'OK' if self.certified else 'NOT certified at the requested level'}")
        lines.append("  parameters:")
        for k, v in self.params.items():
            lines.append(f"    {k:<14} {v:.6g}" if isinstance(v, float) else f"    {k:<14} {v}")
        if self.conditions:
            lines.append("  conditions:")
            for k, v in self.conditions.items():
                lines.append(f"    [{'x' if v else ' '}] {k}")
        for n in self.notes:
            lines.append(f"  note: {n}")
        return "\n".join(lines)


@dataclasses.dataclass
class Entry:
    name: str
    fn: Callable[..., Any]
    description: str
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


PLANNERS: dict[str, Entry] = {}
STUDIES: dict[str, Entry] = {}
AUDITS: dict[str, Entry] = {}


def _register(table: dict, kind: str, name: str, description: str, **extra):
    def deco(fn):
        if name in table and table[name].fn is not fn:
            raise ValueError(f"{kind} {name!r} registered twice")
        table[name] = Entry(name, fn, description, extra)
        return fn

    return deco


def register_planner(name: str, description: str = ""):
    """Register ``fn(*, eps, delta, T, d, mode, **kw) -> Plan`` as ``jaxdp plan NAME``."""
    return _register(PLANNERS, "planner", name, description)


def register_study(name: str, *, defaults: dict, quick: Optional[dict] = None, description: str = ""):
    """Register ``build(cfg: dict) -> jaxdp.studies.Study`` as ``jaxdp study run NAME``.

    ``defaults`` lists every configurable key (``--set key=value`` may only
    change these); ``quick`` overrides some of them for ``--quick``.
    """
    return _register(STUDIES, "study", name, description, defaults=dict(defaults), quick=dict(quick or {}))


def register_audit(name: str, description: str = "", claimed_eps: Optional[float] = None, broken: bool = False):
    """Register ``fn(*, quick: bool, seed: int) -> report`` (``str(report)`` is printed) as ``jaxdp audit NAME``."""
    return _register(AUDITS, "audit", name, description, claimed_eps=claimed_eps, broken=broken)


_LOADED = False


def load_all() -> None:
    """Import every ``jaxdp`` subpackage and every module under ``jaxdp.studies`` (populates the registries)."""
    global _LOADED
    if _LOADED:
        return
    import jaxdp

    for mod in pkgutil.iter_modules(jaxdp.__path__):
        if mod.ispkg:
            importlib.import_module(f"jaxdp.{mod.name}")
    import jaxdp.studies as st

    for mod in pkgutil.iter_modules(st.__path__):
        importlib.import_module(f"jaxdp.studies.{mod.name}")
    _LOADED = True


def _get(table: dict, kind: str, name: str) -> Entry:
    load_all()
    if name not in table:
        raise ValueError(f"unknown {kind} {name!r}; known: {', '.join(sorted(table)) or '(none)'}")
    return table[name]


def get_planner(name: str) -> Entry:
    return _get(PLANNERS, "planner", name)


def get_study(name: str) -> Entry:
    return _get(STUDIES, "study", name)


def get_audit(name: str) -> Entry:
    return _get(AUDITS, "audit", name)
