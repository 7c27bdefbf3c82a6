"""Realizable DP-OCO through experts over a net of the ball
(REAL §4.1 Theorem 3, App. C end, App. D.1; docs/algorithms/realizable.md#realizable-oco).

Both learners discretize the ball ``{||x|| <= D}`` by the cell centres of a
regular grid (``jaxdp.core.domains.ball_grid``; ``m`` points per axis, ``M``
points in the ball, covering radius ``rho``) and treat each point as an
expert with loss ``l_t(z_j)`` normalized to ``[0, 1]`` by ``loss_scale``
(INTERPRETATION of REAL Thm 3, App. C; docs/algorithms/realizable.md#realizable-oco: non-negative ``L``-Lipschitz realizable losses
satisfy ``l_t(x) <= 2LD``; losses above ``loss_scale`` are clipped to 1,
which keeps every sensitivity at 1). The action played is the net point, so
the regret against the continuous comparator includes the discretization
error ``<= T L rho``.

* :func:`experts_oco_net` (REAL Thm 3): the sparse-vector algorithm for
  zero-loss experts over the net. Reuses
  ``jaxdp.experts.sparse_vector_experts`` (REAL Alg. 1; the adaptive
  Alg. 2 with ``adaptive=True``) unchanged: privacy is theirs, with the
  loss normalization above.
* :func:`potential_oco` (REAL Alg. 5 with ``mu`` uniform on the ball, App. C end; Thms 6-7, CORRECTED
  units; docs/algorithms/realizable.md#potential-corrections): the potential
  ``phi_eta(t) = int exp(-eta sum_{i<=t} l_i(x)) mu(dx)`` by **grid quadrature**,
  ``log phi ~= logsumexp_j(-eta S_t(z_j)) - log M``, and the learner samples from the same discretized
  measure: exactly REAL Alg. 5 for ``mu`` uniform on the ``M`` grid points (the quadrature error is a
  modelling error of the instance, not a privacy error; :func:`logphi_grid` and :func:`logphi_mc` measure
  it against the continuous ball: at most ``eta t L h sqrt(d)/2`` plus the boundary cells' share).
"""
from __future__ import annotations

import functools
import math
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..core.types import fdt, Learner, Problem
from ..core.validation import check_choice, check_delta, check_epsilon, check_positive, check_positive_int
from ..privacy.accounting.plan import Plan, make_plan
from ..experts import potential, sparse_vector
from ..experts._common import log2_ceil
from ..experts import potential_ledger, potential_settings, sparse_vector_ledger
from ..registry import ConformanceCase, register_learner, register_planner
from ..core.domains import Ball, ball_grid
from .problems import problem_info

__all__ = [
    "OCONetParams", "OCONetState", "experts_oco_net", "experts_oco_net_params", "plan_experts_oco_net",
    "PotentialOCOParams", "PotentialOCOState", "potential_oco", "potential_oco_params", "plan_potential_oco",
    "oco_net", "logphi_grid", "logphi_mc", "net_regret_bound",
    "logphi_squared_errors", "thm4_dp_ftrl", "realizable_dp_ftrl", "realizable_dp_ftrl_bound", "potential_oco_logphi_errors", "NET_LEARNERS", "plan_net_learner",
    "net_learner_params", "smooth_realizable_logphi_errors", "realizable_oco_point",
    "planned_net_bound", "run_realizable_oco",
]


@functools.lru_cache(maxsize=None)
def oco_net(problem: Problem, m: int):
    """The net of the problem's ball: ``(points (M, d), covering_radius, M)`` (cached).

    Args:
        problem: an OCO problem built by :mod:`jaxdp.oco.problems`.
        m: the grid points per axis of the net.

    Returns:
        ``(points, covering_radius, M)``.
    """
    info = problem_info(problem)
    if not isinstance(info.domain, Ball):
        raise ValueError(f"experts over a net need a Ball domain (REAL §4.1), got {info.domain!r}")
    pts, rho, _ = ball_grid(info.domain.D, info.d, m)
    return pts, rho, int(pts.shape[0])


def _net_points(problem: Problem, m: int) -> tuple[jax.Array, int]:
    """The checked net of a grid learner: ``(points (M, d) as a jnp array, M)``."""
    if not isinstance(problem, Problem):
        raise TypeError(f"problem must be a jaxdp.core.Problem, got {type(problem).__name__}")
    m = check_positive_int("m", m)
    pts_np, _, M = oco_net(problem, m)
    if M < 2:
        raise ValueError(f"the net has M={M} point(s); use m >= 2")
    return jnp.asarray(pts_np), M


def _expert_losses(problem, pts, loss, scale):
    v = jax.vmap(lambda z: problem.value(loss, z))(pts)
    return jnp.clip(v / scale, 0.0, 1.0).astype(fdt())


# --------------------------------------------------------------------------- experts over a net (Thm 3)


class OCONetParams(NamedTuple):
    """Parameters of :func:`experts_oco_net` (:func:`experts_oco_net_params`).

    Attributes:
        inner: the parameters of the experts learner (:class:`jaxdp.experts.SVExpertsParams`, or
            :class:`jaxdp.experts.AdaptiveSVParams` with ``adaptive=True``).
        loss_scale: the losses are divided by this and clipped to [0, 1] (``2 L D`` by default).
    """
    inner: Any            # SVExpertsParams (or AdaptiveSVParams with adaptive=True) of jaxdp.experts
    loss_scale: jax.Array  # losses are divided by this and clipped to [0, 1] (2 L D by default)


class OCONetState(NamedTuple):
    """State of :func:`experts_oco_net`.

    Attributes:
        x: the ``(d,)`` net point played.
        inner: the experts learner's state (its ``x`` is the net index).
    """
    x: jax.Array          # (d,) net point played
    inner: Any            # the experts learner's state (its .x is the net index)


@functools.lru_cache(maxsize=None)
def experts_oco_net(problem: Problem, m: int, adaptive: bool = False) -> Learner:
    """REAL Theorem 3: DP-OPE over a ``m``-per-axis grid net of the problem's ball.

    The experts learner is ``jaxdp.experts.sparse_vector_experts(M)`` (REAL
    Alg. 1) or, with ``adaptive=True``, ``adaptive_sparse_vector_experts(M)``
    (Alg. 2, the one Thm 3's proof invokes). Params: :class:`OCONetParams`
    (:func:`plan_experts_oco_net`). Info: the inner learner's (``em_draws``,
    ``svt_halts``, ...), and ``switched``. Cost per round ``O(M d)``.

    Args:
        problem: an OCO problem built by :mod:`jaxdp.oco.problems`.
        m: the grid points per axis of the net.
        adaptive: use the adaptive sparse-vector learner (REAL Alg. 2).

    Returns:
        The :class:`jaxdp.Learner`.

    Raises:
        TypeError: ``problem`` is not a :class:`jaxdp.core.Problem`.
        ValueError: the domain is not a ball, or the net has fewer than 2 points.
    """
    pts, M = _net_points(problem, m)
    inner = (sparse_vector.adaptive_sparse_vector_experts if adaptive else sparse_vector.sparse_vector_experts)(M)

    def init(key, params):
        s = inner.init(key, params.inner)
        return OCONetState(x=pts[s.x], inner=s)

    def step(key, state, loss, params):
        ell = _expert_losses(problem, pts, loss, params.loss_scale)
        s, info = inner.step(key, state.inner, ell, params.inner)
        return OCONetState(x=pts[s.x], inner=s), info

    return Learner(init=init, step=step)


def experts_oco_net_params(*, eps_svt, eta, K, L, Lstar=0.0, loss_scale=2.0, adaptive: bool = False,
                           **adaptive_kw) -> OCONetParams:
    """Validated :class:`OCONetParams` (``L`` is the SVT threshold, in normalized loss units).

    Args:
        eps_svt: ε of the sparse-vector part.
        eta: η of the exponential mechanism.
        K: the most switches (exponential-mechanism draws).
        L: the sparse-vector threshold (normalized loss units).
        Lstar: the best expert's loss L*.
        loss_scale: the loss normalization.
        adaptive: parameters of the adaptive learner (REAL Alg. 2; extra keyword arguments go to
            :func:`jaxdp.experts.adaptive_sparse_vector_params`).

    Returns:
        :class:`OCONetParams`.

    Raises:
        ValueError: invalid values.
    """
    check_positive("loss_scale", loss_scale)
    inner: Any
    if adaptive:
        inner = sparse_vector.adaptive_sparse_vector_params(eps_svt=eps_svt, eta=eta, K=K, **adaptive_kw)
    else:
        inner = sparse_vector.sparse_vector_params(eps_svt, eta, K, L, Lstar)
    return OCONetParams(inner=inner, loss_scale=jnp.asarray(loss_scale, fdt()))


MAX_NET_D = 3


def _check_net_d(d: int, algorithm: str) -> int:
    d = check_positive_int("d", d)
    if d > MAX_NET_D:
        raise ValueError(f"{algorithm} discretizes the ball by a grid of m^d points; it is meant for small d "
                         f"(d <= {MAX_NET_D}, Realizable private online optimization, Thm 3, App. C; docs/algorithms/realizable.md#realizable-oco uses d in {{1, 2}}), got d={d}")
    return d


def _net_size(D: float, d: int, m: int) -> int:
    return int(ball_grid(D, d, m)[0].shape[0])


def net_regret_bound(algorithm: str, params: dict, D: float, d: int) -> tuple[float, str]:
    """The T-free regret bound of a grid-net learner with its planned constants (REAL Thm 3, App. C).

    ``experts_oco_net``: ``loss_scale ln(M) L`` (``O(log M)`` switches of Alg. 1, each at most the threshold);
    ``potential_oco``: Lemma C.3's ``loss_scale 2 e^{3 alpha} log(1/gamma) / eta`` with ``gamma = 1/M``; ``M`` the
    number of net points in the ball.

    Args:
        algorithm: ``"experts_oco_net"`` or ``"potential_oco"``.
        params: the planner's ``plan.params`` (``m``, ``loss_scale`` and ``L``, or ``alpha`` and ``eta``).
        D: the ball's radius.
        d: the dimension.

    Returns:
        ``(bound, kind)``: the bound and which one (``"ln(M) x threshold"`` or ``"Lemma C.3"``).
    """
    M = _net_size(D, d, int(params["m"]))
    if algorithm == "experts_oco_net":
        return params["loss_scale"] * math.log(M) * params["L"], "ln(M) x threshold"
    return params["loss_scale"] * 2 * math.e ** (3 * params["alpha"]) * math.log(M) / params["eta"], "Lemma C.3"


def _check_net_plan(algorithm: str, kw: dict, mode: str, eps, delta, T, d, D, lipschitz, T_min: int = 1
                    ) -> tuple[int, int]:
    """The checks the net planners share (``kw``: the planner's unexpected keywords); ``(T, d)``."""
    if kw:
        raise TypeError(f"plan_{algorithm} got unexpected arguments {sorted(kw)}")
    check_choice("mode", mode, ("paper", "certified", "rate"))
    check_epsilon(eps, allow_inf=False)
    check_delta(delta)
    T = check_positive_int("T", T, minimum=T_min)
    d = _check_net_d(d, algorithm)
    check_positive("D", D)
    check_positive("lipschitz", lipschitz)
    return T, d


def _net_m(m: Optional[int], d: int, D: float, lipschitz: float, T: int, max_points: int) -> tuple[int, list[str]]:
    """The checked grid points per axis and the planner's notes. ``m = None``: Thm 3's rho = 1/(LT), i.e.
    m = ceil(2D / rho) per axis, capped so that m^d <= max_points."""
    notes: list[str] = []
    if m is None:
        m_paper = int(math.ceil(2.0 * D * lipschitz * T))
        cap = max(2, int(math.floor(max_points ** (1.0 / d))))
        if m_paper > cap:
            notes.append(f"grid capped at m={cap} per axis (Thm 3's rho=1/(LT) needs m={m_paper}); "
                         f"discretization error <= T L rho is reported by the study")
        m = min(m_paper, cap)
    return check_positive_int("m", m, minimum=2), notes


@register_planner("experts_oco_net", "DP-OCO over a grid net of the ball with sparse-vector experts (REAL Thm 3)")
def plan_experts_oco_net(*, eps: float, delta: float = 0.0, T: int, d: int, mode: str = "paper", D: float = 1.0,
                         lipschitz: float = 1.0, beta: float = 0.1, m: Optional[int] = None,
                         max_points: int = 4096, **kw) -> Plan:
    """REAL Thm 1 settings applied to the ``M`` net points (Thm 3), pure DP (``delta`` unused).

    ``K = ceil(6 ceil(log2 M) + 24 ln(1/beta))`` (Lemma 3.1 counts halvings of the potential: base 2),
    ``eta = eps/(2K)``, ``eps_svt = eps/2`` (the ledger: all sparse-vector instances ``eps/2`` plus ``K``
    exponential-mechanism draws of ``eta``; ``eps`` in every mode), threshold
    ``L = 4/eta + c B/eps`` with ``B = ln(2T^2/beta)``, ``c = 8`` (``paper``),
    ``16`` (``certified``, REAL Alg. 1, Thm 1; docs/algorithms/realizable.md#sparse-vector-corrections CORRECTED) or ``L = 1/eta`` (``rate``:
    constants and logs dropped; privacy unchanged since it depends only on
    ``(eps_svt, eta, K)``). Losses normalized by ``loss_scale = 2 L D``.

    Args:
        eps: the privacy parameter ε.
        delta: unused (pure DP).
        T: the horizon.
        d: the dimension.
        mode: ``"paper"``, ``"certified"`` or ``"rate"`` (see above).
        D: the radius of the ball.
        lipschitz: the Lipschitz constant ``L``.
        beta: the failure probability β.
        m: the grid points per axis (``None``: the largest with at most ``max_points`` points).
        max_points: the cap on the net size when ``m`` is chosen.

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` for :func:`experts_oco_net_params`.

    Raises:
        TypeError: unexpected keyword arguments.
        ValueError: invalid values, or a dimension or net too large.
    """
    T, d = _check_net_plan("experts_oco_net", kw, mode, eps, delta, T, d, D, lipschitz)
    if not (0 < beta < 0.5):
        raise ValueError(f"beta (failure probability) must be in (0, 1/2), got {beta!r}")
    m, notes = _net_m(m, d, D, lipschitz, T, max_points)
    M = _net_size(D, d, m)
    if M < 2:
        raise ValueError(f"the grid net with m={m} points per axis has M={M} point(s) in the ball; increase m")
    K = int(math.ceil(6 * log2_ceil(M) + 24 * math.log(1 / beta) - 1e-9))
    eta = eps / (2 * K)
    B = math.log(2 * T ** 2 / beta)
    if mode == "rate":
        L_thr = 1.0 / eta
    else:
        L_thr = 4.0 / eta + (16.0 if mode == "certified" else 8.0) * B / eps
    h = 2.0 * D / m
    rho = h / 2 * math.sqrt(d)
    notes.append(f"net: m={m} per axis, M={M} points, covering radius <= {rho:.3g} (+ boundary); "
                 f"discretization error <= T L rho = {T * lipschitz * rho:.3g}")
    params = {"eps_svt": eps / 2, "eta": eta, "K": K, "L": L_thr, "Lstar": 0.0,
              "loss_scale": 2.0 * lipschitz * D, "m": m}
    return make_plan(algorithm="experts_oco_net", mode=mode, params=params, eps=float(eps), delta=float(delta),
                     ledger=sparse_vector_ledger(eps / 2, eta, K, M, T=T), delta_budget=0.0,
                     conditions={"losses normalized to [0,1] (clipped): sensitivity 1": True},
                     utility_conditions={"0 < beta < 1/2": True},
                     reference="Realizable private online optimization, Thm 3 (via Alg. 1 / Thm 1); "
                               "docs/algorithms/realizable.md", notes=notes)


# --------------------------------------------------------------------------- potential (Alg. 5, App. C)


class PotentialOCOParams(NamedTuple):
    """Parameters of :func:`potential_oco` (:func:`potential_oco_params`, :func:`plan_potential_oco`).

    Attributes:
        eta: the sampling temperature: ``P(x) ∝ exp(-eta S(x)) mu(x)``.
        eps0: ε of each AboveThreshold instance.
        alpha: the threshold ``2 alpha`` in units of ``log phi``.
        s_phi: the sensitivity multiplier of ``log phi`` differences (1: paper, 2: certified).
        K: the int32 largest number of phases (resamples).
        loss_scale: the losses are divided by this and clipped to [0, 1].
    """
    eta: jax.Array         # sampling temperature: P(x) ∝ exp(-eta S(x)) mu(x)
    eps0: jax.Array        # epsilon of each AboveThreshold instance
    alpha: jax.Array       # threshold 2 alpha in units of log phi
    s_phi: jax.Array       # sensitivity multiplier of log phi differences (1 paper, 2 certified)
    K: jax.Array           # int32 maximum number of phases (re-samples)
    loss_scale: jax.Array  # losses divided by this and clipped to [0, 1]


class PotentialOCOState(NamedTuple):
    """State of :func:`potential_oco`.

    Attributes:
        x: the ``(d,)`` grid point played.
        inner: the :func:`jaxdp.experts.potential_experts` state over the net (its ``x`` is the grid index).
    """
    x: jax.Array            # (d,) grid point played
    inner: Any              # the potential_experts state over the net (its .x is the grid index)


def potential_oco_params(*, eta, eps0, alpha=1.0, s_phi=1.0, K, loss_scale=2.0) -> PotentialOCOParams:
    """Validated :class:`PotentialOCOParams` (host values).

    Args:
        eta: the sampling temperature η.
        eps0: ε of each AboveThreshold instance.
        alpha: the threshold exponent α.
        s_phi: the sensitivity multiplier.
        K: the largest number of phases.
        loss_scale: the loss normalization.

    Returns:
        :class:`PotentialOCOParams`.

    Raises:
        ValueError: invalid values.
    """
    for nm, v in (("eta", eta), ("eps0", eps0), ("alpha", alpha), ("s_phi", s_phi), ("loss_scale", loss_scale)):
        check_positive(nm, v)
    K = check_positive_int("K", int(K), minimum=0) if float(K) == int(K) else check_positive_int("K", K)
    f = fdt()
    return PotentialOCOParams(eta=jnp.asarray(eta, f), eps0=jnp.asarray(eps0, f), alpha=jnp.asarray(alpha, f),
                              s_phi=jnp.asarray(s_phi, f), K=jnp.int32(K), loss_scale=jnp.asarray(loss_scale, f))


@functools.lru_cache(maxsize=None)
def potential_oco(problem: Problem, m: int) -> Learner:
    """REAL Algorithm 5 with ``mu`` uniform on the ball (grid quadrature with ``m`` points per axis):
    ``jaxdp.experts.potential_experts`` over the grid net, losses divided by
    ``loss_scale`` and clipped to [0, 1] (as ``experts_oco_net`` wraps the sparse-vector experts).

    Step form of REAL Alg. 5, Thms 6-7; docs/algorithms/realizable.md#potential-corrections (test-then-play, CORRECTED units): after absorbing
    ``l_t``, ``q = (log phi(t*) - log phi(t)) / (s_phi eta)`` is tested by the
    active AboveThreshold instance (threshold ``2 alpha/(s_phi eta)``, noises
    ``Lap(2/eps0)``, ``Lap(4/eps0)``); on ⊤ (and ``k < K``) the next point is
    drawn from ``P(z_j) ∝ exp(-eta S_t(z_j))`` and a fresh instance started.
    Keys per step: ``k_nu, k_x, k_tau``. Info: ``switched``, ``resamples``
    (``<= K``), ``logphi`` (summed; mostly for debugging).

    Args:
        problem: an OCO problem built by :mod:`jaxdp.oco.problems`.
        m: the grid points per axis of the net.

    Returns:
        The :class:`jaxdp.Learner`.

    Raises:
        TypeError: ``problem`` is not a :class:`jaxdp.core.Problem`.
        ValueError: the net has fewer than 2 points.
    """
    pts, M = _net_points(problem, m)
    inner = potential.potential_experts(M)

    def inner_params(params):
        return potential.PotentialParams(eps0=params.eps0, eta=params.eta, K=params.K, alpha=params.alpha,
                                            s_phi=params.s_phi)

    def init(key, params):
        st = inner.init(key, inner_params(params))
        return PotentialOCOState(x=pts[st.x], inner=st)

    def step(key, state, loss, params):
        st, info = inner.step(key, state.inner, _expert_losses(problem, pts, loss, params.loss_scale),
                              inner_params(params))
        return PotentialOCOState(x=pts[st.x], inner=st), {"switched": info["switched"], "resamples": info["em_draws"]}

    return Learner(init=init, step=step)


@register_planner("potential_oco", "REAL Alg. 5 with the uniform measure on the ball (App. C end; Thms 6-7)")
def plan_potential_oco(*, eps: float, delta: float = 0.0, T: int, d: int, mode: str = "paper", D: float = 1.0,
                       lipschitz: float = 1.0, m: Optional[int] = None, max_points: int = 4096, **kw) -> Plan:
    """Thm 6 (``delta = 0``) / Thm 7 (``delta > 0``) settings with ``gamma = (r/D)^d``, ``r = 1/(LT)``
    (CORRECTED exponent sign), so ``log(1/gamma) = d log(DLT)``.

    ``alpha = 1``, ``K = ceil(2 log(1/gamma))``; paper: pure ``eps0 = eps/K``,
    approximate ``eps0 = eps/sqrt(K log(1/delta))``, ``eta = eps0/(56 log T)``, ``s_phi = 1``.
    ``certified``: ``s_phi = 2``, ``eta = eps0/(112 log T)``, and ``eps0`` the largest for which
    the accountant certifies the ledger (``K`` phases of AboveThreshold ``2 eps0/s_phi`` and a
    ``2 eta`` Gibbs sample; :func:`jaxdp.experts.potential_ledger`) within ``(eps, delta)``.
    ``rate``: as paper with ``eta = eps0/(16 log T)``, the smallest constant for which Lemma C.2's
    accuracy condition ``alpha >= 8 eta (log T + log(2T/beta))/eps0`` can hold with ``alpha = 1``.
    ``eps_certified`` is what the accountant proves for the ledger (paper mode: about twice ``eps``).

    Args:
        eps: the privacy parameter ε.
        delta: the privacy parameter δ (0: pure DP, Thm 6).
        mode: ``"paper"``, ``"certified"`` or ``"rate"`` (see above).
        T, d, D, lipschitz, m, max_points: as in :func:`plan_experts_oco_net`.

    Returns:
        A :class:`jaxdp.privacy.accounting.Plan` for :func:`potential_oco_params`.

    Raises:
        TypeError: unexpected keyword arguments.
        ValueError: invalid values.
    """
    T, d = _check_net_plan("potential_oco", kw, mode, eps, delta, T, d, D, lipschitz, T_min=2)
    m, notes = _net_m(m, d, D, lipschitz, T, max_points)
    log_inv_gamma = d * math.log(max(D * lipschitz * T, math.e))
    approx = float(delta) > 0
    K = int(math.ceil(2 * log_inv_gamma))
    eps0, eta, s_phi = potential_settings(float(eps), float(delta), T, K, "paper" if mode == "rate" else mode,
                                          outcomes=_net_size(D, d, m))
    if mode == "rate":   # the smallest constant for Lemma C.2's accuracy condition with alpha = 1
        eta = eps0 / (16 * math.log(T))
    params = {"eta": eta, "eps0": eps0, "alpha": 1.0, "s_phi": s_phi, "K": K,
              "loss_scale": 2.0 * lipschitz * D, "m": m}
    notes.append("log phi by grid quadrature over the m^d cell centres in the ball (exact for the discretized "
                 "measure; see jaxdp.oco.realizable.logphi_grid / logphi_mc for the error vs the continuous ball)")
    if mode == "paper":
        notes.append("paper mode: the AboveThreshold query has sensitivity 2 eta (s_phi = 1 charges eta) and "
                     "sampling exp(-eta S) is 2 eta-DP under replace-one: the ledger counts both")
    ledger = potential_ledger(eps0, eta, s_phi, K, _net_size(D, d, m), T=T)
    return make_plan(algorithm="potential_oco", mode=mode, params=params, eps=float(eps), delta=float(delta),
                     ledger=ledger, utility_conditions={"eta < 1/2 (Lemma C.3)": eta < 0.5},
                     reference=f"Realizable private online optimization, Alg. 5, App. C, "
                               f"Thm {7 if approx else 6}; docs/algorithms/realizable.md", notes=notes)


# --------------------------------------------------------------------------- registry


def _net_static(plan: Plan) -> dict:
    return {"m": int(plan.params["m"])}


def _without_m(plan: Plan) -> dict:
    return {k: v for k, v in plan.params.items() if k != "m"}


def _register_grid_learner(name: str, *, factory, params_type, params_fn, conformance: str, description: str,
                           reference: str):
    """Register a grid learner configured by the planner ``name``, with the conformance case (``d = 1``, losses
    up to 4.5) built by the function ``conformance`` names (``"module:function"``)."""
    return register_learner(
        name, factory=factory, params_type=params_type, problem="oco", private=True, planner=name,
        from_plan=lambda plan: params_fn(**_without_m(plan)), static=_net_static,
        conformance=ConformanceCase(conformance, d=1, check={"loss_range": 4.5}), description=description,
        reference=reference)


_register_grid_learner(
    "experts_oco_net", factory=experts_oco_net, params_type=OCONetParams, params_fn=experts_oco_net_params,
    conformance="jaxdp.oco.conformance:experts_oco_net_case",
    description="DP-OCO over an m-per-axis grid net of the ball: sparse-vector experts over the net points, "
                "losses normalized to [0, 1] (adaptive=True: the doubling Alg. 2 the proof invokes)",
    reference="Realizable private online optimization, Thm 3 (via Alg. 1 / Thm 1)")

_register_grid_learner(
    "potential_oco", factory=potential_oco, params_type=PotentialOCOParams, params_fn=potential_oco_params,
    conformance="jaxdp.oco.conformance:potential_oco_case",
    description="potential-based experts (Alg. 5) over a grid quadrature of the ball with the uniform measure",
    reference="Realizable private online optimization, Alg. 5, App. C, Thms 6-7")


# --------------------------------------------------------------------------- log-partition estimates


def logphi_grid(S_fn, D: float, d: int, m: int, eta: float) -> float:
    """``log phi = log E_{x ~ Unif(ball)} exp(-eta S(x))`` by the mid-point rule on the ``m^d`` grid (host).

    ``S_fn`` maps an ``(n, d)`` float64 array to the ``(n,)`` cumulative losses.
    Comparing ``m`` and ``4m`` estimates the quadrature error of
    :func:`potential_oco`'s potential against the continuous ball.

    Args:
        S_fn: maps an ``(n, d)`` float64 array to the ``(n,)`` cumulative losses.
        D: the radius of the ball.
        d: the dimension.
        m: the grid points per axis.
        eta: the temperature η.

    Returns:
        The estimate of ``log phi``.
    """
    pts, _, _ = ball_grid(D, d, m)
    v = -eta * np.asarray(S_fn(pts.astype(np.float64)), np.float64)
    mx = v.max()
    return float(mx + np.log(np.mean(np.exp(v - mx))))


def logphi_mc(rng: np.random.Generator, S_fn, D: float, d: int, n: int, eta: float) -> tuple[float, float]:
    """Importance-sampling (uniform proposal on the ball) estimate of ``log phi`` and its delta-method
    standard error ``sd(w) / (sqrt(n) mean(w))`` (host).

    Args:
        rng: the NumPy random generator.
        S_fn: maps an ``(n, d)`` float64 array to the ``(n,)`` cumulative losses.
        D: the radius of the ball.
        d: the dimension.
        n: the number of samples.
        eta: the temperature η.

    Returns:
        ``(estimate, standard_error)``.
    """
    z = rng.standard_normal((n, d))
    z /= np.linalg.norm(z, axis=1, keepdims=True)
    r = D * rng.random(n) ** (1.0 / d)
    x = z * r[:, None]
    v = -eta * np.asarray(S_fn(x), np.float64)
    mx = v.max()
    w = np.exp(v - mx)
    mean = w.mean()
    return float(mx + np.log(mean)), float(w.std(ddof=1) / (math.sqrt(n) * mean))


def logphi_squared_errors(a: np.ndarray, b: np.ndarray, D: float, d: int, m: int, eta: float, scale: float,
                          n_mc: int = 200_000) -> dict:
    """The quadrature error of ``potential_oco``'s log-partition function on squared losses.

    The normalized cumulative loss ``S(x) = sum_t (<a_t, x> - b_t)^2 / (2 scale)`` (``potential_oco`` clips each
    loss at 1, which never binds when ``l <= 2LD``) integrated by :func:`logphi_grid` on the ``m^d`` and the
    ``(4m)^d`` grids and by :func:`logphi_mc` with ``n_mc`` draws (seed 0).

    Args:
        a: the ``(t, d)`` loss directions.
        b: the ``(t,)`` targets.
        D: the ball's radius.
        d: the dimension.
        m: the grid points per axis.
        eta: the learning rate η.
        scale: the loss scale.
        n_mc: the importance-sampling draws.

    Returns:
        ``{"logphi_grid", "logphi_grid_4m", "logphi_mc", "mc_se", "abs_err_grid_vs_4m", "abs_err_grid_vs_mc"}``.
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    AA, Ab, bb = a.T @ a, a.T @ b, b @ b

    def cum(x):
        return 0.5 * (np.einsum("ni,ij,nj->n", x, AA, x) - 2 * x @ Ab + bb) / scale

    g, g4 = logphi_grid(cum, D, d, m, eta), logphi_grid(cum, D, d, 4 * m, eta)
    mc, se = logphi_mc(np.random.default_rng(0), cum, D, d, n_mc, eta)
    return {"logphi_grid": g, "logphi_grid_4m": g4, "logphi_mc": mc, "mc_se": se, "abs_err_grid_vs_4m": abs(g - g4),
            "abs_err_grid_vs_mc": abs(g - mc)}


def thm4_dp_ftrl(instance: str, d: int, T: int, eps: float, delta: float, D: float = 1.0) -> dict:
    """DP-FTRL at REAL Theorem 4's matched regularization on one smooth realizable instance.

    The plan is :func:`~jaxdp.oco.plan_dp_ftrl` in ``"paper"`` mode (Lipschitz ``2D``, ``beta = 1``); the
    regularization is Thm 4's balance ``lambda = 32 beta + (beta T E||b||^2 / D^2)^{1/3}`` at the tree noise
    actually added (:func:`~jaxdp.oco.dp_ftrl_lambda_matched`, ``H = tree_depth(T)``). ``"masked"`` is the masked
    quadratic instance whose difficulty grows with ``d`` (:mod:`jaxdp.oco.masked_quadratic`, mask probability 1/2);
    ``"sphere"`` the smooth realizable squared losses with directions uniform on the sphere
    (:func:`~jaxdp.oco.adv_smooth_realizable`, no label noise).

    Args:
        instance: ``"masked"`` or ``"sphere"``.
        d, T: the dimension and the horizon.
        eps, delta: the privacy target.
        D: the domain's radius.

    Returns:
        ``{"learner", "problem", "adversary", "adv_params", "params", "plan", "lam"}``.

    Raises:
        ValueError: an unknown ``instance``, or what the planner refuses.
    """
    from ..privacy.mechanisms import tree_depth
    from .adversaries import adv_smooth_realizable, smooth_realizable_params
    from .dp_ftrl import dp_ftrl, dp_ftrl_lambda_matched, dp_ftrl_params, plan_dp_ftrl
    from .masked_quadratic import adv_masked_quadratic, masked_quadratic_params, masked_quadratic_problem
    from .problems import squared_problem

    if instance not in ("masked", "sphere"):
        raise ValueError(f"instance must be one of ['masked', 'sphere'], got {instance!r}")
    D = float(D)
    plan = plan_dp_ftrl(eps=eps, delta=delta, T=T, d=d, mode="paper", L=2.0 * D, D=D, beta=1.0)
    lam = dp_ftrl_lambda_matched(T, d, tree_depth(T), plan.params["sigma"], D, 1.0)
    ap: Any
    if instance == "masked":
        prob, adv, ap = masked_quadratic_problem(d, D), adv_masked_quadratic(d), masked_quadratic_params(D, 0.5)
    else:
        prob, adv, ap = squared_problem(d, D), adv_smooth_realizable(d), smooth_realizable_params(D, 0.0)
    return dict(learner=dp_ftrl(prob, T), problem=prob, adversary=adv, adv_params=ap, plan=plan, lam=lam,
                params=dp_ftrl_params(lam, plan.params["sigma"], plan.params["clip"]))


def realizable_dp_ftrl(env: str, *, T: int, d: int, eps: float, delta: float, mode: str, D: float = 1.0,
                       lam_rule: str = "matched", beta: float = 1.0) -> tuple:
    """DP-FTRL's settings on REAL's smooth realizable instance (squared losses, ``||a|| = 1``, ``|b| <= D/2``).

    The plan is :func:`~jaxdp.oco.plan_dp_ftrl` at Lipschitz constant ``2D``: REAL Theorem 4's realizable tuning
    (``env="realizable"``) or the general one (``"noisy"``, the instance with label noise). With
    ``lam_rule="matched"`` the realizable λ is Thm 4's balance ``lambda = 32 beta + (beta T E||b||^2 / D^2)^{1/3}``
    at the noise actually added (:func:`~jaxdp.oco.dp_ftrl_lambda_matched`); ``"thm4"`` keeps the printed λ.

    Args:
        env: ``"realizable"`` or ``"noisy"``.
        T, d: the horizon and the dimension.
        eps, delta: the privacy target.
        mode: the planner's mode.
        D: the domain's radius.
        lam_rule: ``"matched"`` or ``"thm4"``.
        beta: the losses' smoothness.

    Returns:
        ``(lam, sigma, clip, eps_certified)``.

    Raises:
        ValueError: what the planner refuses.
    """
    from ..privacy.mechanisms import tree_depth
    from .dp_ftrl import dp_ftrl_lambda_matched, plan_dp_ftrl

    kw: dict = dict(beta=beta) if env == "realizable" else dict(setting="general")
    plan = plan_dp_ftrl(eps=eps, delta=delta, T=T, d=d, mode=mode, L=2.0 * D, D=D, **kw)
    lam = plan.params["lam"]
    if env == "realizable" and lam_rule == "matched":
        lam = dp_ftrl_lambda_matched(T, d, tree_depth(T), plan.params["sigma"], D, beta)
    return lam, plan.params["sigma"], plan.params["clip"], plan.eps_certified


def realizable_dp_ftrl_bound(env: str, T, d, eps, delta: float, D: float = 1.0, beta: float = 1.0):
    """DP-FTRL's regret bound (constants 1) on REAL's smooth realizable instance, at the Lipschitz constant ``2D`` of
    its squared losses (``||a|| = 1``, ``|b| <= D/2`` on the ball of radius ``D``): REAL Theorem 4's realizable rate
    (``env="realizable"``) or the general rate ``LD (√T + √(T √d/ε))`` (``"noisy"``, the instance with label noise),
    both :func:`~jaxdp.oco.dp_ftrl_regret_bound`.

    Args:
        env: ``"realizable"`` or ``"noisy"``.
        T, d: the horizon and the dimension (arrays broadcast).
        eps, delta: the privacy target.
        D: the domain's radius.
        beta: the losses' smoothness.

    Returns:
        The bound (an array when ``T`` is one).
    """
    from .dp_ftrl import dp_ftrl_regret_bound

    return dp_ftrl_regret_bound(T, d, eps, delta, 2.0 * D, D, beta,
                                setting="realizable" if env == "realizable" else "general")


#: the grid-net learners of REAL Thm 3 and App. C, by name
NET_LEARNERS = {"experts_oco_net": experts_oco_net, "potential_oco": potential_oco}


def plan_net_learner(name: str, *, eps: float, T: int, d: int, mode: str, D: float = 1.0,
                     m: Optional[int] = None) -> Plan:
    """The plan of a grid-net learner (:data:`NET_LEARNERS`) on REAL's smooth realizable instance (Lipschitz ``2D``).

    Args:
        name: ``"experts_oco_net"`` (:func:`plan_experts_oco_net`) or ``"potential_oco"`` (:func:`plan_potential_oco`).
        eps: the privacy target (pure DP).
        T, d: the horizon and the dimension.
        mode: the planner's mode.
        D: the domain's radius.
        m: net points per axis (default the planner's).

    Returns:
        The plan.

    Raises:
        ValueError: an unknown ``name``, or what the planner refuses.
    """
    if name not in NET_LEARNERS:
        raise ValueError(f"learner must be one of {list(NET_LEARNERS)}, got {name!r}")
    planner = plan_experts_oco_net if name == "experts_oco_net" else plan_potential_oco
    return planner(eps=eps, T=T, d=d, mode=mode, D=D, lipschitz=2.0 * D, m=m)


def planned_net_bound(name: str, *, eps: float, T: int, d: int, mode: str, D: float = 1.0,
                      m: Optional[int] = None) -> tuple[float, str]:
    """A grid-net learner's regret bound (:func:`net_regret_bound`: REAL Thm 3 or Lemma C.3) at its plan
    (:func:`plan_net_learner`) on REAL's smooth realizable instance.

    Args:
        name: one of :data:`NET_LEARNERS`.
        eps, T, d, mode, D, m: the plan's privacy target, horizon, dimension, mode, domain radius and net points per
            axis.

    Returns:
        ``(bound, kind)`` as :func:`net_regret_bound` gives them.
    """
    return net_regret_bound(name, plan_net_learner(name, eps=eps, T=T, d=d, mode=mode, D=D, m=m).params, D, d)


def net_learner_params(name: str, plan: Plan):
    """The params of a grid-net learner from its plan (:func:`plan_net_learner`).

    Args:
        name: one of :data:`NET_LEARNERS`.
        plan: its plan.

    Returns:
        :class:`OCONetParams` or :class:`PotentialOCOParams`.
    """
    ctor = experts_oco_net_params if name == "experts_oco_net" else potential_oco_params
    return ctor(**_without_m(plan))


def realizable_oco_point(learner: str, env: str, *, T: int, d: int, eps: float, delta: float, T_max: int,
                         D: float = 1.0, mode: str = "paper", lam_rule: str = "matched", beta: float = 1.0,
                         sigma_xi: float = 0.0, m: Optional[int] = None, snap: bool = False) -> dict:
    """One point of REAL's DP-OCO experiments on its smooth realizable instance (squared losses, Lipschitz ``2D``):
    DP-FTRL at :func:`realizable_dp_ftrl` (REAL Thm 4) or a grid-net learner at :func:`plan_net_learner` (REAL Thm 3,
    App. C), with the instance's params.

    Args:
        learner: ``"dp_ftrl"`` or one of :data:`NET_LEARNERS`.
        env: ``"realizable"`` (``b_t = <a_t, x*>``) or ``"noisy"`` (``b_t = <a_t, x*> + sigma_xi xi_t``; DP-FTRL's
            general tuning).
        T, d: the horizon and the dimension.
        eps, delta: the privacy target (``delta`` used by DP-FTRL only).
        T_max: the horizon the learner is compiled for (DP-FTRL's tree).
        D: the domain's radius.
        mode: the planner's mode.
        lam_rule, beta: DP-FTRL's λ rule and the losses' smoothness (:func:`realizable_dp_ftrl`).
        sigma_xi: the label noise of the ``"noisy"`` instance.
        m: a grid-net learner's points per axis (default its planner's).
        snap: snap ``x*`` to the grid net (spacing ``2D/m``), so the instance is realizable on the net.

    Returns:
        ``{"learner", "params", "adv_params", "eps_certified"}`` and, for DP-FTRL, ``"lam"``.

    Raises:
        ValueError: an unknown learner, or what the planners refuse.
    """
    from .adversaries import smooth_realizable_params
    from .dp_ftrl import dp_ftrl, dp_ftrl_params
    from .problems import squared_problem

    prob = squared_problem(d, D)
    if learner == "dp_ftrl":
        lam, sigma, clip, e = realizable_dp_ftrl(env, T=T, d=d, eps=eps, delta=delta, mode=mode, D=D,
                                                 lam_rule=lam_rule, beta=beta)
        out, h = dict(learner=dp_ftrl(prob, T_max), params=dp_ftrl_params(lam, sigma, clip), lam=lam,
                      eps_certified=e), 0.0
    else:
        plan = plan_net_learner(learner, eps=eps, T=T, d=d, mode=mode, D=D, m=m)
        out = dict(learner=NET_LEARNERS[learner](prob, plan.params["m"]), params=net_learner_params(learner, plan),
                   eps_certified=plan.eps_certified)
        h = 2.0 * D / (m or plan.params["m"]) if snap else 0.0
    return dict(out, adv_params=smooth_realizable_params(D, sigma_xi if env == "noisy" else 0.0, h))


def run_realizable_oco(points, keys, T_max: int) -> list:
    """Points of one learner and dimension of REAL's DP-OCO experiments (:func:`realizable_oco_point`) simulated in one
    grid call, every point at the same seed keys (common random numbers across the points).

    Args:
        points: the keywords of :func:`realizable_oco_point` for each point (one ``learner`` and ``d``; without
            ``T_max``).
        keys: the seeds' PRNG keys.
        T_max: the horizon every point is compiled for (at least each point's ``T``).

    Returns:
        Per point, float arrays over the seeds: ``regret``, ``best_loss``, ``switches`` (NaN where the learner
        reports none), ``lam`` (DP-FTRL only) and ``eps_certified``.

    Raises:
        ValueError: what :func:`realizable_oco_point` refuses.
    """
    from ..core import simulate
    from .adversaries import adv_smooth_realizable
    from .problems import squared_problem

    each, n, d = [realizable_oco_point(**p, T_max=T_max) for p in points], len(keys), points[0]["d"]
    params, ap = (jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *[e[k] for e in each])   # one row per point
                  for k in ("params", "adv_params"))
    keys = jnp.broadcast_to(keys, (len(points),) + keys.shape)
    out = simulate(each[0]["learner"], adv_smooth_realizable(d), squared_problem(d, points[0].get("D", 1.0)), params,
                   ap, keys, np.asarray([p["T"] for p in points], np.int32), T_max=T_max, grid=True)
    return [{"regret": out["regret"][i], "best_loss": out["best_loss"][i],
             "switches": out["switches"][i] if "switches" in out else np.full(n, np.nan),
             **{k: np.full(n, e[k], float) for k in ("lam", "eps_certified") if k in e}} for i, e in enumerate(each)]


def smooth_realizable_logphi_errors(d: int, D: float, m: int, eta: float, loss_scale: float, *, horizons,
                                    seed: int = 0, grid_h: float = 0.0) -> list:
    """The quadrature error of :func:`potential_oco`'s log-partition function on one draw of REAL's smooth
    realizable instance (:func:`~jaxdp.oco.adv_smooth_realizable`, no label noise): :func:`logphi_squared_errors`
    after the first ``t`` losses, for each ``t`` of ``horizons``.

    Args:
        d, D: the dimension and the domain's radius.
        m, eta, loss_scale: the net's points per axis, the step size and the loss normalization of the plan.
        horizons: the numbers of losses summed.
        seed: the adversary's key.
        grid_h: the net's spacing when ``x*`` is snapped to it (0: not snapped).

    Returns:
        One dict per horizon: ``t``, ``m``, ``eta`` and :func:`logphi_squared_errors`'s fields.
    """
    from .adversaries import adv_smooth_realizable, smooth_realizable_params

    adv = adv_smooth_realizable(int(d))
    st = adv.init(jax.random.key(seed), smooth_realizable_params(D, 0.0, grid_h))
    rows = []
    for t in horizons:
        ls = jax.jit(jax.vmap(lambda i: adv.loss(st, i)))(jnp.arange(t))
        rows.append({"t": t, "m": m, "eta": eta, **logphi_squared_errors(ls.a, ls.b, D, int(d), m, eta, loss_scale)})
    return rows


def potential_oco_logphi_errors(d: int, *, eps: float, T: int, mode: str, D: float = 1.0, m: Optional[int] = None,
                                seed: int = 0, snap: bool = False) -> list:
    """:func:`smooth_realizable_logphi_errors` of :func:`potential_oco` at its plan (:func:`plan_net_learner`), after
    ``min(T, 256)`` and ``T`` losses.

    Args:
        d: the dimension.
        eps, T, mode, D, m: the plan's privacy target, horizon, mode, domain radius and net points per axis.
        seed: the adversary's key.
        snap: whether ``x*`` is snapped to the net (its spacing ``2D/m``).

    Returns:
        One dict per horizon: ``d`` and :func:`smooth_realizable_logphi_errors`'s fields.
    """
    pr = plan_net_learner("potential_oco", eps=eps, T=T, d=d, mode=mode, D=D, m=m).params
    return [{"d": int(d), **r} for r in smooth_realizable_logphi_errors(
        int(d), D, pr["m"], pr["eta"], pr["loss_scale"], horizons=sorted({min(T, 256), T}), seed=seed,
        grid_h=2.0 * D / pr["m"] if snap else 0.0)]
