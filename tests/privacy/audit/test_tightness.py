"""The worst-pair search (jaxdp.privacy.audit.tightness) on mechanisms whose worst pair is known, and on the
learners: the pair it finds is at least as bad as the audited one."""
import itertools

import numpy as np
import pytest

from jaxdp.privacy.audit.exact import exact_eps, align
from jaxdp.privacy.audit.tightness import neighbour_space_size, pair_eps, worst_pair

ALPHA = 0.7


def counter_law(losses, alpha=ALPHA, lo=-4, hi=12):
    """Sum of the stream plus two-sided geometric noise DLap(alpha), clamped to the fixed [lo, hi]
    (post-processing): alpha·|Δsum|-DP, so the worst replace-one pair changes a round by the largest step."""
    s = int(round(float(np.sum(losses))))
    k = np.arange(-80, 81)
    p = np.exp(-alpha * np.abs(k))
    out = np.clip(s + k, lo, hi) - lo
    return np.arange(hi - lo + 1, dtype=np.int64), np.bincount(out, p, hi - lo + 1) / p.sum()


def test_counter_law_is_a_law():
    c, p = counter_law(np.ones((3, 1)))
    assert p.sum() == pytest.approx(1.0) and np.unique(c).size == c.size


def test_space_size():
    assert neighbour_space_size(3, 3) == 27 * 3 * 2 // 2


@pytest.mark.parametrize("max_pairs", [10 ** 6, 0])   # exhaustive, and the coordinate search
def test_finds_the_analytic_worst_pair(max_pairs):
    r = worst_pair(counter_law, 4, [0.0, 1.0, 2.0], max_pairs=max_pairs, restarts=3, seed=1)
    assert r.exhaustive == (max_pairs > 0)
    assert r.eps == pytest.approx(2 * ALPHA, abs=1e-9)         # the step 0 <-> 2: Δsum = 2
    assert abs(r.x0.sum() - r.x1.sum()) == pytest.approx(2.0)
    assert np.count_nonzero(np.any(r.x0 != r.x1, axis=1)) == 1
    if max_pairs:
        assert r.examined == neighbour_space_size(4, 3)
    # a pair changing a round by 1 has ε = alpha exactly
    assert pair_eps(counter_law, np.zeros((4, 1)), np.eye(4)[:, :1]) == pytest.approx(ALPHA, abs=1e-9)


def test_approximate_dp_matches_brute_force():
    """With δ > 0 the enumeration's best equals a loop of exact_eps over every pair."""
    delta, T, vals = 0.05, 3, np.array([0.0, 1.0, 2.0])
    r = worst_pair(counter_law, T, vals, delta=delta)
    best = 0.0
    for x in itertools.product(range(3), repeat=T):
        for j in range(T):
            for v in range(3):
                y = list(x)
                y[j] = v
                _, p, q = align(counter_law(vals[list(x)][:, None]), counter_law(vals[y][:, None]))
                best = max(best, exact_eps(p, q, delta=delta)[0])
    assert r.eps == pytest.approx(best, abs=1e-12)
    assert r.eps < 2 * ALPHA


def test_batched_exact_eps_matches_one_by_one():
    rng = np.random.default_rng(0)
    P, Q = rng.dirichlet(np.ones(7), 5), rng.dirichlet(np.ones(7), 5)
    e, m = exact_eps(P, Q, delta=0.01)
    for i in range(5):
        assert (e[i], m[i]) == pytest.approx(exact_eps(P[i], Q[i], delta=0.01))


@pytest.mark.parametrize("kw, match", [
    (dict(T=0), "T"), (dict(T=2.5), "T"), (dict(delta=1.0), "delta"), (dict(max_pairs=-1), "max_pairs"),
    (dict(restarts=-1), "restarts"), (dict(seed=-3), "seed"), (dict(values=[0.0]), "values"),
    (dict(values=[0.0, np.nan]), "values"), (dict(law=3), "law"),
])
def test_bad_input_is_refused_with_the_parameter_named(kw, match):
    args = dict(law=counter_law, T=2, values=[0.0, 1.0]) | kw
    law, T, values = args.pop("law"), args.pop("T"), args.pop("values")
    with pytest.raises((TypeError, ValueError), match=match):
        worst_pair(law, T, values, **args)
