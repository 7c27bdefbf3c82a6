"""``jaxdp.label_dp.run_planned``: one learner at several points, each at its planner's hyperparameters, is
``run_grid`` of ``make_estimator`` at those plans (seed for seed), and a learner that does not fit the task is
refused by name before anything runs."""
from jaxdp.core import seed_keys
import numpy as np
import pytest

from jaxdp.label_dp import LabelParams, make_estimator, run_grid, run_planned, task_generator
from jaxdp.label_dp.planners import plan_for_task


def test_points_run_at_their_plans():
    keys = seed_keys(0, np.arange(3))
    N, eps = [200, 400], [0.5, 2.0]
    got = run_planned("regression", "central_bins_laplace", keys, N, eps, N_max=400, M=64, bins_max=32)
    plans = [plan_for_task("central_bins_laplace", "regression", N=n, eps=e) for n, e in zip(N, eps)]
    prm = LabelParams(np.asarray(eps), *[np.asarray([p[f] for p in plans]) for f in ("bins", "k", "clip")])
    fn = make_estimator(task_generator("regression"), "central_bins_laplace", N_max=400, M=64, bins_max=32)
    want = run_grid(fn, keys, np.asarray(N), prm)["excess"]
    assert got.shape == (2, 3) and np.all(got > 0) and np.array_equal(got, want)


def test_a_learner_of_another_task_is_refused():
    with pytest.raises(ValueError, match="does not apply"):
        run_planned("regression", "local_rr_vector", seed_keys(0, np.arange(2)), [100], [1.0],
                    N_max=100)
