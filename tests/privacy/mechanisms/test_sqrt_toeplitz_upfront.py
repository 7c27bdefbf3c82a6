"""SqrtToeplitz.noise_upfront (issue 40): the same noise as the streaming step, from the same per-round keys,
and sqrt_toeplitz_form's choice."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxdp.privacy.mechanisms.matrix_factorization import SqrtToeplitz, sqrt_toeplitz_form


def _streaming(mech, keys, shape, scale, kind, dtype):
    def body(st, k):
        st, w = mech.step(k, st, scale, kind)
        return st, w

    _, ws = jax.lax.scan(body, mech.init(keys.shape[0], shape, dtype), keys)
    return ws


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
@pytest.mark.parametrize("T,shape", [(1, (3,)), (37, (4,)), (64, (2, 3)), (128, ())])
def test_upfront_equals_streaming(T, shape, kind):
    mech = SqrtToeplitz()

    def keys():   # the same keys afresh for each form (the session treats a reused key as an error)
        return jax.random.split(jax.random.key(7), T)

    a = np.asarray(_streaming(mech, keys(), shape, 1.7, kind, jnp.float32))
    b = np.asarray(jax.jit(lambda k: mech.noise_upfront(k, shape, 1.7, kind, jnp.float32))(keys()))
    assert a.shape == b.shape == (T,) + shape
    np.testing.assert_allclose(b, a, rtol=2e-6, atol=2e-6 * np.abs(a).max())
    # the first two rounds involve at most two products each: bit-identical
    np.testing.assert_array_equal(b[:1], a[:1])
    # float64: the same up to the last bits
    with jax.enable_x64(True):
        a64 = np.asarray(_streaming(mech, keys(), shape, 1.7, kind, jnp.float64))
        b64 = np.asarray(mech.noise_upfront(keys(), shape, 1.7, kind, jnp.float64))
    np.testing.assert_allclose(b64, a64, rtol=1e-13, atol=1e-13 * np.abs(a64).max())


def test_upfront_raw_keys_and_vmap_over_seeds():
    mech = SqrtToeplitz()
    a = np.asarray(_streaming(mech, jax.random.split(jax.random.PRNGKey(3), 16), (2,), 1.0, "gaussian",
                              jnp.float32))
    b = np.asarray(mech.noise_upfront(jax.random.split(jax.random.PRNGKey(3), 16), (2,)))   # (16, 2) uint32
    np.testing.assert_allclose(b, a, rtol=2e-6, atol=1e-6)
    keys = jax.vmap(lambda k: jax.random.split(k, 8))(jax.random.split(jax.random.key(0), 5))   # (5, 8)
    out = jax.vmap(lambda ks: mech.noise_upfront(ks, (3,)))(keys)
    assert out.shape == (5, 8, 3)


def test_upfront_refuses_bad_input():
    mech = SqrtToeplitz()
    with pytest.raises(ValueError, match="kind"):
        mech.noise_upfront(jax.random.split(jax.random.key(0), 4), (2,), kind="cauchy")
    with pytest.raises(TypeError, match="shape"):
        mech.noise_upfront(jax.random.split(jax.random.key(0), 4), [2])
    with pytest.raises(ValueError, match="keys"):
        mech.noise_upfront(jax.random.key(0), (2,))


def test_form_choice():
    assert sqrt_toeplitz_form(256, 4, 4096) == "upfront"
    assert sqrt_toeplitz_form(65536, 4, 1) == "streaming"                 # beyond max_T
    assert sqrt_toeplitz_form(4096, 1000, 4096) == "streaming"            # 4096 x 4096 x 1000 floats: too much
    assert sqrt_toeplitz_form(4096, 1000, 4096, memory_bytes=2 ** 40) == "upfront"
    with pytest.raises(ValueError, match="T"):
        sqrt_toeplitz_form(0)
    with pytest.raises(TypeError, match="seeds"):
        sqrt_toeplitz_form(10, 1, 2.5)
