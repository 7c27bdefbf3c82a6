"""Continual-counting mechanisms (jaxdp.privacy.mechanisms.matrix_factorization): reference errors, dense factorizations,
streaming generators against the dense matrices, optimised BLT / banded coefficients."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp.privacy.mechanisms.matrix_factorization import (
    BLT, BandedToeplitz, BinaryTree, HonakerTree, SqrtToeplitz, counter_init, counter_step, get_mechanism,
    optimize_banded, optimize_blt, prefix_matrix, resolve_noise, stored_banded, stored_blt,
)

# reference figures (jax_privacy 2.0.0 and a dense float64 computation; max / rmse over the n prefix queries at
# noise multiplier 1), as quoted: the square root to 6 decimals, the tree to 3
REF = {
    ("sqrt_toeplitz", 1000): (3.265003, 3.102239), ("sqrt_toeplitz", 10000): (3.998010, 3.835611),
    ("tree", 1000): (9.487, 7.027), ("tree", 10000): (13.491, 9.511),
}
REF_BLT = {(1000, 3): (3.269918, 3.105575), (10000, 4): (4.003117, 3.839507)}
REF_BANDED_MEAN = {(1000, 4): (16.041, 11.431), (10000, 4): (50.154, 35.521),
                   (1000, 16): (8.567, 6.278), (10000, 16): (25.477, 18.179)}


@pytest.mark.parametrize("name,n", sorted(REF))
def test_reference_errors(name, n):
    m = get_mechanism(name)
    mx, rm = REF[(name, n)]
    if name == "sqrt_toeplitz":
        assert math.isclose(m.max_error(n), mx, rel_tol=1e-6) and math.isclose(m.rmse(n), rm, rel_tol=1e-6)
        # closed form: max error = sum_{k<n} r_k^2 (C = B = A^{1/2})
        r = np.cumprod(np.concatenate([[1.0], (2 * np.arange(1, n) - 1) / (2 * np.arange(1, n))]))
        assert math.isclose(m.max_error(n), float(np.sum(r * r)), rel_tol=1e-12)
    else:
        # quoted to 3 decimals; the closed forms sqrt(L max popcount), sqrt(L mean popcount) to 1e-12
        assert abs(m.max_error(n) - mx) <= 5e-4 and abs(m.rmse(n) - rm) <= 5e-4
        L = n.bit_length()
        pc = np.array([bin(t).count("1") for t in range(1, n + 1)])
        assert math.isclose(m.max_error(n), math.sqrt(L * pc.max()), rel_tol=1e-12)
        assert math.isclose(m.rmse(n), math.sqrt(L * pc.mean()), rel_tol=1e-12)


def test_exact_reference_digits():
    # the dense float64 computation's full-precision values, to 1e-6 relative
    for m, n, mx, rm in ((SqrtToeplitz(), 1000, 3.265003080672422, 3.1022390635289714),
                         (SqrtToeplitz(), 10000, 3.998010291062364, 3.8356109687565256),
                         (BinaryTree(), 1000, 9.486832980505138, 7.027090436304346),
                         (BinaryTree(), 10000, 13.490737563232042, 9.510951582255059)):
        assert math.isclose(m.max_error(n), mx, rel_tol=1e-6) and math.isclose(m.rmse(n), rm, rel_tol=1e-6)


@pytest.mark.parametrize("n,k", sorted(REF_BLT))
def test_stored_blt_within_half_percent(n, k):
    m = stored_blt(n, k)
    assert m is not None and m.buffers == k
    assert m.max_error(n) <= REF_BLT[(n, k)][0] * 1.005
    assert m.rmse(n) <= REF_BLT[(n, k)][1] * 1.01
    # BLT is within 0.2% of the square root (max error)
    assert m.max_error(n) <= SqrtToeplitz().max_error(n) * 1.002


@pytest.mark.parametrize("n,b", sorted(REF_BANDED_MEAN))
def test_stored_banded_within_half_percent(n, b):
    m = stored_banded(n, b, "mean")
    assert m is not None and m.bands == b and m.coeffs[0] == 1.0
    mx, rm = REF_BANDED_MEAN[(n, b)]
    assert m.rmse(n) <= rm * 1.005 and m.max_error(n) <= mx * 1.005


def test_quick_optimisation_small_n():
    blt, info = optimize_blt(1000, 3, iters=150, return_info=True)
    assert blt.max_error(1000) <= REF_BLT[(1000, 3)][0] * 1.005
    assert info["seconds"] > 0 and abs(info["loss"] - blt.max_error(1000)) < 1e-6 * info["loss"]
    band = optimize_banded(1000, 4, "mean", iters=150)
    assert band.rmse(1000) <= REF_BANDED_MEAN[(1000, 4)][1] * 1.005


def _mechanisms(n):
    return [BinaryTree(), HonakerTree(), SqrtToeplitz(), stored_banded(1000, 4, "mean"), stored_banded(1000, 16, "mean"),
            stored_blt(1000, 3), BLT(theta=(0.5,), omega=(-0.3,)), BandedToeplitz(coeffs=(1.0,))]


@pytest.mark.parametrize("n", [1000, 777])
def test_dense_factorization(n):
    A = prefix_matrix(n)
    for m in _mechanisms(n):
        B, C = m.dense(n)
        np.testing.assert_allclose(B @ C, A, atol=1e-8 * n, err_msg=m.describe())
        assert math.isclose(m.sensitivity(n), np.linalg.norm(C, axis=0).max(), rel_tol=1e-9), m.describe()
        assert math.isclose(m.sensitivity(n, "l1"), np.abs(C).sum(axis=0).max(), rel_tol=1e-9), m.describe()
        np.testing.assert_allclose(m.row_norms_sq(n), np.sum(B * B, axis=1), rtol=1e-9, err_msg=m.describe())
        err = np.linalg.norm(C, axis=0).max() * np.linalg.norm(B, axis=1)
        np.testing.assert_allclose(m.query_errors(n), err, rtol=1e-9)
        assert math.isclose(m.max_error(n), err.max(), rel_tol=1e-9)
        assert math.isclose(m.rmse(n), math.sqrt(np.mean(err ** 2)), rel_tol=1e-9)


def _stream_matrix(m, n, z_fn, kind="gaussian"):
    """Rows M_t of the generator's noise as a linear map of the fresh draws (float64)."""
    with jax.enable_x64(True):
        st = m.init(n, (z_fn(1).shape[-1],), jnp.float64)

        def body(st, t):
            st, w = m.advance(st, z_fn(t), kind)
            return st, w

        _, W = jax.lax.scan(body, st, jnp.arange(1, n + 1))
        return np.asarray(W, np.float64)


@pytest.mark.parametrize("n", [300])
def test_streaming_covariance_equals_dense(n):
    """With unit draws z_t = e_t the generator outputs M (w = M z); its covariance M M^T must equal B B^T: the
    released noise has the law of B z (sens^2 B B^T at noise multiplier 1)."""
    for m in _mechanisms(n):
        with jax.enable_x64(True):
            M = _stream_matrix(m, n, lambda t: jax.nn.one_hot(t - 1, n, dtype=jnp.float64)[None])
        B, C = m.dense(n)
        s2 = m.sensitivity(n) ** 2
        np.testing.assert_allclose(s2 * (M @ M.T), s2 * (B @ B.T), atol=1e-9 * s2 * n, err_msg=m.describe())
        if not isinstance(m, HonakerTree):      # one fresh draw per round indexed by time: M = B exactly
            np.testing.assert_allclose(M, B, atol=1e-9 * n, err_msg=m.describe())


def test_honaker_laplace_path_is_the_estimator():
    """Laplace draws: the generator combines the H level noises of each round; with each closing node's draw set to
    its own unit vector, the output rows are exactly the Honaker estimator B."""
    n = 200
    m = HonakerTree()
    nodes = m.nodes(n)
    idx = {nd: r for r, nd in enumerate(nodes)}
    H = int(n).bit_length()
    Z = np.zeros((n + 1, H, len(nodes)))
    for t in range(1, n + 1):
        i = (t & -t).bit_length() - 1
        for l in range(i + 1):
            Z[t, l, idx[(l, t >> l)]] = 1.0
    with jax.enable_x64(True):
        Zj = jnp.asarray(Z)
        M = _stream_matrix(m, n, lambda t: Zj[t], kind="laplace")
    B, _ = m.dense(n)
    np.testing.assert_allclose(M, B, atol=1e-12)


def test_honaker_reduces_variance():
    n = 4096
    assert HonakerTree().rmse(n) < 0.8 * BinaryTree().rmse(n)
    assert HonakerTree().sensitivity(n) == BinaryTree().sensitivity(n)


def _empirical_var(m, T, S, scale, kind="gaussian", seed=0):
    # scan over rounds, vmap over seeds inside (the key-reuse checker rejects a vmapped scan over key arrays)
    keys = jax.random.split(jax.random.key(seed), (T, S))
    st0 = jax.vmap(lambda _: m.init(T, (4,)))(jnp.arange(S))

    def body(st, ks):
        return jax.vmap(lambda k, s: m.step(k, s, scale, kind))(ks, st)

    _, W = jax.jit(lambda ks: jax.lax.scan(body, st0, ks))(keys)
    W = np.asarray(W, np.float64)                                # (T, S, 4)
    return np.mean(W ** 2, axis=(1, 2)), W.shape[1] * W.shape[2]


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_step_noise_variance(kind):
    """step(key, ...) draws noise of variance scale^2 ||B_t||^2 (x2 for Laplace); a 10% wrong scale is rejected."""
    T, S, scale = 48, 1024, 0.7
    mechs = (BinaryTree(), HonakerTree(), SqrtToeplitz(), stored_blt(1000, 3), stored_banded(1000, 4, "mean"))
    # Laplace: the per-level path of Honaker's tree and the generic recursion
    for m in (mechs if kind == "gaussian" else mechs[1::3]):
        v, N = _empirical_var(m, T, S, scale, kind)
        unit = 2.0 if kind == "laplace" else 1.0
        theory = unit * scale ** 2 * m.row_norms_sq(T)
        # the variance of a squared draw is 2 var^2 (Gaussian) or 5 var^2 (Laplace: kurtosis 6); samples are iid
        se = theory * math.sqrt((2.0 if kind == "gaussian" else 5.0) / N)
        assert np.all(np.abs(v - theory) < 5.3 * se), (m.describe(), np.max(np.abs(v - theory) / se))
        assert np.any(np.abs(v - 1.21 * theory) > 5.3 * se)


def test_counter_step_exact_sums_at_zero_scale():
    rng = np.random.default_rng(0)
    a = jnp.asarray(rng.normal(size=(40, 3)), jnp.float32)
    for m in (HonakerTree(), SqrtToeplitz(), stored_blt(1000, 3)):
        def body(st, xk):
            return counter_step(m, xk[1], st, xk[0], 0.0)
        _, c = jax.lax.scan(body, counter_init(m, 40, (3,)), (a, jax.random.split(jax.random.key(1), 40)))
        np.testing.assert_allclose(np.asarray(c), np.cumsum(np.asarray(a, np.float64), axis=0), atol=1e-5)


def test_carried_bytes_and_rows():
    d, T = 4, 65536
    assert BinaryTree().carried_bytes(T, d) == (17 + 1) * d * 4 + 4
    assert HonakerTree().carried_bytes(T, d) == 17 * d * 4 + 4
    assert SqrtToeplitz().carried_bytes(T, d) == T * d * 4 + 4
    assert stored_blt(10000, 4).carried_bytes(T, d) == 5 * d * 4 + 4
    assert stored_banded(1000, 16, "mean").carried_bytes(T, d) == 16 * d * 4 + 4


def test_ledger_event_and_noise_scale():
    from jaxdp.privacy.accounting import certify

    n = 1000
    for m in (BinaryTree(), HonakerTree(), SqrtToeplitz(), stored_blt(1000, 3)):
        sigma = m.noise_scale(3.0, 2.0, n)
        assert math.isclose(sigma, 3.0 * 2.0 * m.sensitivity(n))
        e = m.ledger_event(sigma, 2.0, n, dim=4)
        assert e.kind == "gaussian" and math.isclose(e.noise_multiplier, 3.0)
        assert math.isclose(certify(e, 1e-6).eps, certify(BinaryTree().ledger_event(
            BinaryTree().noise_scale(3.0, 2.0, n), 2.0, n), 1e-6).eps)
        lap = m.ledger_event(m.noise_scale(2.0, 1.0, n, "l1"), 1.0, n, kind="laplace")
        assert lap.kind == "laplace" and math.isclose(lap.eps, 0.5)


def test_resolve_and_validation():
    assert resolve_noise(None) is None and resolve_noise("tree") is None and resolve_noise(BinaryTree()) is None
    assert isinstance(resolve_noise("honaker"), HonakerTree)
    assert resolve_noise("blt", 1000) == stored_blt(1000, 3)
    with pytest.raises(ValueError, match="mechanism"):
        get_mechanism("toeplitz")
    with pytest.raises(ValueError, match="pass n"):
        get_mechanism("blt")
    with pytest.raises(TypeError, match="noise must be"):
        resolve_noise(3.0)
    with pytest.raises(ValueError, match="theta"):
        BLT(theta=(1.2,), omega=(0.1,))
    with pytest.raises(ValueError, match="one entry per buffer"):
        BLT(theta=(0.5,), omega=(0.1, 0.2))
    with pytest.raises(ValueError, match="coeffs"):
        BandedToeplitz(coeffs=(0.0, 1.0))
    with pytest.raises(ValueError, match="kind"):
        BinaryTree().step(jax.random.key(0), BinaryTree().init(8), 1.0, "cauchy")
    with pytest.raises(ValueError, match="objective"):
        optimize_blt(100, 2, objective="median")
    # hashable: mechanisms are static arguments of the learners' factories
    assert hash(stored_blt(1000, 3)) == hash(BLT(theta=stored_blt(1000, 3).theta, omega=stored_blt(1000, 3).omega))
