"""Z7 of the ``lazy-switching`` study (Lazy private online learning; docs/algorithms/lazy.md#studies): the expert L2P-MW plays in batch s has the MW
marginal nu_s exactly (LAZY Lemma 3.4 with delta0 = 0, docs/algorithms/lazy.md#l2p).

Soundness: for each batch checked, a correct sampler exceeds the TV bound (exact-sampler E[TV] +
sqrt(ln(1/alpha)/(2n)), McDiarmid) with probability <= alpha = 1e-8 and fails the chi-square test with
probability 1e-8; 5 batches x 2 checks keep the false-failure rate at 1e-7. The control (the target
one batch late, nu_{s-1}) must fail both checks at every batch.
"""
import pathlib

import numpy as np
import pytest

from jaxdp.registry import get_study
from jaxdp.studies.framework import resolve_config, run_study
from jaxdp.experts import exact_sampler_tv, marginal_check, mw_marginal, z7_losses

ALPHA = 1e-8


def _cfg(**over):
    e = get_study("lazy-switching")
    return e, resolve_config("lazy-switching", e.extra["defaults"], e.extra["quick"], True, over)


@pytest.fixture(scope="module")
def z7_result(tmp_path_factory):
    # Z7 only (no Z5/Z8 learners): 4 seed indices x 4000 replicates = 16000 runs of T = 64 rounds
    e, cfg = _cfg(learners=[], seeds=4, z7_reps=4000)
    return cfg, run_study(e.fn(cfg), tmp_path_factory.mktemp("z7"), progress=False)


def test_marginal_of_x_s_is_nu_s(z7_result):
    cfg, res = z7_result
    t = res.tables["marginals"]
    assert list(t["s"]) == [1, 2, 4, 8, 16] and (t["n"] == 16000).all()
    for r in t.itertuples():
        assert r.tv <= r.tv_bound, (r.s, r.tv, r.tv_bound)
        assert r.chi2_p > ALPHA, (r.s, r.chi2_p)
        # the sound bound is tighter than 5.3 x the exact-sampler noise level at this size
        assert r.tv_bound < 5.3 * r.tv_noise
    assert any(pathlib.Path(p).name == "lazy_z7_marginals.png" and pathlib.Path(p).exists() for p in res.plots)


def test_wrong_target_is_rejected(z7_result):
    """The same check against nu_{s-1} (the target one batch late) fails at every batch s >= 2."""
    cfg, res = z7_result
    t = res.tables["marginals"]
    ctrl = t[t["s"] >= 2]
    assert len(ctrl) == 4
    assert ctrl["prev_rejected"].all() and (ctrl["tv_vs_prev"] > ctrl["tv_bound"]).all()
    assert (ctrl["chi2_p_vs_prev"] < ALPHA).all()
    # the counts are the study's: recomputing from the tidy table against nu_{s-1} agrees
    df = res.df[res.df["exp"] == "Z7"]
    d, B, eta = int(cfg["z7_d"]), int(cfg["z7_B"]), float(cfg["z7_eta"])
    losses = z7_losses(d, B, int(cfg["z7_batches"]), int(cfg["seed"]))
    counts = df[df["s"] == 8][[f"count_{j}" for j in range(d)]].to_numpy(float).sum(0)
    assert not marginal_check(counts, mw_marginal(losses, eta, 6 * B), ALPHA)["ok"]
    assert marginal_check(counts, mw_marginal(losses, eta, 7 * B), ALPHA)["ok"]


def test_exact_sampler_tv_matches_monte_carlo():
    rng = np.random.default_rng(0)
    for nu, n in ((np.array([0.5, 0.3, 0.2]), 50), (np.array([0.05, 0.15, 0.3, 0.5]), 2000)):
        c = rng.multinomial(n, nu, size=20000)
        mc = 0.5 * np.abs(c / n - nu).sum(1)
        assert abs(exact_sampler_tv(nu, n) - mc.mean()) < 5.3 * mc.std() / np.sqrt(mc.size)
    assert exact_sampler_tv(np.array([1.0, 0.0]), 100) == 0.0


def test_config_validation():
    # bad values are refused when the config is resolved, before any study is built
    for over, match in (({"z7_s": [0, 3]}, "z7_s"), ({"z7_p": 1.5}, "z7_p"), ({"z7_reps": 0}, "z7_reps")):
        with pytest.raises(ValueError, match=match):
            _cfg(**over)
    with pytest.raises(ValueError, match="z7_s"):   # a batch index past z7_batches is caught by the builder
        e, cfg = _cfg(z7_s=[10 ** 6])
        e.fn(cfg)
    e, cfg = _cfg(learners=[], z7=False)
    with pytest.raises(ValueError, match="empty grid"):
        e.fn(cfg)
