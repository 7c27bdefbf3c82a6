"""The bandit instances of the ``bandits`` study and each learner's setup and bound at one point.

docs/algorithms/bandits.md#study: ``linspace`` (means ``linspace(0.1, 0.9, K)``), ``gap`` (the last arm at
``0.5 + gap``, the others 0.5) and the oblivious ``switch`` (arm 0 pays 0 for ``T/3`` rounds and 1 after, the
others Ber(1/2)). Each learner runs at a point with fixed parameters (UCB1, Thompson), its horizon's tuning (EXP3,
EXP3-IX) or its certified plan (private learners); its bound is the one of :mod:`jaxdp.bandits.theory`.
"""
from __future__ import annotations

import math
from typing import Any

import jax.numpy as jnp
import numpy as np

from . import theory as TH
from .adversaries import BernoulliArmsParams, SwitchingArmsParams, bernoulli_arms, switching_arms
from .elimination import DPSEParams, dp_se
from .exp3 import DPExp3Params, Exp3IXParams, Exp3Params, dp_exp3, exp3, exp3_ix
from .planners import plan_dp_exp3, plan_dp_se, plan_dp_ucb_tree, plan_ldp_ucb
from .thompson import ThompsonParams, thompson
from .ucb import DPUCBParams, LDPUCBParams, UCB1Params, dp_ucb_tree, ldp_ucb, ucb1
from ..privacy.mechanisms.tree import tree_depth

__all__ = ["instance_means", "switch_params", "instance_adversary", "plan_for", "learner_setup", "stack_params",
           "theory_value", "trivial_caps", "is_trivial_cap", "ADVERSARIAL", "twin_learner", "point_bounds",
           "point_flags"]

#: the learners whose bound holds on an oblivious sequence (the others' bounds are for stochastic arms)
ADVERSARIAL = ("exp3", "exp3_ix", "dp_exp3", "dp_exp3_batched")


def instance_means(instance: str, K: int, gap: float = 0.2) -> np.ndarray:
    """The Bernoulli reward means of a stochastic instance.

    Args:
        instance: ``"linspace"`` (``linspace(0.1, 0.9, K)``) or ``"gap"`` (the last arm at ``0.5 + gap``, the
            others 0.5).
        K: the number of arms.
        gap: the ``gap`` instance's gap.

    Returns:
        The ``(K,)`` means.

    Raises:
        ValueError: another instance.
    """
    if instance == "linspace":
        return np.linspace(0.1, 0.9, K)
    if instance == "gap":
        return np.where(np.arange(K) == K - 1, 0.5 + gap, 0.5)
    raise ValueError(f"no reward means for instance {instance!r}")


def switch_params(K: int, T: int):
    """The ``switch`` instance: arm 0 pays 0, then 1 from round ``T // 3``; the others pay Ber(1/2).

    Args:
        K: the number of arms.
        T: the horizon.

    Returns:
        ``(before, after, switch_round)``: the ``(K,)`` means before and after, and the round of the switch.
    """
    return np.where(np.arange(K) == 0, 0.0, 0.5), np.where(np.arange(K) == 0, 1.0, 0.5), T // 3


def instance_adversary(instance: str, K: int, Ts, gap: float):
    """The adversary of an instance and its params, one row per horizon of ``Ts`` (a grid call).

    Args:
        instance: ``"linspace"``, ``"gap"`` or ``"switch"``.
        K: the number of arms.
        Ts: the horizons.
        gap: the ``gap`` instance's gap.

    Returns:
        ``(adversary, params)`` for :func:`jaxdp.core.simulate`.
    """
    if instance == "switch":
        before, after, at = zip(*[switch_params(K, int(T)) for T in Ts])
        return switching_arms(K), SwitchingArmsParams(jnp.asarray(np.stack(before), jnp.float32),
                                                      jnp.asarray(np.stack(after), jnp.float32),
                                                      jnp.asarray(at, jnp.int32))
    m = np.tile(instance_means(instance, K, gap), (len(Ts), 1))
    return bernoulli_arms(K), BernoulliArmsParams(jnp.asarray(m, jnp.float32))


def plan_for(learner: str, K: int, T: int, eps):
    """A private learner's plan from its planner (check ``plan.certified``).

    Args:
        learner: the learner's name (``dp_exp3`` plans blocks of one round, ``dp_exp3_batched`` its own).
        K: the number of arms.
        T: the horizon.
        eps: the privacy budget.

    Returns:
        The plan; ``None`` for a non-private learner.
    """
    planner = {"dp_ucb_tree": plan_dp_ucb_tree, "dp_se": plan_dp_se, "dp_exp3": plan_dp_exp3,
               "dp_exp3_batched": plan_dp_exp3, "ldp_ucb": plan_ldp_ucb}.get(learner)
    if planner is None:
        return None
    taus: dict[str, dict[str, Any]] = {"dp_exp3": {"tau": 1}, "dp_exp3_batched": {"tau": "auto"}}
    tau = taus.get(learner, {})
    return planner(eps=eps, T=T, d=K, **tau)


def learner_setup(learner: str, K: int, T: int, eps):
    """A learner at one point: fixed parameters (UCB1, Thompson), the horizon's tuning (EXP3, EXP3-IX) or the
    certified plan (private learners).

    Args:
        learner: the learner's name.
        K: the number of arms.
        T: the horizon.
        eps: the privacy budget (private learners).

    Returns:
        ``(Learner, params class, values)``.

    Raises:
        ValueError: a private learner's plan is not certified.
    """
    if learner == "ucb1":
        return ucb1(K), UCB1Params, (2.0,)
    if learner == "thompson":
        return thompson(K), ThompsonParams, (1.0, 1.0)
    if learner == "exp3":
        return exp3(K), Exp3Params, (*TH.exp3_tuning(K, T), 0.0)
    if learner == "exp3_ix":
        return exp3_ix(K), Exp3IXParams, TH.exp3_ix_tuning(K, T)
    plan = plan_for(learner, K, T, eps)
    if not plan.certified:
        raise ValueError(f"bandits: the plan of {learner} at K={K}, T={T}, eps={eps} is not certified: {plan.format()}")
    p = plan.params
    if learner == "dp_ucb_tree":
        return dp_ucb_tree(K, T), DPUCBParams, (p["b"],)
    if learner == "dp_se":
        return dp_se(K), DPSEParams, (p["eps"], p["beta"])
    if learner in ("dp_exp3", "dp_exp3_batched"):
        return dp_exp3(K), DPExp3Params, (p["eta"], p["gamma"], p["b"], p["B"], p["tau"])
    return ldp_ucb(K), LDPUCBParams, (p["b"],)


def stack_params(cls, rows):
    """One params record over several points (a grid call): integers as int32, the rest as float32.

    Args:
        cls: the params class.
        rows: the points' values, one tuple each (:func:`learner_setup`'s third item).

    Returns:
        ``cls`` with one array per field.
    """
    arrs = [np.asarray(c) for c in zip(*rows)]
    return cls(*[jnp.asarray(a, jnp.int32 if np.issubdtype(a.dtype, np.integer) else jnp.float32) for a in arrs])


def theory_value(learner: str, instance: str, K: int, T: int, eps, gap: float = 0.2) -> float:
    """The bound of :mod:`jaxdp.bandits.theory` on the expected pseudo-regret at one point (Thompson: the
    Lai–Robbins rate).

    Args:
        learner: the learner's name.
        instance: the instance (:func:`instance_means`, or ``"switch"``).
        K: the number of arms.
        T: the horizon.
        eps: the privacy budget (private learners).
        gap: the ``gap`` instance's gap.

    Returns:
        The bound; NaN where none applies (a stochastic bound on ``switch``).

    Raises:
        ValueError: an unknown learner.
    """
    T = int(T)
    if instance == "switch" and learner not in ADVERSARIAL:
        return math.nan
    if learner == "exp3":
        return TH.exp3_bound(K, T)
    if learner == "exp3_ix":
        eta, g = TH.exp3_ix_tuning(K, T)
        return TH.exp3_ix_bound(K, T, eta, g)
    if learner in ("dp_exp3", "dp_exp3_batched"):
        p = plan_for(learner, K, T, eps).params
        return TH.dp_exp3_bound(K, T, p["eta"], p["gamma"], p["b"], p["B"], p["tau"])
    mu, H = instance_means(instance, K, gap), tree_depth(T)
    bounds = {"ucb1": lambda: TH.ucb1_bound(mu, T), "thompson": lambda: TH.lai_robbins(mu, T),
              "ldp_ucb": lambda: TH.ldp_ucb_bound(mu, T, 1.0 / eps),
              "dp_ucb_tree": lambda: TH.dp_ucb_tree_bound(mu, T, H / eps, H),
              "dp_se": lambda: TH.dp_se_bound(mu, T, eps, 1.0 / T)}
    if learner not in bounds:
        raise ValueError(f"unknown learner {learner!r}")
    return bounds[learner]()


def trivial_caps(instance: str, K: int, T: int, gap: float = 0.2) -> list:
    """The caps that pseudo-regret never exceeds: ``T`` (losses in ``[0, 1]``) and, on a stochastic instance,
    ``T·max Δ``. A bound equal to one of them says nothing.

    Args:
        instance: the instance (:func:`instance_means`, or ``"switch"``: ``T`` only).
        K: the number of arms.
        T: the horizon.
        gap: the ``gap`` instance's gap.

    Returns:
        The caps.
    """
    if instance == "switch":
        return [float(T)]
    mu = instance_means(instance, K, gap)
    return [float(T), float(T) * float((mu.max() - mu).max())]


def is_trivial_cap(bound: float, instance: str, K: int, T: int, gap: float = 0.2) -> bool:
    """Whether ``bound`` is one of :func:`trivial_caps` (to relative precision ``1e-9``): a bound that tests nothing.

    Args:
        bound: the value of a regret bound at one point.
        instance: the instance (as in :func:`trivial_caps`).
        K: the number of arms.
        T: the horizon.
        gap: the ``gap`` instance's gap.

    Returns:
        ``True`` when ``bound`` equals ``T`` or (stochastic instances) ``T·max Δ``.
    """
    return any(bool(np.isclose(bound, c, rtol=1e-9, atol=0.0)) for c in trivial_caps(instance, K, T, gap))


def check_point(learner: str, instance: str, K: int, T: int, eps, gap: float = 0.2) -> None:
    """Check that a learner can run on an instance at one point, before anything is compiled.

    Args:
        learner: the learner's name (as in :func:`learner_setup`).
        instance: ``"linspace"``, ``"gap"`` or ``"switch"``.
        K: the number of arms.
        T: the horizon.
        eps: the privacy budget (private learners; ``None`` for the others).
        gap: the ``gap`` instance's gap.

    Raises:
        ValueError: a private learner's plan is not certified at the point, or the instance is none of the three
            (:func:`instance_means`).
    """
    learner_setup(learner, K, T, eps)
    if instance != "switch":
        instance_means(instance, K, gap)


def simulate_budgets(learner: str, instance: str, K: int, T: int, eps, gap: float, keys) -> dict:
    """One learner on one instance at one horizon, once per privacy budget, every budget on the same seed keys
    (common random numbers: differences between budgets are the budgets', not the seeds').

    Each budget runs with its own setup (:func:`learner_setup`: fixed parameters, the horizon's tuning or the
    certified plan at that ε) under :func:`jaxdp.bandits.bandit_problem` ``("pseudo")``: the pseudo-regret
    ``Σ_t (μ* − μ_{A_t})`` of the stochastic bandit protocol (Lattimore & Szepesvári, *Bandit Algorithms*, Ch. 4).

    Args:
        learner: the learner's name (as in :func:`learner_setup`).
        instance: the instance (as in :func:`instance_adversary`).
        K: the number of arms.
        T: the horizon.
        eps: the privacy budgets, one run per entry (``None`` entries for a non-private learner).
        gap: the ``gap`` instance's gap.
        keys: the seed keys, shape ``(n_seeds, 2)`` (:func:`jaxdp.core.seed_keys`).

    Returns:
        :func:`jaxdp.core.simulate`'s output, leading axes ``(len(eps), n_seeds)``: ``"regret"`` at ``T`` and, for a
        learner that counts them, ``"switches"``.

    Raises:
        ValueError: a private learner's plan is not certified at one of the budgets.
    """
    from ..core import simulate
    from .problem import bandit_problem

    setups = [learner_setup(learner, K, T, e) for e in eps]
    L, params = setups[0][0], stack_params(setups[0][1], [s[2] for s in setups])
    Ts = np.full(len(setups), T, np.int32)
    adversary, ap = instance_adversary(instance, K, Ts, gap)
    keys = jnp.broadcast_to(keys, (len(setups),) + tuple(keys.shape))
    return simulate(L, adversary, bandit_problem("pseudo"), params, ap, keys, Ts, grid=True, n_checkpoints=2)


def twin_learner(learner: str, K: int, T: int, eps) -> str:
    """The learner whose runs ``learner``'s are, seed by seed, at one point: ``dp_exp3`` for ``dp_exp3_batched`` where
    its block length ``τ = ⌈1/ε⌉`` is one round (ε ≥ 1: the batched conversion of Asi, Raman & Talwar 2025 is then
    DP-EXP3-Lap of Tossou & Dimitrakakis 2017, the same plan run on the same seed keys), else ``learner`` itself.

    Args:
        learner: the learner's name (as in :func:`plan_for`).
        K: the number of arms.
        T: the horizon.
        eps: the privacy budget (unused by a non-private learner).

    Returns:
        The twin's name, or ``learner``.
    """
    if learner == "dp_exp3_batched" and plan_for(learner, K, T, eps).params["tau"] == 1:
        return "dp_exp3"
    return learner


_POINT = ["learner", "instance", "K", "T", "eps"]


def point_bounds(points, gap: float = 0.2) -> list:
    """:func:`theory_value` of every row of a table of points.

    Args:
        points: a ``pandas.DataFrame`` with columns ``learner``, ``instance``, ``K``, ``T`` and ``eps``.
        gap: the ``gap`` instance's gap.

    Returns:
        The bound of each row, in order (NaN where none applies).
    """
    return [theory_value(ln, i, int(k), int(t), e, gap) for ln, i, k, t, e in points[_POINT].itertuples(index=False)]


def point_flags(points, gap: float = 0.2) -> dict:
    """What a point's bound and runs are worth to a verdict, for every row of a table of points.

    Args:
        points: a ``pandas.DataFrame`` with columns ``learner``, ``instance``, ``K``, ``T``, ``eps`` and ``theory``
            (the point's bound, :func:`point_bounds`).
        gap: the ``gap`` instance's gap.

    Returns:
        ``{"capped": [...], "repeated": [...]}``, one bool per row: the bound is a trivial cap
        (:func:`is_trivial_cap`); the runs are another learner's (:func:`twin_learner`).
    """
    rows = points[[*_POINT, "theory"]].to_numpy()
    return {"capped": [is_trivial_cap(b, i, int(k), int(t), float(gap)) for _, i, k, t, _, b in rows],
            "repeated": [twin_learner(ln, int(k), int(t), e) != ln for ln, _, k, t, e, _ in rows]}
