"""The experimental setups of *Private Online Optimization in the Realizable Regime* (REAL).

``realizable_plan`` plans one of the realizable-experts learners the studies run (REAL Alg. 1 with and without L*,
Alg. 2 with its doubling test as printed and flipped, Alg. 4, Alg. 5 and its corrected variants), and
``realizable_learner`` builds the learner and its params from that plan; ``realizable_adversary`` names the
adversaries (the halving epochs, near-realizable Bernoulli losses, Thm 5's lower-bound instance).
docs/papers/realizable.md maps the theorems to these functions.
"""
from __future__ import annotations

import jax.numpy as jnp

from ..privacy.accounting.plan import Plan
from ._common import params_from_plan
from .adversaries import (
    HalvingParams, RealizableBernoulliParams, RealizableLBParams, adv_realizable_bernoulli, adv_realizable_halving,
    adv_realizable_lb,
)
from .binary_tree import binary_tree_experts, binary_tree_static, plan_binary_tree_experts
from .hedge import HedgeParams, hedge
from .potential import (
    guarded_potential_experts, plan_guarded_potential_experts, plan_potential_experts, potential_experts,
)
from .sparse_vector import (
    adaptive_sparse_vector_experts, plan_adaptive_sparse_vector_experts, plan_sparse_vector_experts,
    sparse_vector_experts,
)

__all__ = ["REALIZABLE_LEARNERS", "REALIZABLE_ADVERSARIES", "realizable_plan", "realizable_learner",
           "realizable_adversary", "realizable_constants", "certified_learner",
           "realizable_point", "run_realizable_point", "replay_certified", "BASELINE_LEARNERS",
           "BASELINE_ADVERSARIES", "baseline_setup", "run_baseline_curve",
           "replay_expert_pool"]

#: the learners :func:`realizable_plan` and :func:`realizable_learner` know
REALIZABLE_LEARNERS = ("sparse_vector", "sparse_vector_known_Lstar", "sv_known_Lstar", "adaptive_printed",
                       "adaptive_flipped", "potential", "potential_bigK", "guarded", "binary_tree", "hedge")
#: the adversaries :func:`realizable_adversary` knows
REALIZABLE_ADVERSARIES = ("halving", "bernoulli", "lb")


def _check_name(name: str) -> None:
    if name not in REALIZABLE_LEARNERS:
        raise ValueError(f"learner must be one of {list(REALIZABLE_LEARNERS)}, got {name!r}")


def realizable_plan(name: str, *, eps: float, T: int, d: int, delta: float = 0.0, mode: str = "rate",
                    beta: float = 0.1, Lstar: float = 0.0) -> Plan | None:
    """The planner's plan of one REAL learner.

    ``sparse_vector`` is Alg. 1 (Thm 1) with ``L* = 0``; ``sparse_vector_known_Lstar`` (alias ``sv_known_Lstar``)
    is Alg. 1 told ``Lstar``; ``adaptive_printed``/``adaptive_flipped`` are Alg. 2 (Thm 2) with the doubling test as
    printed and with its sign flipped; ``potential`` is Alg. 5 (Thm 6; ``eps`` capped at 0.99 when ``delta > 0``);
    ``potential_bigK`` and ``guarded`` share the corrected variant's plan (its larger K; ``guarded`` adds the
    own-loss guard; pure DP, ``mode`` ignored: ``"rate"``); ``binary_tree`` is Alg. 4; ``hedge`` has no plan.

    Args:
        name: one of :data:`REALIZABLE_LEARNERS`.
        eps, delta: the privacy target.
        T, d: the horizon and the number of experts.
        mode: the planners' mode (``"paper"``, ``"rate"``, ...).
        beta: the failure probability of the thresholds.
        Lstar: the best expert's loss told to ``sparse_vector_known_Lstar``.

    Returns:
        The :class:`~jaxdp.privacy.accounting.plan.Plan`, or ``None`` for ``hedge``.

    Raises:
        ValueError: an unknown ``name``, or what the planner refuses.
    """
    _check_name(name)
    if name in ("sparse_vector", "sparse_vector_known_Lstar", "sv_known_Lstar"):
        Ls = 0.0 if name == "sparse_vector" else Lstar
        return plan_sparse_vector_experts(eps=eps, delta=delta, T=T, d=d, mode=mode, beta=beta, Lstar=Ls)
    if name.startswith("adaptive"):
        sign = "flipped" if name == "adaptive_flipped" else "printed"
        return plan_adaptive_sparse_vector_experts(eps=eps, T=T, d=d, mode=mode, beta=beta, test_sign=sign)
    if name == "potential":
        return plan_potential_experts(eps=min(eps, 0.99) if delta > 0 else eps, delta=delta, T=T, d=d, mode=mode)
    if name in ("potential_bigK", "guarded"):
        return plan_guarded_potential_experts(eps=eps, T=T, d=d, mode="rate")
    if name == "binary_tree":
        return plan_binary_tree_experts(eps=eps, T=T, d=d, mode=mode, beta=beta)
    return None


def realizable_learner(name: str, d: int, plan: Plan | None):
    """The learner and its params of one REAL learner from its plan (:func:`realizable_plan`).

    Args:
        name: one of :data:`REALIZABLE_LEARNERS`.
        d: the number of experts.
        plan: its plan (``None`` for ``hedge``, run at ``η = 1``).

    Returns:
        ``(learner, params)``: ``potential_bigK`` runs Alg. 5 as printed with the corrected variant's params.

    Raises:
        ValueError: an unknown ``name``.
    """
    _check_name(name)
    if plan is None:
        return hedge(d), HedgeParams(eta=jnp.float32(1.0))
    if name in ("potential_bigK", "guarded"):
        return (guarded_potential_experts(d) if name == "guarded" else potential_experts(d)), plan.to_params()
    if name == "binary_tree":
        return binary_tree_experts(d, **binary_tree_static(plan)), params_from_plan(plan)
    factory = {"potential": potential_experts}.get(name, adaptive_sparse_vector_experts
                                                   if name.startswith("adaptive") else sparse_vector_experts)
    return factory(d), params_from_plan(plan)


def realizable_constants(name: str, plan: Plan) -> dict:
    """The constants of one REAL learner's plan that decide its regret's shape (what the studies record).

    Args:
        name: one of :data:`REALIZABLE_LEARNERS` but ``hedge``.
        plan: its plan (:func:`realizable_plan`).

    Returns:
        Alg. 1 and 2: ``threshold0`` (the initial sparse-vector threshold: ``L``, or Alg. 2's ``L_offset + Lbar0``),
        ``K`` and ``margin`` (Alg. 2's doubling margin; NaN for Alg. 1); Alg. 5: ``K``, ``eta`` and ``threshold``
        (the phase threshold ``2α/(s_φ η)``); Alg. 4: ``tau``, ``m_set`` and ``P_max``.

    Raises:
        ValueError: an unknown ``name``, or ``hedge``.
    """
    _check_name(name)
    pr = plan.params
    if name.startswith("adaptive") or name in ("sparse_vector", "sparse_vector_known_Lstar", "sv_known_Lstar"):
        return dict(threshold0=pr["L_offset"] + pr["Lbar0"] if name.startswith("adaptive") else pr["L"], K=pr["K"],
                    margin=pr.get("margin", float("nan")))
    if name.startswith("potential") or name == "guarded":
        return dict(K=pr["K"], eta=pr["eta"], threshold=2 * pr["alpha"] / (pr["s_phi"] * pr["eta"]))
    if name == "binary_tree":
        return dict(tau=pr["tau"], m_set=pr["m_set"], P_max=pr["P_max"])
    raise ValueError(f"learner {name!r} has no plan")


def realizable_adversary(name: str, d: int, *, T: int = 1, eps: float = 1.0, r: int = 1, q: float = 0.5,
                         q_star: float = 0.0):
    """One adversary of the REAL studies and its params.

    Args:
        name: ``"halving"`` (epochs of ``r`` rounds, each eliminating half the experts), ``"bernoulli"`` (losses
            ``Ber(q)``, the best expert's ``Ber(q_star)``) or ``"lb"`` (Thm 5's lower-bound instance at ``T``,
            ``eps``).
        d: the number of experts.
        T, eps: the lower-bound instance's horizon and ε.
        r: the halving epoch length.
        q, q_star: the Bernoulli loss probabilities.

    Returns:
        ``(adversary, params)``.

    Raises:
        ValueError: an unknown ``name``.
    """
    if name == "halving":
        return adv_realizable_halving(d), HalvingParams(r=jnp.int32(int(r)))
    if name == "lb":
        return adv_realizable_lb(d), RealizableLBParams(T=jnp.int32(T), eps=jnp.float32(eps))
    if name == "bernoulli":
        return adv_realizable_bernoulli(d), RealizableBernoulliParams(q=jnp.float32(q), q_star=jnp.float32(q_star))
    raise ValueError(f"adversary must be one of {list(REALIZABLE_ADVERSARIES)}, got {name!r}")


def realizable_point(learner: str, adversary: str, *, d: int, T: int, eps: float, delta: float, Lstar: float,
                     mode: str, beta: float, q: float, T_plan: int | None = None) -> tuple:
    """The plan, learner and adversary of one point of REAL's experts experiments.

    ``binary_tree`` (Alg. 4) is planned for ``T_plan`` (a study's largest horizon); the halving epochs have
    ``r = 2L + 1`` rounds, ``L`` the sparse-vector threshold at this point; ``"near_bernoulli"`` draws the best
    expert's losses ``Ber(L*/T)`` (near-realizable), ``"bernoulli"`` never charges it.

    Args:
        learner: one of :data:`REALIZABLE_LEARNERS`.
        adversary: ``"halving"``, ``"bernoulli"``, ``"near_bernoulli"`` or ``"lb"``.
        d, T, eps, delta: the point's experts, horizon and privacy target.
        Lstar: the best expert's expected loss (``near_bernoulli``; at most ``T`` on a Bernoulli adversary).
        mode, beta: the planners' mode and failure probability.
        q: the other experts' Bernoulli loss probability.
        T_plan: the horizon ``binary_tree`` is planned for (default ``T``).

    Returns:
        ``(plan, (learner, params), (adversary, params))``.

    Raises:
        ValueError: ``Lstar > T`` on a Bernoulli adversary, or what the planners refuse.
    """
    plan = realizable_plan(learner, eps=eps, delta=delta, T=(T_plan or T) if learner == "binary_tree" else T, d=d,
                           mode=mode, beta=beta, Lstar=Lstar)
    if adversary not in ("halving", "lb") and Lstar > T:
        raise ValueError(f"Lstar={Lstar} must be <= T_fixed={T} (the best expert's loss probability is Lstar/T)")
    sv = realizable_plan("sparse_vector", eps=eps, T=T, d=d, mode=mode, beta=beta) if adversary == "halving" else None
    L = sv.params["L"] if sv is not None else 0
    return plan, realizable_learner(learner, d, plan), realizable_adversary(
        "bernoulli" if "bernoulli" in adversary else adversary, d, T=T, eps=eps, r=int(2 * L) + 1, q=q,
        q_star=Lstar / T if adversary == "near_bernoulli" else 0.0)


def run_realizable_point(learner: str, adversary: str, keys, *, d: int, T: int, eps: float, delta: float,
                         Lstar: float, mode: str, beta: float, q: float, T_plan: int | None = None) -> dict:
    """One point of REAL's experts experiments (:func:`realizable_point`) simulated at every seed key.

    The learner runs its plan against the adversary for ``T`` rounds, compiled for the horizon ``T_plan`` (the one
    ``binary_tree``, Alg. 4, is planned for), so every horizon of a study up to it shares one compilation.

    Args:
        learner, adversary: as in :func:`realizable_point`.
        keys: the seeds' PRNG keys, shape ``(n, 2)``.
        d, T, eps, delta, Lstar, mode, beta, q, T_plan: as in :func:`realizable_point`.

    Returns:
        ``{metric: float array (n,)}``: ``regret``, ``best_loss``, ``switches``, ``em_draws`` (the
        exponential-mechanism draws; the switches where the learner reports none), ``doublings`` (0 where none),
        ``eps_certified`` (``inf`` for a learner without a plan) and ``K`` (the plan's ``K``, NaN where none); for
        ``binary_tree`` also ``phases``, ``padded`` and the plan's ``m_set``, ``P_max`` and ``tau``.

    Raises:
        ValueError: what :func:`realizable_point` refuses.
    """
    import numpy as np

    from ..core import simulate
    from .problem import experts_problem

    plan, (lrn, params), (adv, ap) = realizable_point(learner, adversary, d=d, T=T, eps=eps, delta=delta, Lstar=Lstar,
                                                      mode=mode, beta=beta, q=q, T_plan=T_plan)
    out, n = simulate(lrn, adv, experts_problem(), params, ap, keys, T, T_max=T_plan or T), len(keys)
    res = {"regret": out["regret"].astype(float), "best_loss": out["best_loss"].astype(float),
           "switches": out["switches"].astype(float), "em_draws": out.get("em_draws", out["switches"]).astype(float),
           "doublings": out.get("doublings", np.zeros(n)).astype(float),
           "eps_certified": np.full(n, plan.eps_certified if plan else np.inf),
           "K": np.full(n, plan.params.get("K", np.nan) if plan else np.nan, dtype=float)}
    if learner == "binary_tree":
        res.update(phases=out["phases"].astype(float), padded=out["padded"].astype(float),
                   **{k: np.full(n, float(plan.params[k])) for k in ("m_set", "P_max", "tau")})
    return res


def certified_learner(name: str, d: int, T: int, eps: float, delta: float) -> tuple:
    """A learner, its params and its certified ε at one point, every private learner at its ``certified`` plan:
    Hedge (non-private, ``η = √(8 ln d/T)``), L2P-MW (:func:`~jaxdp.experts.plan_l2p_mw`), tree DP-FTRL with Laplace
    noise (pure ε) and REAL's learners (:func:`realizable_plan`; ``adaptive_sv`` is Alg. 2 with the flipped test).

    Args:
        name: ``"hedge"``, ``"l2p_mw"``, ``"tree_ftrl"``, ``"adaptive_sv"`` or one of :data:`REALIZABLE_LEARNERS`.
        d: the number of experts.
        T: the horizon.
        eps, delta: the privacy target (``delta`` used by L2P-MW only).

    Returns:
        ``(learner, params, eps_certified)`` (``inf`` for Hedge).

    Raises:
        ValueError: an unknown ``name``, or what the planner refuses.
    """
    import math

    from .hedge import hedge_params
    from .l2p_mw import l2p_mw, l2p_mw_params, plan_l2p_mw
    from .tree_ftrl import tree_ftrl_experts, tree_ftrl_params

    if name == "hedge":
        return hedge(d), hedge_params(d, T), math.inf
    if name == "l2p_mw":
        plan = plan_l2p_mw(eps=eps, delta=delta, T=T, d=d, mode="certified")
        return l2p_mw(d, None), l2p_mw_params(plan.params["eta"], plan.params["p"], plan.params["B"]), plan.eps_certified
    if name == "tree_ftrl":
        return tree_ftrl_experts(d, T, noise="laplace"), tree_ftrl_params(d, T, eps, 0.0), eps
    name = "adaptive_flipped" if name == "adaptive_sv" else name
    plan = realizable_plan(name, eps=eps, T=T, d=d, mode="certified")
    return (*realizable_learner(name, d, plan), plan.eps_certified if plan is not None else math.inf)


def replay_certified(name: str, losses, keys, *, eps: float, delta: float) -> dict:
    """:func:`certified_learner` replaying fixed loss streams (:func:`~jaxdp.experts.adv_replay`), stream ``i`` with
    algorithm key ``i``, every stream a row of one grid call.

    Args:
        name: as in :func:`certified_learner`.
        losses: the streams, shape ``(n, T, d)`` (a JAX array, so that several learners share one copy).
        keys: one PRNG key per stream, shape ``(n, 2)``.
        eps, delta: the privacy target.

    Returns:
        ``{"regret", "switches", "eps_certified"}``, float arrays ``(n,)`` (the regret against the stream's best expert
        in hindsight).

    Raises:
        ValueError: what :func:`certified_learner` refuses.
    """
    import jax
    import numpy as np

    from ..core import simulate
    from .adversaries import ReplayParams, adv_replay
    from .problem import experts_problem

    n, T, d = losses.shape
    learner, params, e_cert = certified_learner(name, d, T, eps, delta)
    params = jax.tree_util.tree_map(lambda v: jnp.broadcast_to(jnp.asarray(v), (n,) + jnp.shape(v)), params)
    r = simulate(learner, adv_replay(d), experts_problem(), params, ReplayParams(losses=losses), keys[:, None],
                 jnp.full((n,), T, jnp.int32), T_max=T, grid=True, n_checkpoints=4)
    return {"regret": np.asarray(r["regret"], float)[:, 0], "switches": np.asarray(r["switches"], float)[:, 0],
            "eps_certified": np.full(n, e_cert, float)}


#: the learners and adversaries of :func:`baseline_setup`
BASELINE_LEARNERS = ("hedge", "dartboard", "ftpl")
BASELINE_ADVERSARIES = ("noise", "planted", "alternating", "epochs")


def baseline_setup(learner: str, adversary: str, d: int, T, *, gap: float = 0.1, epoch_len: int = 0) -> tuple:
    """A non-private learner at its standard tuning against a built-in adversary, over a grid of horizons.

    ``hedge`` and ``dartboard`` (the shrinking dartboard, Geulen, Vöcking & Winkler, *Regret Minimization for Online
    Buffering Problems Using the Weighted Majority Algorithm*: Hedge's marginals) run at ``η = √(8 ln d/T)``
    (:func:`~jaxdp.experts.hedge_eta`), ``ftpl`` with exponential perturbations at ``η = √(ln d/T)`` (Kalai &
    Vempala, *Efficient Algorithms for Online Decision Problems*; :func:`~jaxdp.experts.ftpl_eta`). The adversaries:
    ``noise`` (i.i.d. ``Ber(1/2)`` losses), ``planted`` (one expert's ``Ber(1/2 - gap)``), ``alternating`` (batches
    of one round) and ``epochs`` (LAZY Thm 4.2's epochs at ε = 1, of ``epoch_len`` rounds; 0: the paper's length).

    Args:
        learner: one of :data:`BASELINE_LEARNERS`.
        adversary: one of :data:`BASELINE_ADVERSARIES`.
        d: the number of experts.
        T: the horizons, a sequence of ints (one grid row each).
        gap: the planted expert's gap.
        epoch_len: the epochs' length.

    Returns:
        ``(learner, params, adversary, adversary params)``, the params with one grid row per horizon.

    Raises:
        ValueError: an unknown ``learner`` or ``adversary``, or a ``d`` or horizon the tunings refuse.
    """
    import numpy as np

    from .adversaries import (
        AlternatingParams, BernoulliParams, LazyEpochsParams, adv_alternating_batches, adv_lazy_epochs,
        bernoulli_experts,
    )
    from .dartboard import shrinking_dartboard
    from .ftpl import ftpl, ftpl_eta
    from .hedge import hedge_eta

    if learner not in BASELINE_LEARNERS:
        raise ValueError(f"learner must be one of {list(BASELINE_LEARNERS)}, got {learner!r}")
    if adversary not in BASELINE_ADVERSARIES:
        raise ValueError(f"adversary must be one of {list(BASELINE_ADVERSARIES)}, got {adversary!r}")
    T = np.asarray(T, np.int32)
    G = len(T)
    eta = jnp.asarray([(ftpl_eta(d, int(t), "exponential") if learner == "ftpl" else hedge_eta(d, int(t)))
                       for t in T], jnp.float32)
    adv = {"noise": lambda: (bernoulli_experts(d), BernoulliParams(gap=jnp.zeros(G, jnp.float32))),
           "planted": lambda: (bernoulli_experts(d), BernoulliParams(gap=jnp.full(G, gap, jnp.float32))),
           "alternating": lambda: (adv_alternating_batches(d), AlternatingParams(B=jnp.ones(G, jnp.int32))),
           "epochs": lambda: (adv_lazy_epochs(d), LazyEpochsParams(
               T=jnp.asarray(T, jnp.int32), eps=jnp.ones(G, jnp.float32),
               epoch_len=jnp.full(G, epoch_len, jnp.int32)))}[adversary]()
    lrn = {"hedge": hedge, "dartboard": shrinking_dartboard, "ftpl": ftpl}[learner](d)
    return lrn, HedgeParams(eta=eta), *adv


def run_baseline_curve(learner: str, adversary: str, keys, *, d: int, T, gap: float = 0.1,
                       epoch_len: int = 0) -> list:
    """:func:`baseline_setup` simulated at every horizon of ``T`` in one grid call, every horizon with the same seed
    keys (common random numbers: the horizons of a curve are compared seed by seed).

    Args:
        learner, adversary, d, T, gap, epoch_len: as in :func:`baseline_setup`.
        keys: one PRNG key per seed (:func:`~jaxdp.core.seed_keys`), the same at every horizon.

    Returns:
        One dict per horizon: ``regret``, ``switches`` and ``expected_regret`` (arrays ``(n,)``; NaN where the learner
        reports no expected regret, FTPL).

    Raises:
        ValueError: what :func:`baseline_setup` refuses.
    """
    import numpy as np

    from ..core import simulate
    from .problem import experts_problem

    lrn, params, adv, ap = baseline_setup(learner, adversary, d, T, gap=gap, epoch_len=epoch_len)
    T, nan = np.asarray(T, np.int32), np.full(len(keys), np.nan)
    out = simulate(lrn, adv, experts_problem(), params, ap, jnp.broadcast_to(keys, (len(T),) + keys.shape), T,
                   grid=True)
    return [{"regret": out["regret"][i], "switches": out["switches"][i],
             "expected_regret": out["expected_regret"][i] if "expected_regret" in out else nan} for i in range(len(T))]


def replay_expert_pool(dataset: str, points, seed: int, seeds, *, T: int, n_experts: int, pool_seed: int,
                       delta: float) -> list:
    """Certified learners (:func:`replay_certified`) on the loss streams of a pool of online predictors trained on a
    real dataset (:func:`jaxdp.data.expert_pool_losses`; needs ``jaxdp[data]``), seed ``i`` replaying stream order
    ``seed * 100003 + i`` with algorithm key ``i``, so that two learners are compared seed by seed.

    Args:
        dataset: the dataset's name.
        points: ``[(learner, eps)]``: a learner of :func:`certified_learner` and its ε.
        seed: the base seed.
        seeds: the seed indices.
        T, n_experts: the streams' rounds and experts.
        pool_seed: the seed of the expert pool (the same pool for every stream).
        delta: the δ of the learners planned for (ε, δ).

    Returns:
        One dict per point of float arrays over the seeds: ``regret``, ``regret_per_round`` (over ``T``),
        ``best_loss`` (the best expert's cumulative loss), ``switches``, ``eps_certified``.

    Raises:
        ValueError: what :func:`certified_learner` or the streams refuse.
    """
    import numpy as np

    from ..core import seed_keys
    from ..data import expert_pool_losses

    losses = np.stack([expert_pool_losses(dataset, T, n_experts, order_seed=int(seed) * 100003 + int(s),
                                          pool_seed=int(pool_seed)) for s in seeds])
    best, stream, out = losses.sum(axis=1).min(axis=1).astype(float), jnp.asarray(losses), []
    for learner, eps in points:     # seed i: stream order i with algorithm key i (one grid row per seed)
        r = replay_certified(learner, stream, seed_keys(int(seed), seeds), eps=eps, delta=float(delta))
        out.append({"regret": r["regret"], "regret_per_round": r["regret"] / T, "best_loss": best,
                    "switches": r["switches"], "eps_certified": r["eps_certified"]})
    return out
