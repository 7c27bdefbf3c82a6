"""The trivial caps of pseudo-regret: ``T`` and, on a stochastic instance, ``T·max Δ``; a point's setups and runs; the
learner whose runs a learner's are (the batched DP-EXP3 at one round per block)."""
from jaxdp.bandits.instances import is_trivial_cap, twin_learner


def test_is_trivial_cap_matches_T_and_T_max_gap():
    # linspace means are linspace(0.1, 0.9, K): max gap 0.8, so the caps at T = 1000 are 1000 and 800
    assert is_trivial_cap(1000.0, "linspace", 9, 1000) and is_trivial_cap(800.0, "linspace", 9, 1000)
    assert is_trivial_cap(800.0 * (1 + 1e-12), "linspace", 9, 1000)
    assert not is_trivial_cap(800.0 * (1 + 1e-6), "linspace", 9, 1000)
    assert not is_trivial_cap(799.0, "linspace", 9, 1000)
    # the switching instance has only the cap T
    assert is_trivial_cap(300.0, "switch", 4, 300) and not is_trivial_cap(240.0, "switch", 4, 300)


def test_check_point_names_the_instance_before_compiling():
    import pytest

    from jaxdp.bandits.instances import check_point

    check_point("ucb1", "switch", 4, 64, None)
    check_point("dp_exp3", "gap", 2, 64, 1.0)
    with pytest.raises(ValueError, match="'nope'"):
        check_point("ucb1", "nope", 4, 64, None)


def test_simulate_budgets_pseudo_regret_and_common_keys():
    """On ``gap`` with K = 2 the pseudo-regret is gap × (pulls of the worse arm): a multiple of the gap in [0, gap T].
    Each budget's runs are its own run's on the same keys (one budget at a time gives the same numbers), and the
    same budget twice gives the same runs seed by seed (common random numbers)."""
    import numpy as np

    from jaxdp.bandits.instances import simulate_budgets
    from jaxdp.core import seed_keys

    keys, gap, T = seed_keys(0, np.arange(8)), 0.25, 64
    out = simulate_budgets("dp_exp3", "gap", 2, T, [0.5, 2.0, 0.5], gap, keys)
    r = np.asarray(out["regret"], float)
    assert r.shape == (3, 8)
    pulls = r / gap
    assert np.allclose(pulls, np.round(pulls), atol=1e-3) and (pulls >= -1e-3).all() and (pulls <= T + 1e-3).all()
    assert np.array_equal(r[0], r[2]) and not np.array_equal(r[0], r[1])
    one = np.asarray(simulate_budgets("dp_exp3", "gap", 2, T, [2.0], gap, keys)["regret"], float)
    assert np.allclose(one[0], r[1], rtol=1e-6, atol=1e-4)


def test_twin_learner_is_the_per_round_dp_exp3_where_blocks_are_one_round():
    # τ = ⌈1/ε⌉ rounds per block: one round (the per-round DP-EXP3) exactly where ε ≥ 1
    assert [twin_learner("dp_exp3_batched", 9, 4096, e) for e in (0.1, 0.5, 0.99, 1.0, 3.0, 10.0)] == \
        ["dp_exp3_batched"] * 3 + ["dp_exp3"] * 3
    assert twin_learner("dp_exp3", 9, 4096, 0.1) == "dp_exp3" and twin_learner("ucb1", 9, 4096, None) == "ucb1"


def test_point_bounds_and_flags_are_the_per_point_functions_row_by_row():
    import numpy as np
    import pandas as pd

    from jaxdp.bandits.instances import is_trivial_cap, point_bounds, point_flags, theory_value, twin_learner

    pts = pd.DataFrame({"learner": ["exp3", "dp_exp3_batched", "dp_exp3_batched", "ucb1"],
                        "instance": ["linspace", "linspace", "linspace", "switch"], "K": [4, 4, 4, 4],
                        "T": [1024, 4096, 4096, 1024], "eps": [None, 2.0, 0.1, None]})
    pts["theory"] = point_bounds(pts, 0.2)
    for r, b in zip(pts.itertuples(), pts["theory"]):
        want = theory_value(r.learner, r.instance, r.K, r.T, r.eps, 0.2)
        assert b == want or (np.isnan(b) and np.isnan(want))
    f = point_flags(pts, 0.2)
    assert f["repeated"] == [twin_learner(r.learner, r.K, r.T, r.eps) != r.learner for r in pts.itertuples()]
    assert f["repeated"] == [False, True, False, False]          # τ = ⌈1/ε⌉ = 1 only at ε = 2
    assert f["capped"] == [is_trivial_cap(r.theory, r.instance, r.K, r.T, 0.2) for r in pts.itertuples()]
