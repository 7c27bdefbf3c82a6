"""One implementation per formula: ρ*(ε, δ), the Gaussian σ calibrations, the tree σ, and the theory
curves the studies draw are each computed in one place, and every other caller goes through it."""
import ast
import itertools
import math
import pathlib

import numpy as np
import pytest

import jaxdp
import jaxdp.privacy.accounting as A
import jaxdp.privacy.mechanisms as M

mpmath = pytest.importorskip("mpmath")

SRC = pathlib.Path(jaxdp.__file__).parent
EPS_GRID = np.geomspace(1e-6, 50.0, 41)
DELTA_GRID = np.concatenate([np.geomspace(1e-300, 1e-10, 9), np.geomspace(1e-9, 0.5, 12)])


# ----------------------------------------------------------------------------------------- ρ*(ε, δ)
def _rho_star_mp(eps: float, delta: float):
    """(sqrt(ε + L) − sqrt(L))², L = ln(1/δ), at 60 significant digits (the float inputs taken exactly)."""
    with mpmath.workdps(60):
        L = mpmath.log(1 / mpmath.mpf(delta))
        return (mpmath.sqrt(mpmath.mpf(eps) + L) - mpmath.sqrt(L)) ** 2


def test_rho_star_matches_high_precision():
    worst = 0.0
    for eps, delta in itertools.product(EPS_GRID, DELTA_GRID):
        got = A.rho_from_eps_delta(float(eps), float(delta))
        ref = _rho_star_mp(float(eps), float(delta))
        worst = max(worst, float(abs(mpmath.mpf(got) - ref) / ref))
    assert worst <= 1e-12, worst
    # the array path is the same computation
    arr = A.rho_from_eps_delta(EPS_GRID[:, None], DELTA_GRID[None, :])
    assert arr.shape == (EPS_GRID.size, DELTA_GRID.size)
    assert arr[3, 5] == A.rho_from_eps_delta(float(EPS_GRID[3]), float(DELTA_GRID[5]))


def test_rho_star_inverts_bun_steinke():
    for eps, delta in [(1e-6, 1e-300), (0.3, 1e-8), (1.0, 1e-5), (50.0, 0.5)]:
        rho = A.rho_from_eps_delta(eps, delta)
        assert A.eps_from_rho(rho, delta) == pytest.approx(eps, rel=1e-12)


def test_cancelling_form_is_not_accurate_enough():
    """Why the stable form: (sqrt(ε + L) − sqrt(L))² in float64 is off by ~1e-4 at ε = 1e-9, δ = 1e-300."""
    eps, delta = 1e-9, 1e-300
    L = math.log(1 / delta)
    naive = (math.sqrt(eps + L) - math.sqrt(L)) ** 2
    ref = _rho_star_mp(eps, delta)
    assert float(abs(mpmath.mpf(naive) - ref) / ref) > 1e-6
    assert float(abs(mpmath.mpf(A.rho_from_eps_delta(eps, delta)) - ref) / ref) <= 1e-12


def _is_sqrt_call(node) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr == "sqrt") or (isinstance(f, ast.Name) and f.id == "sqrt")


def _sqrt_sum_pairs(op):
    """``sqrt(a + b) <op> sqrt(c)`` expressions (code only, docstrings excluded) in the package source."""
    hits = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (isinstance(node, ast.BinOp) and isinstance(node.op, op) and _is_sqrt_call(node.left)
                    and _is_sqrt_call(node.right) and node.left.args
                    and isinstance(node.left.args[0], ast.BinOp) and isinstance(node.left.args[0].op, ast.Add)):
                hits.append(f"{path.relative_to(SRC)}:{node.lineno}")
    return hits


def test_rho_star_has_exactly_one_definition():
    # no cancellation-prone copy sqrt(ε + L) − sqrt(L) anywhere in the package ...
    assert _sqrt_sum_pairs(ast.Sub) == []
    # ... and the stable ε² / (sqrt(ε + L) + sqrt(L))² exactly once, in jaxdp/accounting/zcdp.py
    hits = _sqrt_sum_pairs(ast.Add)
    assert len(hits) == 1 and hits[0].startswith("privacy/accounting/zcdp.py:"), hits
    # the mechanisms' name is a caller of it, bit for bit
    for eps, delta in [(1e-6, 1e-300), (1e-9, 1e-300), (0.5, 1e-6), (50.0, 1e-5)]:
        assert M.gaussian_rho_star(eps, delta) == A.rho_from_eps_delta(eps, delta)


# ---------------------------------------------------------------------------------- exact Gaussian ε
def _gaussian_delta_mp(eps, m):
    with mpmath.workdps(60):
        eps, m = mpmath.mpf(eps), mpmath.mpf(m)
        return mpmath.ncdf(1 / (2 * m) - eps * m) - mpmath.e ** eps * mpmath.ncdf(-1 / (2 * m) - eps * m)


def _gaussian_eps_mp(delta, m):
    """The root of the 60-digit profile by bisection (the reference is derived from Balle-Wang Thm 8 alone)."""
    with mpmath.workdps(60):
        if _gaussian_delta_mp(0, m) <= delta:
            return mpmath.mpf(0)
        lo, hi = mpmath.mpf(0), mpmath.mpf(1)
        while _gaussian_delta_mp(hi, m) > delta:
            hi *= 2
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if _gaussian_delta_mp(mid, m) > delta else (lo, mid)
        return hi


def test_exact_gaussian_eps_is_one_function_accurate_and_safe():
    from jaxdp.privacy.accounting import ledger as LG
    from jaxdp.privacy.audit import exact as X

    for m, delta in itertools.product((0.05, 0.3, 1.0, 3.0, 30.0), (1e-3, 1e-6, 1e-10, 1e-30, 1e-100)):
        got = A.gaussian_eps_exact(1.0, m, delta)
        ref = _gaussian_eps_mp(delta, m)
        assert got >= float(ref) * (1 - 1e-13), (m, delta)     # not below the true ε beyond float rounding
        assert float(abs(mpmath.mpf(got) - ref)) <= 2e-12 * max(float(ref), 1e-3), (m, delta)
        # the auditors' and the accountant's exact Gaussian ε are this function, bit for bit
        assert X.gaussian_eps(delta, 2.0 * m, 2.0) == A.gaussian_eps_exact(2.0, 2.0 * m, delta)
        cert = A.certify(LG.sequential(LG.gaussian(m)), delta)
        assert cert.bound != "gaussian" or cert.eps == got
    # one definition of the profile and of its root in the package; dp_accounting's copy is not called
    src = {f: f.read_text() for f in SRC.rglob("*.py")}
    assert [f.name for f, s in src.items() if "def gaussian_delta(" in s] == ["zcdp.py"]
    assert [f.name for f, s in src.items() if "def gaussian_eps_exact(" in s] == ["zcdp.py"]
    assert not [f for f, s in src.items() if "get_epsilon_gaussian(" in s]


# -------------------------------------------------------------------------------------- Gaussian σ
SIGMA_EPS = [1e-6, 1e-3, 0.1, 0.5, 0.99, 1.0, 1.5, 2.0, 8.0, 50.0]
SIGMA_DELTA = [1e-300, 1e-12, 1e-5, 0.1, 0.5]


@pytest.mark.parametrize("sens", [0.25, 1.0, 3.0])
def test_mechanism_sigma_is_accounting_sigma(sens):
    acc = {"zcdp": A.gaussian_sigma_zcdp, "dr": A.gaussian_sigma_dr, "paper": A.gaussian_sigma_growth}
    for eps, delta, method in itertools.product(SIGMA_EPS, SIGMA_DELTA, acc):
        try:
            want = float(acc[method](sens, eps, delta))
        except ValueError:
            with pytest.raises(ValueError):
                M.gaussian_sigma(sens, eps, delta, method)
            continue
        assert M.gaussian_sigma(sens, eps, delta, method) == want
    # the refusals: Dwork–Roth for eps >= 1, the GROWTH Lemma 2.3 form for eps > 1 — in both modules
    for f in (lambda: A.gaussian_sigma_dr(1.0, 1.0, 1e-5), lambda: M.gaussian_sigma(1.0, 1.0, 1e-5, "dr")):
        with pytest.raises(ValueError, match="eps < 1"):
            f()
    for f in (lambda: A.gaussian_sigma_growth(1.0, 2.0, 1e-5), lambda: M.gaussian_sigma(1.0, 2.0, 1e-5, "paper")):
        with pytest.raises(ValueError, match="eps <= 1"):
            f()
    assert M.gaussian_sigma(1.0, 1.0, 1e-5, "paper") == A.gaussian_sigma_growth(1.0, 1.0, 1e-5)


def test_growth_sigma_above_one_is_refused_because_it_underdelivers():
    """At ε = 50 the Lemma 2.3 σ gives ε ≈ 55 (exact analytic Gaussian): the refusal is needed."""
    s = A.gaussian_sigma_growth(1.0, 50.0, 1e-5, allow_eps_above_1=True)
    assert s == pytest.approx(2 * math.sqrt(math.log(2e5)) / 50.0, rel=1e-14)
    assert A.gaussian_eps_exact(1.0, s, 1e-5) > 50.0
    for eps in [0.05, 0.5, 1.0]:
        assert A.gaussian_eps_exact(1.0, A.gaussian_sigma_growth(1.0, eps, 1e-5), 1e-5) <= eps


def test_plan_gaussian_paper_keeps_its_certificate_above_one():
    """``plan_gaussian(mode="paper")`` still evaluates the formula at ε/T > 1; its ε_certified is the accountant's."""
    for eps, T in [(4.0, 1), (50.0, 1), (4.0, 2)]:
        p = A.plan_gaussian(eps=eps, delta=1e-5, T=T, mode="paper", sensitivity=3.0)
        s = p.params["sigma"]
        assert s == A.gaussian_sigma_growth(3.0, eps / T, 1e-5 / T, allow_eps_above_1=True)
        exact = A.gaussian_eps_exact(3.0 * math.sqrt(T), s, 1e-5)
        assert p.eps_certified == pytest.approx(exact, rel=1e-8)
        assert p.certified == (p.eps_certified <= eps * (1 + 1e-9))
    assert not A.plan_gaussian(eps=50.0, delta=1e-5, T=1, mode="paper").certified


def test_composed_gaussian_and_tree_sigma_single_source():
    for eps, delta, T in itertools.product([1e-3, 0.5, 1.0, 4.0], [1e-300, 1e-8, 1e-2], [1, 7, 1000, 1024]):
        H = A.tree_levels(T)
        for L in (0.5, 2.0):
            s_mech = M.tree_aggregation_sigma(L, H, eps, delta)
            s_plan = A.plan_tree_aggregation(eps=eps, delta=delta, T=T, L=L, mode="certified").params["sigma"]
            assert s_mech == s_plan == A.gaussian_sigma_zcdp(2.0 * L, eps, delta, count=H)
            assert s_mech == pytest.approx(L * math.sqrt(2 * H / A.rho_from_eps_delta(eps, delta)), rel=1e-13)
        s_z = A.plan_gaussian(eps=eps, delta=delta, T=T, mode="certified", method="zcdp", sensitivity=3.0)
        assert s_z.params["sigma"] == A.gaussian_sigma_zcdp(3.0, eps, delta, count=T)
    assert A.gaussian_sigma_zcdp(2.0, 0.7, 1e-6, count=1) == A.gaussian_sigma_zcdp(2.0, 0.7, 1e-6)
    with pytest.raises(ValueError, match="count must be an integer >= 1"):
        A.gaussian_sigma_zcdp(1.0, 1.0, 1e-5, count=1.5)


# ------------------------------------------------------------------------------- the studies' theory curves
def test_realizable_oco_theory_is_the_library_bound():
    from jaxdp.oco import dp_ftrl_regret_bound
    from jaxdp.oco.realizable import realizable_dp_ftrl_bound
    from jaxdp.studies import realizable_oco as R

    cfg = dict(R.DEFAULTS)
    D, L = cfg["D"], 2.0 * cfg["D"]   # squared losses on REAL's realizable instance: Lipschitz 2D
    T = np.array([256.0, 1024.0, 8192.0, 32768.0])
    for d, eps in [(1, 1.0), (4, 4.0), (32, 16.0)]:
        for env, setting in (("realizable", "realizable"), ("noisy", "general")):
            want = dp_ftrl_regret_bound(T, d, eps, cfg["delta"], L, D, R.BETA, setting=setting)
            np.testing.assert_array_equal(realizable_dp_ftrl_bound(env, T, d, eps, cfg["delta"], D, R.BETA), want)
        # the general (noisy) curve: LD (sqrt(T) + sqrt(T sqrt(d)/eps)) (units of L D in both terms)
        np.testing.assert_allclose(realizable_dp_ftrl_bound("noisy", T, d, eps, cfg["delta"], D, R.BETA),
                                   L * D * (np.sqrt(T) + np.sqrt(T * np.sqrt(d) / eps)), rtol=1e-14)


def test_realizable_studies_use_the_library_matched_lambda():
    from jaxdp.privacy.mechanisms import tree_depth
    from jaxdp.oco import dp_ftrl_lambda, dp_ftrl_lambda_matched, plan_dp_ftrl
    from jaxdp.oco.realizable import realizable_dp_ftrl
    from jaxdp.studies import realizable_oco as R

    cfg = dict(R.DEFAULTS)
    D = cfg["D"]
    for T, d, eps in [(1024, 4, 4.0), (8192, 16, 1.0)]:
        kw = dict(T=T, d=d, eps=eps, delta=cfg["delta"], mode=cfg["mode"], D=D, beta=R.BETA)
        lam, sigma, _, _ = realizable_dp_ftrl("realizable", lam_rule=cfg["lam_rule"], **kw)
        assert lam == dp_ftrl_lambda_matched(T, d, tree_depth(T), sigma, D, R.BETA)
        assert lam == 32.0 * R.BETA + (R.BETA * T * d * tree_depth(T) * sigma ** 2 / D ** 2) ** (1 / 3)
        lam4, _, _, _ = realizable_dp_ftrl("realizable", lam_rule="thm4", **kw)
        plan = plan_dp_ftrl(eps=eps, delta=cfg["delta"], T=T, d=d, mode=cfg["mode"], L=2.0 * D, D=D,
                            beta=R.BETA)
        assert lam4 == plan.params["lam"] == dp_ftrl_lambda(T, d, eps, cfg["delta"], 2.0 * D, D, R.BETA)


def test_lazy_and_hedge_study_curves_are_the_library_ones():
    from jaxdp.experts import hedge_eta, hedge_regret_bound
    from jaxdp.experts import alternating_prediction, figure1_exponents, l2p_mw_regret_bound
    from jaxdp.oco import figure1_oco_exponent
    from jaxdp.experts.hedge import hedge_tuned_regret_bound
    from jaxdp.experts.lazy_setups import batching_terms

    for panel, alpha in itertools.product("ab", [0.0, 0.1, 0.3, 0.5, 0.9, 1.5]):
        ex = figure1_exponents(alpha, panel)
        assert figure1_oco_exponent("l2p_rmw", panel, alpha) == float(ex["L2P"])
        assert figure1_oco_exponent("dp_ftrl", panel, alpha) == float(ex["KMS+21 (DP-FTRL)"])
        assert figure1_oco_exponent("nonprivate", panel, alpha) == 0.5
    # the old closed forms of the study
    assert figure1_oco_exponent("l2p_rmw", "a", 0.1) == 0.5
    assert figure1_oco_exponent("l2p_rmw", "b", 0.3) == pytest.approx(0.5 + 0.2)
    assert figure1_oco_exponent("dp_ftrl", "b", 0.9) == 1.0

    for T, B, eta, d in [(2 ** 14, 50, 1e-3, 2), (2 ** 20, 3, 0.02, 10)]:
        t = batching_terms(T, B, eta, d)
        assert t["valid_bound"] == float(l2p_mw_regret_bound(d, T, eta, B))
        assert t["valid_bound"] == pytest.approx(math.log(d) / eta + T * B * eta / 8, rel=1e-14)
        assert t["tanh_exact"] == float(alternating_prediction(T, eta, B))
        assert t["tanh_exact"] == pytest.approx(T / 4 * math.tanh(eta * B / 2), rel=1e-14)

    for d, T in [(2, 1), (10, 256), (100, 8192)]:
        b = hedge_tuned_regret_bound(d, T)
        assert b == hedge_regret_bound(d, T, hedge_eta(d, T))
        assert b == pytest.approx(math.sqrt(T * math.log(d) / 2), rel=1e-14)


# ------------------------------------------------------------------------- binary-tree index arithmetic
def _is_neg_of(node, operand) -> bool:
    return (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
            and ast.dump(node.operand) == ast.dump(operand))


def test_trailing_zero_count_is_defined_once():
    """``ctz`` (the level of the node a round closes) is computed in one place,
    ``jaxdp.privacy.mechanisms.tree.ctz``: no ``v & -v`` or ``argmax`` over a round's bits, and no
    ``ctz``-named function, anywhere else in the package (DP-FTRL's lean tree, the matrix-factorization trees
    and the classic tree each had their own)."""
    hits, defs = [], []
    for path in sorted(SRC.rglob("*.py")):
        rel = str(path.relative_to(SRC))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd)
                    and (_is_neg_of(node.right, node.left) or _is_neg_of(node.left, node.right))):
                hits.append(f"{rel}:{node.lineno}")
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "argmax"
                    and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == "bits"):
                hits.append(f"{rel}:{node.lineno}")
            if isinstance(node, ast.FunctionDef) and "ctz" in node.name.lower():
                defs.append(f"{rel}:{node.name}")
    assert defs == ["privacy/mechanisms/tree.py:ctz"], defs
    assert hits and all(h.startswith("privacy/mechanisms/tree.py:") for h in hits), hits
    assert len(hits) == 2, hits          # ctz's host (Python int) and traced forms


def test_ctz_host_and_traced_forms_agree():
    import jax.numpy as jnp

    from jaxdp.privacy.mechanisms.matrix_factorization import BinaryTree
    from jaxdp.privacy.mechanisms.tree import ctz, tree_levels

    t = np.arange(1, 4097)
    host = [ctz(int(v)) for v in t]
    assert host == [(int(v) & -int(v)).bit_length() - 1 for v in t]
    assert np.asarray(ctz(jnp.asarray(t, jnp.int32))).tolist() == host
    i, j = tree_levels(jnp.asarray(t, jnp.int32), 13)
    rest = t & (t - 1)
    assert np.asarray(i).tolist() == host
    assert np.asarray(j).tolist() == [13 if r == 0 else ctz(int(r)) for r in rest]
    # the binary-tree counter's dense C closes the node of level ctz(t) at round t
    _, C = BinaryTree().dense(12)
    assert [int(C[t - 1].sum()) for t in range(1, 13)] == [1 << h for h in host[:12]]
