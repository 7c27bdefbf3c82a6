"""The experimental setups of *Lazy private online learning* (Asi, Koren, Liu, Talwar), and its Lemma 3.4 test.

``learner_and_params`` and ``adversary_and_params`` name the learners (L2P-MW at the paper's and at re-tuned
settings, the prior low-switching sketch, Hedge) and adversaries (the lower-bound epochs, batch-aligned epochs,
alternating batches) the lazy studies run, with the paper's batch length ``paper_B``. ``z7_played`` replays fixed
losses (``z7_losses``) through L2P-MW in block mode and returns the expert it plays in each batch; Lemma 3.4
(``δ₀ = 0``) says that expert is distributed as ``mw_marginal`` of the earlier batches' losses, which
``marginal_check`` tests against the exact sampler's noise level (``exact_sampler_tv``). docs/papers/lazy.md maps
the lemma to these functions.
"""
from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ..core import simulate
from ..core.validation import check_positive_int
from .adversaries import (
    AlternatingParams, LazyEpochsParams, ReplayParams, adv_alternating_batches, adv_lazy_epochs, adv_replay,
    load_losses,
)
from .hedge import hedge, hedge_eta, hedge_params
from .l2p_mw import (
    alternating_prediction, alternating_warmup, l2p_mw, l2p_mw_params, l2p_mw_regret_bound, plan_l2p_mw,
)
from .problem import experts_problem
from .sketch import private_lazy_sketch, sketch_params
from .tree_ftrl import tree_ftrl_experts, tree_ftrl_params

__all__ = ["LAZY_LEARNERS", "LAZY_ADVERSARIES", "paper_B", "learner_and_params", "adversary_and_params",
           "z7_losses", "mw_marginal", "exact_sampler_tv", "marginal_check", "z7_played", "z7_histograms",
           "z7_marginal_checks", "alternating_terms", "batching_terms",
           "alternating_batches_run", "lazy_run", "lower_bound_run"]

#: the learners :func:`learner_and_params` knows
LAZY_LEARNERS = ("l2p_paper", "l2p_retuned", "sketch", "hedge", "tree")
#: the adversaries :func:`adversary_and_params` knows
LAZY_ADVERSARIES = ("paper_epochs", "aligned_epochs", "alternating")


def paper_B(eps: float) -> int:
    """The paper's batch length.

    Args:
        eps: the privacy parameter ε.

    Returns:
        ``B = floor(1/ε)``, at least 1.
    """
    return max(1, int(math.floor(1.0 / eps)))


def learner_and_params(name: str, d: int, T: int, eps: float, delta: float, grid=(40, 30, 120),
                       T_max: int | None = None):
    """One learner of the lazy studies at one grid point.

    Args:
        name: one of :data:`LAZY_LEARNERS`: L2P-MW planned in ``"rate"`` mode (``l2p_paper``) or ``"retuned"``
            mode (``l2p_retuned``), the sketch at ``η = min(hedge_eta, ε)``, ``p = η/ε``, Hedge, or the
            binary-tree FTRL baseline (``tree``, built for ``T_max`` rounds).
        d, T: the number of experts and the horizon.
        eps, delta: the privacy target.
        grid: the planner's ``(n_B, n_c, n_eta)`` resolution.
        T_max: the largest horizon the tree baseline runs (default ``T``).

    Returns:
        ``(learner, params, info)``; ``info`` holds ``eta`` and ``B``, and for L2P the plan's params and
        ``eps_cert``.

    Raises:
        ValueError: an unknown learner or a refused plan.
    """
    if name in ("l2p_paper", "l2p_retuned"):
        plan = plan_l2p_mw(eps=eps, delta=delta, T=T, d=d, mode="rate" if name == "l2p_paper" else "retuned",
                           grid=grid)
        pr = plan.params
        return l2p_mw(d, None), l2p_mw_params(pr["eta"], pr["p"], pr["B"]), dict(pr, eps_cert=plan.eps_certified)
    if name == "sketch":
        eta = min(hedge_eta(d, T), eps)
        p = min(1.0, eta / eps)
        return private_lazy_sketch(d), sketch_params(eta, p), {"eta": eta, "p": p, "B": 1}
    if name == "hedge":
        hp = hedge_params(d, T)
        return hedge(d), hp, {"eta": float(hp.eta), "B": 1}
    if name == "tree":
        T_max = T if T_max is None else T_max
        return tree_ftrl_experts(d, T_max), tree_ftrl_params(d, T, eps, delta, T_max=T_max), {"p": 0.0, "B": 1}
    raise ValueError(f"unknown learner {name!r}; known: {LAZY_LEARNERS}")


def adversary_and_params(name: str, d: int, T: int, eps: float):
    """One adversary of the lazy studies at one grid point.

    Args:
        name: one of :data:`LAZY_ADVERSARIES`: the paper's lower-bound epochs, epochs of length
            ``B = paper_B(ε)`` or alternating batches of length ``B``.
        d, T: the number of experts and the horizon.
        eps: the privacy parameter ε.

    Returns:
        ``(adversary, params)``.

    Raises:
        ValueError: an unknown adversary.
    """
    B = paper_B(eps)
    if name in ("paper_epochs", "aligned_epochs"):
        ep = jnp.int32(0 if name == "paper_epochs" else B)
        return adv_lazy_epochs(d), LazyEpochsParams(T=jnp.int32(T), eps=jnp.float32(eps), epoch_len=ep)
    if name == "alternating":
        return adv_alternating_batches(d), AlternatingParams(B=jnp.int32(B))
    raise ValueError(f"unknown adversary {name!r}; known: {LAZY_ADVERSARIES}")


def z7_losses(d: int, B: int, n_batches: int, seed: int = 0) -> np.ndarray:
    """The fixed losses of the Lemma 3.4 test.

    i.i.d. U[0, 1] with a leader (loss 0) rotating every two batches, so ν_s moves by TV ~ ηB/4 per batch without
    collapsing onto one expert.

    Args:
        d: the number of experts.
        B: the batch length.
        n_batches: the number of batches.
        seed: the NumPy seed of the uniform draws.

    Returns:
        ``(B n_batches, d)`` float32 losses.
    """
    d, B, n_batches = (check_positive_int(n, v) for n, v in (("z7_d", d), ("z7_B", B), ("z7_batches", n_batches)))
    ell = np.random.default_rng(int(seed)).random((B * n_batches, d))
    for s in range(n_batches):
        ell[s * B:(s + 1) * B, (s // 2) % d] = 0.0
    return load_losses(ell.astype(np.float32), d)


def mw_marginal(losses: np.ndarray, eta: float, n_rounds: int) -> np.ndarray:
    """The multiplicative-weights distribution after ``n_rounds`` losses.

    Args:
        losses: ``(T, d)`` losses.
        eta: the step size.
        n_rounds: how many leading rows of ``losses`` to sum.

    Returns:
        ``softmax(-eta * sum_{i < n_rounds} l_i)``, float64 ``(d,)``.
    """
    logits = -float(eta) * np.asarray(losses, np.float64)[:int(n_rounds)].sum(0)
    w = np.exp(logits - logits.max())
    return w / w.sum()


def exact_sampler_tv(nu: np.ndarray, n: int) -> float:
    """The expected total variation of an exact sampler's histogram, exactly.

    De Moivre's mean absolute deviation of each Binomial(n, ν_j) count: ``2 k C(n, k) q^k (1 - q)^(n - k + 1)``,
    ``k = floor(n q) + 1``.

    Args:
        nu: the target distribution ``(d,)``.
        n: the number of i.i.d. draws.

    Returns:
        ``E[TV(empirical, nu)]`` of ``n`` i.i.d. draws from ``nu``.
    """
    from scipy import special

    nu, n = np.asarray(nu, np.float64), int(n)
    q = np.clip(nu, 1e-300, 1.0)
    k = np.floor(n * q) + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        log_mad = (math.log(2.0) + np.log(k) + special.gammaln(n + 1) - special.gammaln(k + 1)
                   - special.gammaln(n - k + 1) + k * np.log(q) + (n - k + 1) * np.log1p(-q))
    return float(0.5 * np.where((nu > 0) & (nu < 1) & (k <= n), np.exp(log_mad), 0.0).sum() / n)


def marginal_check(counts: np.ndarray, nu: np.ndarray, alpha: float = 1e-8) -> dict:
    """Tests a histogram against a distribution at the exact sampler's noise level.

    Args:
        counts: the histogram ``(d,)``.
        nu: the target distribution ``(d,)``.
        alpha: the probability with which an exact sampler exceeds the bound.

    Returns:
        ``{"n", "tv", "tv_noise", "tv_ratio", "tv_bound", "chi2_p", "ok"}``: the TV, an exact sampler's ``E[TV]``,
        their ratio, the sound bound ``E[TV] + sqrt(ln(1/alpha) / (2n))`` (McDiarmid: an exact sampler exceeds it
        with probability at most ``alpha``), the chi-square p-value and ``tv <= tv_bound``.
    """
    from scipy import stats

    counts, nu = np.asarray(counts, np.float64), np.asarray(nu, np.float64)
    n = int(round(counts.sum()))
    tv, noise = 0.5 * float(np.abs(counts / n - nu).sum()), exact_sampler_tv(nu, n)
    bound = noise + math.sqrt(math.log(1.0 / alpha) / (2.0 * n))
    return {"n": n, "tv": tv, "tv_noise": noise, "tv_ratio": tv / noise, "tv_bound": bound,
            "chi2_p": float(stats.chisquare(counts, nu * n).pvalue), "ok": bool(tv <= bound)}


def z7_marginal_checks(counts, losses: np.ndarray, eta: float, B: int, alpha: float = 1e-8) -> list:
    """LAZY Lemma 3.4 (``δ₀ = 0``) at every checked batch: the histogram of the expert played in batch ``s`` against
    ``ν_s`` (the multiplicative-weights marginal of the first ``(s-1)B`` losses), and the control against ``ν_{s-1}``
    (one batch late), each by :func:`marginal_check`.

    Args:
        counts: ``{s: histogram (d,)}`` of the batches checked (``s`` from 1).
        losses: the replayed losses (:func:`z7_losses`).
        eta: the step size.
        B: the batch length.
        alpha: the probability with which an exact sampler fails one check.

    Returns:
        One dict per batch, in increasing ``s``: ``s``, ``round`` (its first round), :func:`marginal_check`'s
        fields against ``ν_s``, and the control's ``tv_vs_prev``, ``chi2_p_vs_prev``, ``prev_rejected`` (NaN, NaN,
        False at ``s = 1``) and ``tv_nu_prev_nu`` (the TV between the two targets).
    """
    rows = []
    for s in sorted(counts):
        s = int(s)
        nu, prev = mw_marginal(losses, eta, (s - 1) * B), mw_marginal(losses, eta, max(s - 2, 0) * B)
        row = {"s": s, "round": (s - 1) * B + 1, **marginal_check(counts[s], nu, alpha)}
        w = marginal_check(counts[s], prev, alpha) if s >= 2 else None
        row.update(tv_vs_prev=w["tv"] if w else np.nan, chi2_p_vs_prev=w["chi2_p"] if w else np.nan,
                   prev_rejected=not w["ok"] if w else False, tv_nu_prev_nu=0.5 * float(np.abs(nu - prev).sum()))
        rows.append(row)
    return rows


@functools.lru_cache(maxsize=None)
def _z7_runner(d: int, B: int, n_batches: int):
    """jit(keys, losses, params) -> (n, n_batches): the expert played per batch, with the simulator's key layout."""
    learner, adversary = l2p_mw(d, B), adv_replay(d)

    def one(key, losses, params):
        k_learn, k_adv, k_init, k_block = jax.random.split(key, 4)
        a_state = adversary.init(k_adv, ReplayParams(losses))

        def rnd(s, t):
            return learner.step(jax.random.fold_in(k_learn, t), s, adversary.loss(a_state, t), params)[0], None

        def blk(s, j):
            x = s.x   # played for rounds jB .. (j+1)B - 1 (x is constant within a batch)
            s, _ = jax.lax.scan(rnd, s, j * B + jnp.arange(B, dtype=jnp.int32))
            return learner.end_block(jax.random.fold_in(k_block, j), s, params)[0], x

        return jax.lax.scan(blk, learner.init(k_init, params), jnp.arange(n_batches, dtype=jnp.int32))[1]

    return jax.jit(jax.vmap(one, in_axes=(0, None, None)))


def z7_played(keys, losses: np.ndarray, eta: float, p: float, B: int) -> np.ndarray:
    """The expert L2P-MW (block mode) plays in each batch of each run on replayed losses.

    Args:
        keys: one typed key per run ``(n,)``.
        losses: ``(T, d)`` losses, ``T`` a multiple of ``B``.
        eta: the step size.
        p: the fake-switch probability.
        B: the batch length (and block size).

    Returns:
        ``(n, T // B)`` int32.

    Raises:
        ValueError: ``T`` is not a multiple of ``B``.
    """
    losses, B = load_losses(losses), check_positive_int("B", B)
    T, d = losses.shape
    if T % B:
        raise ValueError(f"losses must have a multiple of B={B} rows, got {T}")
    return np.asarray(_z7_runner(d, B, T // B)(keys, jnp.asarray(losses), l2p_mw_params(eta, p, B, block_size=B)))


def z7_histograms(keys, reps: int, losses: np.ndarray, eta: float, p: float, B: int) -> np.ndarray:
    """Per run key, the histogram over ``reps`` replicates of the expert L2P-MW (block mode) plays in each batch.

    Replicate ``r`` of key ``k`` runs :func:`z7_played` with ``fold_in(k, r)``.

    Args:
        keys: one typed key per run ``(n,)``.
        reps: replicates per key (positive).
        losses: ``(T, d)`` losses, ``T`` a multiple of ``B``.
        eta: the step size.
        p: the fake-switch probability.
        B: the batch length (and block size).

    Returns:
        ``(n, T // B, d)`` counts: how often each expert was played in each batch over the replicates of a key.
    """
    rep_idx = jnp.arange(check_positive_int("reps", reps), dtype=jnp.uint32)
    keys = jax.vmap(lambda k: jax.vmap(lambda r: jax.random.fold_in(k, r))(rep_idx))(keys)
    xs = z7_played(keys.reshape(-1), losses, eta, p, B).reshape(keys.shape[0], reps, -1)
    return (xs[..., None] == np.arange(np.shape(losses)[1])).sum(1)


def alternating_terms(d: int, T, eta, B) -> dict:
    """The terms of L2P-MW's expected regret on ``adv_alternating_batches`` and the candidate batching terms.

    The model is ``ln(d/2)/η + (T/4) tanh(ηB/2)`` (LAZY Thm 3.2, Prop. 3.3; docs/algorithms/lazy.md#batching-term):
    :func:`~jaxdp.experts.alternating_warmup` plus :func:`~jaxdp.experts.alternating_prediction`; the candidates are
    the valid bound's ``ηTB/8`` and the term ``T B² η²`` as Prop. 3.3 prints it.

    Args:
        d: the number of experts.
        T: the horizons (arrays broadcast together).
        eta: the learning rates η.
        B: the batch lengths.

    Returns:
        ``{"warmup", "tanh_term", "model", "TBeta_over_8", "claimed_TB2eta2"}``, float64 arrays.
    """
    T, eta, B = (np.asarray(v, float) for v in (T, eta, B))
    warmup, tanh_term = alternating_warmup(d, eta), alternating_prediction(T, eta, B)
    return {"warmup": warmup, "tanh_term": tanh_term, "model": warmup + tanh_term, "TBeta_over_8": T * B * eta / 8,
            "claimed_TB2eta2": T * B ** 2 * eta ** 2}



def batching_terms(T, B, eta, d: int) -> dict:
    """The candidate batching terms of L2P-MW on alternating batches (LAZY Prop. 3.3,
    docs/algorithms/lazy.md#batching-term) at one configuration.

    Args:
        T: the horizon.
        B: the batch length.
        eta: the learning rate η.
        d: the number of experts.

    Returns:
        ``TBeta_over_8`` (``T B η / 8``), ``tanh_exact`` (``(T/4) tanh(η B / 2)``,
        :func:`~jaxdp.experts.alternating_prediction`), ``claimed_TB2eta2`` (``T B² η²``, Prop. 3.3 as printed) and
        ``valid_bound`` (``ln d / η + T B η / 8``, :func:`~jaxdp.experts.l2p_mw_regret_bound`), as floats.
    """
    T, B, eta = float(T), float(B), float(eta)
    return {"TBeta_over_8": T * B * eta / 8, "tanh_exact": float(alternating_prediction(T, eta, B)),
            "claimed_TB2eta2": T * B * B * eta * eta, "valid_bound": float(l2p_mw_regret_bound(d, T, eta, B))}


def alternating_batches_run(keys, d: int, T: int, eps: float, delta: float, learner: str = "l2p_paper") -> dict:
    """One point of the batching-term experiment (LAZY Prop. 3.3, docs/algorithms/lazy.md#batching-term): L2P-MW at
    its rate-mode plan (:func:`~jaxdp.experts.plan_l2p_mw`, ``mode="rate"``: η, ``B``, ``p``), or per-round
    multiplicative weights (Hedge) at the plan's η (``learner="mw_same_eta"``: no batching), against alternating
    batches of the plan's length ``B`` for ``T`` rounds, with the terms its expected regret is compared with.

    Args:
        keys: the seeds' PRNG keys (``(n, 2)``).
        d: the number of experts.
        T: the horizon.
        eps, delta: the privacy parameters the plan is made for.
        learner: ``"l2p_paper"`` or ``"mw_same_eta"``.

    Returns:
        Per seed (arrays of length ``n``): ``expected_regret``, ``regret``, ``switches``; and as floats the plan's
        ``eta``, ``p``, ``B``, the warm-up term ``warmup_lnd2_over_eta`` (``ln(d/2)/η``,
        :func:`~jaxdp.experts.alternating_warmup`) and the terms of :func:`batching_terms`.

    Raises:
        ValueError: an unknown ``learner``.
    """
    if learner not in ("l2p_paper", "mw_same_eta"):
        raise ValueError(f"learner must be 'l2p_paper' or 'mw_same_eta', got {learner!r}")
    pr = plan_l2p_mw(eps=eps, delta=delta, T=T, d=d, mode="rate").params
    B, eta = int(pr["B"]), pr["eta"]
    L, params = ((l2p_mw(d, B), l2p_mw_params(eta, pr["p"], B)) if learner == "l2p_paper" else
                 (hedge(d), hedge_params(d, T)._replace(eta=jnp.float32(eta))))
    r = simulate(L, adv_alternating_batches(d), experts_problem(), params, AlternatingParams(B=jnp.int32(B)), keys,
                 T, T_max=T, n_checkpoints=4)
    out = {k: np.asarray(r[k]) for k in ("expected_regret", "regret", "switches")}
    return {**out, "eta": eta, "p": pr["p"], "B": float(B), "warmup_lnd2_over_eta": alternating_warmup(d, eta),
            **batching_terms(T, B, eta, d)}


def lazy_run(keys, learner: str, adversary: str, d: int, T: int, eps: float, delta: float,
             T_max: int | None = None) -> dict:
    """One point of the lazy studies: ``learner`` (:func:`learner_and_params`) against ``adversary``
    (:func:`adversary_and_params`) for ``T`` rounds at ``ε``.

    Args:
        keys: the seeds' PRNG keys (``(n, 2)``).
        learner: one of :data:`LAZY_LEARNERS`.
        adversary: one of :data:`LAZY_ADVERSARIES`.
        d: the number of experts.
        T: the horizon.
        eps, delta: the privacy parameters.
        T_max: the largest horizon of the sweep (the plan's and the engine's; default ``T``).

    Returns:
        :func:`jaxdp.core.simulate`'s per-seed outputs (``expected_regret``, ``regret``, ``switches`` and L2P's
        counts) with the learner's ``eta`` and ``B`` (a float; NaN for a learner without them) and ``p`` (its
        resample probability, 0 without), as :func:`learner_and_params` plans them.
    """
    L, params, info = learner_and_params(learner, d, T, eps, delta, T_max=T_max)
    A, ap = adversary_and_params(adversary, d, T, eps)
    r = simulate(L, A, experts_problem(), params, ap, keys, T, T_max=T_max or T, n_checkpoints=4)
    return {**r, "eta": info.get("eta", math.nan), "B": float(info.get("B", math.nan)), "p": float(info.get("p", 0.0))}


def lower_bound_run(keys, learner: str, d: int, T: int, eps: float, delta: float, T_max: int | None = None) -> dict:
    """One point of the lower-bound experiment (LAZY Thm 4.2: a lazy algorithm pays ``Ω(T^{1/3} ε^{-2/3})``): the
    learner ``learner`` against the paper's lower-bound epochs (:func:`lazy_run` on ``"paper_epochs"``) for ``T``
    rounds, with L2P's switch counts.

    Args:
        keys: the seeds' PRNG keys (``(n, 2)``).
        learner: one of :data:`LAZY_LEARNERS`.
        d: the number of experts.
        T: the horizon.
        eps, delta: the privacy parameters.
        T_max: the largest horizon of the sweep (the plan's, :func:`learner_and_params`).

    Returns:
        Per seed (arrays of length ``n``): ``expected_regret``, ``switches``, ``lb_ratio`` (the expected regret over
        Thm 4.2's scale ``T^{1/3} ε^{-2/3}``), L2P's ``n_real``, ``n_fake``, ``n_yres`` and ``n_batches`` (real and
        fake switches, shadow resamples, batches; zeros for a learner without them) and ``p`` (the learner's
        resample probability, 0 without).
    """
    r = lazy_run(keys, learner, "paper_epochs", d, T, eps, delta, T_max=T_max)
    n = len(keys)
    m = {"expected_regret": r["expected_regret"], "switches": r["switches"].astype(float),
         "lb_ratio": r["expected_regret"] / (T ** (1 / 3) * eps ** (-2 / 3))}
    m.update({k: r[k].astype(float) if k in r else np.zeros(n) for k in ("n_real", "n_fake", "n_yres", "n_batches")})
    return {**m, "p": np.full(n, r["p"])}
