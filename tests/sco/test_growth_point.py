"""``jaxdp.sco.growth_point`` and ``run_growth_point``: a κ-growth sweep's point is planned_estimator on
growth_instance, and running it in seed batches gives, seed index by seed index, the run of that index's own key
(the batch size is memory only). One small exact inverse-sensitivity law (n = 300) compiled on the CPU."""
import numpy as np
import pytest

from jaxdp.core.simulate import seed_keys
from jaxdp.sco import growth_instance, growth_point, planned_estimator, run_growth_point, run_sco_cpu

POINT = dict(algo="grad_inv", inst="regression", kappa=2.0, d=1, n_samples=300, eps=0.5, delta=0.0, kappa_low=1.5,
             rho_rule="theorem", M=0)


def test_growth_point_is_the_planned_estimator_on_the_instance():
    p = dict(POINT, algo="epoch", kappa=3.0, delta=1e-6)
    fn, args, plan = growth_point(p, n_iter=7)
    ref = planned_estimator("epoch", growth_instance("regression", 3.0, 1, 300), 300, eps=0.5, delta=1e-6,
                            kappa_low=1.5, n_iter=7)
    assert fn is ref[0] and args == ref[1] and plan == ref[2]


def test_batches_are_memory_only():
    out = run_growth_point(POINT, 3, range(5), batch=2)
    assert set(out) == {"excess", "erm_excess", "accepted"} and all(v.shape == (5,) for v in out.values())
    whole = run_growth_point(POINT, 3, range(5), batch=5)
    assert all(np.array_equal(out[k], whole[k]) for k in out)
    fn, args, _ = growth_point(POINT)
    one = run_sco_cpu(fn, seed_keys(3, np.array([4])), args)
    assert np.array_equal(np.asarray(one["erm_excess"], float), out["erm_excess"][4:])
    assert len(set(out["erm_excess"].tolist())) == 5                          # distinct keys, distinct draws


def test_batch_must_be_positive():
    with pytest.raises(ValueError, match="batch must be a positive integer, got 0"):
        run_growth_point(POINT, 0, range(2), batch=0)
