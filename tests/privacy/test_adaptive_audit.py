"""The adaptive privacy game (jaxdp.privacy.audit.adaptive) and its registered audits.

Statistical tests use fixed seeds and the auditor's own family-wise error α = 1e-7 (a learner satisfying its claim is
flagged with probability <= 1e-7 < 1e-6); the binomial check of the broken twin's adaptive event uses a two-sided
Clopper–Pearson interval at 1e-7.
"""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp import registry
from jaxdp.experts import adaptive_audits as EA
from jaxdp.experts.l2p_mw import l2p_mw, l2p_mw_params
from jaxdp.experts.sparse_vector import SVExpertsParams, sparse_vector_experts
from jaxdp.experts.tree_ftrl import tree_ftrl_experts, tree_ftrl_params
from jaxdp.oco import adaptive_audits as OA
from jaxdp.oco.dp_ftrl import dp_ftrl, plan_dp_ftrl
from jaxdp.oco.problems import linear_problem
from jaxdp.privacy.audit import audit_learner, clopper_pearson_lower, clopper_pearson_upper, learner_mechanism, \
    loss_neighbours
from jaxdp.privacy.audit.adaptive import (
    NeighbourStrategy, adaptive_mechanism, audit_learner_adaptive, challenge_strategy, oblivious_strategy,
    play_adaptive_game,
)

SV = sparse_vector_experts(2)
SV_PARAMS = SVExpertsParams(eps_svt=jnp.float32(1.0), eta=jnp.float32(1.0), K=jnp.int32(1), L=jnp.float32(0.5),
                            Lstar=jnp.float32(0.0))
E1, E2 = np.eye(2, dtype=np.float32)


def _keys(seed, n):
    return jax.random.split(jax.random.key(seed), n)


def _cases():
    P = EA.PREFETCH
    tree = (tree_ftrl_experts(2, 8, noise="laplace"), tree_ftrl_params(2, 8, 1.0), 8)
    l2p = (l2p_mw(2, 4), l2p_mw_params(0.1, 0.9, 4), 16)
    ftrl = (dp_ftrl(linear_problem(2, 1.0), 8),
            plan_dp_ftrl(eps=1.0, delta=1e-5, T=8, d=2, L=1.0, D=1.0, setting="general").to_params(), 8)
    out = []
    out += [(f"{s.name} T=4", SV, SV_PARAMS, s, 4, False) for s in EA.expert_strategies(4, 2)]
    out.append(("after action 1 tree-FTRL", *tree[:2], EA.after_action_strategy(8, 2, 1), 8, False))
    out.append(("first switch L2P-MW (blocks)", *l2p[:2], EA.first_switch_strategy(16, 2), 16, False))
    out += [(s.name, ftrl[0], ftrl[1], s, 8, False) for s in OA.oco_strategies(8, 2)]
    out.append(("announced", EA.prefetch_noise_experts(2), EA.prefetch_noise_params(2, 1.0, P.q),
                EA.announced_exact_strategy(P.T, 2), P.T, True))
    return out


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c[0])
def test_the_two_worlds_differ_in_exactly_one_round(case):
    """On every run the proposed pair differs in exactly one round t*; with the same keys the two worlds' actions agree up
    to x_{t*} (released before the challenge) and their losses agree before t*."""
    _, lrn, par, strat, T, sees = case
    n = 256     # the same keys in both worlds (fresh copies: the key-reuse checker tracks consumed arrays)
    g0 = play_adaptive_game(lrn, par, strat, T=T, keys=_keys(1, n), world=0, sees_outputs=sees, d=2)
    g1 = play_adaptive_game(lrn, par, strat, T=T, keys=_keys(1, n), world=1, sees_outputs=sees, d=2)
    for g in (g0, g1):
        differ = np.any(np.asarray(g["l0"]) != np.asarray(g["l1"]), axis=-1)
        assert np.all(differ.sum(1) == 1)
    t_star = np.argmax(np.any(np.asarray(g0["l0"]) != np.asarray(g0["l1"]), axis=-1), axis=1)
    t1 = np.argmax(np.any(np.asarray(g1["l0"]) != np.asarray(g1["l1"]), axis=-1), axis=1)
    assert np.array_equal(t_star, t1)
    a0, a1 = np.asarray(g0["actions"]), np.asarray(g1["actions"])
    for r in range(n):
        t = t_star[r]
        assert np.array_equal(a0[r, :t + 1], a1[r, :t + 1])
        assert np.array_equal(np.asarray(g0["l0"])[r, :t], np.asarray(g1["l0"])[r, :t])


def test_oblivious_strategy_runs_are_the_fixed_pair_runs():
    """A strategy that ignores the view gives, key by key, the actions of learner_mechanism on the fixed pair (block-mode
    L2P-MW: the nested scan; the per-round scan is checked through the audit below)."""
    for lrn, par, T in ((l2p_mw(2, 4), l2p_mw_params(0.1, 0.9, 4), 16),):
        x0, x1 = next(iter(loss_neighbours(T, 2, rounds=(3,), values=[E1, E2]).values()))
        fixed = jax.jit(jax.vmap(learner_mechanism(lrn, par), in_axes=(0, None)))
        game = jax.jit(jax.vmap(adaptive_mechanism(lrn, par, [oblivious_strategy(3, E1, E2)], T=T), in_axes=(0, None)))
        for w, x in ((0, x0), (1, x1)):
            assert np.array_equal(np.asarray(game(_keys(2, 64), jnp.array([0, w]))), np.asarray(fixed(_keys(2, 64), x)))


def test_adaptive_audit_of_an_oblivious_strategy_equals_the_oblivious_audit():
    """Same keys, same runs: audit_learner_adaptive with the oblivious pair gives audit_learner's eps_lower and counts."""
    kw = dict(T=4, d=2, claimed_eps=2.0, n=20_000)
    r1 = audit_learner(SV, SV_PARAMS, rounds=(0,), values=[E1, E2], key=jax.random.key(3), **kw)
    r2 = audit_learner_adaptive(SV, SV_PARAMS, [oblivious_strategy(0, E1, E2)], key=jax.random.key(3), **kw)
    assert r1.eps_lower == r2.eps_lower and r1.eps_lower > 0
    assert (r1.evidence["k0"], r1.evidence["k1"], r1.evidence["event"]) == \
        (r2.evidence["k0"], r2.evidence["k1"], r2.evidence["event"])


def test_prefetch_twin_adaptive_event_has_the_derived_probability():
    """The broken twin's adaptive event: P1 = 1 - (1 - q)^(T-1) (derived on its docstring), P0 = 0."""
    P = EA.PREFETCH
    lrn, par = EA.prefetch_noise_experts(2), EA.prefetch_noise_params(2, P.eps, P.q)
    n = 20_000
    for world in (0, 1):
        g = play_adaptive_game(lrn, par, EA.announced_exact_strategy(P.T, 2), T=P.T, keys=_keys(4, n), world=world,
                               sees_outputs=True, d=2)
        stat = np.asarray(jax.vmap(EA._first_announced_increment)((g["actions"], g["outputs"])))
        k = int(np.sum(stat >= 0.5))
        if world == 0:
            assert k == 0
        else:
            p = 1 - (1 - P.q) ** (P.T - 1)
            assert clopper_pearson_lower(k, n, 5e-8) <= p <= clopper_pearson_upper(k, n, 5e-8)


def test_broken_twin_is_flagged_adaptively_and_passes_obliviously():
    rep = EA.audit_prefetch_noise_adaptive(quick=True, seed=0)
    assert rep.violation and rep.eps_lower > 3.0
    obl = EA.audit_prefetch_noise_oblivious(quick=True, seed=0, n=40_000)
    assert not obl.violation and obl.n_pairs == 6


@pytest.mark.parametrize("fn", [EA.audit_l2p_mw_adaptive, EA.audit_sparse_vector_experts_adaptive,
                                EA.audit_tree_ftrl_experts_adaptive, OA.audit_dp_ftrl_adaptive],
                         ids=lambda f: f.__name__)
def test_correct_learners_are_not_flagged_adaptively(fn):
    rep = fn(quick=True, seed=0, n=30_000)
    assert not rep.violation and rep.n_pairs == 3 and 0.0 <= rep.eps_lower <= rep.claimed_eps


def test_registered():
    for name, broken in (("l2p-mw-adaptive", False), ("sparse-vector-experts-adaptive", False),
                         ("tree-ftrl-experts-adaptive", False), ("dp-ftrl-adaptive", False),
                         ("prefetch-noise-oblivious", False), ("prefetch-noise-adaptive", True)):
        assert registry.get_audit(name).extra["broken"] is broken


def test_bad_input_is_refused():
    s = oblivious_strategy(0, E1, E2)
    with pytest.raises(ValueError, match="at least one"):
        adaptive_mechanism(SV, SV_PARAMS, [], T=4)
    with pytest.raises(TypeError, match="NeighbourStrategy"):
        adaptive_mechanism(SV, SV_PARAMS, [(E1, E2)], T=4)
    with pytest.raises(ValueError, match="distinct"):
        adaptive_mechanism(SV, SV_PARAMS, [s, s], T=4)
    with pytest.raises(ValueError, match="world"):
        play_adaptive_game(SV, SV_PARAMS, s, T=4, keys=_keys(0, 2), world=2)
    with pytest.raises(ValueError, match="block_size"):
        adaptive_mechanism(l2p_mw(2, 4), l2p_mw_params(0.1, 0.9, 4), [s], T=6)
    with pytest.raises(ValueError, match="t0"):
        oblivious_strategy(-1, E1, E2)
    with pytest.raises(ValueError, match="same shape"):
        oblivious_strategy(0, E1, np.ones(3))
    with pytest.raises(TypeError, match="callables"):
        challenge_strategy("x", 4, trigger=1, pair=lambda v: (E1, E2))
    with pytest.raises(ValueError, match="give d"):
        adaptive_mechanism(EA.prefetch_noise_experts(2), EA.prefetch_noise_params(2, 1.0, 0.1),
                           [EA.announced_exact_strategy(4, 2)], T=4, sees_outputs=True)
    with pytest.raises(ValueError, match="q must be"):
        EA.prefetch_noise_params(2, 1.0, 1.5)
    with pytest.raises(ValueError, match="eps must be"):
        EA.prefetch_noise_params(2, 0.0, 0.1)
    with pytest.raises(ValueError, match="claimed_eps"):
        audit_learner_adaptive(SV, SV_PARAMS, [s], T=4, d=2, claimed_eps=-1.0, n=100, key=jax.random.key(0))
    assert isinstance(s, NeighbourStrategy)


def test_prefetch_twin_passes_the_shared_conformance_check():
    """The broken twin is a conforming learner: scalar ``info`` (``switched``), its noisy counts and flags are
    released through ``Learner.release``, not ``info``."""
    from _helpers import ADV, AP, PROB
    from jaxdp.testing import check_learner

    out = check_learner(EA.prefetch_noise_experts(4), ADV, PROB,
                        [EA.prefetch_noise_params(4, 1.0, 0.1), EA.prefetch_noise_params(4, 2.0, 0.3)], AP,
                        T=32, seeds=4)
    assert np.isfinite(out["regret"]).all()


def test_a_broken_release_fails_conformance_before_anything_runs():
    """``check_learner`` traces ``release`` on the state after ``init`` and after ``step``: one that reads a field
    the state lacks fails ``[shapes]``, naming ``learner.release``."""
    from _helpers import ADV, AP, PROB
    from jaxdp.testing import ConformanceError, check_learner

    twin = EA.prefetch_noise_experts(4)
    pars = [EA.prefetch_noise_params(4, 1.0, 0.1), EA.prefetch_noise_params(4, 2.0, 0.3)]
    bad = twin._replace(release=lambda st, p: {"noisy_cum": st.counts})
    with pytest.raises(ConformanceError, match=r"\[shapes\] learner\.release\(state, params\) failed to trace"):
        check_learner(bad, ADV, PROB, pars, AP, T=8, seeds=2)


def test_an_adaptive_adversary_that_sees_outputs_gets_the_released_counts():
    """``simulate`` hands ``Learner.release`` (not ``info``) to an adversary with ``sees_outputs``: an adversary that
    puts loss 1 on the expert with the smallest released noisy count, checked against the count it was handed."""
    from jaxdp import seed_keys, simulate
    from jaxdp.core.types import AdaptiveAdversary
    from jaxdp.experts import experts_problem

    d, T = 3, 24

    def observe(s, t, action, outputs):
        return s._replace(x=jnp.argmin(outputs["noisy_cum"]).astype(jnp.int32))

    adv = AdaptiveAdversary(
        init=lambda key, p: EA.PrefetchState(x=jnp.int32(0), S=jnp.zeros((d,), jnp.float32), missing=jnp.bool_(False)),
        loss=lambda s, t: jax.nn.one_hot(s.x, d, dtype=jnp.float32), observe=observe, sees_outputs=True)
    par = EA.prefetch_noise_params(d, 4.0, 0.0)
    out = simulate(EA.prefetch_noise_experts(d), adv, experts_problem(), par, None, seed_keys(0, 8), T)
    # round 0 both start at expert 0; later the learner plays the argmin of the counts the adversary was handed
    assert np.allclose(np.asarray(out["loss"]), T)
