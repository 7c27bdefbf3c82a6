"""The points of the lazy studies (``jaxdp.experts.lazy_setups``). ``alternating_batches_run``: L2P-MW at its rate-mode
plan on alternating batches pays the closed form ``ln(d/2)/η + (T/4) tanh(ηB/2)`` (docs/algorithms/lazy.md
#batching-term, derived from the learner's weights on the two alternating experts), and the terms it returns are
those formulas. ``lower_bound_run``: Thm 4.2's scale and L2P's switch counts on the lower-bound epochs."""
import math

import pytest

from jaxdp.core import seed_keys
from jaxdp.experts.lazy_setups import alternating_batches_run, batching_terms


def test_l2p_pays_the_closed_form_on_alternating_batches():
    T, d = 4096, 2
    r = alternating_batches_run(seed_keys(0, [0, 1]), d, T, 0.02, 1e-6)
    eta, B = r["eta"], r["B"]
    model = math.log(d / 2) / eta + T / 4 * math.tanh(eta * B / 2)
    assert r["warmup_lnd2_over_eta"] + r["tanh_exact"] == pytest.approx(model, rel=1e-12)
    # the expected regret is the same number for every seed (a deterministic adversary), within 3% of the model
    assert r["expected_regret"][0] == r["expected_regret"][1]
    assert abs(float(r["expected_regret"][0]) / model - 1) < 0.03
    assert r["TBeta_over_8"] == pytest.approx(T * B * eta / 8) and r["claimed_TB2eta2"] == pytest.approx(
        T * B ** 2 * eta ** 2)
    assert batching_terms(T, B, eta, d)["valid_bound"] == pytest.approx(math.log(d) / eta + T * B * eta / 8)
    with pytest.raises(ValueError, match="learner"):
        alternating_batches_run(seed_keys(0, [0]), d, T, 0.02, 1e-6, learner="hedge")


def test_lower_bound_point_counts_and_scale():
    from jaxdp.experts.lazy_setups import lower_bound_run, paper_B

    T, eps, d = 1024, 0.1, 8
    r = lower_bound_run(seed_keys(0, [0, 1, 2]), "l2p_paper", d, T, eps, 1e-6)
    scale = T ** (1 / 3) * eps ** (-2 / 3)
    assert (r["lb_ratio"] == r["expected_regret"] / scale).all()
    # L2P redraws once per batch of paper_B(eps) rounds: every batch is a real switch, a fake one or neither
    assert (abs(r["n_batches"] - T / paper_B(eps)) <= 1).all() and (r["p"] > 0).all()
    assert (r["n_real"] + r["n_fake"] <= r["n_batches"]).all()
    tree = lower_bound_run(seed_keys(0, [0, 1]), "tree", d, T, eps, 1e-6)
    assert all((tree[k] == 0).all() for k in ("n_real", "n_fake", "n_yres", "n_batches", "p"))
