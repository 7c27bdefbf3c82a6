"""The results directory of a study (manifest, chunks with their SHA-256 records, claims, ``results.csv``) and
its read-only views :func:`load_results` and :func:`verify_study`; see :mod:`jaxdp.studies.framework`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import pathlib
import platform
import socket
import sys
import time
from typing import Callable, Optional

import numpy as np

from ..core.io import atomic_write
from .config import _jsonable, _normalized
from .spec import Study

__all__ = ["load_results", "verify_study", "VerifyReport"]


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


def _rows(data: bytes) -> int:
    """Data rows of a CSV written by pandas (header excluded)."""
    return max(data.count(b"\n") - 1, 0)


def _write_chunk(chunks_dir: pathlib.Path, cid: str, data: bytes, info: dict) -> None:
    atomic_write(chunks_dir / f"{cid}.csv", data)
    side = dict(info, sha256=hashlib.sha256(data).hexdigest(), rows=_rows(data), bytes=len(data))
    atomic_write(chunks_dir / f"{cid}.json", json.dumps(side, indent=1, default=str))


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
    return "ok", data


def _table(chunks_dir: pathlib.Path, cids: list, log: Optional[Callable[[str], None]] = None) -> tuple:
    """``(df, complete)``: the tidy table of the verified chunks among ``cids`` (sorted by point and seed; the
    columns in the order the chunks first show them) and whether every one of them is verified. A damaged chunk
    is left out and named to ``log``."""
    import pandas as pd

    frames = []
    for cid in cids:
        st, data = _check_chunk(chunks_dir, cid)
        if st == "ok":
            frames.append(pd.read_csv(io.BytesIO(data or b"")))
        elif log is not None and st != "missing":
            log(f"jaxdp: chunk chunks/{cid}.csv is {st}; left out")
    df = (pd.concat(frames, ignore_index=True).sort_values(["point", "seed"]).reset_index(drop=True)
          if frames else pd.DataFrame())
    return df, len(frames) == len(cids)


_HOST = socket.gethostname()


def _create(path: pathlib.Path, text: str) -> bool:
    """Create ``path`` holding ``text`` unless it exists; ``True`` if this call created it.

    The text is written in full beside ``path`` (:func:`~jaxdp.core.io.atomic_write`) and hard-linked to it;
    ``os.link`` fails if ``path`` exists, so of several processes (on one host, or on several sharing the folder)
    exactly one creates it, and no reader ever sees a partial file. On a file system without hard links (some FUSE
    mounts) it falls back to ``O_CREAT | O_EXCL`` and one ``write``: still exclusive, whole once written.
    """
    tmp = path.with_name(f".{path.name}.new-{_HOST}-{os.getpid()}")
    atomic_write(tmp, text)
    try:
        os.link(tmp, path)
        return True
    except FileExistsError:
        return False
    except OSError:
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return True
    finally:
        tmp.unlink(missing_ok=True)


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host is running: a zombie (killed, not yet reaped by its
    parent) is dead, so its claims are taken over at once."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # pragma: no cover - PermissionError: alive, another user's
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
        return state not in (b"Z", b"X")
    except (OSError, IndexError):   # no /proc (macOS): trust kill(pid, 0)
        return True


def _claim_stale(path: pathlib.Path, timeout: float) -> bool:
    try:
        age = time.time() - path.stat().st_mtime
        c = json.loads(path.read_text())
        host, pid = c["host"], int(c["pid"])
    except (FileNotFoundError, ValueError, KeyError, TypeError):   # gone, or garbage: a claim is written whole
        return True
    if host == _HOST:
        return pid == os.getpid() or not _pid_alive(pid)
    return age > timeout


def _claim(path: pathlib.Path, timeout: float) -> bool:
    """Create the claim file (:func:`_create`); take over a stale claim. True if this process holds it."""
    claim = json.dumps({"host": _HOST, "pid": os.getpid(), "time": time.time()})
    if _create(path, claim):
        return True
    if not _claim_stale(path, timeout):
        return False
    aside = path.with_name(f".{path.name}.stale-{_HOST}-{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        os.rename(path, aside)
        os.unlink(aside)
    return _create(path, claim)


def _release(path: pathlib.Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _read_manifest(out: pathlib.Path) -> dict:
    """The ``manifest.json`` of a results directory (always written whole: :func:`_create`, ``atomic_write``)."""
    try:
        return json.loads((out / "manifest.json").read_text())
    except FileNotFoundError:
        raise ValueError(f"{str(out)!r} is not a study results directory (no manifest.json)") from None
    except ValueError:
        raise ValueError(f"{str(out / 'manifest.json')!r} is damaged (not JSON); it is not a results directory this "
                         f"version can resume: use another --out or delete it") from None


def _open_manifest(out: pathlib.Path, manifest: dict) -> bool:
    """Create ``manifest.json`` (returns ``True``), or check that the existing one has this study and config
    (returns ``False``)."""
    if _create(out / "manifest.json", json.dumps(manifest, indent=2, default=str)):
        return True
    old = _read_manifest(out)
    if old.get("study") != manifest["study"] or _normalized(old.get("config")) != _normalized(manifest["config"]):
        diff = sorted(k for k in set(old.get("config") or {}) | set(manifest["config"])
                      if _normalized((old.get("config") or {}).get(k)) != _normalized(manifest["config"].get(k)))
        raise ValueError(
            f"results directory {str(out)!r} holds a different study/config (study {old.get('study')!r}"
            + (f", differing in {', '.join(diff[:6])}" if diff and old.get("study") == manifest["study"] else "")
            + "); use another --out or delete it")
    return False


def _discard_fresh(out: pathlib.Path, created_dir: bool) -> None:
    """Remove what a run that failed before finishing any chunk created in a fresh directory (its manifest, the
    empty ``chunks`` and ``claims`` folders, and the directory itself if the run created it), so that the failure
    leaves nothing that would block the next run."""
    if any((out / "chunks").glob("*.csv")):
        return
    (out / "manifest.json").unlink(missing_ok=True)
    for d in (out / "chunks", out / "claims", *((out,) if created_dir else ())):
        try:
            d.rmdir()
        except OSError:
            pass


def _versions() -> dict:
    import jax

    from .._version import __version__

    try:
        devs = [str(d) for d in jax.local_devices()]
        kind = jax.local_devices()[0].device_kind
    except Exception:  # pragma: no cover
        devs, kind = [], "unknown"
    return {"jaxdp": __version__, "jax": jax.__version__, "numpy": np.__version__,
            "python": sys.version.split()[0], "platform": platform.platform(), "devices": devs,
            "device_kind": kind, "backend": jax.default_backend()}


def load_results(out_dir: os.PathLike | str, study: Optional[Study] = None):
    """The tidy table of every finished, verified chunk in ``out_dir`` (sorted by point and seed).

    Damaged chunks are left out (with a warning on stderr).

    Args:
        out_dir: the results directory (its ``chunks/``).
        study: the study whose grid the chunks must belong to; ``None``: every chunk file found.

    Returns:
        A ``pandas.DataFrame``: one row per point and seed (the point's keys, ``point``, ``seed`` and
        the metrics); empty when no chunk is finished.
    """
    out = pathlib.Path(out_dir)
    names = sorted(f.stem for f in (out / "chunks").glob("*.csv"))
    if study is not None:
        wanted = {_chunk_id(study, *c) for c in _chunks(study)}
        names = [n for n in names if n in wanted]
    return _table(out / "chunks", names, log=lambda s: print(s, file=sys.stderr))[0]


@dataclasses.dataclass
class VerifyReport:
    """What :func:`verify_study` found: chunk names by state, and the state of ``results.csv``.

    Attributes:
        out_dir: the results directory checked.
        study: the study's name.
        total: the number of chunks of the study's grid.
        ok: the chunks whose SHA-256 and row count match their record.
        missing: the chunks not written yet.
        damaged: chunk name -> what is wrong with it.
        stray: chunk files in the directory that are not in the study's grid (ignored).
        claimed: the claim files present (chunks held by a running, or dead, process).
        results: the state of ``results.csv``: ``"ok"``, ``"absent"``, ``"present, no recorded hash"``
            or ``"damaged: ..."``.
    """

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
    ``results.csv`` against the manifest, without running anything.

    Args:
        out_dir: the results directory.
        study: the study whose chunks should be there (default: rebuilt from the manifest's config
            through the registry).

    Returns:
        The :class:`VerifyReport`.

    Raises:
        ValueError: the directory has no ``manifest.json``.
    """
    out = pathlib.Path(out_dir)
    m = _read_manifest(out)
    if study is None:
        from .. import registry

        study = registry.get_study(m["study"]).fn(dict(m["config"]))
    chunks_dir = out / "chunks"
    cids = [_chunk_id(study, *c) for c in _chunks(study)]
    states = {cid: _check_chunk(chunks_dir, cid)[0] for cid in cids}
    ok = [cid for cid in cids if states[cid] == "ok"]
    missing = [cid for cid in cids if states[cid] == "missing"]
    damaged = {cid: st for cid, st in states.items() if st.startswith("damaged")}
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
