"""DP-FTRL: follow-the-regularized-leader on tree-aggregated gradients
(Kairouz et al. 2021; REAL Alg. 3 and Thm 4;
docs/algorithms/realizable.md#dp-ftrl).

At round ``t`` (1-indexed) the learner plays

    x_t = argmin_{x in X} <gbar_{t-1}, x> + (lambda/2) ||x||^2 = Proj_X(-gbar_{t-1} / lambda),

where ``gbar_{t-1}`` is the binary-tree (tree-aggregation) release of the
prefix sum ``sum_{i<t} g_i`` of the clipped gradients
``g_i = clip_C(grad l_i(x_i))`` (``gbar_0 = 0``): every tree node gets fresh
``N(0, sigma^2 I_d)`` noise, so ``b_t = gbar_t - sum_{i<=t} g_i`` has
``E||b_t||^2 = popcount(t) d sigma^2`` (the same release as
``jaxdp.privacy.mechanisms.tree_step``, stored leaner: see :class:`LeanTree`).

Privacy (replace-one neighbours, ``||g_t|| <= C`` by clipping, so
unconditional): the released tree has l2-sensitivity ``2C sqrt(H)`` and
``sigma = C sqrt(2H / rho*(eps, delta))`` (``tree_aggregation_sigma``)
makes the whole run (eps, delta)-DP; the actions are post-processing.

Regret (REAL Thm 4): non-negative, convex, L-Lipschitz, beta-smooth losses on
the ball of radius D, with

    lambda = 32 beta + (beta/eps^2 (L/D)^2 T d log(T) log(1/delta))^{1/3},

    E[Reg_T] <= O(L* + beta D^2 + (L D sqrt(beta D^2 T d log T log(1/delta)) / eps)^{2/3}).

General (non-realizable) setting (Kairouz et al.): FTRL with perturbed
prefix sums has ``Reg_T <= lambda D^2 + T C^2/lambda + T C sqrt(d H) sigma/lambda``
(``E||b_t|| <= sqrt(d H) sigma``), minimized by
``lambda = sqrt(T C (C + sqrt(dH) sigma)) / D``.

Other continual-counting mechanisms (``noise=``, :func:`dp_ftrl`): any
:class:`jaxdp.privacy.mechanisms.matrix_factorization.ContinualCounter` replaces the tree (Denisov et al. 2022;
Fichtenberger et al. 2023; McKenna et al. 2024; Dvijotham et al. 2024; Honaker 2015), calibrated by
:func:`plan_dp_ftrl` to the same (eps, delta) (docs/algorithms/matrix-factorization.md).

Keys per step: one (the ``d`` Gaussian noises of the node that closes, or the mechanism's draws).
"""
from __future__ import annotations

import functools
import math
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..privacy.accounting import ledger as LG
from ..privacy.accounting.plan import Plan, make_plan
from ..core.types import fdt, Learner, Problem
from ..core.validation import (
    check_choice, check_delta, check_epsilon, check_nonneg, check_positive, check_positive_int,
)
from ..core.accumulate import packed_add, packed_sum, packed_zeros
from ..privacy.mechanisms import tree_aggregation_sigma, tree_depth
from ..privacy.accounting.zcdp import gaussian_sigma_zcdp
from ..privacy.mechanisms.matrix_factorization import BinaryTree, ContinualCounter, CounterState, resolve_noise
from ..registry import CompareBuiltin, ConformanceCase, register_learner, register_planner
from ..core.domains import Domain, check_domain
from .problems import problem_info

__all__ = [
    "DPFTRLParams", "DPFTRLState", "LeanTree", "MFNoise", "dp_ftrl", "dp_ftrl_params", "plan_dp_ftrl", "dp_ftrl_lambda",
    "dp_ftrl_lambda_matched", "dp_ftrl_regret_bound", "ftrl_reference", "dp_ftrl_noise_energy",
    "dp_ftrl_noise_bound", "squared_loss_lipschitz", "plan_dp_ftrl_point", "dp_ftrl_bound_of_lambda",
]


class DPFTRLParams(NamedTuple):
    """Parameters of :func:`dp_ftrl` (:func:`dp_ftrl_params`, :func:`plan_dp_ftrl`).

    Attributes:
        lam: the regularization λ > 0.
        sigma: the Gaussian noise per tree node (0: non-private FTRL).
        clip: the gradient clipping norm ``C`` (the ``L`` of the privacy calibration).
    """
    lam: jax.Array     # regularization lambda > 0
    sigma: jax.Array   # Gaussian noise per tree node (0: non-private FTRL)
    clip: jax.Array    # gradient clipping norm C (the L of the privacy calibration)


_TREE = BinaryTree()


class LeanTree(NamedTuple):
    """Tree aggregation of ``g_1, g_2, ...`` that moves O(d) bytes per round instead of O(H d).

    The release ``gbar_t`` of the binary tree is the exact prefix sum ``G_t``
    plus the noise ``b_t`` of the open nodes (one per set bit of ``t``). So
    ``G_t`` is kept as one compensated sum, and the noise in suffix sums over
    the levels: ``C[l]`` is the total noise of the open nodes at levels
    ``>= l``, valid while level ``l`` is open (``C[H] = 0``). At round ``t``
    the node at level ``i = ctz(t)`` closes, the levels below it empty, and
    the open levels above it are unchanged; with ``j`` the next set bit of
    ``t`` above ``i`` (``H`` if none),

        C[i] = C[j] + sigma z_t,   z_t ~ N(0, I_d),   gbar_t = G_t + C[i]:

    the round of :class:`~jaxdp.privacy.mechanisms.matrix_factorization.BinaryTree` (its ``advance``, i.e.
    ``jaxdp.privacy.mechanisms.tree.suffix_tree_advance``) on the draw ``sigma z_t``. One row is read and one
    written per round (the dense tree reads and writes all ``2H`` rows). The released values have exactly
    the tree's distribution (each node's noise is drawn once, when it closes, and enters every later prefix
    that contains the node); only float rounding differs from ``jaxdp.privacy.mechanisms.tree_step``.

    Attributes:
        G: the ``(d,)`` packed compensated prefix sum of the clipped gradients (:mod:`jaxdp.core.accumulate`:
            real part the running sum, imaginary part Kahan's compensation).
        C: ``(H + 1, d)`` suffix sums of the open nodes' noise over the levels (``C[H] = 0``).
        t: ``int32`` scalar, the rounds absorbed.
    """

    G: jax.Array       # (d,) packed compensated prefix sum of the clipped gradients (jaxdp.core.accumulate:
    #                    real part the running sum, imaginary part Kahan's compensation; one array, one loop)
    C: jax.Array       # (H + 1, d) suffix sums of the open nodes' noise
    t: jax.Array       # int32, rounds absorbed


def _lean_tree_init(H: int, d: int) -> LeanTree:
    f = fdt()
    return LeanTree(G=packed_zeros(jnp.zeros((d,), f)), C=jnp.zeros((H + 1, d), f), t=jnp.zeros((), jnp.int32))


def _lean_tree_step(key, tree: LeanTree, g, sigma, H: int):
    # the binary-tree counter's round (BinaryTree.advance: jaxdp.privacy.mechanisms.tree.suffix_tree_advance)
    # on draws scaled before they enter, so C holds the noise itself
    z = jax.random.normal(key, g.shape, tree.C.dtype)
    noise, row = _TREE.advance(CounterState(buf=tree.C, t=tree.t), (jnp.asarray(sigma, tree.C.dtype) * z)[None])
    G = packed_add(tree.G, g)
    return LeanTree(G=G, C=noise.buf, t=noise.t), packed_sum(G) + row


class MFNoise(NamedTuple):
    """Prefix sums with a general continual-counting mechanism's noise (``dp_ftrl(..., noise=mech)``).

    The release is ``G_t + sigma (B z)_t``: the exact prefix sum plus the mechanism's correlated noise
    (:class:`jaxdp.privacy.mechanisms.matrix_factorization.ContinualCounter`).

    Attributes:
        G: the ``(d,)`` packed compensated prefix sum of the clipped gradients (:mod:`jaxdp.core.accumulate`).
        state: the mechanism's carried noise state (:class:`~jaxdp.privacy.mechanisms.matrix_factorization.CounterState`).
    """

    G: jax.Array           # (d,) packed compensated prefix sum of the clipped gradients
    state: CounterState    # the mechanism's carried noise state


class DPFTRLState(NamedTuple):
    """State of :func:`dp_ftrl`.

    Attributes:
        x: the ``(d,)`` action played this round.
        tree: the tree aggregation of the clipped gradients (noise per node ``N(0, sigma^2 I_d)``); an ``MFNoise`` when
            the learner is built with another ``noise`` mechanism.
    """
    x: jax.Array        # (d,) action played this round
    tree: LeanTree      # tree aggregation of the clipped gradients (noise per node ~ N(0, sigma^2 I_d));
    #                     an MFNoise when dp_ftrl is built with another noise= mechanism


def dp_ftrl_params(lam: float, sigma: float, clip: float = math.inf) -> DPFTRLParams:
    """Validated parameters for :func:`dp_ftrl` (``clip = inf``: no clipping; then privacy needs
    ``||grad|| <= L`` to hold by assumption).

    Args:
        lam: the regularization λ > 0.
        sigma: the noise per tree node (>= 0).
        clip: the gradient clipping norm (``inf``: none).

    Returns:
        :class:`DPFTRLParams`.

    Raises:
        ValueError: invalid values.
    """
    check_positive("lam (step-size / regularization lambda)", lam)
    check_nonneg("sigma", sigma)
    check_positive("clip", clip, allow_inf=True)
    f = fdt()
    return DPFTRLParams(lam=jnp.asarray(lam, f), sigma=jnp.asarray(sigma, f), clip=jnp.asarray(clip, f))


@functools.lru_cache(maxsize=None)
def dp_ftrl(problem: Problem, T_max: int, domain: Optional[Domain] = None,
            noise: Optional[ContinualCounter] = None) -> Learner:
    """DP-FTRL (REAL Alg. 3) on an OCO ``problem`` from ``jaxdp.oco.problems`` for ``T <= T_max`` rounds.

    ``noise``: the continual-counting mechanism of the prefix sums (module docstring); ``None``, ``"tree"`` or
    a ``BinaryTree`` is the tree (lean form, unchanged), anything else a
    :class:`~jaxdp.privacy.mechanisms.matrix_factorization.ContinualCounter` (or its name, optimised for ``T_max``
    where it is optimised) whose draws are scaled by ``params.sigma`` (plan it with
    ``plan_dp_ftrl(..., noise=mech)``).

    ``problem.grad`` gives ``grad l_t(x_t)``; the domain and ``d`` come from
    ``problem_info(problem)`` unless ``domain`` is given. The tree has
    ``H = floor(log2 T_max) + 1`` levels (static). Params: :class:`DPFTRLParams`
    (:func:`plan_dp_ftrl`). Info: ``clipped`` (rounds whose gradient was
    clipped), ``grad_sq`` (``sum ||grad l_t(x_t)||^2``, the quantity REAL Thm 4
    bounds by ``4 beta sum l_t(x_t)``).

    Example::

        prob = squared_problem(4, 1.0)
        plan = plan_dp_ftrl(eps=1.0, delta=1e-6, T=4096, d=4, L=2.0, D=1.0, beta=1.0)
        out = simulate(dp_ftrl(prob, 4096), adv_smooth_realizable(4), prob,
                       plan.to_params(), smooth_realizable_params(1.0), seed_keys(0, 64), 4096)

    Args:
        problem: an OCO problem built by :mod:`jaxdp.oco.problems`.
        T_max: the largest horizon (static).
        domain: the domain (``None``: the problem's).
        noise: the continual-counting mechanism (see above).

    Returns:
        The :class:`jaxdp.Learner`.

    Raises:
        TypeError: ``problem`` is not a :class:`jaxdp.core.Problem`.
        ValueError: the problem has no gradients.
    """
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a jaxdp.core.Problem, got {type(problem).__name__}")
    if problem.grad is None:
        raise ValueError("dp_ftrl needs a problem with gradients (problem.grad is None)")
    info = problem_info(problem)
    d = info.d
    domain = check_domain(info.domain if domain is None else domain, d)
    T_max = check_positive_int("T_max", T_max)
    H = tree_depth(T_max)
    mech = resolve_noise(noise, T_max)
    lean = mech is None

    def init(key, params):
        x = domain.project(jnp.zeros((d,), fdt()))
        if lean:
            return DPFTRLState(x=x, tree=_lean_tree_init(H, d))
        return DPFTRLState(x=x, tree=MFNoise(G=packed_zeros(jnp.zeros((d,), fdt())),
                                             state=mech.init(T_max, (d,), fdt())))

    def step(key, state, loss, params):
        g = jnp.asarray(problem.grad(loss, state.x), fdt())
        n = jnp.linalg.norm(g)
        clipped = n > params.clip
        g = g * jnp.where(clipped, params.clip / jnp.maximum(n, 1e-30), 1.0)
        if lean:
            tree, gbar = _lean_tree_step(key, state.tree, g, params.sigma, H)
        else:
            G = packed_add(state.tree.G, g)
            ns, w = mech.step(key, state.tree.state, params.sigma)
            tree, gbar = MFNoise(G=G, state=ns), packed_sum(G) + w
        x = domain.project(-gbar / params.lam)
        return DPFTRLState(x=x, tree=tree), {"clipped": clipped, "grad_sq": n * n}

    return Learner(init=init, step=step)


# --------------------------------------------------------------------------- theory and planning


def dp_ftrl_lambda(T, d, eps, delta, L, D, beta) -> float:
    """REAL Thm 4's ``lambda = 32 beta + (beta/eps^2 (L/D)^2 T d log T log(1/delta))^{1/3}``.

    Args:
        T: the horizon.
        d: the dimension.
        eps: the privacy parameter ε.
        delta: the privacy parameter δ.
        L: the Lipschitz constant.
        D: the radius of the domain.
        beta: the smoothness β.

    Returns:
        λ.
    """
    return 32.0 * beta + (beta / eps ** 2 * (L / D) ** 2 * T * d * math.log(max(T, 2)) * math.log(1.0 / delta)) ** (1 / 3)


def dp_ftrl_lambda_matched(T, d, H, sigma, D, beta) -> float:
    """Thm 4's balance ``lambda = 32 beta + (beta T E||b||^2 / D^2)^{1/3}`` at the noise actually added.

    REAL Thm 4's printed lambda (:func:`dp_ftrl_lambda`) is this balance with the proof's noise
    variance ``E||b||^2 = (L/eps)^2 d log T log(1/delta)``; here ``E||b_t||^2 <= d H sigma^2`` is the
    variance of the tree noise of node scale ``sigma`` over ``H`` levels (docs/algorithms/primitives.md#tree-aggregation),
    which has one more log factor than the proof's (Realizable private online optimization, Alg. 3, Thm 4;
    docs/algorithms/realizable.md#dp-ftrl).

    Args:
        T: the horizon.
        d: the dimension.
        H: the number of tree levels.
        sigma: the noise per tree node.
        D: the radius of the domain.
        beta: the smoothness β.

    Returns:
        λ.
    """
    return 32.0 * beta + (beta * T * d * H * sigma ** 2 / D ** 2) ** (1 / 3)


def dp_ftrl_noise_energy(lam, T, D, beta):
    """The noise energy ``E||b||^2`` at which :func:`dp_ftrl_lambda_matched`'s balance gives ``lam``.

    The inverse of ``lambda = 32 beta + (beta T E||b||^2 / D^2)^{1/3}``: ``E||b||^2 = D^2 (lambda - 32 beta)^3 /
    (beta T)``. Works on NumPy arrays.

    Args:
        lam: the regularization λ.
        T: the horizon.
        D: the radius of the domain.
        beta: the smoothness β.

    Returns:
        ``E||b||^2``.
    """
    return D ** 2 * (lam - 32 * beta) ** 3 / (beta * T)


def dp_ftrl_noise_bound(T, Eb2, D, L, beta, realizable):
    """DP-FTRL's regret bound (constants 1) at the noise energy ``E||b||^2`` of any continual-counting mechanism.

    Realizable (REAL Thm 4, ``L* = 0``): ``beta D^2 + (D^2 sqrt(beta T E||b||^2))^{2/3}``; general:
    ``2 D sqrt(T L (L + sqrt(E||b||^2)))``. With a mechanism's largest prefix variance ``V`` and noise scale
    ``sigma``, ``E||b||^2 = d sigma^2 V`` (docs/algorithms/matrix-factorization.md). Works on NumPy arrays.

    Args:
        T: the horizon.
        Eb2: the noise energy ``E||b||^2``.
        D: the radius of the domain.
        L: the Lipschitz constant.
        beta: the smoothness β.
        realizable: whether the realizable bound applies (a bool or a boolean array).

    Returns:
        The bound, a NumPy array (0-d for scalar inputs).
    """
    return np.where(realizable, beta * D ** 2 + (D ** 2 * np.sqrt(beta * T * Eb2)) ** (2 / 3),
                    2 * D * np.sqrt(T * L * (L + np.sqrt(Eb2))))


def squared_loss_lipschitz(D: float) -> float:
    """The Lipschitz constant of the realizable instances' squared loss on the ball of radius ``D``.

    Squared losses with ``||a|| = 1`` and ``|b| <= D/2`` on the ball of radius ``D``, as the realizable
    instances of Realizable private online optimization (docs/algorithms/realizable.md#environments).

    Args:
        D: the radius of the domain.

    Returns:
        ``L = 2 D``.
    """
    return 2.0 * D


def plan_dp_ftrl_point(mech, *, eps: float, delta: float, T: int, d: int, D: float, beta: float,
                       mode: str = "paper", realizable: bool = True) -> tuple:
    """DP-FTRL's parameters for one continual-counting mechanism at a certified ``(eps, delta)``.

    ``sigma`` and ``clip`` from :func:`plan_dp_ftrl` with ``noise=mech`` and ``L`` =
    :func:`squared_loss_lipschitz`; realizable: λ balanced at the noise actually added,
    :func:`dp_ftrl_lambda_matched` with the mechanism's largest prefix variance ``V = max_t ||B_t||^2``
    (Realizable private online optimization, Thm 4); general: the planner's λ.

    Args:
        mech: the continual-counting mechanism (a ``ContinualCounter``).
        eps, delta: the privacy parameters.
        T: the horizon.
        d: the dimension.
        D: the radius of the domain.
        beta: the smoothness β.
        mode: the planner's mode.
        realizable: whether the realizable (``L* = 0``) λ applies.

    Returns:
        ``(lam, sigma, clip, eps_certified, V, max_error)``.
    """
    plan = plan_dp_ftrl(eps=eps, delta=delta, T=T, d=d, mode=mode, L=squared_loss_lipschitz(D), D=D, beta=beta,
                        setting="realizable" if realizable else "general", noise=mech)
    sigma, V = plan.params["sigma"], mech.max_row_norm_sq(T)
    lam = dp_ftrl_lambda_matched(T, d, V, sigma, D, beta) if realizable else plan.params["lam"]
    return lam, sigma, plan.params["clip"], plan.eps_certified, V, mech.max_error(T)


def plan_dp_ftrl_certified(mech, *, eps: float, delta: float, T: int, d: int, D: float, beta: float,
                           mode: str = "paper", realizable: bool = True) -> tuple:
    """:func:`plan_dp_ftrl_point`, refusing a plan whose certified ε exceeds the ``eps`` asked for.

    Comparing mechanisms at equal privacy needs every plan to certify the same ``(eps, delta)``: the planner's
    ``sigma`` must bring the mechanism's accounted ε (Gaussian mechanism on its sensitivity) within ``eps``.

    Args:
        mech, eps, delta, T, d, D, beta, mode, realizable: as in :func:`plan_dp_ftrl_point`.

    Returns:
        ``(lam, sigma, clip, eps_certified, V, max_error)``.

    Raises:
        ValueError: the certified ε exceeds ``eps`` by more than ``1e-9`` relative.
    """
    plan = plan_dp_ftrl_point(mech, eps=eps, delta=delta, T=T, d=d, D=D, beta=beta, mode=mode, realizable=realizable)
    if not plan[3] <= eps * (1 + 1e-9):
        raise ValueError(f"eps={eps} is not certified by the plan of T={T}, d={d} with this mechanism "
                         f"(certified {plan[3]}); allowed: a plan certifying at most eps")
    return plan


def dp_ftrl_bound_of_lambda(lam_realizable, T, D: float, beta: float, realizable):
    """DP-FTRL's bound (constants 1) recovered from the realizable λ of :func:`plan_dp_ftrl_point`.

    ``E||b||^2`` by :func:`dp_ftrl_noise_energy` (the inverse of the matched balance), then
    :func:`dp_ftrl_noise_bound` at ``L`` = :func:`squared_loss_lipschitz`. Works on NumPy arrays.

    Args:
        lam_realizable: the realizable λ of the same mechanism, ``T`` and ε.
        T: the horizon.
        D: the radius of the domain.
        beta: the smoothness β.
        realizable: whether the realizable bound applies (a bool or a boolean array).

    Returns:
        ``(E||b||^2, bound)``.
    """
    Eb2 = dp_ftrl_noise_energy(lam_realizable, T, D, beta)
    return Eb2, dp_ftrl_noise_bound(T, Eb2, D, squared_loss_lipschitz(D), beta, realizable)


def dp_ftrl_regret_bound(T, d, eps, delta, L, D, beta, Lstar=0.0, setting: str = "realizable"):
    """Theory curve with constants 1: REAL Thm 4 (``L* + beta D^2 + (LD sqrt(beta D^2 T d log T log(1/delta))/eps)^{2/3}``)
    or, for ``setting="general"``, ``LD sqrt(T) + LD (T sqrt(d) / eps)^{1/2}`` (non-realizable rate,
    Kairouz et al. 2021: with the general ``lambda`` of :func:`plan_dp_ftrl`, ``lambda D^2 + T L^2/lambda +
    T L sqrt(dH) sigma/lambda`` with ``sigma ~ L sqrt(H)/eps`` is ``~ LD sqrt(T) sqrt(1 + H sqrt(d)/eps)``; logs dropped; REAL Alg. 3, Thm 4; docs/algorithms/realizable.md#dp-ftrl).
    Works on NumPy arrays of ``T`` / ``d`` / ``eps``; the theory curves of the studies call this function.

    Args:
        T, d, eps, delta, L, D, beta: as in :func:`dp_ftrl_lambda`.
        Lstar: the best comparator's loss L*.
        setting: ``"realizable"`` or ``"general"``.

    Returns:
        The bound (an array when the inputs are arrays).
    """
    T = np.asarray(T, float)
    if setting == "general":
        return L * D * (np.sqrt(T) + np.sqrt(T * np.sqrt(d) / eps))
    lg = np.log(np.maximum(T, 2.0)) * math.log(1.0 / delta)
    return Lstar + beta * D ** 2 + (L * D * np.sqrt(beta * D ** 2 * T * d * lg) / eps) ** (2 / 3)


@register_planner("dp_ftrl", "DP-FTRL with tree aggregation (REAL Alg. 3 / Thm 4; Kairouz et al. 2021)")
def plan_dp_ftrl(*, eps: float, delta: float, T: int, d: int, mode: str = "paper", L: float = 1.0,
                 D: float = 1.0, beta: float = 1.0, setting: str = "realizable", noise=None, **kw) -> Plan:
    """Parameters ``(lam, sigma, clip)`` for :func:`dp_ftrl`.

    ``noise``: the continual-counting mechanism (``None``/``"tree"``: the binary tree, as below; a name in
    ``jaxdp.privacy.mechanisms.matrix_factorization.MECHANISMS``, optimised for ``T`` rounds where it is optimised, or
    a ``ContinualCounter``): see :func:`_plan_dp_ftrl_mf`.

    * ``sigma = L sqrt(2H/rho*(eps, delta))`` with ``H = floor(log2 T) + 1``
      and ``clip = L`` in every mode: the tree calibration of docs/algorithms/primitives.md#tree-aggregation is
      exact, so the request is always certified (needs ``0 < delta < 1``,
      finite ``eps``).
    * ``setting="realizable"`` (smooth, non-negative losses; REAL Thm 4):
      ``paper``/``certified``: Thm 4's lambda; ``rate``: logs and constants
      dropped, ``lambda = beta + (beta (L/D)^2 T d / eps^2)^{1/3}``.
    * ``setting="general"``: ``lambda = sqrt(T L (L + sqrt(dH) sigma)) / D``
      (``rate``: ``H`` dropped).

    Args:
        eps: the privacy parameter ε.
        delta: the privacy parameter δ.
        T: the horizon.
        d: the dimension.
        mode: ``"paper"``, ``"certified"`` or ``"rate"`` (see above).
        L: the Lipschitz constant (the clipping norm).
        D: the radius of the domain.
        beta: the smoothness β.
        setting: ``"realizable"`` or ``"general"``.
        noise: the continual-counting mechanism (see above).

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` with ``params`` ``(lam, sigma, clip)``.

    Raises:
        TypeError: unexpected keyword arguments.
        ValueError: invalid values (``delta`` must be in (0, 1)).
    """
    if kw:
        raise TypeError(f"plan_dp_ftrl got unexpected arguments {sorted(kw)}")
    check_choice("mode", mode, ("paper", "certified", "rate"))
    check_choice("setting", setting, ("realizable", "general"))
    check_epsilon(eps, allow_inf=False)
    check_delta(delta)
    if float(delta) <= 0:
        raise ValueError(f"delta must be in (0, 1): Gaussian tree noise gives (eps, delta)-DP only, got {delta!r}")
    T = check_positive_int("T", T)
    d = check_positive_int("d", d)
    for nm, v in (("L", L), ("D", D)):
        check_positive(nm, v)
    if setting == "realizable":
        check_positive("beta (smoothness)", beta)
    mech = resolve_noise(noise, T)
    if mech is not None:
        return _plan_dp_ftrl_mf(mech, eps=eps, delta=delta, T=T, d=d, mode=mode, L=L, D=D, beta=beta, setting=setting)
    H = tree_depth(T)
    sigma = tree_aggregation_sigma(L, H, eps, delta)
    lam = _lambda(T=T, d=d, eps=eps, delta=delta, L=L, D=D, beta=beta, sigma=sigma, V=H, mode=mode, setting=setting)
    notes = [f"sigma = L sqrt(2H/rho*) with H={H} (docs/algorithms/primitives.md#tree-aggregation, replace-one); gradients clipped to L={L}"]
    if mode == "rate":
        notes.append("rate mode: log factors and constants dropped from lambda only; the noise is the certified one")
    ledger = LG.sequential(LG.tree_aggregation(float(sigma) / (2.0 * L), T, dim=d,
                                               label="tree aggregation of clipped gradients (replace-one: 2L per node)"))
    return make_plan(algorithm="dp_ftrl", mode=mode, params={"lam": float(lam), "sigma": float(sigma), "clip": float(L)},
                     eps=float(eps), delta=float(delta), ledger=ledger,
                     conditions={"0 < delta < 1": True, f"T <= 2^H - 1 (H={H})": T <= 2 ** H - 1,
                                 "gradients clipped to L": True},
                     reference="Realizable private online optimization, Alg. 3, Thm 4; Kairouz et al. 2021",
                     notes=notes)


def _lambda(*, T, d, eps, delta, L, D, beta, sigma, V, mode, setting):
    """The regularization ``lambda``: Thm 4's (realizable; ``rate``: without constants and logs) or, in the
    general setting, ``sqrt(T L (L + sqrt(d V) sigma)) / D`` with ``V`` the largest prefix-noise variance per
    unit draw (the tree's depth ``H``; ``rate``: ``V`` dropped)."""
    if setting == "realizable":
        if mode == "rate":
            return beta + (beta * (L / D) ** 2 * T * d / eps ** 2) ** (1 / 3)
        return dp_ftrl_lambda(T, d, eps, delta, L, D, beta)
    return math.sqrt(T * L * (L + math.sqrt(d * (1 if mode == "rate" else V)) * sigma)) / D


def _plan_dp_ftrl_mf(mech, *, eps, delta, T, d, mode, L, D, beta, setting) -> Plan:
    """:func:`plan_dp_ftrl` for a general continual-counting mechanism ``mech`` (docs/algorithms/matrix-factorization.md).

    The release of the ``T`` noisy prefix sums is one Gaussian mechanism with l2-sensitivity
    ``2L sens(C)`` (replace-one, gradients clipped to ``L``; ``sens(C)`` the factorization's largest column
    norm over ``T`` rounds), so ``sigma = 2L sens(C) / sqrt(2 rho*(eps, delta))`` in every mode: the same noise
    multiplier as the tree's, hence the same certified (eps, delta) for every mechanism. The ledger is that
    Gaussian event (raw release: no float floor). ``lambda``: Thm 4's (realizable; it does not depend on the
    noise) or, in the general setting, ``sqrt(T L (L + sqrt(d V) sigma)) / D`` with
    ``V = max_t ||B_t||^2`` the mechanism's largest prefix-noise variance per unit draw (``rate``: ``V`` dropped).
    """
    sens = mech.sensitivity(T)
    sigma = float(gaussian_sigma_zcdp(2.0 * float(L) * sens, float(eps), float(delta)))
    V = mech.max_row_norm_sq(T)
    lam = _lambda(T=T, d=d, eps=eps, delta=delta, L=L, D=D, beta=beta, sigma=sigma, V=V, mode=mode, setting=setting)
    name = mech.describe()
    notes = [f"{name}: sigma = 2L sens(C)/sqrt(2 rho*) with sens(C)={sens:.6g} over T={T} rounds (replace-one); "
             f"max prefix-noise variance per unit draw V={V:.6g}; gradients clipped to L={L}"]
    if mode == "rate":
        notes.append("rate mode: log factors and constants dropped from lambda only; the noise is the certified one")
    ledger = LG.sequential(mech.ledger_event(sigma, 2.0 * float(L), T, dim=d,
                                             label=f"{name} noise on the prefix sums of clipped gradients "
                                                   f"(replace-one: 2L per round)"))
    return make_plan(algorithm="dp_ftrl", mode=mode, params={"lam": float(lam), "sigma": sigma, "clip": float(L)},
                     eps=float(eps), delta=float(delta), ledger=ledger,
                     conditions={"0 < delta < 1": True, "gradients clipped to L": True},
                     reference="Realizable private online optimization, Alg. 3, Thm 4; Kairouz et al. 2021; "
                               "Denisov et al. 2022 (matrix-factorization noise)",
                     notes=notes)


def ftrl_reference(grads_fn, x0, T: int, lam: float, noise=None, project=None):
    """Slow float64 NumPy FTRL (for tests): ``x_{t+1} = Proj(-(sum_{i<=t} g_i + b_t)/lam)``,
    ``g_t = grads_fn(t, x_t)``; ``noise[t]`` (optional) is ``b_t``. Returns the ``(T+1, d)`` actions.

    Args:
        grads_fn: ``(t, x) -> g_t``.
        x0: the first action.
        T: the number of rounds.
        lam: the regularization λ.
        noise: the ``(T, d)`` noise ``b_t`` (``None``: none).
        project: the projection onto the domain (``None``: unconstrained).

    Returns:
        The ``(T+1, d)`` float64 actions.
    """
    x = np.asarray(x0, np.float64)
    G = np.zeros_like(x)
    xs = [x.copy()]
    for t in range(T):
        G = G + np.asarray(grads_fn(t, x), np.float64)
        z = -(G + (0 if noise is None else noise[t])) / lam
        x = project(z) if project is not None else z
        xs.append(np.asarray(x, np.float64))
    return np.stack(xs)


# --------------------------------------------------------------------------- registry


def _ftrl_compare(d, T, T_max, eps, delta, problem):
    lam = math.sqrt(T)   # lambda D^2 + T L^2 / lambda with D = L = 1
    return dp_ftrl(problem, T_max), dp_ftrl_params(lam, 0.0, 1.0), math.inf


register_learner(
    "ftrl", factory=dp_ftrl, params_type=DPFTRLParams, problem="oco", private=False,
    conformance=ConformanceCase("jaxdp.oco.conformance:ftrl_case", d=3, check={"deterministic": True}),
    description="follow the regularized leader, x_{t+1} = Proj(-g_{1:t}/λ): dp_ftrl without noise (sigma = 0)",
    reference="Shalev-Shwartz 2012, Online learning and online convex optimization, Sec. 2.3",
    compare=CompareBuiltin(_ftrl_compare, "non-private reference: FTRL with lambda = sqrt(T)"))


def _dp_ftrl_compare(d, T, T_max, eps, delta, problem):
    plan = _DP_FTRL.certified_plan(eps=eps, delta=delta, T=T, d=d, setting="general")
    # noise for the T_max tree the learner carries (certified for every T <= T_max); lambda tuned for T
    sigma = _DP_FTRL.certified_plan(eps=eps, delta=delta, T=T_max, d=d, setting="general").params["sigma"]
    p = plan.params
    return dp_ftrl(problem, T_max), dp_ftrl_params(p["lam"], sigma, p["clip"]), float(plan.eps_certified)


_DP_FTRL = register_learner(
    "dp_ftrl", factory=dp_ftrl, params_type=DPFTRLParams, problem="oco", private=True, planner="dp_ftrl",
    from_plan=lambda plan: dp_ftrl_params(**plan.params),
    conformance=ConformanceCase("jaxdp.oco.conformance:dp_ftrl_case", d=3),
    description="DP-FTRL: FTRL on the tree-aggregated noisy sum of clipped gradients (Gaussian node noise)",
    reference="Realizable private online optimization, Alg. 3, Thm 4; Kairouz et al. 2021, Practical and "
              "private (deep) learning without sampling or shuffling",
    compare=CompareBuiltin(_dp_ftrl_compare, "planner dp_ftrl (setting general), mode certified; tree noise "
                                             "for T_max"))
