"""DP-FTRL's lean tree aggregation (O(d) bytes moved per round) releases what the dense binary tree
(``jaxdp.privacy.mechanisms.tree_step``) releases with the same node noises, up to float rounding."""
import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.privacy.mechanisms import tree_init, tree_step
from jaxdp.oco.dp_ftrl import _lean_tree_init, _lean_tree_step


def _releases(H, d, T, sigma, seed, lean_step):
    rng = np.random.default_rng(seed)
    g = jnp.asarray(rng.normal(size=(T, d)), jnp.float32)
    keys = jax.random.split(jax.random.key(seed), T)

    def dense(c, kg):
        return tree_step(kg[0], c, kg[1], sigma, noise="gaussian")

    def lean(c, kg):
        return lean_step(kg[0], c, kg[1], sigma, H)

    a = jax.jit(lambda k: jax.lax.scan(dense, tree_init(H, (d,)), (k, g))[1])(jax.random.clone(keys))
    b = jax.jit(lambda k: jax.lax.scan(lean, _lean_tree_init(H, d), (k, g))[1])(jax.random.clone(keys))
    return np.asarray(a, np.float64), np.asarray(b, np.float64)


def test_lean_tree_equals_dense_tree():
    for H, T in ((6, 63), (4, 10)):
        a, b = _releases(H, 3, T, 0.7, H, _lean_tree_step)
        np.testing.assert_allclose(b, a, atol=2e-5 * max(1.0, np.abs(a).max()))


def test_a_lean_tree_that_drops_older_nodes_is_caught():
    def broken(key, tree, g, sigma, H):            # forgets the open nodes above the closing one
        return _lean_tree_step(key, tree._replace(C=jnp.zeros_like(tree.C)), g, sigma, H)

    a, b = _releases(5, 3, 31, 0.7, 1, broken)
    assert np.abs(a - b).max() > 0.1
