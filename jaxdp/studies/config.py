"""Resolving and checking a study's configuration before a run (defaults, ``--quick``, ``--set``; the declared
parameters and every grid point's ``check_point``).
"""
from __future__ import annotations

import difflib
import json
from typing import Any, Mapping, Optional

import numpy as np

from .spec import PARAM_SPECS, Param, Study, _parse_value, inferred_params

__all__ = ["resolve_config", "check_params", "validate_study"]


def check_params(study: str, cfg: Mapping[str, Any], spec: Optional[Mapping[str, Param]] = None) -> None:
    """Check every declared parameter of a study's configuration.

    A study that declares nothing gets :func:`inferred_params` of its registered defaults.

    Args:
        study: the study's registered name (whose declared parameters are looked up).
        cfg: the configuration; keys without a declaration are not checked.
        spec: the declarations to check against instead (``name -> Param``).

    Raises:
        ValueError: a value outside its declaration, naming the parameter and the allowed range.
    """
    if spec is None:
        spec = PARAM_SPECS.get(study)
    if spec is None:
        from .. import registry

        entry = registry.STUDIES.get(study)
        spec = inferred_params(entry.extra["defaults"]) if entry is not None else {}
    for key, p in spec.items():
        if key in cfg:
            p.validate(study, key, cfg[key])


def resolve_config(name: str, defaults: Mapping, quick_overrides: Mapping, quick: bool,
                   overrides: Mapping[str, Any]) -> dict:
    """Defaults, then ``--quick`` overrides, then user overrides (strings parsed by the default's type).

    The result is checked against the study's declared parameters (:func:`declare_params`).

    Args:
        name: the study's registered name.
        defaults: the study's default configuration; its keys are the allowed parameters.
        quick_overrides: the smaller sizes applied when ``quick`` is set.
        quick: apply ``quick_overrides`` (the result records it as ``cfg["quick"]``).
        overrides: the user's values (``--set key=value``); a string is parsed by the type of the
            default (``"1,2,4"`` for a list of ints, ``"inf"`` for a float, ...).

    Returns:
        The resolved configuration, a new dict.

    Raises:
        ValueError: an unknown key (the message lists the allowed ones), a string that does not parse
            or a value outside its declared range.
    """
    cfg = dict(defaults)
    if quick:
        cfg.update(quick_overrides)
    cfg["quick"] = bool(quick)
    for k, v in overrides.items():
        if k not in defaults:
            near = difflib.get_close_matches(k, list(defaults), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ValueError(f"unknown parameter {k!r} for study {name!r}{hint}; allowed: "
                             f"{', '.join(sorted(defaults))}")
        if isinstance(v, str):
            try:
                v = _parse_value(v, defaults[k])
            except ValueError as e:
                spec = PARAM_SPECS.get(name, {}).get(k)
                allowed = f"; {k} must be {spec.describe()}" if spec is not None else ""
                raise ValueError(f"{name}: bad value for {k}: {e}{allowed}") from None
        cfg[k] = v
    check_params(name, cfg)
    return cfg


def validate_study(study: Study) -> None:
    """The single validation pass before a run: declared parameters, then every grid point's
    ``check_point`` (planner calls).

    Args:
        study: the built study (its name, configuration, points and ``check_point``).

    Raises:
        ValueError: a parameter outside its declaration, or a point whose ``check_point`` raises
            (the message names the point).
    """
    check_params(study.name, study.config)
    if study.check_point is None:
        return
    for p in study.points:
        try:
            study.check_point(p)
        except (ValueError, TypeError, ArithmeticError) as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ValueError(f"{study.name}: grid point {json.dumps(_jsonable(p), default=str)} cannot run: {msg}") \
                from None


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


def _normalized(x) -> Any:
    return json.loads(json.dumps(_jsonable(x), sort_keys=True, default=str))
