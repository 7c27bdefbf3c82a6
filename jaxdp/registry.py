"""Registries behind the command line: studies, planners and audits.

``Plan`` is defined in ``jaxdp.accounting.plan`` and re-exported here. Modules register
themselves at import time with the decorators below;
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


# ``Plan`` lives with the accounting that certifies it (jaxdp.accounting.plan); re-exported here.
# Imported last: jaxdp.accounting's planners import ``register_planner`` from this module.
from .accounting.plan import PLAN_MODES, Plan  # noqa: E402
