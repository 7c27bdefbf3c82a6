r"""Toeplitz factorizations of the prefix-sum workload: square-root, banded and buffered-linear (BLT).

All three are *lower-triangular Toeplitz*: ``C`` has first column ``c_0, c_1, ...`` and
``B = A C^{-1}`` first column ``beta_k = sum_{m<=k} chat_m``, ``chat`` the coefficients of the
power series ``1 / c(x)`` (so ``beta(x) = 1 / ((1 - x) c(x))``). Then, over ``n`` rounds,

.. math::

    {\rm sens}(C) = \Big(\sum_{k<n} c_k^2\Big)^{1/2}\ \text{(column 1 is the longest)},\qquad
    \|B_i\|_2^2 = \sum_{k<i} \beta_k^2,

so the max error is ``sens(C) ||beta_{<n}||`` and the rmse ``sens(C) (sum_k (n - k) beta_k^2 / n)^{1/2}``.
The noise generator streams ``w = C^{-1} z`` (the noise "added to the inputs") and releases its
running sum ``(A C^{-1} z)_t = (B z)_t``.

* **Square root** (Fichtenberger, Henzinger & Upadhyay 2023; Henzinger, Upadhyay & Upadhyay 2023;
  Denisov et al. 2022 for the optimal-factorization view): ``C = B = A^{1/2}``, coefficients of
  ``(1 - x)^{-1/2}``: ``r_k = binom(2k, k) / 4^k`` (``r_k ~ 1/sqrt(pi k)``). Max error
  ``sum_{k<n} r_k^2 = ln(n)/pi + O(1)``, within ``1 + o(1)`` of optimal for the max error.
  ``C^{-1}`` has infinitely many coefficients, so the generator keeps every past draw:
  ``T_max`` rows of state and ``O(T_max)`` work per round (``buf[s] = z_{s+1}``, each row written once,
  and ``w_t = sum_{s<t} r_{t-1-s} buf[s]``; rounds beyond ``T_max`` are not supported).
  Its noise does not depend on the data, so it can also be drawn **up front**
  (:meth:`SqrtToeplitz.noise_upfront`): a seed's ``T`` draws (from the same per-round keys) times the
  ``T x T`` Toeplitz square root in one matrix product, the same noise to float rounding. Which to use
  (:func:`sqrt_toeplitz_form`): up front when the whole ``(seeds, T, d)`` noise and the ``T x T`` matrix fit
  in memory (benchmarks/MF.md: at ``S = 4096, T = 256, d = 4`` it is about 10x faster than streaming,
  faster than the tree); streaming for large ``T`` or when the noise must be drawn round by round inside a
  learner (the DP-FTRL learners, and so the ``mf-ftrl`` study, use the streaming form).
* **Banded** (McKenna et al. 2024, "Scaling up the banded matrix factorization mechanism for
  differentially private ML"; Kalinin & Lampert 2024): ``C`` has ``b`` bands, ``c(x) = c_0 + ... +
  c_{b-1} x^{b-1}``. The generator solves ``C w = z`` by the ``b - 1``-term recursion
  ``c_0 w_t = z_t - sum_{k=1}^{b-1} c_k w_{t-k}`` (``b`` rows of state: ``b - 1`` past ``w`` and the running
  sum). The coefficients are optimised for the mean or the max error (:func:`optimize_banded`).
* **BLT, buffered linear Toeplitz** (Dvijotham, McMahan, Pillutla, Steinke & Thakurta 2024,
  "Efficient and near-optimal noise generation for streaming differential privacy"; McKenna 2024):
  ``C^{-1}`` is a BLT, ``chat_0 = 1``, ``chat_k = sum_j omega_j theta_j^{k-1}`` (``k >= 1``), i.e.
  ``C^{-1}(x) = 1 + sum_j omega_j x / (1 - theta_j x)``. The generator keeps one buffer per ``j``:
  ``w_t = z_t + sum_j omega_j s_j;  s_j <- theta_j s_j + z_t`` (``k + 1`` rows of state). ``C`` is the
  inverse system, again a BLT: with ``M = diag(theta) - 1 omega^T``, ``c_k = -omega^T M^{k-1} 1``
  (``k >= 1``). The parameters are optimised for the max error (:func:`optimize_blt`); a few buffers
  come within 0.2% of the square root at ``n = 10^4``.
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import ClassVar

import jax
import jax.numpy as jnp
import numpy as np

from ....core.validation import check_positive_int
from .base import ContinualCounter, CounterState, _check_kind, impulse_np, toeplitz_lower

__all__ = ["ToeplitzCounter", "SqrtToeplitz", "BandedToeplitz", "BLT", "sqrt_coefficients", "inverse_series",
           "sqrt_toeplitz_form"]


@functools.lru_cache(maxsize=32)
def _sqrt_coeffs(n: int) -> np.ndarray:
    k = np.arange(1, n, dtype=np.float64)
    return np.concatenate([[1.0], np.cumprod((2 * k - 1) / (2 * k))])


def sqrt_coefficients(n: int) -> np.ndarray:
    """``r_0..r_{n-1}``, the coefficients of ``(1 - x)^{-1/2}``: ``r_k = binom(2k, k)/4^k`` (float64).

    Args:
        n: the number of coefficients (``>= 1``).

    Returns:
        A fresh float64 array of shape ``(n,)`` (``r_0 = 1``, ``r_1 = 1/2``, ``r_2 = 3/8``, ...).
    """
    return _sqrt_coeffs(check_positive_int("n", n)).copy()


def inverse_series(c, n: int) -> np.ndarray:
    """The first ``n`` coefficients of ``1 / c(x)`` for a polynomial ``c`` with ``c_0 != 0`` (float64).

    Computed as the impulse response of the companion recursion
    ``ĉ_t = -(sum_{k>=1} c_k ĉ_{t-k}) / c_0`` (:func:`impulse_np`).

    Args:
        c: the polynomial's coefficients ``c_0, ..., c_{b-1}``, 1-D, ``c_0 != 0``.
        n: the number of coefficients of the series returned.

    Returns:
        The float64 array ``ĉ_0..ĉ_{n-1}``: the first column of ``C^{-1}`` for the Toeplitz ``C`` with first column ``c``.

    Raises:
        ValueError: ``c`` is empty, not 1-D, or ``c_0 = 0``.
    """
    c = np.asarray(c, np.float64)
    if c.ndim != 1 or c.size < 1 or c[0] == 0:
        raise ValueError(f"c must be a non-empty 1-d coefficient array with c[0] != 0, got {c!r}")
    b = c.size
    if b == 1:
        out = np.zeros(n)
        out[0] = 1.0 / c[0]
        return out
    # state (chat_{t-1}, ..., chat_{t-b+1}); companion matrix of chat_t = -(sum_{k>=1} c_k chat_{t-k}) / c_0
    m = b - 1
    M = np.zeros((m, m))
    M[0, :] = -c[1:] / c[0]
    M[1:, :-1] = np.eye(m - 1)
    e = np.zeros(m)
    e[0] = 1.0 / c[0]
    return impulse_np(M, e, n)[0]


class ToeplitzCounter(ContinualCounter):
    """Lower-triangular Toeplitz ``C`` and ``B = A C^{-1}`` given by first columns (module docstring)."""

    def c_coefficients(self, n: int) -> np.ndarray:
        """``c_0..c_{n-1}``: first column of ``C`` (float64)."""
        raise NotImplementedError

    def b_coefficients(self, n: int) -> np.ndarray:
        """``beta_0..beta_{n-1}``: first column of ``B = A C^{-1}`` (float64)."""
        raise NotImplementedError

    def sensitivity(self, n, norm="l2"):
        c = self.c_coefficients(check_positive_int("n", n))
        return float(np.sqrt(np.sum(c * c))) if norm == "l2" else float(np.sum(np.abs(c)))

    def row_norms_sq(self, n):
        b = self.b_coefficients(check_positive_int("n", n))
        return np.cumsum(b * b)

    def rmse(self, n):
        n = check_positive_int("n", n)
        b = self.b_coefficients(n)
        return float(self.sensitivity(n) * math.sqrt(float(np.sum((n - np.arange(n)) * b * b)) / n))

    def dense(self, n):
        n = check_positive_int("n", n)
        return toeplitz_lower(self.b_coefficients(n), n), toeplitz_lower(self.c_coefficients(n), n)


@dataclasses.dataclass(frozen=True)
class SqrtToeplitz(ToeplitzCounter):
    """``C = B = A^{1/2}`` (module docstring). State: every draw so far, ``T_max`` rows (``O(T_max)`` per round)."""

    name: ClassVar[str] = "sqrt_toeplitz"

    def rows(self, T_max):
        return check_positive_int("T_max", T_max)

    def advance(self, state, z, kind="gaussian"):
        _check_kind(kind)
        t = state.t                                                     # this is round t + 1
        buf = jax.lax.dynamic_update_index_in_dim(state.buf, z[0], t, 0)   # buf[s] = z_{s+1}, written once
        n = buf.shape[0]
        r = jnp.asarray(_sqrt_coeffs(n), buf.dtype)
        lag = t - jnp.arange(n)                                         # w_{t+1} = sum_{s<=t} r_{t-s} buf[s]
        coef = jnp.where(lag >= 0, r[jnp.clip(lag, 0, n - 1)], 0)
        return CounterState(buf=buf, t=t + 1), jnp.tensordot(coef, buf, axes=1)

    def noise_upfront(self, keys: jax.Array, shape: tuple = (), scale=1.0, kind: str = "gaussian",
                      dtype=None) -> jax.Array:
        """Every round's noise at once: the draws of all ``T`` rounds times the ``T x T`` Toeplitz square root.

        Round ``t`` draws from ``keys[t]`` exactly as :meth:`step` does, so the result equals the ``T`` outputs of
        ``step(keys[t], state, scale, kind)`` from ``init(T, shape, dtype)`` up to float rounding (one matrix
        product instead of ``T`` dot products: the summation order may differ in the last bits). Memory: ``T``
        draws of ``shape`` and the ``T x T`` matrix; work ``O(T^2)`` per element of ``shape`` in one product (the
        streaming form reads its whole ``T_max``-row buffer every round). :func:`sqrt_toeplitz_form` says when to
        prefer it.

        Args:
            keys: one PRNG key per round, shape ``(T,)`` (typed keys) or ``(T, 2)`` (raw ``uint32`` keys), ``T >= 1``.
            shape: the shape of one round's noise (a tuple of non-negative ints).
            scale: the draw scale (``sigma`` or the Laplace ``b``; may be traced).
            kind: ``"gaussian"`` or ``"laplace"``.
            dtype: the noise dtype (``None``: JAX's default float).

        Returns:
            The noise, shape ``(T,) + shape``: row ``t`` is round ``t + 1``'s ``scale * w_{t+1}``.

        Raises:
            ValueError: an unknown ``kind`` or no keys.
            TypeError: ``shape`` not a tuple of non-negative ints.
        """
        _check_kind(kind)
        if not isinstance(shape, tuple) or not all(isinstance(s, int) and s >= 0 for s in shape):
            raise TypeError(f"shape must be a tuple of non-negative ints, got {shape!r}")
        keys = jnp.asarray(keys) if not isinstance(keys, jax.Array) else keys
        raw = not jnp.issubdtype(keys.dtype, jax.dtypes.prng_key)
        T = int(keys.shape[0]) if keys.ndim >= (2 if raw else 1) else 0
        if T < 1:
            raise ValueError(f"keys must hold one key per round (T >= 1), got shape {keys.shape}")
        dtype = jnp.result_type(float) if dtype is None else dtype

        def draw(key):   # as step(): draw_count = 1 arrays of ``shape``
            z = (jax.random.laplace(key, (1,) + shape, dtype) if kind == "laplace"
                 else jax.random.normal(key, (1,) + shape, dtype))
            return z[0]

        z = jax.vmap(draw)(keys)                                        # (T,) + shape
        R = jnp.asarray(toeplitz_lower(_sqrt_coeffs(T), T), dtype)      # w_{t+1} = sum_{s<=t} r_{t-s} z_{s+1}
        w = jnp.tensordot(R, z, axes=1)
        return jnp.asarray(scale, dtype) * w

    def c_coefficients(self, n):
        return sqrt_coefficients(n)

    def b_coefficients(self, n):
        return sqrt_coefficients(n)


def sqrt_toeplitz_form(T: int, d: int = 1, seeds: int = 1, itemsize: int = 4, memory_bytes: int = 2 ** 30,
                       max_T: int = 8192) -> str:
    """Which form of the square-root Toeplitz noise to use: ``"upfront"`` or ``"streaming"``.

    Up front (:meth:`SqrtToeplitz.noise_upfront`) when ``T <= max_T`` (the ``T x T`` matrix and its ``O(T^2 d)``
    product stay small) and the whole noise, ``seeds * T * d`` entries, plus the matrix fit in ``memory_bytes``;
    streaming (:meth:`SqrtToeplitz.step` in a scan, ``T`` rows carried per seed, ``O(T)`` reads per round)
    otherwise, and always inside a learner that draws its noise round by round.

    Args:
        T: the number of rounds (``>= 1``).
        d: the number of coordinates per round (``>= 1``).
        seeds: the number of seeds computed at once (``>= 1``).
        itemsize: bytes per entry (4: float32, 8: float64).
        memory_bytes: the memory the up-front noise may take.
        max_T: the largest ``T`` drawn up front.

    Returns:
        ``"upfront"`` or ``"streaming"``.

    Raises:
        ValueError: a size below 1.
        TypeError: a size that is not an integer.
    """
    T, d, seeds = check_positive_int("T", T), check_positive_int("d", d), check_positive_int("seeds", seeds)
    itemsize, memory_bytes = check_positive_int("itemsize", itemsize), check_positive_int("memory_bytes", memory_bytes)
    max_T = check_positive_int("max_T", max_T)
    need = (seeds * T * d * 2 + T * T) * itemsize    # the draws, the noise, the matrix
    return "upfront" if T <= max_T and need <= memory_bytes else "streaming"


def _tuple(name, x, *, nonempty=True):
    try:
        out = tuple(float(v) for v in np.asarray(x, np.float64).reshape(-1))
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name} must be a sequence of numbers, got {x!r}") from e
    if nonempty and not out:
        raise ValueError(f"{name} must not be empty")
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{name} must be finite, got {out}")
    return out


@dataclasses.dataclass(frozen=True)
class BandedToeplitz(ToeplitzCounter):
    """``b``-banded Toeplitz ``C`` with first column ``coeffs`` (module docstring; :func:`optimize_banded`).

    State: ``b`` rows (``b - 1`` past values of ``w = C^{-1} z`` and the running sum).

    Attributes:
        coeffs: the first column ``c_0, ..., c_{b-1}`` of ``C`` (``c_0 != 0``; finite), stored as a tuple of floats;
            its length is the number of bands ``b``. The default ``(1.0,)`` is the identity (input perturbation).
    """

    coeffs: tuple = (1.0,)
    name: ClassVar[str] = "banded"

    def __post_init__(self):
        c = _tuple("coeffs", self.coeffs)
        if c[0] == 0:
            raise ValueError(f"coeffs[0] must be non-zero, got {c}")
        object.__setattr__(self, "coeffs", c)

    @property
    def bands(self) -> int:
        return len(self.coeffs)

    def rows(self, T_max):
        check_positive_int("T_max", T_max)
        return self.bands

    def advance(self, state, z, kind="gaussian"):
        _check_kind(kind)
        buf = state.buf
        b = self.bands
        dtype = buf.dtype
        c = self.coeffs
        if b == 1:
            w = z[0] / jnp.asarray(c[0], dtype)
            S = buf[0] + w
            return CounterState(buf=S[None], t=state.t + 1), S
        past = buf[:b - 1]                                              # w_{t-1}, ..., w_{t-b+1}
        w = (z[0] - jnp.tensordot(jnp.asarray(c[1:], dtype), past, axes=1)) / jnp.asarray(c[0], dtype)
        S = buf[b - 1] + w
        buf = jnp.concatenate([w[None], past[:b - 2], S[None]], axis=0)
        return CounterState(buf=buf, t=state.t + 1), S

    def c_coefficients(self, n):
        c = np.zeros(check_positive_int("n", n))
        k = min(n, self.bands)
        c[:k] = self.coeffs[:k]
        return c

    def b_coefficients(self, n):
        return np.cumsum(inverse_series(self.coeffs, check_positive_int("n", n)))

    def describe(self):
        return f"banded({self.bands})"


@dataclasses.dataclass(frozen=True)
class BLT(ToeplitzCounter):
    """Buffered linear Toeplitz ``C^{-1} = BLT(theta, omega)`` (module docstring; :func:`optimize_blt`).

    ``theta`` (buffer decays, in ``(-1, 1)``) and ``omega`` (output scales) have one entry per buffer.
    State: ``k + 1`` rows (``k`` buffers and the running sum); one draw per round.
    The first column of ``C^{-1}`` is ``1, sum_j omega_j, sum_j omega_j theta_j, sum_j omega_j theta_j^2, ...``.

    Attributes:
        theta: the ``k`` buffer decays ``theta_j``, each in ``(-1, 1)`` (tuple of floats).
        omega: the ``k`` output weights ``omega_j`` (tuple of floats, same length as ``theta``).
    """

    theta: tuple = ()
    omega: tuple = ()
    name: ClassVar[str] = "blt"

    def __post_init__(self):
        th = _tuple("theta", self.theta, nonempty=False)
        om = _tuple("omega", self.omega, nonempty=False)
        if len(th) != len(om):
            raise ValueError(f"theta and omega must have one entry per buffer, got {len(th)} and {len(om)}")
        if any(not -1.0 < v < 1.0 for v in th):
            raise ValueError(f"theta (buffer decays) must lie in (-1, 1), got {th}")
        object.__setattr__(self, "theta", th)
        object.__setattr__(self, "omega", om)

    def rows(self, T_max):
        check_positive_int("T_max", T_max)
        return self.buffers + 1

    @property
    def buffers(self) -> int:
        return len(self.theta)

    def advance(self, state, z, kind="gaussian"):
        _check_kind(kind)
        buf = state.buf
        k = self.buffers
        dtype = buf.dtype
        s, S = buf[:k], buf[k]
        x = z[0]
        w = x + jnp.tensordot(jnp.asarray(self.omega, dtype), s, axes=1) if k else x
        th = jnp.asarray(self.theta, dtype).reshape((k,) + (1,) * (buf.ndim - 1))
        S = S + w
        buf = jnp.concatenate([th * s + x[None], S[None]], axis=0)
        return CounterState(buf=buf, t=state.t + 1), S

    def inverse_coefficients(self, n: int) -> np.ndarray:
        """``chat_0..chat_{n-1}``: first column of ``C^{-1}`` (float64)."""
        n = check_positive_int("n", n)
        out = np.zeros(n)
        out[0] = 1.0
        if self.buffers and n > 1:
            k = np.arange(n - 1, dtype=np.float64)
            out[1:] = (np.asarray(self.omega)[None, :] * np.asarray(self.theta)[None, :] ** k[:, None]).sum(1)
        return out

    def c_coefficients(self, n):
        n = check_positive_int("n", n)
        out = np.zeros(n)
        out[0] = 1.0
        if self.buffers and n > 1:
            th, om = np.asarray(self.theta), np.asarray(self.omega)
            M = np.diag(th) - np.outer(np.ones_like(th), om)
            out[1:] = -(om @ impulse_np(M, np.ones_like(th), n - 1))
        return out

    def b_coefficients(self, n):
        return np.cumsum(self.inverse_coefficients(n))

    def describe(self):
        return f"blt({self.buffers})"
