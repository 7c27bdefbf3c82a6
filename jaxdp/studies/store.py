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
from typing import Optional

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


_HOST = socket.gethostname()


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


def _open_manifest(out: pathlib.Path, manifest: dict) -> bool:
    """Create ``manifest.json`` with ``O_EXCL`` (returns ``True``), or check that the existing one has this study
    and config (returns ``False``)."""
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
        return False
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(manifest, indent=2, default=str))
        f.flush()
        os.fsync(f.fileno())
    return True


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
        frames.append(pd.read_csv(io.BytesIO(data or b"")))
    if not frames:
        return pd.DataFrame()
    df = pd.concat(frames, ignore_index=True)
    return df.sort_values(["point", "seed"]).reset_index(drop=True)


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
