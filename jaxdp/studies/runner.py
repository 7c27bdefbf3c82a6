"""Running a study: :func:`run_study` (the chunk loop, the processes sharing it, Ctrl-C, the merge); see
:mod:`jaxdp.studies.framework`. Files are read and written only through :mod:`jaxdp.studies.store`.
"""
from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import os
import pathlib
import signal
import sys
import threading
import time
from typing import Any, Callable, Optional

import numpy as np

from .config import _jsonable, validate_study
from .spec import Study, StudyInterrupted, StudyResult
from ..core.io import atomic_write
from .store import (
    _check_chunk,
    _chunk_id,
    _chunks,
    _claim,
    _discard_fresh,
    _open_manifest,
    _release,
    _rows,
    _versions,
    _write_chunk,
)

__all__ = ["run_study", "process_identity", "RunContext", "ChunkPlan"]


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


def _local_context():
    """Chunks are computed with this process's devices only (``jaxdp.core.simulate.process_local``)."""
    if _distributed_client_active():
        import importlib

        # the module, not the ``simulate`` function that ``jaxdp.core`` re-exports under the same name
        pl = getattr(importlib.import_module("jaxdp.core.simulate"), "process_local", None)
        if pl is not None:
            return pl()
    return contextlib.nullcontext()


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
        ctx = RunContext(study=study, out=pathlib.Path(out_dir), sig=sig, rank=rank, nproc=nproc, source=source,
                         progress=progress, analyze=analyze, plot=plot, merge=merge, max_chunks=max_chunks,
                         claim_timeout=claim_timeout, log=log)
        res = _prepare_run_and_merge(ctx=ctx)
        if sig.hit:   # a Ctrl-C during the merge: the results are complete, the run still says so
            raise StudyInterrupted()
        return res
    finally:
        sig.__exit__(None, None, None)


# --------------------------------------------------------------------------- one run


@dataclasses.dataclass(frozen=True)
class RunContext:
    """The settings of one :func:`run_study` call, fixed once the run starts.

    Attributes:
        study: the study run.
        out: the results directory.
        sig: the SIGINT flag (its ``hit`` is checked before each chunk).
        rank, nproc: this process's index and the number of processes sharing the directory.
        source: where ``rank`` and ``nproc`` came from (:func:`process_identity`, or ``"argument"``).
        progress, analyze, plot, merge, max_chunks, claim_timeout: as passed to :func:`run_study`.
        log: where warnings about damaged chunks go.
    """

    study: Study
    out: pathlib.Path
    sig: Any
    rank: int
    nproc: int
    source: str
    progress: bool
    analyze: bool
    plot: bool
    merge: bool
    max_chunks: Optional[int]
    claim_timeout: float
    log: Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class ChunkPlan:
    """The chunks of a run and their state when it started.

    Attributes:
        manifest: the manifest dict, completed and written when the results are merged.
        chunks: ``(point indices, seed indices)`` per chunk.
        cids: the chunks' names, in the order of ``chunks``.
        status: chunk name -> ``"ok"``, ``"missing"`` or ``"damaged: ..."``; updated as this process
            finishes chunks.
        damaged: the names of the chunks found damaged (they are recomputed).
        skipped: the number of chunks already done when the run started.
    """

    manifest: dict
    chunks: list
    cids: list
    status: dict
    damaged: list
    skipped: int


def _prepare_run_and_merge(*, ctx: RunContext) -> StudyResult:
    """Open (or join) the results directory and find which chunks are already done."""
    study, out = ctx.study, ctx.out
    created_dir = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"study": study.name, "description": study.description, "config": _jsonable(study.config),
                "n_points": len(study.points), "seeds": int(study.seeds), "versions": _versions(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S")}
    fresh = _open_manifest(out, manifest)
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
            ctx.log(f"jaxdp: chunk chunks/{cid}.csv is {status[cid]}; recomputing it")
    skipped = sum(s == "ok" for s in status.values())
    if ctx.sig.hit:
        raise StudyInterrupted()
    plan = ChunkPlan(manifest=manifest, chunks=chunks, cids=cids, status=status, damaged=damaged, skipped=skipped)
    try:
        return _run_and_merge(ctx=ctx, plan=plan)
    except Exception:
        if fresh and ctx.nproc == 1:   # failed before any chunk finished: leave nothing that blocks a rerun
            _discard_fresh(out, created_dir)
        raise


def _run_and_merge(*, ctx: RunContext, plan: ChunkPlan) -> StudyResult:
    """Compute this process's share of the missing chunks, then merge if every chunk is there."""
    study, out, sig = ctx.study, ctx.out, ctx.sig
    rank, nproc, source = ctx.rank, ctx.nproc, ctx.source
    manifest, chunks, cids, status = plan.manifest, plan.chunks, plan.cids, plan.status
    desc = study.name if nproc == 1 else f"{study.name} [{rank}/{nproc}]"
    bar = _progress_bar(len(chunks), plan.skipped, ctx.progress, desc)
    t_run = time.time()
    chunks_dir, claims_dir = out / "chunks", out / "claims"
    ran = 0
    try:
        with _local_context():
            for j in _order(len(chunks), rank, nproc):
                cid = cids[j]
                if status[cid] == "ok":
                    continue
                if ctx.max_chunks is not None and ran >= ctx.max_chunks:
                    break
                if sig.hit:
                    raise StudyInterrupted()
                claim = claims_dir / cid
                if not _claim(claim, ctx.claim_timeout):
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
    import pandas as pd   # here, not before the chunks: the first chunk starts computing without it

    frames = [pd.read_csv(io.BytesIO(d or b"")) for s, d in final.values() if s == "ok"]
    df = (pd.concat(frames, ignore_index=True).sort_values(["point", "seed"]).reset_index(drop=True)
          if frames else pd.DataFrame())
    if complete and ctx.merge:
        lock = out / "claims" / "merge"
        merged = _claim(lock, ctx.claim_timeout)
        if merged:
            try:
                data = df.to_csv(index=False).encode()
                atomic_write(out / "results.csv", data)
                if ctx.analyze and study.analyze is not None:
                    tables = study.analyze(df) or {}
                    for name, t in tables.items():
                        atomic_write(out / f"{name}.csv", t.to_csv(index=False))
                if ctx.plot and study.plot is not None:
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
                _release(lock)
    return StudyResult(df=df, tables=tables, plots=plots, out_dir=out, chunks_run=ran, chunks_skipped=plan.skipped,
                       complete=complete, merged=merged, damaged=plan.damaged, process=(rank, nproc, source))
