"""Real data (optional extra jaxdp[data]; bundled files only) and randomized response with a prior."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jaxdp.label_dp.rr_prior import rr_prior_k, rr_with_prior, rr_with_prior_probs
from jaxdp.privacy.mechanisms.randomized_response import rr_kary_matrix


# --------------------------------------------------------------------------- RR with prior (no extra needed)


def _probs_numpy(prior, y, eps):
    """Independent float64 reference of RRWithPrior's output distribution."""
    K = len(prior)
    order = sorted(range(K), key=lambda c: (-prior[c], c))
    ee = math.exp(eps)
    w = [sum(prior[c] for c in order[:k]) * ee / (ee + k - 1) for k in range(1, K + 1)]
    k = int(np.argmax(w)) + 1
    Y = set(order[:k])
    out = np.zeros(K)
    for o in Y:
        out[o] = (ee if o == y else 1.0) / (ee + k - 1) if y in Y else 1.0 / k
    return out


def test_rr_prior_probs_match_reference_and_are_private():
    rng = np.random.default_rng(0)
    for K in (2, 10):
        for eps in (0.1, 3.0):
            for _ in range(3):
                prior = rng.dirichlet(np.full(K, 0.3))
                P = np.asarray(rr_with_prior_probs(jnp.asarray(np.tile(prior, (K, 1)), jnp.float32),
                                                   jnp.arange(K), eps), float)
                ref = np.stack([_probs_numpy(prior, y, eps) for y in range(K)])
                np.testing.assert_allclose(P, ref, atol=2e-6)
                np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-6)
                pos = P > 0
                assert (pos == pos[0]).all()                       # same support for every label
                ratio = P[:, pos[0]].max(axis=0) / P[:, pos[0]].min(axis=0)
                assert ratio.max() <= math.exp(eps) * (1 + 1e-5)   # eps-label-DP
    # uniform prior: plain K-ary randomized response
    K, eps = 4, 1.3
    P = np.asarray(rr_with_prior_probs(jnp.full((K, K), 1 / K), jnp.arange(K), eps))
    np.testing.assert_allclose(P, rr_kary_matrix(K, eps), atol=1e-6)
    k, _ = rr_prior_k(jnp.asarray([0.9, 0.05, 0.05]), 0.5)
    assert int(k) == 1


def _chi2_p(samples, probs):
    K = len(probs)
    counts = np.bincount(samples, minlength=K)
    keep = probs > 0
    if counts[~keep].sum() > 0:      # an output the mechanism never produces
        return 0.0
    return stats.chisquare(counts[keep], probs[keep] * len(samples)).pvalue


def test_rr_prior_sampler_chi_square():
    n, eps = 200_000, 0.8
    prior = jnp.asarray([0.5, 0.3, 0.15, 0.05])
    for y in (0, 2, 3):
        z = np.asarray(rr_with_prior(jax.random.key(y), jnp.tile(prior, (n, 1)), jnp.full(n, y), eps))
        probs = _probs_numpy(np.asarray(prior, float), y, eps)
        assert _chi2_p(z, probs) > 1e-7
        # a wrong privacy level is rejected by the same test
        zb = np.asarray(rr_with_prior(jax.random.key(y), jnp.tile(prior, (n, 1)), jnp.full(n, y), 2 * eps))
        assert _chi2_p(zb, probs) < 1e-7
    assert np.array_equal(np.asarray(rr_with_prior(jax.random.key(0), jnp.tile(prior, (5, 1)), jnp.arange(4).tolist()
                                                   + [1], math.inf)), [0, 1, 2, 3, 1])
    with pytest.raises(ValueError, match="eps"):
        rr_with_prior(jax.random.key(0), jnp.tile(prior, (2, 1)), jnp.zeros(2, int), -1.0)


# --------------------------------------------------------------------------- bundled datasets


def test_sklearn_datasets_and_loss_streams():
    pytest.importorskip("sklearn")
    from jaxdp.data import expert_pool_losses, load_dataset

    ds = load_dataset("breast_cancer")
    assert ds.X.shape == (569, 30) and ds.n_classes == 2 and ds.task == "classification"
    np.testing.assert_allclose(ds.X.mean(axis=0), 0.0, atol=1e-9)
    assert load_dataset("diabetes").task == "regression"
    L = expert_pool_losses("wine", 400, 6, order_seed=1)
    assert L.shape == (400, 6) and L.dtype == np.float32 and set(np.unique(L)) <= {0.0, 1.0}
    assert np.array_equal(L, expert_pool_losses("wine", 400, 6, order_seed=1))
    assert not np.array_equal(L, expert_pool_losses("wine", 400, 6, order_seed=2))
    Lr = expert_pool_losses("diabetes", 300, 4)
    assert Lr.min() >= 0.0 and Lr.max() <= 1.0
    with pytest.raises(ValueError, match="name"):
        load_dataset("mnist")
    with pytest.raises(ValueError, match="n_experts"):
        expert_pool_losses("wine", 10, 1)


def test_river_bundled_streams():
    pytest.importorskip("river")
    from jaxdp.data import load_dataset

    ph = load_dataset("phishing")
    assert ph.X.shape == (1250, 9) and ph.n_classes == 2
    assert load_dataset("trump_approval").X.shape == (1001, 6)


def test_real_studies_tiny(tmp_path):
    pytest.importorskip("sklearn")
    from jaxdp.registry import STUDIES, load_all
    from jaxdp.studies.framework import resolve_config, run_study

    load_all()
    for name, over in (("real-experts", {"seeds": 2, "datasets": ["wine"], "T": 256, "n_experts": 4,
                                          "eps": [1.0], "learners": ["hedge", "sparse_vector"]}),
                       ("real-label-dp", {"seeds": 2, "datasets": ["wine"], "eps": [1.0]})):
        e = STUDIES[name]
        cfg = resolve_config(name, e.extra["defaults"], e.extra["quick"], True, over)
        res = run_study(e.fn(cfg), tmp_path / name, progress=False, plot=False)
        assert len(res.df) > 0 and res.df.filter(regex="regret|accuracy").notna().any().any()
