"""Samplers for log-concave densities on convex domains (the samplers layer; docs/algorithms/primitives.md#samplers).

* Langevin kernels with a fixed number of steps (run inside ``scan``, vmappable):
  ``mala`` (Metropolis-adjusted; proposals outside the domain rejected, so the
  restricted target is exactly invariant) and ``ula`` (unadjusted; reflection or
  projection at the boundary, biased), their one-step kernels and
  ``mala_schedule`` / ``ula_schedule`` (step size and step count from the
  smoothness and strong convexity of the target).
* Domains (``jaxdp.core.domains``, the one family the OCO learners use too): ``ball``, ``box``, ``simplex``
  (affine chart), ``unconstrained``.
* Exact samplers: ``sample_trunc_gauss_ball`` (``μ^rmw`` for linear losses),
  ``sample_trunc_gauss_ball_rejection``, ``sample_grid`` / ``make_grid``.

We implement MALA ourselves rather than wrapping ``blackjax.mala``: the
constraint must be handled inside the kernel (reject before evaluating the
log-density, which may be undefined outside the domain), the simplex needs a
chart, the chain must have a fixed step count and jaxdp's key discipline, and
we want acceptance statistics per run. The kernel uses the same random draws
as ``blackjax.mala``; tests check that unconstrained chains agree with
blackjax step for step.
"""
from ..core.domains import (Ball, Box, Simplex, Unconstrained, as_domain, ball, box, project_simplex, simplex,
                            unconstrained)
from .exact import (Grid, log_chi2_cdf, make_grid, sample_grid, sample_trunc_gauss_ball,
                    sample_trunc_gauss_ball_rejection)
from .langevin import (LangevinState, MALAInfo, ULAInfo, langevin_init, mala, mala_kernel, mala_schedule, ula,
                       ula_kernel, ula_schedule)

__all__ = [
    "mala", "ula", "mala_kernel", "ula_kernel", "langevin_init", "LangevinState", "MALAInfo", "ULAInfo",
    "mala_schedule", "ula_schedule",
    "ball", "box", "simplex", "unconstrained", "as_domain", "project_simplex", "Ball", "Box", "Simplex",
    "Unconstrained",
    "sample_trunc_gauss_ball", "sample_trunc_gauss_ball_rejection", "sample_grid", "make_grid", "Grid",
    "log_chi2_cdf",
]
