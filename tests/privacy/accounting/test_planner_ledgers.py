"""Property test: every registered planner x every mode on a corner grid of requests (no simulation).

For each plan:

* if it reports OK (``plan.certified``), then ``eps_certified <= eps`` and ``delta_certified <= delta``;
* a plan of a pure-DP mechanism with ``delta = 0`` requested reports ``delta_certified = 0``;
* ``eps_certified`` is never below an **independent** computation: the test rebuilds, from the plan's
  parameters alone, the mechanisms the algorithm runs (``REFERENCE`` below: written from the papers'
  algorithms, not from the planners' code) and evaluates them with ``dp_accounting``'s privacy-loss
  distributions at ``delta_certified``. The PLD is discretised *optimistically* (losses rounded down),
  so it is a lower bound on the exact ε of that reference; the pessimistic PLD upper bound differs
  from it only by the discretisation. ``eps_certified`` below it (beyond 1e-6 relative) means the
  plan's ledger under-counts a mechanism.

``test_broken_ledger_is_caught`` shows the check failing when one planner's ledger drops one
mechanism invocation.
"""
import dataclasses
import functools
import math

import numpy as np
import pytest
from scipy import stats

from jaxdp.privacy.accounting import certify
from jaxdp.privacy.accounting import ledger as LG
from jaxdp.registry import PLANNERS, load_all

dpa = pytest.importorskip("dp_accounting")
from dp_accounting.pld import privacy_loss_distribution as PLD  # noqa: E402

load_all()

EPS = [1e-3, 0.1, 1.0, 8.0, 64.0]
DELTA = [0.0, 1e-12, 1e-6, 1e-2]
T_GRID = [2, 10 ** 3, 10 ** 6]
D_GRID = [2, 64]
#: coarse search grids for the planners that search numerically (the property does not depend on it)
EXTRA = {"l2p_mw": {"grid": (12, 10, 40)}, "l2p_rmw": {"grid": (12, 10, 40)}}
#: modes each planner accepts
MODES = {"l2p_mw": ("paper", "paper_logs", "certified", "rate", "retuned"),
         "l2p_rmw": ("paper", "certified", "rate", "retuned"),
         "above_threshold": ("paper", "certified"), "sparse_vector_shared": ("paper", "certified")}


# --------------------------------------------------------------------------- independent reference ledgers
# Each returns (items, delta_extra): items are ("pure", eps, count), ("approx", eps, delta, count),
# ("gauss", noise_multiplier, count) or ("laplace", noise_multiplier, count), composed sequentially.

@functools.lru_cache(maxsize=None)
def _sum_of_binomials_quantile(n, q_x, q_y, d1):
    """Smallest ``k`` with ``P[X + Y > k] <= d1``, ``X ~ Bin(n, q_x)``, ``Y ~ Bin(n, q_y)`` independent: the pmf of the
    sum by direct convolution of the two pmfs (each on a window of +-14 sd around its mean; the dropped mass only
    lowers the tail, so this is never above the exact quantile)."""
    def pmf(q):
        lo = max(0, int(n * q - 14 * math.sqrt(n * q * (1 - q)) - 30))
        hi = min(n, int(n * q + 14 * math.sqrt(n * q * (1 - q)) + 30))
        ks = np.arange(lo, hi + 1)
        return lo, stats.binom.pmf(ks, n, q)
    lx, px = pmf(q_x)
    ly, py = pmf(q_y)
    conv = np.convolve(px, py)
    tail = np.concatenate([np.cumsum(conv[::-1])[::-1][1:], [0.0]])     # tail[i] = P[S > lx + ly + i]
    ok = np.nonzero(tail <= d1)[0]
    return lx + ly + int(ok[0])


def _l2p_ref(eta_acc, spread, sample, p, B, T, d1, extra):
    """L2P (Lazy private online learning, Algorithm 1) replace-one at round t0: every boundary after t0 draws x afresh
    unless S = 1 and S' = 1 (acceptance >= e^{-B(2 eta + spread)}) and y afresh when A = 0 (probability p), each draw
    a fresh sample of a measure that saw the differing loss (``sample``-DP); the switching decision after t0 outputs
    keep/switch with keep probability (1 - p) a, a <= min(1, e^{B(spread - 2 eta)}), and the loss moves log a by
    <= 2 spread; one more sample at t0."""
    n = math.ceil(T / B)
    q_x = 1 - (1 - p) * math.exp(-B * (2 * eta_acc + spread))
    k = _sum_of_binomials_quantile(n, q_x, p, d1)
    g = 2 * spread
    a = math.exp(min(0.0, B * (spread - 2 * eta_acc)))
    dec = max(g, math.log((1 - (1 - p) * a * math.exp(-g)) / (1 - (1 - p) * a)) if (1 - p) * a < 1 else math.inf)
    return [("pure", sample, k + 1), ("pure", dec, 1)], 2 * d1 + extra


def _l2p_mw_ref(P, T):
    return _l2p_ref(P["eta"], P["eta"], 2 * P["eta"], P["p"], P["B"], T, P["delta1"], 0.0)


def _l2p_rmw_refs(P, T):
    """Two valid arguments: Lemma 3.11's eta_div (4 eta_div per sample, the delta0 term), or the exponential mechanism
    on a ball of diameter D = 2 radius with L-Lipschitz losses (2 beta L D per sample, pure)."""
    e, p, B, d1, d0 = P["eta_div"], P["p"], P["B"], P["delta1"], P["delta0"]
    d0_term = 2 * T * (2 / e + math.log(1 / d1) / p) * math.e * B * d0
    bld = P["beta"] * P["L"] * 2 * P["radius"]
    return [_l2p_ref(P["eta"], 2 * e, 4 * e, p, B, T, d1, d0_term),
            _l2p_ref(P["eta"], bld, 2 * bld, p, B, T, d1, 0.0)]


def _phases(P, K):
    return [("pure", 2 * P["eps0"] / P["s_phi"], K), ("pure", 2 * P["eta"], K)]


REFERENCE = {
    "laplace": lambda P, T, kw: ([("laplace", P["scale"] / P["sensitivity_l1"], T)], 0.0),
    "gaussian": lambda P, T, kw: ([("gauss", P["sigma"] / P["sensitivity_l2"], T)], 0.0),
    "tree_aggregation": lambda P, T, kw: ([("gauss", P["sigma"] / (2.0 * math.sqrt(T.bit_length())), 1)], 0.0),
    "above_threshold": lambda P, T, kw: ([("pure", 2.0 / P["threshold_scale"], 1)], 0.0),
    # Lyu et al. Alg. 1: eps1 = Delta/b_threshold, eps2 = 2c*Delta/b_query (non-monotone), one pure event
    "sparse_vector_shared": lambda P, T, kw: (
        [("pure", P["sensitivity"] / P["threshold_scale"] + 2 * P["c"] * P["sensitivity"] / P["query_scale"], 1)],
        0.0),
    "advanced_composition": lambda P, T, kw: ([("approx", P["eps_step"], P["delta_step"], P["k"])], 0.0),
    "l2p_mw": lambda P, T, kw: _l2p_mw_ref(P, T),
    "l2p_rmw": lambda P, T, kw: _l2p_rmw_refs(P, T),
    "dp_ftrl": lambda P, T, kw: ([("gauss", P["sigma"] / (2 * P["clip"] * math.sqrt(T.bit_length())), 1)], 0.0),
    "experts_oco_net": lambda P, T, kw: ([("pure", P["eps_svt"], 1), ("pure", P["eta"], P["K"])], 0.0),
    "sparse_vector_experts": lambda P, T, kw: ([("pure", P["eps_svt"], 1), ("pure", P["eta"], P["K"])], 0.0),
    # REAL Alg. 2: a loss enters the acc of one sparse-vector instance (acc restarts at every switch), so all the
    # phases' instances together are eps_svt; the draws and the doubling checks score cum and repeat per phase
    "adaptive_sparse_vector_experts": lambda P, T, kw: (
        [("pure", P["eps_svt"], 1), ("pure", P["eta"], P["K"] * (P["max_doublings"] + 1)),
         ("laplace", P["zeta_scale"], P["K"] * (P["max_doublings"] + 1))], 0.0),
    "potential_experts": lambda P, T, kw: (_phases(P, P["K"]), 0.0),
    "potential_oco": lambda P, T, kw: (_phases(P, P["K"]), 0.0),
    "guarded_potential_experts": lambda P, T, kw: (_phases(P, P["K"]), 0.0),
    "binary_tree_experts": lambda P, T, kw: (
        [("laplace", 1.0 / P["eps_tree"], P["m_set"]), ("pure", P["eta_sel"], P["P_max"] * P["m_set"])], 0.0),
    # binary-tree noisy Hedge: one tree over T rounds (H = bit_length(T) levels), a loss vector in [0,1]^d moves
    # each level's node by <= d in l1 and sqrt(d) in l2
    "tree_ftrl_experts": lambda P, T, kw: (
        [("laplace", P["scale"] / (kw["d"] * T.bit_length()), 1)] if kw["delta"] == 0 else
        [("gauss", P["scale"] / math.sqrt(kw["d"] * T.bit_length()), 1)], 0.0),
    "localization_sco": lambda P, T, kw: (
        [("pure", P["eps"], 1)] if P["delta"] == 0 else [("gauss", P["gauss_mult"] / 2.0, 1)], 0.0),
    "epoch_growth_sco": lambda P, T, kw: (
        [("pure", P["eps"], 1)] if P["delta"] == 0 else [("gauss", P["gauss_mult"] / 2.0, 1)], 0.0),
    "grad_inverse_sensitivity": lambda P, T, kw: ([("pure", P["eps"], 1)], 0.0),
    "growth_reduction_erm": lambda P, T, kw: ([("pure", P["eps_round"], P["k"])], 0.0),
}
# bandits: one round's loss vector changes one reward (the played arm's), which enters
# DP-UCB: the H = floor(log2 T) + 1 dyadic nodes above its leaf in one arm's tree, each Lap(b), sensitivity 1;
# DP-SE: one epoch mean of R rewards (sensitivity 1/R) with Lap(1/(eps R)); DP-EXP3: one block average of tau
# losses (sensitivity 1/tau) with Lap(b); LDP-UCB: its own local Lap(b) release
REFERENCE["dp_ucb_tree"] = lambda P, T, kw: ([("laplace", P["b"], T.bit_length())], 0.0)
REFERENCE["dp_se"] = lambda P, T, kw: ([("laplace", 1.0 / P["eps"], 1)], 0.0)
REFERENCE["dp_exp3"] = lambda P, T, kw: ([("laplace", P["b"] * P["tau"], 1)], 0.0)
REFERENCE["ldp_ucb"] = lambda P, T, kw: ([("laplace", P["b"], 1)], 0.0)
for _n in ("label_local_cls", "label_central_cls", "label_local_reg", "label_central_reg", "label_local_heavy",
           "label_central_heavy"):
    REFERENCE[_n] = lambda P, T, kw: ([("pure", P["eps"], 1)], 0.0)


def _rr_pld(eps, delta, vdi):
    """Optimistic PLD of a generic (eps, delta)-DP mechanism (randomized response with a delta atom)."""
    hi = (1 - delta) / (1 + math.exp(-eps))
    lo = (1 - delta) - hi
    pmf = {math.floor(eps / vdi): hi}
    key = math.floor(-eps / vdi)
    pmf[key] = pmf.get(key, 0.0) + lo
    return PLD.PrivacyLossDistribution.create_from_rounded_probability(pmf, delta, vdi, pessimistic_estimate=False)


def _reference_pld(items, vdi):
    pld = None
    for it in items:
        kind, count = it[0], it[-1]
        if count == 0:
            continue
        if kind == "gauss":
            one = PLD.from_gaussian_mechanism(it[1] / math.sqrt(count), pessimistic_estimate=False,
                                              value_discretization_interval=vdi, use_connect_dots=False)
        else:
            if kind == "laplace":
                one = PLD.from_laplace_mechanism(it[1], pessimistic_estimate=False, value_discretization_interval=vdi,
                                                 use_connect_dots=False)
            else:
                e = it[1]
                if e < vdi:
                    continue          # rounds to 0: dropping it keeps a lower bound
                one = _rr_pld(e, it[2] if kind == "approx" else 0.0, vdi)
            # no tail truncation: dp_accounting moves truncated mass to infinity (pessimistic) otherwise
            one = one.self_compose(count, tail_mass_truncation=0.0) if count > 1 else one
        pld = one if pld is None else pld.compose(one, tail_mass_truncation=0.0)
    return pld


def _pure_total(items):
    return (sum(it[1] * it[2] for it in items if it[0] == "pure") + sum(it[2] / it[1] for it in items
            if it[0] == "laplace") + sum(it[1] * it[3] for it in items if it[0] == "approx"))


def _pure_profile_exact(items):
    """The exact profile of a sequential composition of pure events whose counts are all 1 but one: every eps-DP
    mechanism is a post-processing of binary randomized response (Kairouz-Oh-Viswanath 2015 Thm 2.1), so the
    privacy loss is ``sum_j eps_j (m_j - 2 I_j)`` with ``I_j ~ Bin(m_j, 1/(1 + e^eps_j))`` under the first input;
    enumerated exactly. ``None`` for other ledgers."""
    pure = [(it[1], it[2]) for it in items if it[0] == "pure" and it[2] > 0 and it[1] > 0]
    if len(pure) != len([it for it in items if it[-1] > 0]) or not pure:
        return None
    big = max(pure, key=lambda em: em[1])
    small = list(pure)
    small.remove(big)
    if len(small) > 6 or any(m != 1 for _, m in small) or big[1] > 5 * 10 ** 6:
        return None
    e, m = big
    i = np.arange(m + 1)
    losses = e * (m - 2 * i)
    logp = stats.binom.logpmf(i, m, 1.0 / (1.0 + math.exp(e)))
    for es, _ in small:          # one RR each: loss +es w.p. e^es/(1+e^es), -es otherwise
        lp_hi, lp_lo = -math.log1p(math.exp(-es)), -math.log1p(math.exp(es))
        losses = np.concatenate([losses + es, losses - es])
        logp = np.concatenate([logp + lp_hi, logp + lp_lo])

    def prof(eps):
        keep = losses > eps
        return float(np.sum(np.exp(logp[keep]) * -np.expm1(eps - losses[keep])))
    return prof


def reference_profile(items):
    """``eps -> δ(eps)``, a lower bound on the exact privacy profile of the sequential composition ``items``
    (optimistic PLD; the exact profile for Gaussian-only ledgers); ``None`` where no usable bound is cheap."""
    if any(math.isinf(it[1]) for it in items if it[0] in ("pure", "approx")):
        return lambda eps: 1.0
    rho = sum(it[2] / (2 * it[1] ** 2) for it in items if it[0] == "gauss")
    if items and all(it[0] == "gauss" for it in items):
        # composed Gaussians are one Gaussian: its exact profile (Balle-Wang); the PLD truncates the tails
        # pessimistically even with pessimistic_estimate=False
        from scipy.stats import norm

        m = 1.0 / math.sqrt(2 * rho)
        return lambda eps: float(norm.cdf(0.5 / m - eps * m) - math.exp(eps + norm.logcdf(-0.5 / m - eps * m)))
    exact = _pure_profile_exact(items)
    if exact is not None:
        return exact
    if any(it[0] == "laplace" and it[2] > 10 ** 4 for it in items):
        return None      # a million Laplace releases: the PLD is too costly (and the accountant used DR/KOV)
    scale = max(_pure_total(items), 10 * math.sqrt(2 * rho) + 2 * rho, 1e-6)
    pld = _reference_pld(items, scale / 4e4)
    if pld is None:
        return lambda eps: 0.0

    def prof(eps):
        try:
            return float(pld.get_delta_for_epsilon(eps))
        except OverflowError:
            return 0.0
    return prof


def reference_delta_at(items, eps):
    prof = reference_profile(items)
    return 0.0 if prof is None else prof(eps)


def reference_lower_eps(items, delta):
    """Smallest ε (bisection on the reference profile) whose reference δ is <= ``delta``: a lower bound."""
    if delta <= 0:
        return _pure_total(items) if not any(it[0] == "gauss" for it in items) else math.inf
    prof = reference_profile(items)
    if prof is None:
        return 0.0
    lo, hi = 0.0, max(_pure_total(items), 1.0)
    while prof(hi) > delta:
        hi *= 2
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if prof(mid) > delta:
            lo = mid
        else:
            hi = mid
    return lo


_CHECKED: set = set()


def check_plan(name, plan, req, memo: bool = False):
    """The three properties of the module docstring; raises AssertionError naming the plan."""
    if memo:   # the same plan for another d (most planners ignore it) is checked once
        key = (name, plan.mode, req["eps"], req["delta"], req["T"], repr(sorted(plan.params.items())),
               plan.eps_certified, plan.delta_certified)
        if key in _CHECKED:
            return
        _CHECKED.add(key)
    tag = f"{name} mode={plan.mode} {req}"
    if plan.certified:
        assert plan.eps_certified <= req["eps"] * (1 + 1e-9), tag
        assert plan.delta_certified <= req["delta"] * (1 + 1e-9) + 1e-300, tag
    if plan.ledger is not None and plan.ledger.is_pure and req["delta"] == 0 and math.isfinite(plan.eps_certified):
        assert plan.delta_certified == 0, tag
    assert plan.ledger is not None, f"{tag}: no ledger"
    if not math.isfinite(plan.eps_certified):
        return
    refs = REFERENCE[plan.algorithm if plan.algorithm in REFERENCE else name](plan.params, req["T"], req)
    refs = refs if isinstance(refs, list) else [refs]      # several valid arguments: one must justify the plan
    errors = []
    for items, extra in refs:
        try:
            _check_against(tag, plan, items, extra)
            return
        except AssertionError as e:
            errors.append(str(e))
    raise AssertionError("\n".join(errors))


def _check_against(tag, plan, items, extra):
    d_left = plan.delta_certified - extra
    assert d_left >= -1e-15, f"{tag}: delta_certified {plan.delta_certified} below the failure events {extra}"
    if d_left <= 0:
        lower = reference_lower_eps(items, 0.0)
        assert plan.eps_certified >= lower * (1 - 1e-6), (
            f"{tag}: eps_certified={plan.eps_certified} < independent PLD lower bound {lower}\n{plan.format()}")
        return
    # the dual form: the reference δ at the certified ε must be within the certified δ (1e-6 relative; the PLD's
    # FFT convolutions carry ~1e-13 absolute error)
    d_ref = reference_delta_at(items, plan.eps_certified * (1 + 1e-6))
    assert d_ref <= d_left * (1 + 1e-6) + 1e-12, (
        f"{tag}: eps_certified={plan.eps_certified} < independent PLD lower bound: the reference ledger has "
        f"delta={d_ref:.6g} > {d_left:.6g} there\n{plan.format()}")


#: the grid of an independent re-accounting of every planner (odd T: partial last batches)
REVIEW_GRID = dict(eps=[0.3, 2.5, 17.0], delta=[1e-9, 1e-5], T=[37, 5000, 300_000], d=[5, 300])


def _requests(name):
    for grid in (dict(eps=EPS, delta=DELTA, T=T_GRID, d=D_GRID), REVIEW_GRID):
        for eps in grid["eps"]:
            for delta in grid["delta"]:
                for T in grid["T"]:
                    for d in grid["d"]:
                        yield dict(eps=eps, delta=delta, T=T, d=d)


# planners whose reference ledger is keyed by plan.algorithm (label planners name the method)
NAMES = sorted(PLANNERS)


def test_every_planner_has_a_reference():
    missing = [n for n in NAMES if n not in REFERENCE]
    assert not missing, f"planners without an independent reference ledger in this test: {missing}"


@pytest.mark.parametrize("name", NAMES)
def test_planner_property(name):
    fn = PLANNERS[name].fn
    n_ok = n_plans = 0
    for mode in MODES.get(name, ("paper", "certified", "rate")):
        for req in _requests(name):
            try:
                plan = fn(mode=mode, **req, **EXTRA.get(name, {}))
            except ValueError as e:
                assert str(e), f"{name} {mode} {req}: ValueError without a message"
                continue
            n_plans += 1
            check_plan(name, plan, req, memo=True)
            n_ok += plan.certified
    assert n_plans > 0, f"{name}: no request of the corner grid gave a plan"


def test_broken_ledger_is_caught():
    """Drop one phase from potential_oco's ledger: the accountant certifies less, the check catches it."""
    plan = PLANNERS["potential_oco"].fn(eps=50.0, delta=1e-3, T=10_000, d=2, mode="certified")
    req = dict(eps=50.0, delta=1e-3, T=10_000, d=2)
    check_plan("potential_oco", plan, req)                      # the real ledger passes
    phase = plan.ledger.items[0]
    broken_ledger = dataclasses.replace(plan.ledger, items=(dataclasses.replace(phase, count=phase.count - 1),))
    cert = certify(broken_ledger, plan.delta)
    broken = dataclasses.replace(plan, ledger=broken_ledger, eps_certified=cert.eps, delta_certified=cert.delta)
    with pytest.raises(AssertionError, match="independent PLD lower bound"):
        check_plan("potential_oco", broken, req)
    # the same with one fewer exponential-mechanism draw in sparse_vector_experts (pure: basic composition)
    plan = PLANNERS["sparse_vector_experts"].fn(eps=1.0, delta=0.0, T=1000, d=16, mode="certified")
    req = dict(eps=1.0, delta=0.0, T=1000, d=16)
    check_plan("sparse_vector_experts", plan, req)
    at, em = plan.ledger.items
    broken_ledger = dataclasses.replace(plan.ledger, items=(at, dataclasses.replace(em, count=em.count - 1)))
    cert = certify(broken_ledger, 0.0)
    broken = dataclasses.replace(plan, ledger=broken_ledger, eps_certified=cert.eps, delta_certified=cert.delta)
    with pytest.raises(AssertionError, match="independent PLD lower bound"):
        check_plan("sparse_vector_experts", broken, req)


def test_reference_lower_bound_is_below_the_pessimistic_pld():
    """The optimistic reference and dp_accounting's pessimistic PLD bracket the exact ε."""
    items = [("pure", 0.3, 20), ("pure", 1.0, 1), ("gauss", 4.0, 3)]
    lower = reference_lower_eps(items, 1e-6)
    led = LG.sequential(LG.pure(0.3, count=20), LG.pure(1.0), LG.gaussian(4.0, count=3))
    upper = certify(led, 1e-6).eps
    assert lower <= upper and upper - lower < 0.02 * upper, (lower, upper)
    # exact for homogeneous pure DP: KOV15 Thm 3.3 (cross-checked in test_accounting_dp_accounting)
    from jaxdp.privacy.accounting import eps_optimal_homogeneous

    items = [("approx", 64 / math.sqrt(1000), 5e-10, 1000)]
    exact = eps_optimal_homogeneous(64 / math.sqrt(1000), 5e-10, 1000, 1e-6)
    assert reference_delta_at(items, exact) <= 1e-6 * (1 + 1e-6) + 1e-12


def test_l2p_mw_counts_both_fresh_samples():
    """At a boundary L2P can draw both x and y afresh: a ledger charging one sample per boundary (the count
    Bin(ceil(T/B), q) of boundaries) under-claims, and the independent reference catches it."""
    req = dict(eps=17.0, delta=1e-9, T=37, d=5)
    plan = PLANNERS["l2p_mw"].fn(mode="certified", **req)
    check_plan("l2p_mw", plan, req)
    assert plan.certified and 3.5 < plan.eps_certified <= 17.0      # 74 + 1 samples of 2 eta: about 3.63
    P = plan.params
    n = math.ceil(37 / P["B"])
    q = min(1.0, 2 * P["p"] + 1 - math.exp(-3 * P["B"] * P["eta"]))
    k_boundaries = min(n, int(stats.binom.isf(P["delta1"], n, q)))
    bulk, dec, t0 = plan.ledger.items
    assert bulk.count > k_boundaries
    broken_ledger = dataclasses.replace(plan.ledger, items=(dataclasses.replace(bulk, count=k_boundaries), dec, t0))
    cert = certify(broken_ledger, plan.delta)
    broken = dataclasses.replace(plan, ledger=broken_ledger, eps_certified=cert.eps, delta_certified=cert.delta)
    with pytest.raises(AssertionError, match="independent PLD lower bound"):
        check_plan("l2p_mw", broken, req)


def test_l2p_plans_certify_without_thm32_side_conditions():
    """The ledger argument needs none of Thm 3.2's side conditions: such plans get a finite certificate."""
    plan = PLANNERS["l2p_mw"].fn(eps=2.5, delta=1e-5, T=5000, d=5, mode="paper_logs")
    assert plan.certified and plan.eps_certified < 1.0
    assert any("side conditions" in n for n in plan.notes)
    check_plan("l2p_mw", plan, dict(eps=2.5, delta=1e-5, T=5000, d=5))


def test_sum_of_binomials_reference_is_exact_on_small_n():
    """The reference quantile equals a full convolution where the windows cover everything."""
    for n, qx, qy, d1 in [(37, 0.98, 0.95, 1e-11), (200, 0.3, 0.1, 1e-9), (50, 0.0, 0.5, 1e-6)]:
        full = np.convolve(stats.binom.pmf(np.arange(n + 1), n, qx), stats.binom.pmf(np.arange(n + 1), n, qy))
        tail = np.concatenate([np.cumsum(full[::-1])[::-1][1:], [0.0]])
        assert _sum_of_binomials_quantile(n, qx, qy, d1) == int(np.nonzero(tail <= d1)[0][0])
