"""Every registered planner (all teams), at a small grid of requests, in ``certified`` mode.

A planner must either return a ``jaxdp.privacy.accounting.Plan`` whose conditions all
hold and whose certified (ε, δ) is within the request, or raise a ``ValueError``
saying why nothing certifies it. Planners that need arguments beyond
``eps, delta, T, d, mode`` (a ``TypeError`` for a missing keyword) are skipped
with the message. Unknown modes and ε <= 0 must raise ``ValueError`` naming the parameter.
"""
import importlib
import math
import pkgutil

import pytest

import jaxdp
from jaxdp.privacy.accounting import Plan
from jaxdp.registry import PLANNERS

REQUESTS = [
    dict(eps=1.0, delta=1e-5, T=64, d=4),
    dict(eps=0.2, delta=1e-6, T=1000, d=16),
    dict(eps=4.0, delta=1e-3, T=16, d=2),
]


def _import_everything() -> dict[str, str]:
    """Import every jaxdp subpackage and study module (as ``load_all`` does) and collect failures."""
    errors = {}
    names = [f"jaxdp.{m.name}" for m in pkgutil.iter_modules(jaxdp.__path__) if m.ispkg]
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as e:  # noqa: BLE001 - reported by test_every_subpackage_imports
            errors[name] = f"{type(e).__name__}: {e}"
    try:
        import jaxdp.studies as st

        for m in pkgutil.iter_modules(st.__path__):
            try:
                importlib.import_module(f"jaxdp.studies.{m.name}")
            except Exception as e:  # noqa: BLE001
                errors[f"jaxdp.studies.{m.name}"] = f"{type(e).__name__}: {e}"
    except Exception as e:  # noqa: BLE001
        errors["jaxdp.studies"] = f"{type(e).__name__}: {e}"
    return errors


IMPORT_ERRORS = _import_everything()
NAMES = sorted(PLANNERS)


_UNCLEAR = {"math domain error", "math range error", "division by zero", "float division by zero"}


def _missing_argument(err: TypeError) -> bool:
    msg = str(err)
    return "required" in msg and "argument" in msg


def _call(fn, **kw):
    try:
        return fn(**kw)
    except TypeError as e:
        if _missing_argument(e):
            pytest.skip(f"planner needs more than eps/delta/T/d/mode: {e}")
        raise


def test_every_subpackage_imports():
    assert not IMPORT_ERRORS, "modules failed to import (their planners are not registered):\n" + "\n".join(
        f"  {k}: {v}" for k, v in IMPORT_ERRORS.items())


def test_some_planners_registered():
    assert {"laplace", "gaussian", "tree_aggregation", "above_threshold", "advanced_composition"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_planner_certified_mode(name):
    entry = PLANNERS[name]
    assert entry.description, f"planner {name!r} has no description"
    outcomes = []
    for req in REQUESTS:
        try:
            plan = _call(entry.fn, mode="certified", **req)
        except ValueError as e:
            assert str(e), f"{name}: ValueError without a message for {req}"
            assert str(e) not in _UNCLEAR, (
                f"{name} {req}: raised a bare {str(e)!r} from inside a formula instead of a clear error")
            outcomes.append(f"ValueError: {e}")
            continue
        assert isinstance(plan, Plan), f"{name} returned {type(plan).__name__}, not Plan"
        assert plan.mode == "certified", f"{name}: plan.mode={plan.mode!r} for mode='certified'"
        # the recorded request may be stricter (e.g. delta=0 for a pure-DP mechanism), never looser
        assert plan.eps <= req["eps"] * (1 + 1e-12) and plan.delta <= req["delta"] * (1 + 1e-12), (
            f"{name}: plan records the request as (eps={plan.eps}, delta={plan.delta}), asked {req}")
        failed = [k for k, v in plan.conditions.items() if not bool(v)]
        assert not failed, f"{name} {req}: conditions fail in certified mode: {failed}\n{plan.format()}"
        assert math.isfinite(plan.eps_certified), f"{name} {req}: eps_certified={plan.eps_certified}"
        assert plan.certified, f"{name} {req}: certified mode does not certify the request\n{plan.format()}"
        assert plan.eps_certified <= req["eps"] * (1 + 1e-9) and plan.delta_certified <= req["delta"] * (1 + 1e-9)
        assert isinstance(plan.params, dict) and plan.params, f"{name}: empty params"
        assert isinstance(plan.format(), str)
        outcomes.append("ok")
    assert outcomes


@pytest.mark.parametrize("name", NAMES)
def test_planner_rejects_bad_mode_and_eps(name):
    fn = PLANNERS[name].fn
    req = REQUESTS[0]
    with pytest.raises(ValueError, match="mode"):
        _call(fn, **{**req, "mode": "no-such-mode"})
    with pytest.raises(ValueError, match="eps"):
        _call(fn, **{**req, "eps": -1.0, "mode": "certified"})
