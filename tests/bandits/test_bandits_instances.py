"""The trivial caps of pseudo-regret: ``T`` and, on a stochastic instance, ``T·max Δ``."""
from jaxdp.bandits.instances import is_trivial_cap


def test_is_trivial_cap_matches_T_and_T_max_gap():
    # linspace means are linspace(0.1, 0.9, K): max gap 0.8, so the caps at T = 1000 are 1000 and 800
    assert is_trivial_cap(1000.0, "linspace", 9, 1000) and is_trivial_cap(800.0, "linspace", 9, 1000)
    assert is_trivial_cap(800.0 * (1 + 1e-12), "linspace", 9, 1000)
    assert not is_trivial_cap(800.0 * (1 + 1e-6), "linspace", 9, 1000)
    assert not is_trivial_cap(799.0, "linspace", 9, 1000)
    # the switching instance has only the cap T
    assert is_trivial_cap(300.0, "switch", 4, 300) and not is_trivial_cap(240.0, "switch", 4, 300)
