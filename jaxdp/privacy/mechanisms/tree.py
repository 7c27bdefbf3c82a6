"""Binary-tree counter for running sums and the tree-aggregation noise of DP-FTRL (docs/algorithms/primitives.md#binary-tree-counter, #tree-aggregation).

Dwork–Naor–Pitassi–Rothblum 2010; Chan–Shi–Song 2011 (the binary mechanism);
REAL Lemma 2.4 and Alg. 3; Kairouz et al. 2021, App. B.1.

Time is 1-indexed, ``t = 1, ..., T_max <= 2^H - 1`` with ``H = floor(log2 T_max) + 1``
(:func:`tree_depth`). The state keeps the exact partial sums ``alpha[H]`` and
the noisy ones ``alpha_hat[H]`` (shape ``(H,) + shape``)::

    step(t, a_t):  i = ctz(t)                                 (lowest set bit of t)
                   alpha[i] = sum_{j<i} alpha[j] + a_t ;  alpha[j] = alpha_hat[j] = 0 for j < i
                   alpha_hat[i] = alpha[i] + Z              Z ~ Lap(b) or N(0, σ² I), one node per step
                   c_t = sum_{j: bit j of t is 1} alpha_hat[j]

so ``c_t - sum_{i<=t} a_i`` is a sum of ``popcount(t)`` independent node
noises: variance ``popcount(t) · 2b²`` (Laplace) or ``popcount(t) · σ²``
(Gaussian) per coordinate.

Privacy: each ``a_t`` enters at most H nodes. With ``|a_t - a'_t| <= Δ`` and
Laplace scale ``b = HΔ/ε`` (:func:`tree_laplace_scale`) the whole output
stream is ε-DP. With Gaussian noise and ``||g_t||_2 <= L`` under replace-one
neighbours, ``σ = L sqrt(2H/ρ*)`` with ``ρ* = (sqrt(ε + ln 1/δ) - sqrt(ln 1/δ))²``
(:func:`tree_aggregation_sigma`, through ``jaxdp.privacy.accounting.gaussian_sigma_zcdp`` and its
``rho_from_eps_delta``) gives (ε, δ)-DP (docs/algorithms/primitives.md#tree-aggregation).

One node-noise draw (shape ``shape``) per step, always; ``scale = 0`` gives
the exact prefix sums.

The node-index arithmetic of every binary tree in the package lives here: :func:`ctz` (the level of the
node that round ``t`` closes), :func:`tree_levels` (that level and the next open one above it) and
:func:`suffix_tree_advance` (the lean form's round: suffix sums of the open nodes' noise, one row read and
one written), which ``jaxdp.privacy.mechanisms.matrix_factorization.BinaryTree`` runs and DP-FTRL's lean
tree (``jaxdp.oco.dp_ftrl.LeanTree``) feeds through that counter. The dense state above (exact and noisy
partial sums of the open nodes) is kept for :func:`tree_step`: its release sums the noisy nodes, so its
floats differ from the lean form's exact-sum-plus-noise by rounding, and the studies' results are its.
"""
from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..accounting.zcdp import gaussian_sigma_zcdp
from ...core.validation import check_delta_open, check_epsilon, check_finite, check_noise_kind, check_scale, check_sensitivity
from ...core.validation import check_positive, check_positive_int

__all__ = [
    "ctz", "tree_levels", "suffix_tree_advance", "TreeState", "tree_depth", "tree_init", "tree_step", "tree_prefix_sums", "tree_laplace_scale",
    "tree_aggregation_sigma", "tree_noise_variance",
]


def ctz(v):
    """Trailing zeros of a positive integer: the level of the tree node that round ``v`` closes.

    The one trailing-zero count of the package. A Python (or NumPy) integer gives a Python ``int``
    (host-side tree layouts); anything else is traced as ``popcount((v & -v) - 1)`` (an ``int32`` array
    of ``H``-bit round counters: no overflow).

    Args:
        v: the round ``t >= 1`` (a Python int, or an integer array, possibly traced).

    Returns:
        ``ctz(v)``: a Python ``int`` for an integer input, else an array of ``v``'s dtype.
    """
    if isinstance(v, (int, np.integer)):
        v = int(v)
        return (v & -v).bit_length() - 1
    return jax.lax.population_count((v & -v) - 1)


def tree_levels(t, H: int):
    """The levels a binary tree's round ``t`` touches: ``i = ctz(t)``, the node that closes, and ``j``, the
    next set bit of ``t`` above ``i`` (the lowest open node still in the release; ``H`` if none).

    Args:
        t: the round ``t >= 1`` (int32, may be traced).
        H: the number of levels (static).

    Returns:
        ``(i, j)``, int32.
    """
    i = ctz(t)
    rest = t & (t - 1)                                   # t without its lowest set bit
    return i, jnp.where(rest == 0, H, ctz(jnp.maximum(rest, 1)))


def suffix_tree_advance(buf: jax.Array, t, x) -> tuple[jax.Array, jax.Array]:
    """One round of the lean binary tree: ``buf[l]`` (``l = 0..H``, ``buf[H] = 0``) is the total noise of the
    open nodes at levels ``>= l``, valid while level ``l`` is open. Round ``t`` closes the node at level
    ``i = ctz(t)`` with fresh noise ``x``; with ``j`` the next open level (:func:`tree_levels`),
    ``buf[i] = buf[j] + x``, which is also the round's noise (the sum over the nodes of ``t``'s expansion).

    Masks, not gather/scatter: under ``vmap`` the levels are per seed, and XLA's batched gather/scatter cost
    more on CPU than one fused pass over the ``H + 1`` rows.

    Args:
        buf: ``(H + 1,) + shape``, the suffix sums after round ``t - 1``.
        t: the round ``t >= 1`` (int32, may be traced).
        x: the new node's noise, of shape ``shape``.

    Returns:
        ``(buf', row)``: the suffix sums after round ``t`` and the round's noise ``buf'[i]``.
    """
    H = buf.shape[0] - 1
    i, j = tree_levels(t, H)
    lev = jnp.arange(H + 1, dtype=jnp.int32).reshape((H + 1,) + (1,) * (buf.ndim - 1))
    row = jnp.sum(jnp.where(lev == j, buf, 0), axis=0) + x
    return jnp.where(lev == i, row[None], buf), row


class TreeState(NamedTuple):
    """Binary-tree counter state (O(H) memory).

    Attributes:
        alpha: ``(H,) + shape``, exact partial sums of the open nodes.
        alpha_hat: ``(H,) + shape``, noisy partial sums of the open nodes.
        t: int32, the number of items added so far.
    """

    alpha: jax.Array       # (H,) + shape, exact partial sums of the open nodes
    alpha_hat: jax.Array   # (H,) + shape, noisy partial sums of the open nodes
    t: jax.Array           # int32, the number of items added so far (the next step is round t + 1)


def tree_depth(T_max: int) -> int:
    """Number of levels ``H = floor(log2 T_max) + 1`` (then ``T_max <= 2^H - 1``).

    Args:
        T_max: the largest round.

    Returns:
        H.
    """
    T_max = check_positive_int("T_max", T_max)
    return int(T_max).bit_length()


def tree_init(H: int, shape: tuple = (), dtype=None) -> TreeState:
    """An empty counter with ``H`` levels for items of shape ``shape`` (rounds ``t <= 2^H - 1``).

    Args:
        H: the number of tree levels.
        shape: the items' shape.
        dtype: the sums' dtype (default: float).

    Returns:
        An empty :class:`TreeState`.
    """
    H = check_positive_int("H", H)
    if not isinstance(shape, tuple) or not all(isinstance(s, int) and s >= 0 for s in shape):
        raise TypeError(f"shape must be a tuple of non-negative ints, got {shape!r}")
    dtype = jnp.result_type(float) if dtype is None else dtype
    z = jnp.zeros((H,) + shape, dtype)
    return TreeState(alpha=z, alpha_hat=z, t=jnp.zeros((), jnp.int32))


def tree_step(key: jax.Array, state: TreeState, a, scale, noise: str = "laplace") -> tuple[TreeState, jax.Array]:
    """Add ``a`` (round ``t = state.t + 1``) and release the noisy prefix sum ``c_t``.

    ``scale`` is the Laplace scale ``b`` or the Gaussian ``σ`` of each node
    (may be traced; 0 = exact). ``noise`` is static. Returns ``(state', c_t)``.

    Args:
        key: JAX PRNG key.
        state: the instance's state.
        a: the item of this round.
        scale: the node noise scale (Laplace ``b`` or Gaussian ``σ``; 0 = exact).
        noise: ``"laplace"`` or ``"gaussian"`` (static).

    Returns:
        ``(state', c_t)``.
    """
    check_noise_kind(noise)
    check_scale(scale)
    check_finite(a, "a")
    H = state.alpha.shape[0]
    item_shape = state.alpha.shape[1:]
    dtype = state.alpha.dtype
    a = jnp.asarray(a, dtype)
    if a.shape != item_shape:
        raise ValueError(f"a must have shape {item_shape} (the counter's item shape), got {a.shape}")
    t = state.t + 1
    levels = jnp.arange(H, dtype=jnp.int32)
    bits = ((t >> levels) & 1).astype(jnp.bool_)
    i = ctz(t)
    i = jnp.where(i < H, i, 0)                               # t = k 2^H, past the horizon: level 0, as before
    expand = (slice(None),) + (None,) * len(item_shape)
    lower = (levels < i)[expand]
    at_i = (levels == i)[expand]
    node = jnp.sum(jnp.where(lower, state.alpha, 0), axis=0) + a
    if noise == "laplace":
        z = jax.random.laplace(key, item_shape, dtype)
    else:
        z = jax.random.normal(key, item_shape, dtype)
    node_hat = node + jnp.asarray(scale, dtype) * z
    alpha = jnp.where(at_i, node[None], jnp.where(lower, 0, state.alpha))
    alpha_hat = jnp.where(at_i, node_hat[None], jnp.where(lower, 0, state.alpha_hat))
    c = jnp.sum(jnp.where(bits[expand], alpha_hat, 0), axis=0)
    return TreeState(alpha=alpha, alpha_hat=alpha_hat, t=t), c


def tree_prefix_sums(key: jax.Array, a_seq, scale, noise: str = "laplace", H: int | None = None) -> jax.Array:
    """Run the counter over a whole stream ``a_seq`` of shape ``(T,) + shape``; return all ``c_1..c_T``.

    Uses ``fold_in(key, t)`` for round ``t`` (1-indexed). ``H`` defaults to :func:`tree_depth` ``(T)``.

    Args:
        key: JAX PRNG key.
        a_seq: the stream, shape ``(T,) + shape``.
        scale: the node noise scale (Laplace ``b`` or Gaussian ``σ``; 0 = exact).
        noise: ``"laplace"`` or ``"gaussian"`` (static).
        H: the number of levels (default :func:`tree_depth` ``(T)``).

    Returns:
        ``c_1..c_T``, shape ``(T,) + shape``.
    """
    check_noise_kind(noise)
    check_scale(scale)
    check_finite(a_seq, "a_seq")
    a_seq = jnp.asarray(a_seq, jnp.result_type(float))
    if a_seq.ndim < 1 or a_seq.shape[0] < 1:
        raise ValueError(f"a_seq must have shape (T, ...) with T >= 1, got {a_seq.shape}")
    T = a_seq.shape[0]
    H = tree_depth(T) if H is None else check_positive_int("H", H)
    if T > 2 ** H - 1:
        raise ValueError(f"H={H} levels hold at most {2 ** H - 1} rounds, got T={T}")

    def body(state, a):
        k = jax.random.fold_in(key, state.t + 1)
        return tree_step(k, state, a, scale, noise)

    _, cs = jax.lax.scan(body, tree_init(H, a_seq.shape[1:], a_seq.dtype), a_seq)
    return cs


def tree_laplace_scale(H: int, eps, sensitivity=1.0) -> float:
    """Per-node Laplace scale ``b = HΔ/ε`` making the whole stream ε-DP (``|a_t - a'_t| <= Δ`` in ℓ1).

    Args:
        H: the number of tree levels.
        eps: the privacy parameter ε.
        sensitivity: ℓ1 bound Δ on one item's change.

    Returns:
        ``b = HΔ/ε``.
    """
    H = check_positive_int("H", H)
    check_epsilon(eps)
    check_sensitivity(sensitivity)
    return H * sensitivity / eps


def tree_aggregation_sigma(L, H: int, eps, delta) -> float:
    """Gaussian node σ for (ε, δ)-DP of the tree (docs/algorithms/primitives.md#tree-aggregation, replace-one, ``||g_t||_2 <= L``).

    Replacing one gradient moves ``<= H`` nodes by ``<= 2L`` each, so the release is
    ``ρ = (2L)² H / (2σ²)``-zCDP (Bun–Steinke Prop. 1.6, Lemma 2.3; Kairouz et al. 2021 App. B.1);
    setting it to ``ρ*(ε, δ) = (sqrt(ε + ln 1/δ) - sqrt(ln 1/δ))²`` gives ``σ = 2L sqrt(H / (2ρ*)) = L sqrt(2H / ρ*)``.
    Host float64; computed by ``jaxdp.privacy.accounting.gaussian_sigma_zcdp(2L, eps, delta, count=H)``, the same
    call as ``jaxdp.privacy.accounting.plan_tree_aggregation``.

    Args:
        L: the gradients' ℓ2 bound.
        H: the number of tree levels.
        eps: the privacy parameter ε.
        delta: the privacy parameter δ.

    Returns:
        σ (host float64).
    """
    check_positive("L", L)
    H = check_positive_int("H", H)
    check_epsilon(eps, allow_inf=False)
    check_delta_open(delta)
    return float(gaussian_sigma_zcdp(2.0 * float(L), float(eps), float(delta), count=H))


def tree_noise_variance(t, scale, noise: str = "laplace"):
    """Per-coordinate variance of ``c_t - sum_{i<=t} a_i``: ``popcount(t)`` times the node variance.

    Args:
        t: the round (1-indexed).
        scale: the node noise scale (Laplace ``b`` or Gaussian ``σ``; 0 = exact).
        noise: ``"laplace"`` or ``"gaussian"`` (static).

    Returns:
        The per-coordinate variance.
    """
    check_noise_kind(noise)
    t = jnp.asarray(t, jnp.int32)
    pc = jax.lax.population_count(t).astype(jnp.result_type(float))
    node_var = 2.0 * jnp.square(scale) if noise == "laplace" else jnp.square(scale)
    return pc * node_var
