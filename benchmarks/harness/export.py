"""Proof that every compiled program lowers for accelerators, and what each one does per round.

No GPU or TPU is needed: :func:`export_jitted` runs
``jax.export.export(fn, platforms=("cuda", "tpu"))`` on a jitted function and
example arguments (tracing and lowering only, nothing is compiled or run), and
:func:`benchmarks.harness.hlo.analyze_module` reads the module's text: host
callbacks, host transfers and CPU-only custom calls (violations), random
words drawn and loop-state bytes moved per call (the basis of the roofline
prediction in :mod:`benchmarks.harness.roofline`).

Which programs: every benchmark-suite case (:func:`suite_exports`, the jitted
function the suite times) and one grid point of every registered study
(:func:`study_exports`). A study's compiled functions are found by running
``study.run([point], seeds=[0])`` in a fresh subprocess in which ``jax.jit``
is replaced by a recorder: a call with concrete arguments is exported instead
of compiled, and returns zeros of the right shapes (a function that draws no
random numbers is a deterministic host-side helper: it also runs for real, so
that the study's host logic sees real values). A study may instead give ``Study.export_fn(point) ->
(jitted_fn, example_args)``.

Maintainers' table: ``python benchmarks/export_table.py`` writes
``benchmarks/EXPORT.md``; CI: ``tests/test_export.py``.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np

from .hlo import FORBIDDEN_PATTERNS, ModuleStats, analyze_module

__all__ = ["PLATFORMS", "ModuleStats", "ExportRecord", "analyze_module", "export_jitted", "suite_exports",
           "study_exports", "start_study_exports", "finish_study_exports", "capture_study", "capture_points",
           "FORBIDDEN_PATTERNS"]

PLATFORMS = ("cuda", "tpu")


# --------------------------------------------------------------------------- exporting


@dataclasses.dataclass
class ExportRecord:
    """One exported program: where it comes from, whether it lowered, and its per-call counts.

    ``ok`` is true when it lowered for every platform of ``PLATFORMS`` with no violation;
    ``per_round(key)`` divides a count of ``stats`` by ``rounds`` (one-shot estimators: per call).

    Attributes:
        module: where it comes from, e.g. ``"suite:hedge"`` or ``"study:hedge-baseline"``.
        label: what it is (the suite case's work or the study's grid point).
        function: the jitted Python function's name.
        rounds: rounds per seed per call (``None``: a one-shot estimator).
        platforms_ok: the platforms it lowered for.
        errors: platform (or ``"all"``, or ``"capture"``) -> error message.
        stats: the :class:`ModuleStats` as a dict (``None`` if nothing lowered).
        lower_s: the seconds tracing and lowering took.
        note: remarks (e.g. ``"helper, also run"``).
    """

    module: str                      # e.g. "suite:hedge" or "study:hedge-baseline"
    label: str                       # what it is (config or grid point)
    function: str                    # the jitted Python function's name
    rounds: Optional[int]            # rounds per seed per call (None: one-shot estimator)
    platforms_ok: list               # platforms it lowered for
    errors: dict                     # platform (or "all") -> error message
    stats: Optional[dict]            # ModuleStats as a dict (None if nothing lowered)
    lower_s: float = 0.0
    note: str = ""

    @property
    def ok(self) -> bool:
        return (set(self.platforms_ok) == set(PLATFORMS) and self.stats is not None
                and not self.stats["violations"])

    def per_round(self, key: str) -> float:
        v = (self.stats or {}).get(key, float("nan"))
        return v / self.rounds if self.rounds else v

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> "ExportRecord":
        return cls(**d)


def _fn_name(fn) -> str:
    for obj in (fn, getattr(fn, "__wrapped__", None), getattr(fn, "func", None)):
        n = getattr(obj, "__name__", None)
        if n and n != "<lambda>":
            return n
    return type(fn).__name__


def _specs(tree):
    import jax

    def spec(x):
        if isinstance(x, (jax.Array, np.ndarray, np.generic)):
            return jax.ShapeDtypeStruct(np.shape(x), x.dtype)
        return x

    return jax.tree_util.tree_map(spec, tree)


def export_jitted(fn: Callable, args: Sequence[Any], kwargs: Optional[dict] = None, *, module: str = "",
                  label: str = "", rounds: Optional[int] = None, platforms: Sequence[str] = PLATFORMS,
                  keep: bool = False):
    """``jax.export.export(fn, platforms)(*args, **kwargs)`` and :func:`analyze_module` of the result.

    Nothing is compiled. If the joint export fails, each platform is tried alone to say which one fails.

    Args:
        fn: a ``jax.jit``-wrapped function.
        args: its positional arguments: arrays (replaced by their shapes and dtypes), ``jax.ShapeDtypeStruct`` s
            or static values.
        kwargs: its keyword arguments (same rules; ``None``: none).
        module: the record's ``module``.
        label: the record's ``label``.
        rounds: rounds per seed per call (``None``: one-shot).
        platforms: the platforms to lower for.
        keep: also return the ``jax.export.Exported``.

    Returns:
        The :class:`ExportRecord`, or ``(record, exported)`` when ``keep`` (``exported`` is ``None`` if no
        platform lowered).
    """
    import jax

    kwargs = kwargs or {}
    a, k = _specs(tuple(args)), _specs(dict(kwargs))
    t0 = time.perf_counter()
    exp, errors, ok = None, {}, []
    try:
        exp = jax.export.export(fn, platforms=tuple(platforms))(*a, **k)  # type: ignore[arg-type]
        ok = list(platforms)
    except Exception as e:  # noqa: BLE001 - reported, never swallowed silently
        errors["all"] = f"{type(e).__name__}: {str(e).strip().splitlines()[0][:300] if str(e).strip() else ''}"
        for p in platforms:
            try:
                e1 = jax.export.export(fn, platforms=(p,))(*a, **k)  # type: ignore[arg-type]
                ok.append(p)
                exp = exp or e1
            except Exception as e2:  # noqa: BLE001
                msg = str(e2).strip().splitlines()[0][:300] if str(e2).strip() else ""
                errors[p] = f"{type(e2).__name__}: {msg}"
    stats = None
    if exp is not None:
        stats = dataclasses.asdict(analyze_module(exp.mlir_module()))
    rec = ExportRecord(module=module, label=label, function=_fn_name(fn), rounds=rounds, platforms_ok=ok,
                       errors=errors, stats=stats, lower_s=time.perf_counter() - t0)
    return (rec, exp) if keep else rec


# --------------------------------------------------------------------------- suite cases


def suite_exports(quick: bool = False, cases: Optional[Sequence[str]] = None) -> list[ExportRecord]:
    """Export the jitted function of every benchmark-suite case (one seed) for ``cuda`` and ``tpu``.

    Args:
        quick: the quick suite's sizes.
        cases: only the cases of these names (``None``: all).

    Returns:
        One :class:`ExportRecord` per case (``rounds`` set for the cases sized by ``T``).
    """
    from .suite import _cases

    out = []
    for c in _cases(quick):
        if cases is not None and c.name not in cases:
            continue
        _call, jitted, largs = c.setup(1)
        out.append(export_jitted(jitted, largs(), module=f"suite:{c.name}", label=c.work_desc,
                                 rounds=c.rounds if c.size_label == "T" else None))
    return out


# --------------------------------------------------------------------------- studies (capture)


class _Capture:
    """While installed, ``jax.jit`` returns recorders; while ``active``, a recorder called with concrete
    arguments exports instead of compiling (one instance per process: the library caches jitted
    functions, so every recorder must report to the same place)."""

    def __init__(self):
        self.records: list[ExportRecord] = []
        self.context = ("", "", None)
        self.active = False
        self._orig = None

    def install(self) -> None:
        import jax

        if self._orig is not None:
            return
        self._orig = orig = jax.jit
        cap = self

        def jit(fun=None, *a, **kw):
            if fun is None:
                return lambda f: jit(f, *a, **kw)
            return _Recorder(orig(fun, *a, **kw), fun, cap)

        jax.jit = jit


_CAPTURE = _Capture()


def _has_tracer(tree) -> bool:
    import jax

    return any(isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(tree))


def _zeros_like_outputs(exp):
    import jax
    import jax.numpy as jnp

    def z(aval):
        if jnp.issubdtype(aval.dtype, jax.dtypes.prng_key):
            return jax.random.wrap_key_data(np.zeros(aval.shape + (2,), np.uint32))
        return jax.device_put(np.zeros(aval.shape, aval.dtype))

    return jax.tree_util.tree_unflatten(exp.out_tree, [z(a) for a in exp.out_avals])


class _Recorder:
    def __init__(self, real, fun, cap: _Capture):
        self._real, self._fun, self._cap = real, fun, cap

    def __getattr__(self, name):
        return getattr(self._real, name)

    def __call__(self, *args, **kwargs):
        cap = self._cap
        if not cap.active or _has_tracer((args, kwargs)):
            return self._real(*args, **kwargs)
        module, label, rounds = cap.context
        rec, exp = export_jitted(self._real, args, kwargs, module=module, label=label, rounds=rounds, keep=True)
        rec.function = _fn_name(self._fun)
        cap.records.append(rec)
        if exp is None or (rec.stats and rec.stats["rng_words"] == 0):
            # a deterministic function is a host-side helper (e.g. building a grid): the study's host
            # logic needs its real values
            rec.note = "helper, also run" if exp is not None else "export failed, run instead"
            return self._real(*args, **kwargs)
        return _zeros_like_outputs(exp)


def _point_label(study, point: dict) -> str:
    keys = list(study.group_by) or list(point)
    return ", ".join(f"{k}={point[k]}" for k in keys if k in point)


def _rounds_of(point: dict) -> Optional[int]:
    for k in ("T_max", "T"):
        if k in point and isinstance(point[k], (int, np.integer)):
            return int(point[k])
    return None


def capture_points(study, points: Sequence[dict], name: Optional[str] = None) -> list[ExportRecord]:
    """Export the compiled functions ``study`` runs for each of ``points`` (one seed each).

    Uses ``study.export_fn`` when the study gives one; otherwise runs ``study.run([point], [0])`` with
    ``jax.jit`` replaced by recorders (see the module docstring), which needs a fresh process
    (:func:`study_exports`). A run that fails on the zero outputs after its exports is noted on the records.

    Args:
        study: the study object (with ``name``, ``group_by``, ``run`` and optionally ``export_fn``).
        points: the grid points to export.
        name: the name in the records' ``module`` (``None``: ``study.name``).

    Returns:
        The :class:`ExportRecord` of every function captured, in call order (one ``"capture"`` error record for
        a point that compiled nothing).
    """
    out = []
    for p in points:
        module, label, rounds = f"study:{name or study.name}", _point_label(study, p), _rounds_of(p)
        hook = getattr(study, "export_fn", None)
        if hook is not None:
            fn, args = hook(p)
            out.append(export_jitted(fn, args, module=module, label=label, rounds=rounds))
            continue
        cap = _CAPTURE
        cap.install()
        n0 = len(cap.records)
        cap.context, cap.active, err = (module, label, rounds), True, None
        try:
            study.run([p], np.arange(1))
        except Exception as e:  # noqa: BLE001 - host post-processing of zero outputs may fail
            err = f"{type(e).__name__}: {str(e)[:200]}"
        finally:
            cap.active = False
        recs = cap.records[n0:]
        if not recs:
            recs = [ExportRecord(module=module, label=label, function="?", rounds=rounds, platforms_ok=[],
                                 errors={"capture": err or "the study's run compiled no function"}, stats=None)]
        elif err:
            for r in recs:
                r.note = (r.note + "; " if r.note else "") + f"run stopped after the export: {err}"
        out += recs
    return out


def capture_study(name: str, per_group: bool = False, quick: bool = True) -> list[ExportRecord]:
    """:func:`capture_points` for registered study ``name`` at the first point of its grid.

    ``per_group``: the first point of every ``group_by`` group, i.e. of every distinct compiled function.
    Without ``export_fn`` it must run in a fresh process: the library's factories cache jitted functions, and
    one created before ``jax.jit`` was replaced is not seen (:func:`study_exports` starts one).

    Args:
        name: the registered study's name.
        per_group: export one point per ``group_by`` group instead of only the first point.
        quick: use the study's quick configuration.

    Returns:
        The :class:`ExportRecord` s of the captured functions.
    """
    from jaxdp import registry
    from jaxdp.studies.framework import resolve_config

    entry = registry.get_study(name)
    cfg = resolve_config(name, entry.extra["defaults"], entry.extra["quick"], quick, {})
    study = entry.fn(cfg)
    points = study.points[:1]
    if per_group:
        seen, points = set(), []
        for p in study.points:
            g = tuple(p.get(k) for k in study.group_by)
            if g not in seen:
                seen.add(g)
                points.append(p)
    return capture_points(study, points, name)


def start_study_exports(names: Optional[Sequence[str]] = None, per_group: bool = False) -> subprocess.Popen:
    """Start :func:`capture_study` for every registered study (or ``names``) in a fresh subprocess.

    The subprocess runs on the CPU with one host device (modules are exported for one seed, unsharded) and
    prints one ``EXPORT <json>`` line per record; :func:`finish_study_exports` collects them, so the caller
    can work meanwhile.

    Args:
        names: the studies (``None``: every registered study).
        per_group: one point per ``group_by`` group (:func:`capture_study`).

    Returns:
        The running ``subprocess.Popen`` (text-mode pipes on stdout and stderr).
    """
    from .common import root_on_pythonpath

    env = root_on_pythonpath(dict(os.environ))
    env.setdefault("JAX_PLATFORMS", "cpu")
    # one device: the modules are exported for one seed, unsharded (see the per-seed rule in benchmarks.harness.hlo)
    flags = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith("--xla_force_host_platform_device_count")]
    env["XLA_FLAGS"] = " ".join(flags)
    cmd = [sys.executable, "-m", "benchmarks.harness.export", "--studies"] + list(names or [])
    if per_group:
        cmd.append("--per-group")
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish_study_exports(p: subprocess.Popen, timeout: float = 900.0) -> list[ExportRecord]:
    """The records of a :func:`start_study_exports` subprocess.

    Args:
        p: the subprocess.
        timeout: seconds to wait for it before killing it.

    Returns:
        The :class:`ExportRecord` s it printed.

    Raises:
        RuntimeError: it timed out, exited with a non-zero status or printed no record (with its stderr's tail).
    """
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        raise RuntimeError(f"study export subprocess timed out after {timeout:.0f}s:\n{err[-3000:]}") from None
    lines = [l for l in out.splitlines() if l.startswith("EXPORT ")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"study export subprocess failed (status {p.returncode}):\n{err[-3000:]}")
    return [ExportRecord.from_json(json.loads(l[len("EXPORT "):])) for l in lines]


def study_exports(names: Optional[Sequence[str]] = None, per_group: bool = False,
                  timeout: float = 900.0) -> list[ExportRecord]:
    """:func:`capture_study` for every registered study (or ``names``), in one fresh subprocess.

    Args:
        names: the studies (``None``: every registered study).
        per_group: one point per ``group_by`` group (:func:`capture_study`).
        timeout: seconds to wait for the subprocess.

    Returns:
        The :class:`ExportRecord` s of all the studies.

    Raises:
        RuntimeError: the subprocess timed out or failed.
    """
    return finish_study_exports(start_study_exports(names, per_group), timeout)


def _main(argv: Sequence[str]) -> int:
    from jaxdp import registry

    if "--studies" not in argv:
        print("usage: python -m benchmarks.harness.export --studies [NAME ...] [--per-group]", file=sys.stderr)
        return 2
    names = [a for a in argv[argv.index("--studies") + 1:] if not a.startswith("--")]
    _CAPTURE.install()
    registry.load_all()
    for n in names or sorted(registry.STUDIES):
        for r in capture_study(n, per_group="--per-group" in argv):
            print("EXPORT " + json.dumps(r.to_json()), flush=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(_main(sys.argv[1:]))
