r"""Optimising banded and BLT factorizations for the prefix-sum workload (optax L-BFGS, float64).

Both losses are closed forms of the Toeplitz coefficients (``jaxdp.privacy.mechanisms.matrix_factorization.toeplitz``):
with ``s^2 = sum_{k<n} c_k^2`` and ``beta`` the first column of ``B = A C^{-1}``,

.. math::

    {\rm max}^2 = s^2 \sum_{k<n} \beta_k^2, \qquad {\rm mean}^2 = s^2\, \frac1n \sum_{k<n} (n - k)\, \beta_k^2 .

The coefficient sequences are impulse responses of small linear systems (``beta_k = h^T N^k y_0``): for
a banded ``C`` the companion matrix of ``1/c(x)`` with an integrator appended; for a BLT ``C^{-1}``
its buffers with an integrator, and ``c`` the impulse response of ``M = diag(theta) - 1 omega^T``. A
sum of squares of an impulse response is a quadratic form in the finite-horizon Gramian
``G_n = sum_{k<n} N^k y_0 y_0^T N^{kT}``, and the weighted sum of the mean objective one in
``H_n = sum_{i<=n} G_i``; both follow by binary doubling in ``log2 n`` products of
``(k+1) x (k+1)`` matrices (one ``lax.scan`` over the bits of ``n``), so a loss and its gradient cost
``O(k^3 log n)`` and compile to a small graph (no sequence of length ``n`` is formed). The optimiser
minimises the log of the squared loss with ``optax.lbfgs`` (zoom line search) inside one compiled
``lax.scan``.

* BLT (Dvijotham et al. 2024; McKenna 2024): ``theta = sigmoid(a)`` (decays in ``(0, 1)``),
  ``omega`` free. Initialisation: ``1 - theta_j = n^{-(j+1)/(k+1)}`` (decays spread geometrically
  between ``1/n`` and 1, the time scales of ``(1 - x)^{1/2}``) and ``omega_j = -(1 - theta_j)/k``.
* Banded (McKenna et al. 2024): ``c_0 = 1``, ``c_1..c_{b-1}`` free, initialised at the square-root
  coefficients ``r_1..r_{b-1}``.

Every optimisation runs under ``jax.enable_x64(True)`` and returns host floats; nothing else in
the process changes precision.
"""
from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

from ....core.validation import check_choice, check_positive_int
from .toeplitz import BLT, BandedToeplitz, sqrt_coefficients

__all__ = ["blt_loss", "banded_loss", "optimize_blt", "optimize_banded", "OBJECTIVES"]

OBJECTIVES = ("max", "mean")


def _gramians(N, y0, n: int):
    """``(G_n, H_n)`` with ``G_L = sum_{k<L} N^k y0 y0^T N^{kT}`` and ``H_n = sum_{i=1}^n G_i``, by binary
    doubling over the bits of ``n`` (a ``lax.scan`` of ``bit_length(n)`` steps of small matrix products; lengths
    compose as ``G_{a+b} = G_a + N^a G_b N^{aT}``, ``H_{a+b} = H_a + b G_a + N^a H_b N^{aT}``)."""
    E = jnp.outer(y0, y0)
    d = N.shape[0]
    bits = jnp.asarray([(n >> j) & 1 for j in range(max(1, int(n).bit_length()))], jnp.bool_)
    zero = jnp.zeros((d, d), N.dtype)

    def body(carry, bit):
        G, H, P, Gp, Hp, Pp, blk = carry
        # append the current block (length blk = 2^j) after the accumulated length when this bit is set
        H = jnp.where(bit, H + blk * G + P @ Hp @ P.T, H)
        G = jnp.where(bit, G + P @ Gp @ P.T, G)
        P = jnp.where(bit, P @ Pp, P)
        Hp, Gp, Pp = Hp + blk * Gp + Pp @ Hp @ Pp.T, Gp + Pp @ Gp @ Pp.T, Pp @ Pp
        return (G, H, P, Gp, Hp, Pp, 2.0 * blk), None

    init = (zero, zero, jnp.eye(d, dtype=N.dtype), E, E, N, jnp.ones((), N.dtype))
    (G, H, *_), _ = jax.lax.scan(body, init, bits)
    return G, H


def _objective(s2, N, y0, h, n: int, objective: str):
    G, H = _gramians(N, y0, n)
    if objective == "max":
        return s2 * (h @ G @ h)                # s^2 sum_{k<n} beta_k^2
    return s2 * (h @ H @ h) / n                # s^2 (1/n) sum_{i<=n} sum_{k<i} beta_k^2


def blt_loss(theta, omega, n: int, objective: str = "max"):
    """Squared max error (``objective="max"``) or mean squared error of ``C^{-1} = BLT(theta, omega)`` over ``n``
    rounds (jnp, differentiable; module docstring).

    ``beta`` is the last output of ``y_{k+1} = N y_k``, ``N = [[diag(theta), 0], [omega^T, 1]]``,
    ``y_0 = (1, ..., 1)``; ``c_k = -omega^T M^{k-1} 1`` with ``M = diag(theta) - 1 omega^T``, so
    ``s^2 = 1 + omega^T G^M_{n-1} omega``.

    Args:
        theta: the ``k`` buffer decays, shape ``(k,)`` (in ``(0, 1)`` for a stable BLT).
        omega: the ``k`` output weights, shape ``(k,)``.
        n: the number of rounds (static).
        objective: ``"max"`` (``s^2 sum_{k<n} beta_k^2``) or ``"mean"`` (``s^2 (1/n) sum_k (n - k) beta_k^2``).

    Returns:
        The squared loss, a 0-d array in ``theta``'s dtype.
    """
    k = theta.shape[0]
    one = jnp.ones_like(theta)
    M = jnp.diag(theta) - jnp.outer(one, omega)
    GM, _ = _gramians(M, one, n - 1) if n > 1 else (jnp.zeros((k, k), theta.dtype), None)
    s2 = 1.0 + omega @ GM @ omega
    N = jnp.zeros((k + 1, k + 1), theta.dtype).at[:k, :k].set(jnp.diag(theta)).at[k, :k].set(omega).at[k, k].set(1.0)
    y0 = jnp.ones(k + 1, theta.dtype)
    h = jnp.zeros(k + 1, theta.dtype).at[k].set(1.0)
    return _objective(s2, N, y0, h, n, objective)


def banded_loss(tail, n: int, objective: str = "mean"):
    """Squared max error or mean squared error of the banded ``C`` with first column ``(1, tail)`` (jnp).

    ``beta`` is the last output of the companion recursion of ``1/c(x)`` with an integrator appended.

    Args:
        tail: the coefficients ``c_1, ..., c_{b-1}`` below the unit diagonal, shape ``(b - 1,)``.
        n: the number of rounds (static).
        objective: ``"max"`` or ``"mean"`` (module docstring).

    Returns:
        The squared loss, a 0-d array in ``tail``'s dtype.
    """
    m = tail.shape[0]
    s2 = 1.0 + jnp.sum(tail * tail)
    N = jnp.zeros((m + 1, m + 1), tail.dtype).at[m, m].set(1.0)
    y0 = jnp.zeros(m + 1, tail.dtype).at[m].set(1.0)
    if m:
        N = N.at[0, :m].set(-tail).at[m, :m].set(-tail)
        if m > 1:
            N = N.at[1:m, :m - 1].set(jnp.eye(m - 1, dtype=tail.dtype))
        y0 = y0.at[0].set(1.0)
    h = jnp.zeros(m + 1, tail.dtype).at[m].set(1.0)
    return _objective(s2, N, y0, h, n, objective)


def _lbfgs(loss, x0, iters: int):
    import optax

    opt = optax.lbfgs()
    vg = optax.value_and_grad_from_state(loss)

    def body(carry, _):
        x, st = carry
        v, g = vg(x, state=st)
        u, st = opt.update(g, st, x, value=v, grad=g, value_fn=loss)
        return (optax.apply_updates(x, u), st), v

    @jax.jit
    def run(x0):
        (x, _), vals = jax.lax.scan(body, (x0, opt.init(x0)), None, length=iters)
        return x, vals

    x, vals = run(x0)
    return np.asarray(x, np.float64), float(np.exp(0.5 * vals[-1]))   # the loss is log of the squared error


def optimize_blt(n: int, buffers: int, objective: str = "max", iters: int = 300, init=None,
                 return_info: bool = False):
    """A :class:`BLT` with ``buffers`` buffers minimising the max error (or the mean squared error) over ``n``
    rounds (module docstring). ``init``: an optional :class:`BLT` to start from. With ``return_info`` also
    returns ``{"seconds", "loss", "iters"}``.

    Args:
        n: the number of rounds (``>= 2``).
        buffers: the number of buffers ``k``.
        objective: ``"max"`` (max error, the default) or ``"mean"`` (root mean squared error).
        iters: L-BFGS iterations.
        init: a :class:`BLT` with ``buffers`` buffers and decays in ``(0, 1)`` to start from; ``None``: the
            geometric initialisation of the module docstring.
        return_info: also return the run's information.

    Returns:
        The optimised :class:`BLT`, or ``(blt, info)`` with ``info = {"seconds": wall time, "loss": the max error
        or RMSE (not squared) at the last evaluated iterate, "iters": iters}``.

    Raises:
        ValueError: invalid ``n``, ``buffers``, ``iters``, ``objective`` or ``init``.
    """
    n = check_positive_int("n", n, minimum=2)
    k = check_positive_int("buffers", buffers)
    iters = check_positive_int("iters", iters)
    check_choice("objective", objective, list(OBJECTIVES))
    t0 = time.perf_counter()
    with jax.enable_x64(True):
        if init is None:
            one_minus = float(n) ** (-(np.arange(k) + 1.0) / (k + 1))
            th0 = 1.0 - one_minus
            om0 = -one_minus / k
        else:
            if not isinstance(init, BLT) or init.buffers != k:
                raise ValueError(f"init must be a BLT with {k} buffers, got {init!r}")
            th0, om0 = np.asarray(init.theta), np.asarray(init.omega)
            if np.any(th0 <= 0):
                raise ValueError(f"init.theta must lie in (0, 1) for this parameterisation, got {init.theta}")
        x0 = jnp.asarray(np.concatenate([np.log(th0 / (1.0 - th0)), om0]), jnp.float64)

        def loss(x):
            return jnp.log(blt_loss(jax.nn.sigmoid(x[:k]), x[k:], n, objective))

        x, best = _lbfgs(loss, x0, iters)
    mech = BLT(theta=tuple(1.0 / (1.0 + np.exp(-x[:k]))), omega=tuple(x[k:]))
    info = {"seconds": time.perf_counter() - t0, "loss": best, "iters": iters}
    return (mech, info) if return_info else mech


def optimize_banded(n: int, bands: int, objective: str = "mean", iters: int = 300, return_info: bool = False):
    """A :class:`BandedToeplitz` with ``bands`` bands (``c_0 = 1``) minimising the mean squared error (default)
    or the max error over ``n`` rounds (module docstring).

    Args:
        n: the number of rounds (``>= 2``).
        bands: the number of bands ``b`` (1: the identity ``C``, nothing to optimise).
        objective: ``"mean"`` (root mean squared error, the default) or ``"max"``.
        iters: L-BFGS iterations, started from the square-root coefficients ``r_1..r_{b-1}``.
        return_info: also return the run's information.

    Returns:
        The optimised :class:`BandedToeplitz`, or ``(mech, info)`` with ``info = {"seconds", "loss", "iters"}``
        as in :func:`optimize_blt`.

    Raises:
        ValueError: invalid ``n``, ``bands``, ``iters`` or ``objective``.
    """
    n = check_positive_int("n", n, minimum=2)
    b = check_positive_int("bands", bands)
    iters = check_positive_int("iters", iters)
    check_choice("objective", objective, list(OBJECTIVES))
    t0 = time.perf_counter()
    if b == 1:
        mech = BandedToeplitz(coeffs=(1.0,))
        info = {"seconds": 0.0, "loss": mech.max_error(n) if objective == "max" else mech.rmse(n), "iters": 0}
        return (mech, info) if return_info else mech
    with jax.enable_x64(True):
        x0 = jnp.asarray(sqrt_coefficients(b)[1:], jnp.float64)

        def loss(x):
            return jnp.log(banded_loss(x, n, objective))

        x, best = _lbfgs(loss, x0, iters)
    mech = BandedToeplitz(coeffs=(1.0,) + tuple(x))
    info = {"seconds": time.perf_counter() - t0, "loss": best, "iters": iters}
    return (mech, info) if return_info else mech
