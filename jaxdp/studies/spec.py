"""The declarations of a study, before anything runs: :class:`Study`, :class:`StudyResult`, the parameter
declarations (:class:`Param`) and the ``--set`` value parser; re-exported by :mod:`jaxdp.studies.framework`.
"""
from __future__ import annotations

import dataclasses
import math
import pathlib
from typing import Any, Callable, Mapping, Optional

import numpy as np

__all__ = ["Study", "StudyResult", "StudyInterrupted", "Param", "declare_params", "inferred_params", "PARAM_SPECS",
           "RunFn"]

RunFn = Callable[[list, np.ndarray], list]


class StudyInterrupted(KeyboardInterrupt):
    """Ctrl-C was pressed; finished chunks are kept and a rerun resumes."""


@dataclasses.dataclass
class Study:
    """A named grid × seeds experiment (see :mod:`jaxdp.studies.framework`).

    ``run(points, seeds) -> [ {metric: array(len(seeds))} for each point ]``
    must be deterministic given the seed indices (use ``jaxdp.core.seed_keys``).
    ``analyze(df) -> {name: DataFrame}`` (the first table is printed);
    ``plot(df, outdir) -> [png paths]``. ``check_point(point)`` (optional) makes
    every host-side call a run will make for that point (planners) and raises
    ``ValueError`` for a point that cannot run; it is called for every point
    before anything starts. ``export_fn(point) -> (jitted_fn, example_args)``
    (optional) gives the compiled function of one grid point to
    ``benchmarks/harness/export.py``, which otherwise records it by running the point.

    Attributes:
        name: the study's name (the manifest's ``study``; a rerun must match it).
        points: the grid, one dict of JSON scalars per point (the key ``seed`` is reserved).
        seeds: seeds per point (``>= 1``); seed indices ``0 .. seeds - 1``.
        run: ``run(points, seeds) -> [{metric: array(len(seeds))} for each point]``, given the
            points of one chunk and its seed indices.
        group_by: point keys whose equal values put points in the same chunks (one compiled
            function per group, typically).
        analyze: ``analyze(df) -> {name: DataFrame}`` on the merged per-seed results; each table is
            written as ``{name}.csv``.
        plot: ``plot(df, outdir) -> [png paths]``.
        config: the resolved configuration, recorded in the manifest and hashed into chunk names.
        seeds_per_chunk: seed indices per chunk (default all ``seeds``).
        points_per_chunk: at most this many points of one group per chunk.
        description: one line for listings and the manifest.
        check_point: ``check_point(point)`` makes the host-side calls of a point and raises
            ``ValueError`` for one that cannot run.
        export_fn: ``export_fn(point) -> (jitted_fn, example_args)`` for ``benchmarks/harness/export.py``.

    Raises:
        ValueError: ``seeds`` not a positive integer, an empty grid, or a point using the key ``seed``.
        TypeError: a point value that is not a JSON scalar.
    """

    name: str
    points: list
    seeds: int
    run: RunFn
    group_by: tuple = ()
    analyze: Optional[Callable[[Any], dict]] = None
    plot: Optional[Callable[[Any, pathlib.Path], list]] = None
    config: dict = dataclasses.field(default_factory=dict)
    seeds_per_chunk: Optional[int] = None
    points_per_chunk: int = 64
    description: str = ""
    check_point: Optional[Callable[[dict], Any]] = None
    export_fn: Optional[Callable[[dict], tuple]] = None

    def __post_init__(self):
        if not isinstance(self.seeds, (int, np.integer)) or isinstance(self.seeds, bool) or self.seeds < 1:
            raise ValueError(f"seeds must be a positive integer, got {self.seeds!r}")
        if not self.points:
            raise ValueError(f"study {self.name!r} has an empty grid")
        for p in self.points:
            for k, v in p.items():
                if k == "seed":
                    raise ValueError("grid points may not use the column name 'seed'")
                if not isinstance(v, (str, int, float, bool, np.integer, np.floating)) and v is not None:
                    raise TypeError(f"grid point values must be JSON scalars, got {k}={v!r}")


@dataclasses.dataclass
class StudyResult:
    """What :func:`~jaxdp.studies.runner.run_study` returns.

    Attributes:
        df: the per-seed results of every chunk done so far (a ``pandas.DataFrame``: the point's
            keys, ``point``, ``seed`` and the metrics), sorted by point and seed.
        tables: the study's analysis tables, ``{name: DataFrame}`` (empty unless this process merged).
        plots: the paths of the plots written (empty unless this process merged).
        out_dir: the results directory.
        chunks_run: chunks this call computed.
        chunks_skipped: chunks already done when the call started.
        complete: every chunk is done.
        merged: this process wrote ``results.csv``, the tables and the final manifest.
        damaged: the names of the chunks found damaged and recomputed.
        process: ``(index, count, source)`` of this process (:func:`~jaxdp.studies.runner.process_identity`).
    """

    df: Any
    tables: dict
    plots: list
    out_dir: pathlib.Path
    chunks_run: int
    chunks_skipped: int
    complete: bool = True
    merged: bool = True
    damaged: list = dataclasses.field(default_factory=list)
    process: tuple = (0, 1, "single")


# --------------------------------------------------------------------------- parameters


@dataclasses.dataclass(frozen=True)
class Param:
    """The declared type and range of one study parameter.

    ``kind``: ``"int"``, ``"float"``, ``"str"`` or ``"bool"``. ``many``: a list
    of such values (a Python list, or a comma-separated string). Numbers must be
    finite unless ``allow_inf``; ``lo``/``hi`` bound them (``lo_open``/``hi_open``
    for strict bounds); ``choices`` lists the allowed strings; ``check(value)``
    returns an error text for anything else the theorems need.

    Attributes:
        kind: ``"int"``, ``"float"``, ``"str"`` or ``"bool"``.
        many: the value is a list of such values (or a comma-separated string).
        lo, hi: the bounds of a number (``None``: unbounded).
        lo_open, hi_open: the bounds are strict.
        choices: the allowed strings.
        allow_inf: a number may be infinite.
        allow_empty: a list may be empty.
        check: ``check(value) -> error text or None``, an extra check per value.
        help: what the parameter means, appended to the error message.
    """

    kind: str
    many: bool = False
    lo: Optional[float] = None
    hi: Optional[float] = None
    lo_open: bool = False
    hi_open: bool = False
    choices: Optional[tuple] = None
    allow_inf: bool = False
    allow_empty: bool = False
    check: Optional[Callable[[Any], Optional[str]]] = None
    help: str = ""

    def bounds(self) -> str:
        """The bounds of a number as text (``"in [0, 1)"``, ``">= 1"``), or ``""`` where it has none."""
        if self.lo is not None and self.hi is not None:
            return f"in {'(' if self.lo_open else '['}{_num(self.lo)}, {_num(self.hi)}{')' if self.hi_open else ']'}"
        if self.lo is not None:
            return f"{'>' if self.lo_open else '>='} {_num(self.lo)}"
        return f"{'<' if self.hi_open else '<='} {_num(self.hi)}" if self.hi is not None else ""

    def describe(self) -> str:
        """What the parameter allows, in the words of an error message."""
        what = {"int": "an integer", "float": "a finite number" if not self.allow_inf else "a number",
                "str": "a string", "bool": "true or false"}[self.kind]
        if self.choices is not None:
            what = f"one of {', '.join(map(str, self.choices))}"
        if self.bounds():
            what += f" {self.bounds()}"
        if self.help:
            what += f" ({self.help})"
        if self.many:
            return f"a {'' if self.allow_empty else 'non-empty '}list of values, each {what}"
        return what

    def _one(self, v: Any) -> Optional[str]:
        if self.kind == "bool":
            return None if isinstance(v, (bool, np.bool_)) else "not a boolean"
        if self.kind == "str":
            if not isinstance(v, str):
                return "not a string"
            if self.choices is not None and v not in self.choices:
                return f"unknown value {v!r}"
            return None
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            return "not a number"
        if self.kind == "int" and not isinstance(v, (int, np.integer)):
            if not (isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer()):
                return "not an integer"
        if math.isnan(v):
            return "NaN"
        if math.isinf(v) and not self.allow_inf:
            return "not finite"
        if self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo)):
            return "out of range"
        if self.hi is not None and (v > self.hi or (self.hi_open and v == self.hi)):
            return "out of range"
        return None

    def validate(self, study: str, key: str, value: Any) -> None:
        vals = value
        if self.many:
            if isinstance(value, str):   # a comma-separated list, parsed as --set parses one
                try:
                    vals = _parse_value(value, [{"int": 0, "float": 0.0, "bool": False}.get(self.kind, "")])
                except ValueError:
                    raise ValueError(f"{study}: parameter {key}={value!r} is invalid: must be {self.describe()}") \
                        from None
            elif not isinstance(value, (list, tuple)):
                vals = [value]
            if not vals and not self.allow_empty:
                raise ValueError(f"{study}: parameter {key} is empty: must be {self.describe()}")
        else:
            vals = [value]
        for v in vals:
            why = self._one(v)
            if why is None and self.check is not None:
                why = self.check(v)
            if why is not None:
                shown = f"{v!r} (in {key}={value!r})" if self.many else repr(v)
                raise ValueError(f"{study}: parameter {key}={shown} is invalid ({why}): "
                                 f"{key} must be {self.describe()}")


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else f"{v:g}"


PARAM_SPECS: dict[str, dict[str, Param]] = {}


def declare_params(study: str, spec: Mapping[str, Param]) -> dict[str, Param]:
    """Record the parameter declarations of a study (checked by :func:`resolve_config`
    and :func:`validate_study`).

    Args:
        study: the study's registered name.
        spec: ``{parameter: Param}``; replaces any earlier declaration of the study.

    Returns:
        The recorded declarations (a new dict, also in :data:`PARAM_SPECS`).
    """
    PARAM_SPECS[study] = dict(spec)
    return PARAM_SPECS[study]


def inferred_params(defaults: Mapping[str, Any]) -> dict[str, Param]:
    """The safety net for a study that declares nothing: each parameter keeps its default's type,
    numbers are finite, integers ``>= 0`` (``seeds >= 1``).

    Args:
        defaults: the study's default configuration (a list value is typed by its first element).

    Returns:
        ``{parameter: Param}`` for the boolean, integer and float defaults (strings are not checked).
    """
    spec = {}
    for k, v in defaults.items():
        many = isinstance(v, (list, tuple))
        x = (v[0] if v else None) if many else v
        if isinstance(x, bool):
            spec[k] = Param("bool", many=many, allow_empty=True)
        elif isinstance(x, (int, np.integer)):
            spec[k] = Param("int", many=many, lo=1 if k == "seeds" else 0, allow_empty=True)
        elif isinstance(x, (float, np.floating)):
            spec[k] = Param("float", many=many, allow_empty=True)
    return spec


def _parse_value(text: str, like: Any) -> Any:
    """Parse a ``--set`` value with the type of the default it replaces."""
    if isinstance(like, bool):
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"expected true/false, got {text!r}")
    if isinstance(like, (list, tuple)):
        elem = like[0] if like else 0.0
        parts = [t for t in text.replace(";", ",").split(",") if t.strip()]
        return [_parse_value(t.strip(), elem) for t in parts]
    if isinstance(like, (int, float)):
        what = "an integer" if isinstance(like, int) else "a number"
        try:
            f = float(text)
        except ValueError:
            raise ValueError(f"expected {what}, got {text!r}") from None
        if isinstance(like, float):
            return f
        if not math.isfinite(f) or f != int(f):
            raise ValueError(f"expected {what}, got {text!r}")
        return int(f)
    return text
