"""``certified_learner`` plans every private learner of the real-data experts study at its certified settings: the
certified ε never exceeds the target; Hedge is non-private (ε = inf)."""
import math

import pytest

from jaxdp.experts.realizable_setups import certified_learner


@pytest.mark.parametrize("name", ["hedge", "l2p_mw", "tree_ftrl", "sparse_vector", "potential", "adaptive_sv"])
def test_certified_eps_is_within_the_target(name):
    learner, params, eps_cert = certified_learner(name, 8, 1024, 1.0, 1e-6)
    assert callable(learner.step) and params is not None
    assert eps_cert == math.inf if name == "hedge" else 0 < eps_cert <= 1.0 + 1e-9


def test_unknown_name_is_refused():
    with pytest.raises(ValueError, match="nope"):
        certified_learner("nope", 8, 1024, 1.0, 1e-6)
