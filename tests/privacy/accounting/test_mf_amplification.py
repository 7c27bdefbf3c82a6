"""Amplification by subsampling in the ledger (jaxdp.privacy.accounting.amplification): Poisson and fixed-size sampled
Gaussians certified with dp_accounting's PLD and RDP accountants, reproducing the reference figures."""
import math

import pytest

from jaxdp.privacy.accounting import certify, ledger as LG
from jaxdp.privacy.accounting.amplification import (
    amplified_epsilon, calibrate_noise_multiplier, fixed_size_sampled, poisson_sampled,
)
from jaxdp.privacy.accounting import gaussian_eps_exact

# dp_accounting reference: Poisson-subsampled Gaussian, multiplier 3, q = 0.1, 512 steps, delta = 1e-6, add/remove
REF_PLD, REF_RDP = 3.769687, 4.050970
REF_NM_PLD, REF_NM_RDP = 9.661829, 10.364129


def test_poisson_reference_epsilons():
    e = poisson_sampled(3.0, 0.1, 512)
    c = certify(e, 1e-6)
    assert c.bound == "pld" and "amplification" in c.detail
    assert math.isclose(c.eps, REF_PLD, rel_tol=1e-6)
    assert math.isclose(amplified_epsilon(e, 1e-6), REF_PLD, rel_tol=1e-6)
    assert math.isclose(amplified_epsilon(e, 1e-6, accountant="rdp"), REF_RDP, rel_tol=1e-6)
    # the un-amplified bounds of the accountant are far weaker (sampling never hurts)
    assert c.eps < certify(LG.gaussian(3.0, count=512), 1e-6).eps / 5


def test_calibrated_noise_multiplier():
    nm = calibrate_noise_multiplier(1.0, 1e-6, 512, sampling_rate=0.1)
    assert math.isclose(nm, REF_NM_PLD, rel_tol=1e-5)
    assert amplified_epsilon(poisson_sampled(nm, 0.1, 512), 1e-6) <= 1.0
    nm_rdp = calibrate_noise_multiplier(1.0, 1e-6, 512, sampling_rate=0.1, accountant="rdp")
    assert math.isclose(nm_rdp, REF_NM_RDP, rel_tol=1e-5)


def test_fixed_size_and_replace_one():
    # sample everything: the un-sampled Gaussian at the replace-one distance 2C (multiplier sigma/(2C))
    full = fixed_size_sampled(6.0, 50, 50)
    assert abs(amplified_epsilon(full, 1e-6) - gaussian_eps_exact(1.0, 3.0, 1e-6)) < 2e-3
    f = fixed_size_sampled(3.0, 100, 1000, 64)
    pld, rdp = amplified_epsilon(f, 1e-6), amplified_epsilon(f, 1e-6, accountant="rdp")
    assert 0 < pld <= rdp * 1.001
    c = certify(f, 1e-6)
    assert c.eps <= min(pld, rdp) * (1 + 1e-12) and c.eps < certify(LG.gaussian(1.5, count=64), 1e-6).eps
    # replace-one Poisson: PLD only (dp_accounting has no RDP bound for it), weaker than add/remove
    r = poisson_sampled(3.0, 0.1, 64, neighboring="replace_one")
    a = poisson_sampled(3.0, 0.1, 64)
    assert amplified_epsilon(r, 1e-6) > amplified_epsilon(a, 1e-6)
    assert certify(r, 1e-6).bound == "pld"
    with pytest.raises(ValueError, match="RDP"):
        amplified_epsilon(r, 1e-6, accountant="rdp")


def test_composed_ledgers():
    e = poisson_sampled(3.0, 0.1, 256)
    both = LG.sequential(e, LG.gaussian(20.0), LG.laplace(50.0))
    c = certify(both, 1e-6)
    assert c.bound in ("pld", "rdp") and c.eps > certify(e, 1e-6).eps
    assert math.isclose(certify(LG.sequential(e, count=2), 1e-6).eps,
                        certify(poisson_sampled(3.0, 0.1, 512), 1e-6).eps, rel_tol=1e-9)
    # a pure-DP event alongside: only the un-amplified bounds apply (still valid)
    mixed = certify(LG.sequential(e, LG.pure(0.1)), 1e-6)
    assert math.isfinite(mixed.eps) and mixed.bound not in ("rdp",)
    with pytest.raises(ValueError, match="mix"):
        certify(LG.sequential(e, poisson_sampled(3.0, 0.1, 1, neighboring="replace_one")), 1e-6)


def test_event_fields_and_validation():
    e = poisson_sampled(3.0, 0.1, 512)
    assert e.to_dict()["sampling_rate"] == 0.1 and "Poisson" in e.describe()
    assert e.to_dp_event().count == 512
    f = fixed_size_sampled(2.0, 10, 100)
    assert f.sampling_rate == 0.1 and f.neighboring == "replace_one" and f.gaussian_multiplier == 1.0
    with pytest.raises(ValueError, match="sampling_rate"):
        poisson_sampled(1.0, 1.5)
    with pytest.raises(ValueError, match="sample_size"):
        fixed_size_sampled(1.0, 20, 10)
    with pytest.raises(ValueError, match="neighboring"):
        poisson_sampled(1.0, 0.1, neighboring="swap")
    with pytest.raises(ValueError, match="sampled kinds"):
        LG.Event("gaussian", noise_multiplier=1.0, sampling_rate=0.1)
    with pytest.raises(ValueError, match="add/remove"):
        LG.Event("fixed_size_sampled", noise_multiplier=1.0, sample_size=1, population=2, neighboring="add_remove")
    with pytest.raises(ValueError, match="not both"):
        calibrate_noise_multiplier(1.0, 1e-6, 10, sampling_rate=0.1, sample_size=3, population=30)
