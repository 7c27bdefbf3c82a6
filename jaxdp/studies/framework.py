"""Studies: a grid of points × seeds, run in verified, resumable chunks by one or many processes.

A ``Study`` lists its grid points (dicts of JSON scalars) and a ``run``
function that evaluates a group of points for a block of seed indices and
returns per-seed metrics. ``run_study``:

1. validates everything first (:func:`validate_study`: the declared
   parameters of the study, see :class:`Param`, and every grid point's
   ``check_point``, which makes every planner call a run will make), before
   any directory is created or anything is compiled;
2. creates ``manifest.json`` exclusively (written whole beside it, then
   hard-linked: one config per results directory: a second run with another
   config is refused; a second run with the same config joins and takes other
   chunks);
3. splits the grid into chunks (points sharing ``group_by`` values, up to
   ``points_per_chunk`` of them, × blocks of ``seeds_per_chunk`` seeds); a
   process computes a chunk only after creating its claim file
   ``claims/<chunk>`` the same way (a claim whose owner pid is dead on this
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

Modules (this one re-exports the public names of each):

* :mod:`~jaxdp.studies.spec`: ``Study``, ``StudyResult``, ``StudyInterrupted``, ``Param``,
  ``declare_params``, ``PARAM_SPECS`` (what a study declares);
* :mod:`~jaxdp.studies.config`: ``resolve_config``, ``check_params``, ``validate_study``
  (``--set`` overrides, ``--quick`` sizes, seeds and every grid point checked before a run);
* :mod:`~jaxdp.studies.store`: the results directory (chunks, claims, manifest, hashes),
  ``load_results``, ``verify_study``, ``VerifyReport``;
* :mod:`~jaxdp.studies.runner`: ``run_study``, the chunk loop, ``process_identity``, Ctrl-C;
* :mod:`~jaxdp.studies.analysis`: ``summarize``, ``fit_slopes``, ``joint_slope_boot``, ``format_table``,
  ``verdict_table`` (the module has the rest: bootstrap intervals, the docs' generated blocks);
* :mod:`~jaxdp.studies.plots`: ``plot_curves``, ``plot_panels``, ``replot_results``, ``curve_style``,
  ``theory_style``.
"""
from __future__ import annotations

from .analysis import fit_slopes, format_table, joint_slope_boot, summarize, verdict_table
from .config import check_params, resolve_config, validate_study
from .plots import curve_style, plot_curves, plot_panels, replot_results, theory_style
from .runner import process_identity, run_study
from .spec import PARAM_SPECS, Param, RunFn, Study, StudyInterrupted, StudyResult, declare_params, inferred_params
from .store import VerifyReport, load_results, verify_study

__all__ = [
    "Study", "run_study", "load_results", "summarize", "fit_slopes", "plot_curves",
    "StudyResult", "resolve_config", "format_table", "plot_panels", "Param", "declare_params", "check_params",
    "validate_study", "verify_study", "VerifyReport", "StudyInterrupted", "process_identity", "PARAM_SPECS",
    "joint_slope_boot", "verdict_table", "RunFn", "inferred_params", "curve_style", "theory_style", "replot_results",
]
