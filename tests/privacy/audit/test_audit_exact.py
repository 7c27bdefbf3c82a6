"""Exact privacy losses at the audited sizes (jaxdp.privacy.audit.exact) against independent brute force.

Every exact law here is checked against a float64 NumPy simulation written from the algorithm's
description (not from the code under test) by a chi-square test at p > 1e-7, so a correct law fails with
probability below 1e-7 per test (fixed seeds: the tests are deterministic).
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from jaxdp.privacy.audit import exact as X
from _helpers import chi2_p

P_ACCEPT = 1e-7


# ----------------------------------------------------------------------------- shared-threshold sparse vector
def _sim_shared(rng, n, losses, L, b_thr, b_q, K):
    """REAL Alg. 1's sparse vector with one threshold noise, common losses (float64 NumPy, from the algorithm):
    returns the switch flags ``(n, T)``."""
    T = len(losses)
    tau = L + rng.laplace(0.0, b_thr, n)
    acc, cnt = np.zeros(n), np.zeros(n, int)
    flags = np.zeros((n, T), bool)
    for t in range(T):
        a = acc + losses[t]
        top = (cnt < K) & (a + rng.laplace(0.0, b_q, n) >= tau)
        flags[:, t] = top
        cnt += top
        acc = np.where(top, 0.0, a)
    return flags


def test_quadrature_integrates_the_laplace_density():
    x, w = X.laplace_quadrature(0.3, 2.0, [0.0, 1.0, 5.0])
    assert w.sum() == pytest.approx(1.0, abs=1e-12)
    assert (w * x).sum() == pytest.approx(0.3, abs=1e-10)
    assert (w * (x - 0.3) ** 2).sum() == pytest.approx(8.0, rel=1e-10)


@pytest.mark.parametrize("K, b_q", [(2, 4.0), (2, 8.0), (3, 4.0)])
def test_shared_common_law_matches_simulation(K, b_q):
    losses = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    codes, probs = X.shared_svt_common_law(losses, 0.5, 2.0, b_q, K)
    assert probs.sum() == pytest.approx(1.0, abs=1e-10) and (probs > 0).all()
    flags = _sim_shared(np.random.default_rng(K + int(b_q)), 400_000, losses, 0.5, 2.0, b_q, K)
    got = (flags * (1 << np.arange(losses.size))).sum(1)
    counts = np.array([(got == c).sum() for c in codes])
    assert counts.sum() == got.size                     # no pattern outside the enumerated ones
    assert chi2_p(counts, probs) > P_ACCEPT


def test_visible_law_thins_switches():
    codes, probs = X.shared_svt_common_law(np.ones(4), 0.5, 2.0, 4.0, 2)
    vc, vp = X.visible_switch_law(codes, probs, 2)
    assert vp.sum() == pytest.approx(1.0, abs=1e-12)
    # the expected number of observed switches is (1 - 1/d) times the true one
    bits = lambda c: np.array([bin(int(v)).count("1") for v in c])
    assert (bits(vc) * vp).sum() == pytest.approx(0.5 * (bits(codes) * probs).sum(), rel=1e-12)


def test_shared_common_law_reproduces_the_documented_losses():
    """docs/algorithms/realizable.md#shared-threshold: at T = 4, K = 2, eps_svt = 1, L = 0.5 the broken twin's
    sparse vector loses at most 0.53 over every {0,1} common-loss neighbour, the correct scaling 0.36."""
    import itertools

    def worst(b_q):
        laws = {ls: X.shared_svt_common_law(np.array(ls, float), 0.5, 2.0, b_q, 2)
                for ls in itertools.product((0, 1), repeat=4)}
        best = 0.0
        for ls in laws:
            for j in range(4):
                if ls[j] == 0:
                    hi = ls[:j] + (1,) + ls[j + 1:]
                    _, p0, p1 = X.align(laws[ls], laws[hi])
                    best = max(best, X.exact_eps(p0, p1)[0])
        return best

    assert worst(4.0) == pytest.approx(0.5325, abs=1e-3)
    assert worst(8.0) == pytest.approx(0.3567, abs=1e-3)


def test_window_law_matches_simulation():
    T, K, j, L, b_thr, b_q = 12, 3, 4, 0.0, 1.0, 2.0
    cls, P, Q = X.shared_svt_window_law(T, K, j, L, b_thr, b_q)
    assert P.sum() == pytest.approx(1.0, abs=1e-10) and Q.sum() == pytest.approx(1.0, abs=1e-10)
    index = {tuple(k): i for i, k in enumerate(cls.tolist())}
    rng = np.random.default_rng(5)
    for losses, law in ((np.zeros(T), P), (np.eye(T)[j], Q)):
        flags = _sim_shared(rng, 400_000, losses, L, b_thr, b_q, K)
        c, b, e, r = X.window_class(flags, j, K)
        idx = np.array([index[k] for k in zip(c.tolist(), b.tolist(), e.tolist(), r.tolist())])
        assert chi2_p(np.bincount(idx, minlength=len(cls)), law) > P_ACCEPT


def test_window_class_jax_equals_numpy():
    import jax.numpy as jnp

    flags = np.random.default_rng(0).random((500, 20)) < 0.2
    flags &= np.cumsum(flags, 1) <= 4                        # at most K = 4 switches
    a = X.window_class(flags, 7, 4)
    b = X.window_class(jnp.asarray(flags), 7, 4, xp=jnp)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, np.asarray(v))


def test_broken_twin_exact_loss_exceeds_its_claim():
    """At the audited size the broken twin's exact loss on the audited event (probability ~2e-3) is ~1.8x its claim;
    on events of probability >= 1e-2 still 1.4x (the correct scaling stays below eps_svt, Lyu et al. Thm 1)."""
    from jaxdp.experts import audits as A

    cls, P, Q, _ = A.unscaled_exact()
    lr = np.log(P / Q)
    E = lr > A.unscaled_threshold(1_000_000)
    assert np.log(P[E].sum() / Q[E].sum()) > 1.75 * A.CLAIMED_EPS and P[E].sum() > 1.5e-3
    assert X.exact_eps(P, Q, p_min=1e-2)[0] > 1.4 * A.CLAIMED_EPS
    e = A.UNSCALED_EPS_SVT
    _, P2, Q2 = X.shared_svt_window_law(A.UNSCALED_T, A.UNSCALED_K, A.UNSCALED_J, A.UNSCALED_L, 2 / e,
                                        4 * A.UNSCALED_K / e)
    assert X.exact_eps(P2, Q2)[0] <= e


def test_broken_twin_flagged_at_quick_size():
    from jaxdp.experts.audits import audit_sparse_vector_experts_shared_threshold_unscaled
    from jaxdp.registry import get_audit

    rep = audit_sparse_vector_experts_shared_threshold_unscaled(quick=True, seed=0)
    assert rep.violation and rep.eps_lower > 2.3, str(rep)
    assert get_audit("sparse-vector-experts-shared-threshold-unscaled").extra["broken"]


def test_window_law_matches_the_learner():
    """The JAX learner of the broken-twin audit against the exact law of its switch-pattern class."""
    import jax
    from jaxdp.experts import audits as A

    cls, P, Q, _ = A.unscaled_exact()
    index = {tuple(k): i for i, k in enumerate(cls.tolist())}
    f = jax.jit(jax.vmap(A._unscaled_mech, in_axes=(0, None)))
    for i, (x, law) in enumerate(zip(A.unscaled_pair(), (P, Q))):
        flags = np.asarray(f(jax.random.split(jax.random.key(3 + i), 1 << 17), x))
        c, b, e, r = X.window_class(flags, A.UNSCALED_J, A.UNSCALED_K)
        idx = np.array([index[k] for k in zip(c.tolist(), b.tolist(), e.tolist(), r.tolist())])
        assert chi2_p(np.bincount(idx, minlength=len(cls)), law) > P_ACCEPT


# ----------------------------------------------------------------------------- REAL Alg. 1, whole action sequence
def _sim_sv_experts(rng, n, losses, eps_svt, eta, K, L, mode):
    """REAL Alg. 1 over d experts (float64 NumPy, from the algorithm): test-then-play, exponential mechanism
    ``∝ exp(-η max(cum, 0)/2)`` at each switch, no query after K switches; ``mode``: ``"fresh"`` (a new threshold
    noise after each switch), ``"shared"`` (one, query noise Lap(4K/ε)), ``"unscaled"`` (one, Lap(4/ε)).
    Returns the codes ``Σ_t x_t d^t`` of ``(x_0, ..., x_T)``."""
    T, d = losses.shape
    b_q = 4.0 / eps_svt * (K if mode == "shared" else 1)
    x = rng.integers(0, d, n)
    code = x.copy()
    tau = L + rng.laplace(0.0, 2.0 / eps_svt, n)
    acc, k, cum = np.zeros(n), np.zeros(n, int), np.zeros((n, d))
    for t in range(T):
        acc = acc + losses[t][x]
        cum = cum + losses[t]
        top = (k < K) & (acc + rng.laplace(0.0, b_q, n) >= tau)
        w = np.exp(-eta * np.maximum(cum, 0.0) / 2)
        u = rng.random(n)
        new = (u[:, None] > np.cumsum(w / w.sum(1, keepdims=True), 1)).sum(1)
        x = np.where(top, np.minimum(new, d - 1), x)
        k += top
        acc = np.where(top, 0.0, acc)
        if mode == "fresh":
            tau = np.where(top, L + rng.laplace(0.0, 2.0 / eps_svt, n), tau)
        code = code + x * d ** (t + 1)
    return code


@pytest.mark.parametrize("mode, K, eta", [("fresh", 1, 1.0), ("fresh", 2, 0.5), ("shared", 2, 0.5),
                                          ("unscaled", 2, 0.5)])
def test_sv_experts_law_matches_simulation(mode, K, eta):
    losses = np.array([[1, 0], [1, 1], [0, 1], [1, 0]], float)
    kw = dict(eps_svt=1.0, eta=eta, K=K, L=0.5)
    codes, probs = X.sv_experts_law(losses, threshold="fresh" if mode == "fresh" else "shared",
                                    unscaled=mode == "unscaled", **kw)
    assert probs.sum() == pytest.approx(1.0, abs=1e-10)
    got = _sim_sv_experts(np.random.default_rng(len(mode) + K), 400_000, losses, mode=mode, **kw)
    counts = np.array([(got == c).sum() for c in codes])
    assert counts.sum() == got.size and chi2_p(counts, probs) > P_ACCEPT


def test_sv_experts_law_matches_the_audited_learner():
    import jax
    from jaxdp.experts.audits import neighbour_family, sv_experts_mechanism

    a, _ = neighbour_family()["l1=l2=e1, l4: e1 vs e2"]
    f = jax.jit(jax.vmap(sv_experts_mechanism(1.0, 1.0, 1, 0.5), in_axes=(0, None)))
    got = np.asarray(f(jax.random.split(jax.random.key(1), 1 << 18), a))
    codes, probs = X.sv_experts_law(np.asarray(a), eps_svt=1.0, eta=1.0, K=1, L=0.5)
    counts = np.array([(got == c).sum() for c in codes])
    assert counts.sum() == got.size and chi2_p(counts, probs) > P_ACCEPT


def test_sv_experts_exact_ceilings():
    """The exact privacy loss over the audited pairs bounds what any audit of them can show (pure ε: the
    largest ratio of one output's probabilities)."""
    from jaxdp.experts.audits import sv_experts_family
    from jaxdp.experts.audits import neighbour_family, shared_neighbour_family

    def worst(fam, **kw):
        return max(X.exact_eps(*X.align(X.sv_experts_law(np.asarray(a), **kw),
                                        X.sv_experts_law(np.asarray(b), **kw))[1:])[0] for a, b in fam.values())

    kw = dict(eps_svt=1.0, eta=1.0, K=1, L=0.5)
    assert worst(neighbour_family(), **kw) == pytest.approx(0.9560, abs=1e-3)
    assert worst(sv_experts_family(), **kw) == pytest.approx(1.0423, abs=1e-3)
    assert worst(shared_neighbour_family(), eps_svt=1.0, eta=0.5, K=2, L=0.5,
                 threshold="shared") == pytest.approx(0.5392, abs=1e-3)


# ----------------------------------------------------------------------------- sparse vector with c positives
def test_csvt_answer_law_matches_simulation():
    q = np.array([-1.0, 0.0, 1.0, -1.0, 2.0, 0.5, 0.0])
    c, b_thr, b_q = 2, 1.0, 2.0
    codes, probs = X.csvt_answer_law(q, 0.0, b_thr, b_q, c)
    assert probs.sum() == pytest.approx(1.0, abs=1e-10)
    rng = np.random.default_rng(7)
    n = 400_000
    above = q + b_q * rng.laplace(0.0, 1.0, (n, q.size)) >= b_thr * rng.laplace(0.0, 1.0, (n, 1))
    ans = above & (np.cumsum(above, 1) <= c)
    got = (ans * (1 << np.arange(q.size))).sum(1)
    counts = np.array([(got == k).sum() for k in codes])
    assert counts.sum() == n and chi2_p(counts, probs) > P_ACCEPT


def test_csvt_audit_event_from_exact_law():
    """The correct shared-threshold sparse vector: its exact loss on the audited pairs is at most 1.35 (< ε = 2, Lyu et
    al. Thm 1), and the audited event's exact loss is what the audit bounds."""
    from jaxdp.privacy.audit.catalogue import C_SVT, CSVT_PAIRS, EPS_SVT, csvt_exact_event

    worst = max(X.exact_eps(*X.align(X.csvt_answer_law(a, 0.0, 2 / EPS_SVT, 4 * C_SVT / EPS_SVT, C_SVT),
                                     X.csvt_answer_law(b, 0.0, 2 / EPS_SVT, 4 * C_SVT / EPS_SVT, C_SVT))[1:])[0]
                for a, b in CSVT_PAIRS.values())
    assert worst == pytest.approx(1.3484, abs=1e-3)
    label, table, thr, bound, loss = csvt_exact_event(1_000_000)
    assert 0.8 < bound < loss <= worst


# ----------------------------------------------------------------------------- L2P-MW
def _sim_l2p(rng, n, losses, eta, p, B):
    """L2P-MW (Private Online Learning via Lazy Algorithms, Alg. 1 with MW; float64 NumPy, from the algorithm)."""
    T, d = losses.shape
    S = T // B
    batch = losses.reshape(S, B, d).sum(1)

    def draw(cum):
        w = np.exp(-eta * cum)
        return np.minimum((rng.random(n)[:, None] > np.cumsum(w / w.sum())).sum(1), d - 1)

    cum = np.zeros(d)
    x, y = draw(cum), draw(cum)
    code = x.copy()
    for s in range(1, S):
        lam = batch[s - 1]
        cum = cum + lam
        acc = np.exp(np.minimum(0.0, -eta * (lam[x] - lam[y]) - 2 * B * eta))
        keep = (rng.random(n) < acc) & (rng.random(n) >= p)
        x = np.where(keep, x, draw(cum))
        y = np.where(rng.random(n) >= p, y, draw(cum))
        code = code + x * d ** s
    return code


def test_l2p_mw_law_matches_simulation_and_learner():
    import jax
    from jaxdp.experts import audits as LA

    s = LA.AUDIT_SETTING
    losses = np.zeros((s.T, s.d))
    losses[0] = (1.0, 0.0)
    losses[9] = (0.0, 1.0)
    eta = 0.2                       # a large step, so the law is far from uniform
    codes, probs = X.l2p_mw_law(losses, eta=eta, p=s.p, B=s.B)
    assert probs.sum() == pytest.approx(1.0, abs=1e-12)
    got = _sim_l2p(np.random.default_rng(2), 400_000, losses, eta, s.p, s.B)
    assert chi2_p(np.bincount(got, minlength=2 ** 8)[codes], probs) > P_ACCEPT
    # the audited learner at the audited parameters, on the audited pair
    from jaxdp.privacy.audit.learners import action_code, loss_neighbours

    a, _ = loss_neighbours(s.T, s.d)[LA.L2P_PAIR]
    f = jax.jit(jax.vmap(lambda k: action_code(s.d)(LA._l2p_mech(k, a))))
    got = np.asarray(f(jax.random.split(jax.random.key(4), 1 << 18)))
    P, _ = LA.l2p_exact()
    assert chi2_p(np.bincount(got, minlength=2 ** 8), P) > P_ACCEPT


def test_l2p_mw_exact_loss_far_below_its_claim():
    from jaxdp.privacy.audit.learners import loss_neighbours
    from jaxdp.experts import audits as LA

    s = LA.AUDIT_SETTING
    losses = {lab: [X.l2p_mw_law(np.asarray(v), eta=s.eta, p=s.p, B=s.B)[1] for v in pair]
              for lab, pair in loss_neighbours(s.T, s.d).items()}
    worst = {lab: X.exact_eps(a, b, delta=s.delta)[0] for lab, (a, b) in losses.items()}
    assert max(worst, key=worst.get) == LA.L2P_PAIR
    assert worst[LA.L2P_PAIR] == pytest.approx(0.02973, abs=2e-4) and worst[LA.L2P_PAIR] < s.eps / 25


# ----------------------------------------------------------------------------- Gaussian mechanism
def test_gaussian_exact_eps_against_privacy_loss_integral():
    """``δ(ε) = E[(1 - e^{ε - L})_+]`` with the privacy loss ``L = (1 - 2Z)/(2σ²)``... integrated numerically."""
    from scipy import integrate

    sigma, delta = 4.900555168628417, 1e-5
    eps = X.gaussian_eps(delta, sigma)
    # L > ε  <=>  z < (1 - 2σ²ε)/2; δ = ∫ (p0(z) - e^ε p1(z)) over that half-line
    z_max = (1.0 - 2 * sigma ** 2 * eps) / 2
    f = lambda z: stats.norm.pdf(z, 0, sigma) - np.exp(eps) * stats.norm.pdf(z, 1, sigma)   # noqa: E731
    val, _ = integrate.quad(f, -np.inf, z_max, epsabs=1e-14)
    assert val == pytest.approx(delta, rel=1e-6)
    assert eps == pytest.approx(0.7416, abs=1e-3)
    c, bound, loss = X.gaussian_best_threshold(sigma, delta, 10 ** 7)
    assert 0.5 < bound < loss < eps


def test_svt_shared_threshold_no_event_reaches_one_and_a_half_at_any_feasible_size():
    """Neyman-Pearson: for each probability under the favoured input, the likelihood-ratio event has the least
    probability under the other, so the best expected Clopper-Pearson bound over ALL events of the audited pairs
    is attained by a likelihood-ratio event (every one of them is scanned, down to one expected hit). At the
    default size (10^6 runs per input) it is 0.874 (f* >= 2.29: the audit's 0.83 is 0.95 of it), and even at
    10^9 runs 1.254 < 2 / 1.5: no valid audit of these pairs detects the 1.5x over-claim at any feasible size,
    although the pure ceiling (an outcome of probability 4e-4) is 1.48."""
    from jaxdp.privacy.accounting.floating import delta_float
    from jaxdp.privacy.audit import catalogue as C
    from jaxdp.privacy.audit.exact import align, best_fixed_event, csvt_answer_law

    b_thr, b_q = 2.0 / C.EPS_SVT, 4.0 * C.C_SVT / C.EPS_SVT
    dfl = delta_float("laplace", eps=C.EPS_SVT, d=C.K_CSVT + 1)
    laws = [align(csvt_answer_law(q0, 0.0, b_thr, b_q, C.C_SVT), csvt_answer_law(q1, 0.0, b_thr, b_q, C.C_SVT))
            for q0, q1 in C.CSVT_PAIRS.values()]

    def best(n):
        return max(best_fixed_event(a, b, n, delta=dfl, alpha=1e-7 / 2, min_count=1.0)[1]
                   for _, P, Q in laws for a, b in ((P, Q), (Q, P)))

    assert best(10 ** 6) == pytest.approx(0.8738, abs=2e-3)
    assert best(10 ** 9) < C.EPS_SVT / 1.5
