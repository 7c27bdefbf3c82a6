"""One-shot estimators ``fn(key, params) -> metrics`` batched over seeds by ``jaxdp.core.monte_carlo`` (docs/guide/concepts.md#monte-carlo).

Each builder is cached on its static arguments (instance, n, shapes), so the returned function object is
reused and ``monte_carlo`` compiles it once. The function samples a fresh dataset from the instance with
its key, runs the private algorithm and evaluates the exact excess loss (closed form, float64).
Use :func:`run_sco` (enters ``jax.enable_x64()``) rather than calling ``monte_carlo`` directly.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any, Mapping

import jax
import jax.numpy as jnp
import numpy as np

from ..core.simulate import monte_carlo, seed_keys
from .instances import SCOInstance, empirical_value, growth_instance
from .inverse_sensitivity import exact_excess_quadrature, exact_grad_inv_estimator, grad_inverse_sensitivity
from .localization import EpochParams, LocalizationParams, epoch_growth_sco, localization_sco
from .planners import plan_epoch_growth_sco, plan_grad_inverse_sensitivity, plan_localization_sco

__all__ = ["epoch_estimator", "localization_estimator", "grad_inv_estimator", "run_sco", "run_sco_cpu",
           "planned_estimator", "exact_law_reference", "growth_point", "run_growth_point"]


def _x64_args(args):
    return jax.tree_util.tree_map(lambda v: jnp.asarray(v, jnp.float64) if isinstance(v, float) else v, args)


def _warn_refused(out):
    if isinstance(out, dict) and "gap_ok" in out:
        ok = np.asarray(out["gap_ok"], bool)
        if not ok.all():
            warnings.warn(f"{int((~ok).sum())} of {ok.size} runs refused: a phase's solver missed the gap its noise "
                          f"is calibrated for, so the run released NaN (raise n_iter / max_solver_rounds); their "
                          f"metrics are NaN", RuntimeWarning, stacklevel=3)
    return out


def run_sco(fn, keys: jax.Array, *args: Any):
    """``monte_carlo(fn, keys, *args)`` in float64 (``jax.enable_x64`` context; the global flag is untouched).

    Where the metrics carry ``gap_ok`` (Algorithms 1–2), runs that refused (a phase's solver missed its
    certified gap: NaN output and excess) are reported with a ``RuntimeWarning``.

    Args:
        fn: the one-shot estimator.
        keys: the PRNG keys, one per run.

    Returns:
        The metrics of :func:`jaxdp.core.monte_carlo`.
    """
    with jax.enable_x64():
        out = monte_carlo(fn, keys, *_x64_args(args))
    return _warn_refused(out)


# XLA:CPU's YNNPACK fusion lowers the float64 reductions of the 1-D solvers (a mean over the samples inside
# every bisection step) about 40x slower than XLA's own loops (measured: 90-100 ns per sample and step
# against 2-3 ns, for the 1-D regression and atom instances); run_sco_cpu compiles without it.
_CPU_COMPILER_OPTIONS = {"xla_cpu_experimental_ynn_fusion_type": ""}


@functools.lru_cache(maxsize=None)
def _compiled(fn, n_args: int):
    return jax.jit(jax.vmap(fn, in_axes=(0,) + (None,) * n_args), compiler_options=_CPU_COMPILER_OPTIONS)


def run_sco_cpu(fn, keys: jax.Array, *args: Any):
    """:func:`run_sco`, compiled without XLA:CPU's YNNPACK fusions on a single CPU device (about 40x faster on the
    1-D solvers' float64 reductions); elsewhere :func:`run_sco` itself.

    Args:
        fn: the one-shot estimator.
        keys: the PRNG keys, one per run.

    Returns:
        The metrics, as NumPy arrays on the CPU path.
    """
    if jax.default_backend() != "cpu" or len(jax.devices()) != 1:
        return run_sco(fn, keys, *args)
    with jax.enable_x64():
        args = _x64_args(args)
        out = jax.tree_util.tree_map(np.asarray, _compiled(fn, len(args))(keys, *args))
    return _warn_refused(out)


def _metrics(inst, x, info):
    xstar = jnp.asarray(inst.xstar, x.dtype)
    gap_ok = info["certified"]        # False: the run refused and x is NaN
    return dict(excess=inst.excess(x), dist=jnp.sqrt(jnp.sum((x - xstar) ** 2)), gap_ok=gap_ok,
                max_gap_ratio=jnp.max(info["gap"] / info["gap_required"]))


def _fresh_sample_estimator(inst, n: int, run):
    """``fn(key, params) -> metrics``: ``run(key, data, x0, params) -> (x, info)`` on ``n`` fresh samples from
    ``x0 = 0``."""
    def fn(key, params):
        kd, ka = jax.random.split(key)
        data = inst.sample(kd, n)
        x0 = jnp.zeros((inst.d,), data.dtype)
        x, info = run(ka, data, x0, params)
        return _metrics(inst, x, info)

    return fn


@functools.lru_cache(maxsize=None)
def epoch_estimator(inst: SCOInstance, n: int, n_epochs: int, k: int, n_iter: int = 100):
    """``fn(key, EpochParams) -> {excess, dist, gap_ok, max_gap_ratio}`` for Algorithm 2 on ``n`` fresh samples.

    Args:
        inst: the instance (:class:`SCOInstance`).
        n: the sample size.
        n_epochs: the number of epochs (static).
        k: the phases per epoch (static).
        n_iter: the solver iterations (static).

    Returns:
        The estimator ``fn(key, EpochParams)``.
    """
    def run(key, data, x0, params: EpochParams):
        return epoch_growth_sco(key, inst, data, x0, params, n_epochs=n_epochs, k=k, n_iter=n_iter)

    return _fresh_sample_estimator(inst, n, run)


@functools.lru_cache(maxsize=None)
def localization_estimator(inst: SCOInstance, n: int, k: int, n_iter: int = 100):
    """``fn(key, LocalizationParams) -> metrics`` for Algorithm 1 alone (the worst-case baseline, G7).

    Args:
        inst: the instance (:class:`SCOInstance`).
        n: the sample size.
        k: the number of phases (static).
        n_iter: the solver iterations (static).

    Returns:
        The estimator ``fn(key, LocalizationParams)``.
    """
    def run(key, data, x0, params: LocalizationParams):
        return localization_sco(key, inst, data, x0, params, k=k, n_iter=n_iter)

    return _fresh_sample_estimator(inst, n, run)


@functools.lru_cache(maxsize=None)
def grad_inv_estimator(inst: SCOInstance, n: int, rho: float, M: int):
    """``fn(key, eps) -> {excess, erm_excess}``: grid gradient inverse sensitivity (Theorem 1).

    ``erm_excess = f_S(x̂) - f_S(x̂_S)`` uses the instance's closed-form empirical minimizer.

    Args:
        inst: the instance (:class:`SCOInstance`).
        n: the sample size.
        rho: the smoothing radius ρ.
        M: the grid cells per axis.

    Returns:
        The estimator ``fn(key, eps)``.

    Raises:
        ValueError: the instance has no closed-form empirical minimizer.
    """
    if inst.empirical_minimizer is None:
        raise ValueError(f"{inst.name} has no closed-form empirical minimizer; use another instance for ERM excess")

    def fn(key, eps):
        kd, ka = jax.random.split(key)
        data = inst.sample(kd, n)
        x, _ = grad_inverse_sensitivity(ka, inst, data, eps, rho=rho, M=M)
        xs = inst.empirical_minimizer(data)
        erm = empirical_value(inst, x, data) - empirical_value(inst, xs, data)
        return dict(excess=inst.excess(x), erm_excess=jnp.maximum(erm, 0.0))

    return fn


def planned_estimator(algo: str, inst: SCOInstance, n: int, *, eps: float, delta: float = 0.0, kappa_low: float = 1.5,
                      rho_rule: str = "theorem", M: int = 0, n_iter: int = 100) -> tuple:
    """One private SCO algorithm at its planner's parameters, as an estimator for :func:`run_sco_cpu`.

    ``"epoch"``: EPOCH-GROWTH at :func:`~jaxdp.sco.plan_epoch_growth_sco`'s rate-mode parameters (Asi, Levy & Duchi
    2021, "Adapting to Function Difficulty and Growth Conditions in Private Optimization", Theorems 2–3);
    ``"localization"``: the localization baseline at :func:`~jaxdp.sco.plan_localization_sco`'s (Proposition 2);
    ``"grad_inv"``: the ρ-smooth gradient inverse-sensitivity mechanism (Theorem 1) sampled exactly
    (:func:`~jaxdp.sco.inverse_sensitivity.exact_grad_inv_estimator`: ``M = 0`` the continuous density, else the
    ``M``-cell grid law) at :func:`~jaxdp.sco.plan_grad_inverse_sensitivity`'s ρ. The planners are called with
    ``L = inst.L`` and ``D = 2 inst.R``.

    Args:
        algo: ``"epoch"``, ``"localization"`` or ``"grad_inv"``.
        inst: the instance.
        n: the sample size.
        eps, delta: the privacy budget (``delta = 0``: pure DP).
        kappa_low: EPOCH-GROWTH's lower bound on the growth exponent.
        rho_rule: the inverse-sensitivity mechanism's ρ rule (``"theorem"`` or ``"agnostic"``).
        M: the inverse-sensitivity grid's cells (0: the continuous density).
        n_iter: the solver iterations per phase (EPOCH-GROWTH, localization).

    Returns:
        ``(fn, args, plan)``: ``run_sco_cpu(fn, keys, args)`` runs it once per key; ``plan`` is the planner's
        ``params`` dict.

    Raises:
        ValueError: an unknown ``algo``, or a planner refusing its arguments.
    """
    kw: dict = dict(eps=eps, d=inst.d, n=n, L=inst.L, D=2 * inst.R)
    P: Any
    if algo == "grad_inv":
        pl = plan_grad_inverse_sensitivity(lam=inst.lam, kappa=inst.kappa, rho_rule=rho_rule, M=max(int(M), 2),
                                           **kw).params
        return exact_grad_inv_estimator(inst, n, float(pl["rho"]), int(M)), float(eps), pl
    if algo == "epoch":
        pl = plan_epoch_growth_sco(delta=delta, kappa_low=kappa_low, mode="rate", **kw).params
        fn, P, lr = epoch_estimator(inst, n, pl["n_epochs"], pl["k"], n_iter), EpochParams, "eta0"
    elif algo == "localization":
        pl = plan_localization_sco(delta=delta, mode="rate", **kw).params
        fn, P, lr = localization_estimator(inst, n, pl["k"], n_iter), LocalizationParams, "eta"
    else:
        raise ValueError(f"algo must be 'epoch', 'localization' or 'grad_inv', got {algo!r}")
    return fn, P(*(float(pl[k]) for k in (lr, "eps", "delta", "gauss_mult", "phase_offset"))), pl


def exact_law_reference(kappa: float, n: int, eps: float, rho_rule: str = "theorem") -> tuple:
    """The exact reference of the continuous ρ-smooth gradient inverse-sensitivity mechanism on the 1-D noiseless
    κ-regression instance: its planned ρ and the mean ERM excess its law gives there.

    ρ is :func:`planned_estimator`'s (``"grad_inv"``: :func:`~jaxdp.sco.plan_grad_inverse_sensitivity` under the
    ``rho_rule``) on ``growth_instance("regression", kappa, 1, n)``; the mean is
    :func:`~jaxdp.sco.inverse_sensitivity.exact_excess_quadrature` at that ρ (Asi, Levy & Duchi 2021, "Adapting to
    Function Difficulty and Growth Conditions in Private Optimization", Theorem 1), the value an exact sampler's
    mean ERM excess must match.

    Args:
        kappa: the growth exponent κ (> 1).
        n: the sample size.
        eps: the privacy budget.
        rho_rule: ``"theorem"`` or ``"agnostic"``.

    Returns:
        ``(rho, exact_mean)``.
    """
    inst = growth_instance("regression", kappa, 1, n)
    rho = float(planned_estimator("grad_inv", inst, n, eps=eps, rho_rule=rho_rule, M=2)[2]["rho"])
    return rho, exact_excess_quadrature(kappa, n, eps, rho)


def growth_point(point: Mapping[str, Any], n_iter: int = 100) -> tuple:
    """:func:`planned_estimator` on :func:`~jaxdp.sco.growth_instance` at one point of a κ-growth sweep (Asi, Levy &
    Duchi 2021, "Adapting to Function Difficulty and Growth Conditions in Private Optimization", Theorems 1–3 and
    Proposition 2).

    Args:
        point: ``algo``, ``inst``, ``kappa``, ``d``, ``n_samples``, ``eps``, ``delta``, ``kappa_low``, ``rho_rule``
            and ``M`` (the arguments of :func:`~jaxdp.sco.growth_instance` and :func:`planned_estimator`).
        n_iter: the solver iterations per phase (EPOCH-GROWTH, localization).

    Returns:
        ``(fn, args, plan)`` of :func:`planned_estimator`.
    """
    inst = growth_instance(point["inst"], point["kappa"], point["d"], point["n_samples"])
    return planned_estimator(point["algo"], inst, point["n_samples"], eps=point["eps"], delta=point["delta"],
                             kappa_low=point["kappa_low"], rho_rule=point["rho_rule"], M=point["M"], n_iter=n_iter)


def run_growth_point(point: Mapping[str, Any], seed: int, seeds, n_iter: int = 100, batch: int = 16) -> dict:
    """One float64 run of :func:`growth_point`'s estimator per seed index (:func:`run_sco_cpu`), ``batch`` seeds per
    vmapped call (memory only: seed index ``i`` always runs with key ``seed_keys(seed, [i])``).

    Args:
        point: the point (:func:`growth_point`).
        seed: the base seed of the keys (:func:`~jaxdp.core.simulate.seed_keys`).
        seeds: the seed indices.
        n_iter: the solver iterations per phase.
        batch: the seeds per vmapped call (positive).

    Returns:
        ``(len(seeds),)`` float arrays: ``excess``, ``erm_excess`` and ``accepted`` for ``algo = "grad_inv"`` (the
        exact inverse-sensitivity law), else ``excess``, ``dist`` and ``gap_ok``.

    Raises:
        ValueError: ``batch`` not positive.
    """
    if int(batch) < 1:
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    fn, args, _ = growth_point(point, n_iter)
    names = ("excess", "erm_excess", "accepted") if point["algo"] == "grad_inv" else ("excess", "dist", "gap_ok")
    seeds = np.asarray(seeds)
    parts = [run_sco_cpu(fn, seed_keys(int(seed), seeds[i:i + batch]), args) for i in range(0, len(seeds), batch)]
    return {k: np.concatenate([np.asarray(q[k], float) for q in parts]) for k in names}
