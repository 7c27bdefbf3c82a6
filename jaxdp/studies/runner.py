"""Running a study: :func:`run_study` (the chunk loop, the processes sharing it, Ctrl-C, the merge); see
:mod:`jaxdp.studies.framework`. Files are read and written only through :mod:`jaxdp.studies.store`.
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import signal
import sys
import threading
import time
from typing import Any, Callable, Optional

import numpy as np

from ..core import process_local
from ..core.io import atomic_write
from .config import _jsonable, validate_study
from .spec import Study, StudyInterrupted, StudyResult
from .store import (
    _check_chunk,
    _chunk_id,
    _chunks,
    _claim,
    _discard_fresh,
    _open_manifest,
    _release,
    _rows,
    _table,
    _versions,
    _write_chunk,
)

__all__ = ["run_study", "process_identity"]


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

    Returns:
        ``(index, count, source)``: this process's index in ``[0, count)``, the number of
        processes, and where they came from (``"jax.distributed"``, ``"JAXDP"``, ``"SLURM"`` or
        ``"single"``).

    Raises:
        ValueError: environment variables that are not integers, or an index outside ``[0, count)``.
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


def _chunk_frame(study: Study, pi: list[int], seeds: np.ndarray):
    pts = [study.points[i] for i in pi]
    results = study.run(pts, np.asarray(seeds))
    import pandas as pd   # after the run: a new process starts computing before it pays for pandas

    if len(results) != len(pts):
        raise RuntimeError(f"study {study.name!r}: run returned {len(results)} results for {len(pts)} points")
    rows = []
    for i, p, r in zip(pi, pts, results):
        block: dict[str, Any] = {"point": np.full(len(seeds), i), "seed": np.asarray(seeds)}
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
    """Run (or resume, or join) ``study`` into ``out_dir``; see :mod:`jaxdp.studies.framework`.

    ``max_chunks`` stops after that many new chunks (for tests of resumption).
    ``merge=False`` never writes ``results.csv`` (a launcher merges).
    ``claim_timeout`` (default ``JAXDP_CLAIM_TIMEOUT`` or 6 h) is the age after
    which another host's claim is taken over; ``process = (index, count)``
    overrides :func:`process_identity`.

    Args:
        study: the study (validated before anything is created).
        out_dir: the results directory (created; an existing one of the same study is resumed or joined).
        progress: show a progress bar over the chunks.
        analyze: run the study's ``analyze`` and write its tables as ``{name}.csv``.
        plot: run the study's ``plot``.
        max_chunks: stop after that many new chunks.
        merge: write ``results.csv``, the tables, plots and the final manifest once every chunk is done.
        claim_timeout: seconds after which another process's claim on a chunk is taken over.
        process: ``(index, count)`` of this process among those sharing the directory.
        log: where warnings (damaged chunks) go; default standard error.

    Returns:
        The :class:`StudyResult`: the per-seed results of the chunks done so far, the tables and
        plots (when this process merged), and the counts of chunks run and skipped.

    Raises:
        StudyInterrupted: after Ctrl-C, once the chunk in flight is saved.
        ValueError: a configuration or grid point the study refuses, or a directory holding
            another run.
    """
    log = log or (lambda s: print(s, file=sys.stderr, flush=True))
    validate_study(study)           # before anything is created or compiled
    rank, nproc, source = process_identity() if process is None else (*process, "argument")
    if claim_timeout is None:
        claim_timeout = float(os.environ.get("JAXDP_CLAIM_TIMEOUT", 6 * 3600))
    out = pathlib.Path(out_dir)
    chunks_dir, claims_dir = out / "chunks", out / "claims"
    # from here on a Ctrl-C only sets a flag (checked before each chunk and at the end), so it never
    # lands between creating a file and writing it
    with _SigintFlag() as sig:
        if sig.hit:
            raise StudyInterrupted()
        created_dir = not out.exists()
        out.mkdir(parents=True, exist_ok=True)
        manifest = {"study": study.name, "description": study.description, "config": _jsonable(study.config),
                    "n_points": len(study.points), "seeds": int(study.seeds), "versions": _versions(),
                    "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
        fresh = _open_manifest(out, manifest)
        chunks_dir.mkdir(exist_ok=True)
        claims_dir.mkdir(exist_ok=True)
        chunks = _chunks(study)
        cids = [_chunk_id(study, *c) for c in chunks]
        status = {cid: _check_chunk(chunks_dir, cid)[0] for cid in cids}
        damaged = [cid for cid in cids if status[cid].startswith("damaged")]
        for cid in damaged:
            log(f"jaxdp: chunk chunks/{cid}.csv is {status[cid]}; recomputing it")
        skipped = sum(s == "ok" for s in status.values())
        if sig.hit:
            raise StudyInterrupted()
        desc = study.name if nproc == 1 else f"{study.name} [{rank}/{nproc}]"
        bar = _progress_bar(len(chunks), skipped, progress, desc)
        t_run, ran = time.time(), 0
        try:
            with process_local():   # chunks are computed with this process's devices only
                for j in _order(len(chunks), rank, nproc):
                    cid = cids[j]
                    if status[cid] == "ok":
                        continue
                    if max_chunks is not None and ran >= max_chunks:
                        break
                    if sig.hit:
                        raise StudyInterrupted()
                    if not _claim(claims_dir / cid, claim_timeout):
                        continue
                    try:
                        if _check_chunk(chunks_dir, cid)[0] != "ok":   # another process may have finished it
                            pi, seeds = chunks[j]
                            _write_chunk(chunks_dir, cid, _chunk_frame(study, pi, seeds),
                                         {"study": study.name, "points": [int(i) for i in pi],
                                          "seeds": [int(seeds[0]), int(seeds[-1])]})
                            ran += 1
                            if bar is not None:
                                bar.update(1)
                        status[cid] = "ok"
                    finally:
                        _release(claims_dir / cid)
        except Exception:
            if fresh and nproc == 1:   # failed before any chunk finished: leave nothing that blocks a rerun
                _discard_fresh(out, created_dir)
            raise
        finally:
            if bar is not None:
                bar.close()
        if sig.hit:
            raise StudyInterrupted()
        elapsed = time.time() - t_run
        df, complete = _table(chunks_dir, cids)   # pandas only now: the first chunk starts computing without it
        tables, plots, merged = {}, [], False
        if complete and merge and _claim(claims_dir / "merge", claim_timeout):
            merged = True
            try:
                data = df.to_csv(index=False).encode()
                atomic_write(out / "results.csv", data)
                if analyze and study.analyze is not None:
                    tables = study.analyze(df) or {}
                    for name, t in tables.items():
                        atomic_write(out / f"{name}.csv", t.to_csv(index=False))
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
                atomic_write(out / "manifest.json", json.dumps(manifest, indent=2, default=str))
            finally:
                _release(claims_dir / "merge")
        if sig.hit:   # a Ctrl-C during the merge: the results are complete, the run still says so
            raise StudyInterrupted()
    return StudyResult(df=df, tables=tables, plots=plots, out_dir=out, chunks_run=ran, chunks_skipped=skipped,
                       complete=complete, merged=merged, damaged=damaged, process=(rank, nproc, source))
