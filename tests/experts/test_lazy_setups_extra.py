"""The lazy setups' study helpers: ``z7_histograms`` counts, per key and batch, the experts ``z7_played`` plays over
the replicates ``fold_in(key, r)`` (recounted one replicate at a time); ``alternating_terms`` is LAZY Thm 3.2's model."""
import jax
import numpy as np

from jaxdp.core import seed_keys
from jaxdp.experts import z7_histograms, z7_losses, z7_played


def test_histograms_recount_the_played_experts():
    d, B, nb, reps = 4, 2, 3, 5
    losses = z7_losses(d, B, nb, 0)
    h = z7_histograms(seed_keys(0, np.arange(2)), reps, losses, 0.3, 0.2, B)
    assert h.shape == (2, nb, d) and (h.sum(-1) == reps).all()
    for i in range(2):
        xs = np.stack([z7_played(jax.random.fold_in(seed_keys(0, np.arange(2))[i], r)[None], losses, 0.3, 0.2, B)[0]
                       for r in range(reps)])
        assert (h[i] == np.stack([(xs == j).sum(0) for j in range(d)], -1)).all()


def test_alternating_terms_are_the_model_of_lazy_thm_3_2():
    from jaxdp.experts import alternating_terms

    T, eta, B = np.array([1024.0, 4096.0]), np.array([0.1, 0.05]), np.array([4.0, 8.0])
    t = alternating_terms(16, T, eta, B)
    assert np.allclose(t["model"], np.log(8) / eta + T / 4 * np.tanh(eta * B / 2), rtol=1e-12)
    assert np.allclose(t["TBeta_over_8"], T * B * eta / 8) and np.allclose(t["claimed_TB2eta2"], T * (B * eta) ** 2)
