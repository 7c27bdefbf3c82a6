"""Studies: a grid of points × seeds, run in verified, resumable chunks by one or many processes.

A ``Study`` lists its grid points (dicts of JSON scalars) and a ``run``
function that evaluates a group of points for a block of seed indices and
returns per-seed metrics. ``run_study``:

1. validates everything first (:func:`validate_study`: the declared
   parameters of the study, see :class:`Param`, and every grid point's
   ``check_point``, which makes every planner call a run will make), before
   any directory is created or anything is compiled;
2. creates ``manifest.json`` with ``O_EXCL`` (one config per results
   directory: a second run with another config is refused; a second run with
   the same config joins and takes other chunks);
3. splits the grid into chunks (points sharing ``group_by`` values, up to
   ``points_per_chunk`` of them, × blocks of ``seeds_per_chunk`` seeds); a
   process computes a chunk only after creating its claim file
   ``claims/<chunk>`` with ``O_EXCL`` (a claim whose owner pid is dead on this
   host, or older than ``claim_timeout`` seconds, is taken over), so N processes
   sharing the directory compute every chunk exactly once;
4. writes each finished chunk atomically (temporary file, ``fsync``,
   ``os.replace``) with a sidecar ``chunks/<chunk>.json`` that records its
   SHA-256 and row count. Every run verifies every chunk: a damaged or truncated
   chunk is reported by name and recomputed, never merged (:func:`verify_study`
   checks a directory without running anything);
5. when every chunk is present and verified, concatenates the tidy table (one
   row per grid point and seed) to ``results.csv``, writes the ``analyze``
   tables and the ``plot`` PNGs, and rewrites ``manifest.json`` (config,
   versions, device, timings, the hash of ``results.csv``). With several
   processes the last one to finish merges.

Processes: ``jax.distributed`` (chunks are computed with each process's local
devices only), ``SLURM_PROCID``/``SLURM_NTASKS``, or
``JAXDP_PROCESS_ID``/``JAXDP_NUM_PROCESSES`` (:func:`process_identity`).
Process ``r`` of ``n`` starts with the chunks ``r, r + n, ...`` and then takes
any chunk still unclaimed. Chunk results are deterministic functions of their
points and seed indices, so which process computes a chunk never changes a
byte of the results.

Ctrl-C (SIGINT) sets a flag that is checked before each chunk and once more
after the merge: the run stops with :class:`StudyInterrupted` (the CLI exits
130 with "interrupted; rerun to resume"); a second Ctrl-C interrupts the chunk
in flight. A claim whose owner is a zombie (killed, not yet reaped) is dead.

Aggregation helpers: ``summarize`` (means with 95% bootstrap intervals over
seeds) and ``fit_slopes`` (least-squares log-log slopes over the upper half of
the size grid with bootstrap CIs); ``plot_curves`` overlays theory curves on
empirical ones.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import math
import os
import pathlib
import platform
import signal
import socket
import sys
import threading
import time
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

__all__ = [
    "Study", "run_study", "load_results", "summarize", "fit_slopes", "bootstrap_mean_ci", "plot_curves",
    "StudyResult", "resolve_config", "format_table", "plot_panels", "Param", "declare_params", "check_params",
    "validate_study", "verify_study", "VerifyReport", "StudyInterrupted", "process_identity", "PARAM_SPECS",
]

RunFn = Callable[[list, np.ndarray], list]


class StudyInterrupted(KeyboardInterrupt):
    """Ctrl-C was pressed; finished chunks are kept and a rerun resumes."""


@dataclasses.dataclass
class Study:
    """A named grid × seeds experiment (see module docstring).

    ``run(points, seeds) -> [ {metric: array(len(seeds))} for each point ]``
    must be deterministic given the seed indices (use ``jaxdp.core.seed_keys``).
    ``analyze(df) -> {name: DataFrame}`` (the first table is printed);
    ``plot(df, outdir) -> [png paths]``. ``check_point(point)`` (optional) makes
    every host-side call a run will make for that point (planners) and raises
    ``ValueError`` for a point that cannot run; it is called for every point
    before anything starts. ``export_fn(point) -> (jitted_fn, example_args)``
    (optional) gives the compiled function of one grid point to
    ``jaxdp.bench.export``, which otherwise records it by running the point.
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
    # optional: export_fn(point) -> (jitted_fn, example_args), the compiled function of one grid point
    # for jax.export (tests/test_export.py); without it, jaxdp.bench.export finds it by running the point
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

    def describe(self) -> str:
        what = {"int": "an integer", "float": "a finite number" if not self.allow_inf else "a number",
                "str": "a string", "bool": "true or false"}[self.kind]
        if self.choices is not None:
            what = f"one of {', '.join(map(str, self.choices))}"
        if self.lo is not None and self.hi is not None:
            what += f" in {'(' if self.lo_open else '['}{_num(self.lo)}, {_num(self.hi)}{')' if self.hi_open else ']'}"
        elif self.lo is not None:
            what += f" {'>' if self.lo_open else '>='} {_num(self.lo)}"
        elif self.hi is not None:
            what += f" {'<' if self.hi_open else '<='} {_num(self.hi)}"
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
            if isinstance(value, str):
                vals = [t.strip() for t in value.replace(";", ",").split(",") if t.strip()]
                if self.kind != "str":
                    try:
                        vals = [_parse_value(t, 0 if self.kind == "int" else 0.0) for t in vals]
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
                shown = v if not self.many else f"{v!r} (in {key}={value!r})"
                raise ValueError(f"{study}: parameter {key}={shown if self.many else repr(v)} is invalid ({why}): "
                                 f"{key} must be {self.describe()}")


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else f"{v:g}"


PARAM_SPECS: dict[str, dict[str, Param]] = {}


def declare_params(study: str, spec: Mapping[str, Param]) -> dict[str, Param]:
    """Record the parameter declarations of ``study`` (checked by :func:`resolve_config`
    and :func:`validate_study`)."""
    PARAM_SPECS[study] = dict(spec)
    return PARAM_SPECS[study]


def inferred_params(defaults: Mapping[str, Any]) -> dict[str, Param]:
    """The safety net for a study that declares nothing: each parameter keeps its default's type,
    numbers are finite, integers ``>= 0`` (``seeds >= 1``)."""
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


def check_params(study: str, cfg: Mapping[str, Any], spec: Optional[Mapping[str, Param]] = None) -> None:
    """Check every declared parameter of ``cfg``; ``ValueError`` naming the parameter and the allowed range.

    A study that declares nothing gets :func:`inferred_params` of its registered defaults."""
    if spec is None:
        spec = PARAM_SPECS.get(study)
    if spec is None:
        try:
            from .. import registry

            entry = registry.STUDIES.get(study)
        except Exception:  # pragma: no cover
            entry = None
        spec = inferred_params(entry.extra["defaults"]) if entry is not None else {}
    for key, p in spec.items():
        if key in cfg:
            p.validate(study, key, cfg[key])


# --------------------------------------------------------------------------- config


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
    if isinstance(like, int):
        try:
            f = float(text)
        except ValueError:
            raise ValueError(f"expected an integer, got {text!r}") from None
        if not math.isfinite(f) or f != int(f):
            raise ValueError(f"expected an integer, got {text!r}")
        return int(f)
    if isinstance(like, float):
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"expected a number, got {text!r}") from None
    return text


def resolve_config(name: str, defaults: Mapping, quick_overrides: Mapping, quick: bool,
                   overrides: Mapping[str, Any]) -> dict:
    """Defaults, then ``--quick`` overrides, then user overrides (strings parsed by the default's type).

    Unknown keys raise ``ValueError`` listing the allowed ones; the result is
    checked against the study's declared parameters (:func:`declare_params`).
    """
    cfg = dict(defaults)
    if quick:
        cfg.update(quick_overrides)
    cfg["quick"] = bool(quick)
    for k, v in overrides.items():
        if k not in defaults:
            raise ValueError(f"unknown parameter {k!r} for study {name!r}; allowed: {', '.join(sorted(defaults))}")
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
    ``check_point`` (planner calls). Raises ``ValueError`` naming the parameter or point."""
    check_params(study.name, study.config)
    if study.check_point is None:
        return
    for p in study.points:
        try:
            study.check_point(p)
        except (ValueError, TypeError, ZeroDivisionError, OverflowError, ArithmeticError) as e:
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise ValueError(f"{study.name}: grid point {json.dumps(_jsonable(p), default=str)} cannot run: {msg}") \
                from None


# --------------------------------------------------------------------------- chunks


def _chunks(study: Study) -> list[tuple[list[int], np.ndarray]]:
    groups: dict = {}
    for i, p in enumerate(study.points):
        key = tuple(p.get(g) for g in study.group_by)
        groups.setdefault(key, []).append(i)
    spc = study.seeds_per_chunk or study.seeds
    seed_blocks = [np.arange(s, min(s + spc, study.seeds)) for s in range(0, study.seeds, spc)]
    out = []
    for idx in groups.values():
        for j in range(0, len(idx), study.points_per_chunk):
            for sb in seed_blocks:
                out.append((idx[j:j + study.points_per_chunk], sb))
    return out


def _chunk_id(study: Study, point_idx: list[int], seeds: np.ndarray) -> str:
    spec = json.dumps({"points": [study.points[i] for i in point_idx], "seeds": [int(seeds[0]), int(seeds[-1])],
                       "config": _jsonable(study.config)}, sort_keys=True, default=str)
    return hashlib.sha1(spec.encode()).hexdigest()[:16]


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


def _atomic_write(path: pathlib.Path, text: str | bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{socket.gethostname()}-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(text.encode() if isinstance(text, str) else text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _rows(data: bytes) -> int:
    """Data rows of a CSV written by pandas (header excluded)."""
    return max(data.count(b"\n") - 1, 0)


def _write_chunk(chunks_dir: pathlib.Path, cid: str, data: bytes, info: dict) -> None:
    _atomic_write(chunks_dir / f"{cid}.csv", data)
    side = dict(info, sha256=hashlib.sha256(data).hexdigest(), rows=_rows(data), bytes=len(data))
    _atomic_write(chunks_dir / f"{cid}.json", json.dumps(side, indent=1, default=str))


def _check_chunk(chunks_dir: pathlib.Path, cid: str) -> tuple[str, Optional[bytes]]:
    """``("ok", data)``, ``("missing", None)`` or ``("damaged: why", None)``."""
    path, side = chunks_dir / f"{cid}.csv", chunks_dir / f"{cid}.json"
    if not path.exists():
        return "missing", None
    try:
        data = path.read_bytes()
    except OSError as e:
        return f"damaged: unreadable ({e})", None
    try:
        meta = json.loads(side.read_text())
        sha, rows = meta["sha256"], int(meta["rows"])
    except FileNotFoundError:
        return "damaged: no integrity record (chunks/%s.json)" % cid, None
    except (OSError, ValueError, KeyError, TypeError):
        return "damaged: integrity record chunks/%s.json is unreadable" % cid, None
    if hashlib.sha256(data).hexdigest() != sha:
        got = _rows(data)
        how = f"{got} rows instead of {rows}" if got != rows else "same row count"
        return f"damaged: SHA-256 mismatch ({how})", None
    if _rows(data) != rows:  # pragma: no cover - implied by the hash
        return f"damaged: {_rows(data)} rows instead of {rows}", None
    return "ok", data


# --------------------------------------------------------------------------- processes and claims


def _distributed_client_active() -> bool:
    try:
        from jax._src import distributed

        return distributed.global_state.client is not None
    except Exception:  # pragma: no cover
        return False


def process_identity() -> tuple[int, int, str]:
    """``(index, count, source)`` of this process among those sharing a study.

    ``jax.distributed`` (if initialized) first, then ``JAXDP_PROCESS_ID`` /
    ``JAXDP_NUM_PROCESSES``, then ``SLURM_PROCID`` / ``SLURM_NTASKS``; else ``(0, 1, "single")``.
    """
    if _distributed_client_active():
        import jax

        return int(jax.process_index()), int(jax.process_count()), "jax.distributed"
    for pid_var, n_var in (("JAXDP_PROCESS_ID", "JAXDP_NUM_PROCESSES"), ("SLURM_PROCID", "SLURM_NTASKS")):
        if pid_var in os.environ and n_var in os.environ:
            try:
                r, n = int(os.environ[pid_var]), int(os.environ[n_var])
            except ValueError:
                raise ValueError(f"{pid_var}={os.environ[pid_var]!r} and {n_var}={os.environ[n_var]!r} must be "
                                 f"integers") from None
            if n < 1 or not 0 <= r < n:
                raise ValueError(f"{pid_var}={r} must be in [0, {n_var}={n})")
            return r, n, pid_var.split("_")[0]
    return 0, 1, "single"


def _local_context():
    """Chunks are computed with this process's devices only (``jaxdp.core.simulate.process_local``)."""
    if _distributed_client_active():
        import importlib

        # the module, not the ``simulate`` function that ``jaxdp.core`` re-exports under the same name
        pl = getattr(importlib.import_module("jaxdp.core.simulate"), "process_local", None)
        if pl is not None:
            return pl()
    return contextlib.nullcontext()


_HOST = socket.gethostname()


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host is running: a zombie (killed, not yet reaped by its
    parent) is dead, so its claims are taken over at once."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover
        return True
    except OSError:  # pragma: no cover
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):   # no /proc (macOS): trust kill(pid, 0)
        return True


def _claim_stale(path: pathlib.Path, timeout: float) -> bool:
    try:
        st = path.stat()
        text = path.read_text()
    except FileNotFoundError:
        return True
    age = time.time() - st.st_mtime
    try:
        c = json.loads(text)
        host, pid = c["host"], int(c["pid"])
    except (ValueError, KeyError, TypeError):
        return age > 10.0  # being written, or garbage
    if host == _HOST:
        return pid == os.getpid() or not _pid_alive(pid)
    return age > timeout


def _claim(path: pathlib.Path, timeout: float) -> bool:
    """Create the claim file with ``O_EXCL``; take over a stale claim. True if this process holds it."""
    for attempt in range(2):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            if attempt == 0 and _claim_stale(path, timeout):
                aside = path.with_name(f".{path.name}.stale-{_HOST}-{os.getpid()}")
                try:
                    os.rename(path, aside)
                    os.unlink(aside)
                except FileNotFoundError:
                    pass
                continue
            return False
        with os.fdopen(fd, "w") as f:
            json.dump({"host": _HOST, "pid": os.getpid(), "time": time.time()}, f)
        return True
    return False


def _release(path: pathlib.Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


# --------------------------------------------------------------------------- manifest


def _read_json_retry(path: pathlib.Path, wait: float = 5.0) -> dict:
    deadline = time.time() + wait
    while True:
        try:
            return json.loads(path.read_text())
        except (ValueError, FileNotFoundError):
            if time.time() > deadline:
                raise ValueError(f"{str(path)!r} is damaged (not JSON); it is not a results directory this version "
                                 f"can resume: use another --out or delete it") from None
            time.sleep(0.05)


def _open_manifest(out: pathlib.Path, manifest: dict) -> None:
    """Create ``manifest.json`` with ``O_EXCL``, or check that the existing one has this study and config."""
    path = out / "manifest.json"
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        old = _read_json_retry(path)
        if old.get("study") != manifest["study"] or _normalized(old.get("config")) != _normalized(manifest["config"]):
            diff = sorted(k for k in set(old.get("config") or {}) | set(manifest["config"])
                          if _normalized((old.get("config") or {}).get(k)) != _normalized(manifest["config"].get(k)))
            raise ValueError(
                f"results directory {str(out)!r} holds a different study/config (study {old.get('study')!r}"
                + (f", differing in {', '.join(diff[:6])}" if diff and old.get("study") == manifest["study"] else "")
                + "); use another --out or delete it")
        return
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(manifest, indent=2, default=str))
        f.flush()
        os.fsync(f.fileno())


def _versions() -> dict:
    import jax

    import jaxdp

    try:
        devs = [str(d) for d in jax.local_devices()]
        kind = jax.local_devices()[0].device_kind
    except Exception:  # pragma: no cover
        devs, kind = [], "unknown"
    return {"jaxdp": jaxdp.__version__, "jax": jax.__version__, "numpy": np.__version__,
            "python": sys.version.split()[0], "platform": platform.platform(), "devices": devs,
            "device_kind": kind, "backend": jax.default_backend()}


# --------------------------------------------------------------------------- SIGINT


class _SigintFlag:
    """First Ctrl-C sets a flag checked between chunks; a second one interrupts at once.

    Starts already set if the handler it replaces belongs to an object whose ``hit`` is true (the
    command line's, which records a Ctrl-C from its first instant: one that a library swallowed
    is not lost)."""

    def __init__(self):
        self.hit = False
        self.prev = None

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.prev = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._handler)
            self.hit = bool(getattr(getattr(self.prev, "__self__", None), "hit", False))
        return self

    def _handler(self, signum, frame):
        if self.hit:
            raise StudyInterrupted()
        self.hit = True
        sys.stderr.write("\njaxdp: Ctrl-C: stopping after the chunk in flight (press again to stop at once)\n")
        sys.stderr.flush()

    def __exit__(self, *exc):
        if self.prev is not None:
            signal.signal(signal.SIGINT, self.prev)
        return False


def _progress_bar(total: int, initial: int, enabled: bool, desc: str):
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, initial=initial, desc=desc, unit="chunk", file=sys.stderr, dynamic_ncols=True,
                smoothing=0.1, leave=True)


# --------------------------------------------------------------------------- running


def _chunk_frame(study: Study, pi: list[int], seeds: np.ndarray):
    import pandas as pd

    pts = [study.points[i] for i in pi]
    results = study.run(pts, np.asarray(seeds))
    if len(results) != len(pts):
        raise RuntimeError(f"study {study.name!r}: run returned {len(results)} results for {len(pts)} points")
    rows = []
    for i, p, r in zip(pi, pts, results):
        block = {"point": np.full(len(seeds), i), "seed": np.asarray(seeds)}
        for k, v in p.items():
            block[k] = [v] * len(seeds)
        for k, v in r.items():
            v = np.asarray(v)
            if v.shape != (len(seeds),):
                raise RuntimeError(f"study {study.name!r}: metric {k!r} has shape {v.shape}, expected ({len(seeds)},)")
            block[k] = v
        rows.append(pd.DataFrame(block))
    return pd.concat(rows, ignore_index=True).to_csv(index=False).encode()


def _order(n_chunks: int, rank: int, nproc: int) -> list[int]:
    own = list(range(rank, n_chunks, nproc))
    rest = [i for k in range(1, nproc) for i in range((rank + k) % nproc, n_chunks, nproc)]
    return own + rest


def run_study(study: Study, out_dir: os.PathLike | str, *, progress: bool = True, analyze: bool = True,
              plot: bool = True, max_chunks: Optional[int] = None, merge: bool = True,
              claim_timeout: Optional[float] = None, process: Optional[tuple[int, int]] = None,
              log: Optional[Callable[[str], None]] = None) -> StudyResult:
    """Run (or resume, or join) ``study`` into ``out_dir``; see the module docstring.

    ``max_chunks`` stops after that many new chunks (for tests of resumption).
    ``merge=False`` never writes ``results.csv`` (a launcher merges).
    ``claim_timeout`` (default ``JAXDP_CLAIM_TIMEOUT`` or 6 h) is the age after
    which another host's claim is taken over; ``process = (index, count)``
    overrides :func:`process_identity`. Raises :class:`StudyInterrupted` after
    Ctrl-C, once the chunk in flight is saved.
    """
    log = log or (lambda s: print(s, file=sys.stderr, flush=True))
    validate_study(study)           # before anything is created or compiled
    if process is None:
        rank, nproc, source = process_identity()
    else:
        (rank, nproc), source = process, "argument"
    if claim_timeout is None:
        claim_timeout = float(os.environ.get("JAXDP_CLAIM_TIMEOUT", 6 * 3600))
    # from here on a Ctrl-C only sets a flag (checked before each chunk and at the end), so it never
    # lands between creating a file and writing it
    sig = _SigintFlag().__enter__()
    try:
        if sig.hit:
            raise StudyInterrupted()
        res = _prepare_run_and_merge(study, pathlib.Path(out_dir), sig, progress, analyze, plot, max_chunks, merge,
                                     claim_timeout, rank, nproc, source, log)
        if sig.hit:   # a Ctrl-C during the merge: the results are complete, the run still says so
            raise StudyInterrupted()
        return res
    finally:
        sig.__exit__(None, None, None)


def _prepare_run_and_merge(study, out, sig, progress, analyze, plot, max_chunks, merge, claim_timeout, rank, nproc,
                           source, log) -> StudyResult:
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"study": study.name, "description": study.description, "config": _jsonable(study.config),
                "n_points": len(study.points), "seeds": int(study.seeds), "versions": _versions(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    _open_manifest(out, manifest)
    chunks_dir, claims_dir = out / "chunks", out / "claims"
    chunks_dir.mkdir(exist_ok=True)
    claims_dir.mkdir(exist_ok=True)

    chunks = _chunks(study)
    cids = [_chunk_id(study, *c) for c in chunks]
    status = {cid: _check_chunk(chunks_dir, cid)[0] for cid in cids}
    damaged = []
    for cid in cids:
        if status[cid].startswith("damaged"):
            damaged.append(cid)
            log(f"jaxdp: chunk chunks/{cid}.csv is {status[cid]}; recomputing it")
    skipped = sum(s == "ok" for s in status.values())
    desc = study.name if nproc == 1 else f"{study.name} [{rank}/{nproc}]"
    if sig.hit:
        raise StudyInterrupted()
    bar = _progress_bar(len(chunks), skipped, progress, desc)
    t_run = time.time()
    return _run_and_merge(study, out, manifest, chunks, cids, status, damaged, skipped, bar, sig, rank, nproc,
                          source, max_chunks, claim_timeout, merge, analyze, plot, t_run)


def _run_and_merge(study, out, manifest, chunks, cids, status, damaged, skipped, bar, sig, rank, nproc, source,
                   max_chunks, claim_timeout, merge, analyze, plot, t_run) -> StudyResult:
    import pandas as pd

    chunks_dir, claims_dir = out / "chunks", out / "claims"
    ran = 0
    try:
        with _local_context():
            for j in _order(len(chunks), rank, nproc):
                cid = cids[j]
                if status[cid] == "ok":
                    continue
                if max_chunks is not None and ran >= max_chunks:
                    break
                if sig.hit:
                    raise StudyInterrupted()
                claim = claims_dir / cid
                if not _claim(claim, claim_timeout):
                    continue
                try:
                    st = _check_chunk(chunks_dir, cid)[0]   # another process may have finished it meanwhile
                    if st == "ok":
                        status[cid] = "ok"
                        continue
                    data = _chunk_frame(study, *chunks[j])
                    pi, seeds = chunks[j]
                    _write_chunk(chunks_dir, cid, data, {"study": study.name, "points": [int(i) for i in pi],
                                                         "seeds": [int(seeds[0]), int(seeds[-1])]})
                    status[cid] = "ok"
                finally:
                    _release(claim)
                ran += 1
                if bar is not None:
                    bar.update(1)
            if sig.hit:
                raise StudyInterrupted()
    finally:
        if bar is not None:
            bar.close()
    elapsed = time.time() - t_run

    if sig.hit:
        raise StudyInterrupted()
    final = {cid: _check_chunk(chunks_dir, cid) for cid in cids}
    complete = all(s == "ok" for s, _ in final.values())
    tables, plots, merged = {}, [], False
    frames = [pd.read_csv(io.BytesIO(d)) for s, d in final.values() if s == "ok"]
    df = (pd.concat(frames, ignore_index=True).sort_values(["point", "seed"]).reset_index(drop=True)
          if frames else pd.DataFrame())
    if complete and merge:
        lock = out / "claims" / "merge"
        merged = _claim(lock, claim_timeout)
        if merged:
            try:
                data = df.to_csv(index=False).encode()
                _atomic_write(out / "results.csv", data)
                if analyze and study.analyze is not None:
                    tables = study.analyze(df) or {}
                    for name, t in tables.items():
                        _atomic_write(out / f"{name}.csv", t.to_csv(index=False))
                if plot and study.plot is not None:
                    try:
                        import matplotlib

                        matplotlib.use("Agg")
                    except ImportError as e:  # pragma: no cover
                        raise RuntimeError("plots need matplotlib: pip install 'jaxdp[studies]'") from e
                    plots = [str(p) for p in (study.plot(df, out) or [])]
                manifest.update({"finished": time.strftime("%Y-%m-%dT%H:%M:%S"), "chunks_total": len(chunks),
                                 "chunks_done": len(chunks), "chunks_run_now": ran,
                                 "run_seconds_now": round(elapsed, 3), "processes": nproc,
                                 "process_source": source, "tables": list(tables), "plots": plots,
                                 "results": {"file": "results.csv", "sha256": hashlib.sha256(data).hexdigest(),
                                             "rows": _rows(data)}})
                _atomic_write(out / "manifest.json", json.dumps(manifest, indent=2, default=str))
            finally:
                _release(lock)
    return StudyResult(df=df, tables=tables, plots=plots, out_dir=out, chunks_run=ran, chunks_skipped=skipped,
                       complete=complete, merged=merged, damaged=damaged, process=(rank, nproc, source))


def load_results(out_dir: os.PathLike | str, study: Optional[Study] = None):
    """The tidy table of every finished, verified chunk in ``out_dir`` (sorted by point and seed).

    Damaged chunks are left out (with a warning on stderr)."""
    import pandas as pd

    out = pathlib.Path(out_dir)
    chunks_dir = out / "chunks"
    names = sorted(f.stem for f in chunks_dir.glob("*.csv"))
    if study is not None:
        wanted = {_chunk_id(study, *c) for c in _chunks(study)}
        names = [n for n in names if n in wanted]
    frames = []
    for n in names:
        st, data = _check_chunk(chunks_dir, n)
        if st != "ok":
            print(f"jaxdp: chunk chunks/{n}.csv is {st}; left out", file=sys.stderr)
            continue
        frames.append(pd.read_csv(io.BytesIO(data)))
    if not frames:
        return pd.DataFrame()
    df = pd.concat(frames, ignore_index=True)
    return df.sort_values(["point", "seed"]).reset_index(drop=True)


@dataclasses.dataclass
class VerifyReport:
    """What :func:`verify_study` found: chunk names by state, and the state of ``results.csv``."""

    out_dir: pathlib.Path
    study: str
    total: int
    ok: list
    missing: list
    damaged: dict
    stray: list
    claimed: list
    results: str

    @property
    def intact(self) -> bool:
        return not self.damaged and self.results in ("ok", "absent")

    @property
    def complete(self) -> bool:
        return self.intact and not self.missing and self.results == "ok"

    def format(self) -> str:
        lines = [f"{self.out_dir}: study {self.study}, {len(self.ok)}/{self.total} chunks verified"
                 + (f", {len(self.missing)} missing" if self.missing else "")
                 + (f", {len(self.damaged)} DAMAGED" if self.damaged else "")]
        for cid, why in sorted(self.damaged.items()):
            lines.append(f"  DAMAGED chunks/{cid}.csv: {why.removeprefix('damaged: ')}")
        if self.claimed:
            lines.append(f"  {len(self.claimed)} chunk(s) claimed by a running (or dead) process: "
                         + ", ".join(self.claimed[:5]) + (" ..." if len(self.claimed) > 5 else ""))
        if self.stray:
            lines.append(f"  {len(self.stray)} chunk file(s) not in this study's grid (ignored): "
                         + ", ".join(self.stray[:5]))
        lines.append(f"  results.csv: {self.results}")
        if self.damaged or self.results.startswith("damaged"):
            lines.append("  rerun the same `jaxdp study run` command to recompute the damaged chunks")
        elif self.missing:
            lines.append("  incomplete: rerun the same `jaxdp study run` command to finish")
        return "\n".join(lines)


def verify_study(out_dir: os.PathLike | str, study: Optional[Study] = None) -> VerifyReport:
    """Check every chunk of a results directory against its recorded SHA-256 and row count, and
    ``results.csv`` against the manifest, without running anything. ``study`` (default: rebuilt
    from the manifest's config through the registry) lists the chunks that should be there."""
    out = pathlib.Path(out_dir)
    mpath = out / "manifest.json"
    if not mpath.exists():
        raise ValueError(f"{str(out)!r} is not a study results directory (no manifest.json)")
    m = _read_json_retry(mpath, wait=0.5)
    if study is None:
        from .. import registry

        study = registry.get_study(m["study"]).fn(dict(m["config"]))
    chunks_dir = out / "chunks"
    cids = [_chunk_id(study, *c) for c in _chunks(study)]
    ok, missing, damaged = [], [], {}
    for cid in cids:
        st, _ = _check_chunk(chunks_dir, cid)
        if st == "ok":
            ok.append(cid)
        elif st == "missing":
            missing.append(cid)
        else:
            damaged[cid] = st
    stray = sorted(set(f.stem for f in chunks_dir.glob("*.csv")) - set(cids))
    claimed = sorted(f.name for f in (out / "claims").glob("*") if f.is_file() and not f.name.startswith("."))
    rpath = out / "results.csv"
    if not rpath.exists():
        results = "absent"
    else:
        rec = m.get("results") or {}
        data = rpath.read_bytes()
        if not rec:
            results = "present, no recorded hash"
        elif hashlib.sha256(data).hexdigest() != rec.get("sha256"):
            results = f"damaged: SHA-256 mismatch ({_rows(data)} rows, {rec.get('rows')} recorded)"
        else:
            results = "ok"
    return VerifyReport(out_dir=out, study=study.name, total=len(cids), ok=ok, missing=missing, damaged=damaged,
                        stray=stray, claimed=claimed, results=results)
# --------------------------------------------------------------------------- aggregation


def bootstrap_mean_ci(values: np.ndarray, n_boot: int = 1000, level: float = 0.95, seed: int = 0):
    """Mean and percentile-bootstrap CI of the mean of ``values`` (NaNs dropped)."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan, math.nan
    if v.size == 1:
        return float(v[0]), float(v[0]), float(v[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(n_boot, v.size))
    means = v[idx].mean(axis=1)
    a = (1 - level) / 2
    return float(v.mean()), float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


def summarize(df, by: Sequence[str], metrics: Sequence[str], n_boot: int = 1000, quantiles: Sequence[float] = ()):
    """One row per group: ``{metric}_mean``, ``{metric}_lo``, ``{metric}_hi`` (95% bootstrap CI), ``n_seeds``,
    and ``{metric}_q{q}`` for each requested quantile (high-probability claims)."""
    import pandas as pd

    rows = []
    for key, g in df.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        row = dict(zip(by, key))
        row["n_seeds"] = len(g)
        for m in metrics:
            mean, lo, hi = bootstrap_mean_ci(g[m].to_numpy(), n_boot)
            row[f"{m}_mean"], row[f"{m}_lo"], row[f"{m}_hi"] = mean, lo, hi
            for q in quantiles:
                row[f"{m}_q{q:g}"] = float(np.nanquantile(g[m].to_numpy(dtype=float), q))
        rows.append(row)
    return pd.DataFrame(rows)


def _slope(x: np.ndarray, y: np.ndarray) -> float:
    ok = (x > 0) & (y > 0) & np.isfinite(y)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def fit_slopes(df, x: str, y: str, by: Sequence[str] = (), upper_half: bool = True, n_boot: int = 500,
               seed: int = 0, log_correction: Optional[Callable[[np.ndarray], np.ndarray]] = None):
    """Least-squares slope of ``log mean(y)`` vs ``log x`` per group, with a 95% bootstrap CI over seeds.

    ``upper_half`` fits on the upper half of the ``x`` grid (the asymptotic
    range, docs/guide/studies.md#output). ``log_correction(x)`` divides the means by known log
    factors first (the "log-corrected slope"). Returns columns ``slope``,
    ``slope_lo``, ``slope_hi``, ``n_x``, ``x_min``, ``x_max``.
    """
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    groups = df.groupby(list(by), sort=True, dropna=False) if by else [((), df)]
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        xs = np.sort(g[x].unique())
        if upper_half and len(xs) >= 4:
            xs = xs[(len(xs) - 1) // 2:]
        per_x = [g.loc[g[x] == xv, y].to_numpy(dtype=float) for xv in xs]
        corr = log_correction(np.asarray(xs, float)) if log_correction else np.ones(len(xs))
        means = np.array([np.nanmean(v) if v.size else np.nan for v in per_x]) / corr
        s = _slope(np.asarray(xs, float), means)
        boots = []
        for _ in range(n_boot):
            bm = np.array([np.nanmean(v[rng.integers(0, v.size, v.size)]) if v.size else np.nan for v in per_x]) / corr
            boots.append(_slope(np.asarray(xs, float), bm))
        boots = np.asarray(boots)
        boots = boots[np.isfinite(boots)]
        row = dict(zip(by, key))
        row.update(slope=s, slope_lo=float(np.quantile(boots, 0.025)) if boots.size else math.nan,
                   slope_hi=float(np.quantile(boots, 0.975)) if boots.size else math.nan,
                   n_x=len(xs), x_min=float(xs[0]) if len(xs) else math.nan,
                   x_max=float(xs[-1]) if len(xs) else math.nan)
        rows.append(row)
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- plots


# Curve styles: colour, marker and line style all cycle with different periods (10, 9, 3), so no
# two curves of one Axes share all three (for fewer than 90 curves). Markers are hollow and their
# sizes alternate, so a curve drawn exactly over another leaves the one below visible.
CURVE_COLORS = tuple(f"C{i}" for i in range(10))
CURVE_MARKERS = ("o", "s", "D", "^", "v", "<", ">", "p", "h")
CURVE_LINESTYLES = ("-", "-.", ":")


def curve_style(i: int) -> dict:
    """Matplotlib keyword arguments of the ``i``-th empirical curve of an Axes (``i >= 0``).

    Colour, marker and line style cycle with periods 10, 9 and 3: curves ``i != j`` below 90 never
    share all three. Markers are hollow, with sizes alternating 7 / 5.5 / 4, so coincident
    curves stay visible. Theory curves use :func:`theory_style`.
    """
    if not isinstance(i, (int, np.integer)) or isinstance(i, bool) or i < 0:
        raise ValueError(f"i must be a non-negative integer (the curve's index), got {i!r}")
    return {"color": CURVE_COLORS[i % 10], "marker": CURVE_MARKERS[i % 9], "linestyle": CURVE_LINESTYLES[i % 3],
            "ms": (7.0, 5.5, 4.0)[i % 3], "mfc": "none", "mew": 1.2, "lw": (1.4, 1.4, 1.9)[i % 3]}


def theory_style(j: int, offset: int = 0) -> dict:
    """Matplotlib keyword arguments of the ``j``-th theory curve of an Axes: no marker, dashed
    (dotted from the 11th on), colour ``C{(offset + j) mod 10}`` (``offset``: the number of
    empirical curves: with fewer than 10 curves in all, no theory curve shares an empirical one's colour)."""
    for name, v in (("j", j), ("offset", offset)):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
    return {"color": CURVE_COLORS[(offset + j) % 10], "marker": "None", "linestyle": ("--", ":")[(j // 10) % 2],
            "lw": 1.3, "zorder": 1.8}


def plot_curves(summary, x: str, y: str, path: os.PathLike | str, hue: Optional[str] = None,
                theory: Optional[Mapping[str, Any]] = None, title: str = "", xlabel: Optional[str] = None,
                ylabel: Optional[str] = None, logx: bool = True, logy: bool = True, ax=None,
                hue_order: Optional[Sequence] = None):
    """Empirical means (``{y}_mean`` with ``{y}_lo``/``{y}_hi`` error bands) per ``hue`` group,
    with theory curves overlaid as dashed lines. ``theory`` maps a label to a
    callable of the x values or to ``(xs, ys)``. Every curve, theory included, is in the legend,
    and no two curves share colour, marker and line style (:func:`curve_style`). ``hue_order``
    fixes which style each ``hue`` value gets (:func:`plot_panels` passes every panel the same
    order). With ``ax`` the curves are drawn there and nothing is saved; otherwise writes a PNG.
    Returns ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(6.4, 4.4), dpi=110)
    start = len(ax.lines)   # styles continue after curves already on ``ax``
    if hue:
        order = list(hue_order) if hue_order is not None else sorted(summary[hue].unique())
        missing = sorted(set(summary[hue].unique()) - set(order), key=str)
        if missing:
            raise ValueError(f"hue_order must list every value of {hue!r}; missing {missing!r}")
        groups = [(k, summary[summary[hue] == k]) for k in order]
    else:
        order, groups = [None], [(None, summary)]
    for i, (key, g) in enumerate(groups):
        if not len(g):
            continue   # a value absent from this panel keeps its style index for the others
        g = g.sort_values(x)
        st = curve_style(start + i)
        ax.plot(g[x], g[f"{y}_mean"], label=f"{hue}={key}" if hue else y, **st)
        if f"{y}_lo" in g:
            ax.fill_between(g[x], g[f"{y}_lo"], g[f"{y}_hi"], color=st["color"], alpha=0.15, lw=0)
    xs_all = np.sort(summary[x].unique()).astype(float)
    for j, (label, th) in enumerate((theory or {}).items()):
        if callable(th):
            xx = np.geomspace(xs_all.min(), xs_all.max(), 64) if logx and xs_all.min() > 0 else np.linspace(
                xs_all.min(), xs_all.max(), 64)
            yy = th(xx)
        else:
            xx, yy = th
        ax.plot(xx, yy, label=f"theory: {label}", **theory_style(j, start + len(order)))
    from matplotlib.ticker import NullFormatter

    if logx:
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(xlabel or x)
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    n_entries = len(ax.get_legend_handles_labels()[0])
    if own and n_entries > 8:
        # many curves: the legend goes beside the axes, never over the data
        fig.set_size_inches(6.4 + 3.6, max(4.4, 0.17 * n_entries + 1.0))
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        ax.legend(fontsize=7)
    path = pathlib.Path(path)
    if own:
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
    return path


def plot_panels(summary, panel: str, x: str, y: str, path: os.PathLike | str, *, hue: Optional[str] = None,
                theory: Optional[Callable[[Any, Any], Mapping[str, Any]]] = None,
                title: Optional[Callable[[Any], str]] = None, ylabel: Optional[str] = None, width: float = 4.3,
                **kw) -> pathlib.Path:
    """One row of :func:`plot_curves` panels, one per value of ``summary[panel]``, saved as one PNG.

    ``theory(value, sub)`` returns the theory curves of the panel whose rows are
    ``sub``; ``title(value)`` its title. A ``hue`` value has the same style in every panel.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    values = sorted(summary[panel].unique())
    if hue and "hue_order" not in kw:
        kw["hue_order"] = sorted(summary[hue].unique())
    fig, axes = plt.subplots(1, len(values), figsize=(width * len(values), 3.8), dpi=110, squeeze=False)
    for ax, v in zip(axes[0], values):
        sub = summary[summary[panel] == v]
        plot_curves(sub, x, y, path=path, hue=hue, ax=ax, theory=theory(v, sub) if theory else None,
                    title=title(v) if title else f"{panel}={v}", ylabel=ylabel, **kw)
    fig.tight_layout()
    path = pathlib.Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path


def replot_results(out_dir: os.PathLike | str) -> list[pathlib.Path]:
    """Redraw the plots of a finished results directory from its ``results.csv``; returns their paths.

    Works where the chunks are gone (kept results keep only ``results.csv``, ``manifest.json`` and
    the tables): the study is rebuilt from the manifest's config, ``results.csv`` is checked against
    the SHA-256 the manifest records, and only the ``plot`` PNGs are rewritten, never a table or
    ``results.csv``. ``ValueError`` for a directory that is not a finished study.
    """
    import pandas as pd

    from .. import registry

    out = pathlib.Path(out_dir)
    mpath, rpath = out / "manifest.json", out / "results.csv"
    if not mpath.exists() or not rpath.exists():
        raise ValueError(f"out_dir {str(out)!r} is not a finished study results directory "
                         f"(needs manifest.json and results.csv)")
    manifest = json.loads(mpath.read_text())
    data = rpath.read_bytes()
    want = (manifest.get("results") or {}).get("sha256")
    if want is not None and hashlib.sha256(data).hexdigest() != want:
        raise ValueError(f"out_dir {str(out)!r}: results.csv does not match the SHA-256 in manifest.json")
    registry.load_all()
    study = registry.get_study(manifest["study"]).fn(dict(manifest["config"]))
    if study.plot is None:
        raise ValueError(f"study {study.name!r} has no plots")
    import matplotlib

    matplotlib.use("Agg")
    return [pathlib.Path(p) for p in (study.plot(pd.read_csv(io.BytesIO(data)), out) or [])]


def format_table(df, max_rows: int = 40, floatfmt: str = "{:.4g}") -> str:
    """A plain-text table (no extra dependency)."""
    if df is None or len(df) == 0:
        return "(empty)"
    cols = list(df.columns)
    rows = [[floatfmt.format(v) if isinstance(v, (float, np.floating)) else str(v) for v in r]
            for r in df.head(max_rows).itertuples(index=False)]
    widths = [max(len(str(c)), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
    line = "  ".join(str(c).rjust(w) for c, w in zip(cols, widths))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(v.rjust(w) for v, w in zip(r, widths)) for r in rows]
    if len(df) > max_rows:
        out.append(f"... ({len(df) - max_rows} more rows)")
    return "\n".join(out)
