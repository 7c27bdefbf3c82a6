"""The continual-counting interface shared by every matrix-factorization mechanism (docs/algorithms/matrix-factorization.md).

**The workload.** A stream ``x_1, x_2, ...`` (each an array of shape ``shape``) is summed
continually: round ``t`` releases an estimate of ``S_t = sum_{s<=t} x_s``. Over ``n`` rounds the
queries are ``A x`` with ``A`` the ``n x n`` lower-triangular matrix of ones.

**Matrix factorization** (Li et al. 2015; Denisov et al. 2022; Kairouz et al. 2021 for the tree):
factor ``A = B C`` and release ``B (C x + z)`` with ``z ~ N(0, sigma^2 I)`` (one row of ``z`` per row
of ``C``, each of shape ``shape``). The release is ``A x + B z``: the exact prefix sums plus the
correlated noise ``B z``. Privacy is that of the single Gaussian release ``C x + z``: under
single participation, changing one ``x_s`` by at most ``Delta`` (l2) moves ``C x`` by at most
``Delta * sens(C)``, with ``sens(C) = max_j ||C_{:,j}||_2`` the largest column norm, so the whole
stream is the Gaussian mechanism with noise multiplier ``sigma / (Delta sens(C))``. With Laplace
noise the same holds with ``l1`` norms (``sens_1(C) = max_j ||C_{:,j}||_1``).

**Error.** With ``sigma = sens(C)`` (noise multiplier one, ``Delta = 1``) the noise on query
``i`` has standard deviation ``sens(C) ||B_i||_2`` (per coordinate), ``B_i`` the ``i``-th row of
``B``. :meth:`ContinualCounter.query_errors` returns these ``n`` values, ``max_error`` their
maximum and ``rmse`` their root mean square; every mechanism computes them itself (closed
forms or ``O(n)`` recurrences, float64), and :meth:`ContinualCounter.dense` returns ``(B, C)``
as dense matrices for checks at small ``n``.

**Streaming.** The learners keep ``S_t`` exactly and add only the noise ``(B z)_t``, so a
mechanism is a *noise generator*: a carried state (``CounterState.buf``, ``rows(T_max)`` rows of
shape ``shape``), advanced once per round by :meth:`ContinualCounter.advance` from the fresh
draws of that round. ``advance`` is linear in the draws: ``w_t = sum_{s<=t} M_{t,s} z_s`` for a
fixed matrix ``M`` with ``M M^T = B B^T`` (same noise distribution as ``B z``; ``M = B`` up to a
rotation of the draws that the streaming form makes unobservable). :meth:`ContinualCounter.step`
draws the fresh noise from a key and scales it. :func:`counter_init` / :func:`counter_step` add the
exact prefix sum (compensated float32 summation) for algorithms that want the noisy prefix sum
``c_t = S_t + sigma (M z)_t`` in one call.

Privacy planning: :meth:`ContinualCounter.noise_scale` (the node / draw scale ``sigma`` for a
noise multiplier) and :meth:`ContinualCounter.ledger_event` (the Gaussian or Laplace event of the
whole stream, with the factorization's sensitivity) are what the planners call.
"""
from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ....core.accumulate import packed_add, packed_sum, packed_zeros
from ....core.validation import check_choice, check_positive, check_positive_int

__all__ = ["ContinualCounter", "CounterState", "PrefixState", "counter_init", "counter_step", "prefix_matrix",
           "toeplitz_lower", "impulse_np", "NOISE_KINDS"]

NOISE_KINDS = ("gaussian", "laplace")


class CounterState(NamedTuple):
    """Carried noise state of a continual counter.

    Attributes:
        buf: the mechanism's buffer, shape ``(rows(T_max),) + shape``; what its rows hold is mechanism-specific
            (tree nodes, BLT buffers, the last draws of a banded factor, ...).
        t: ``int32`` scalar, the rounds advanced so far (the next round is ``t + 1``).
    """

    buf: jax.Array     # (rows,) + shape, mechanism-specific
    t: jax.Array       # int32, rounds advanced so far (the next round is t + 1)


class PrefixState(NamedTuple):
    """A noisy prefix-sum counter: the exact compensated sum and the mechanism's noise state.

    Attributes:
        S: the exact prefix sum ``S_t`` as a packed compensated sum (:mod:`jaxdp.core.accumulate`), shape ``shape``.
        noise: the mechanism's :class:`CounterState`.
    """

    S: jax.Array           # packed compensated sum (jaxdp.core.accumulate), shape ``shape``
    noise: CounterState


def prefix_matrix(n: int) -> np.ndarray:
    """The ``n x n`` prefix-sum workload ``A`` (lower-triangular ones), float64.

    Args:
        n: the number of rounds.

    Returns:
        ``A`` with ``A[i, j] = 1`` for ``j <= i`` and 0 above the diagonal.
    """
    return np.tril(np.ones((n, n)))


def toeplitz_lower(coeffs, n: int) -> np.ndarray:
    """The ``n x n`` lower-triangular Toeplitz matrix with first column ``coeffs[:n]`` (zero-padded).

    Args:
        coeffs: the first column ``c_0, c_1, ...`` (entry ``(i, j)`` is ``c_{i-j}`` for ``i >= j``); fewer than ``n``
            coefficients are padded with zeros, more are cut.
        n: the size of the matrix.

    Returns:
        The float64 ``(n, n)`` matrix.
    """
    c = np.zeros(n)
    k = min(n, len(coeffs))
    c[:k] = np.asarray(coeffs, np.float64)[:k]
    idx = np.arange(n)[:, None] - np.arange(n)[None, :]
    return np.where(idx >= 0, c[np.clip(idx, 0, n - 1)], 0.0)


def impulse_np(M: np.ndarray, u: np.ndarray, n: int) -> np.ndarray:
    """``[u, M u, M^2 u, ..., M^{n-1} u]`` as a ``(k, n)`` float64 array, by doubling (``log2 n`` products).

    Args:
        M: a ``(k, k)`` matrix (e.g. a BLT's state-transition matrix).
        u: a vector of length ``k``.
        n: the number of powers.

    Returns:
        The ``(k, n)`` array whose column ``j`` is ``M^j u``.
    """
    M = np.asarray(M, np.float64)
    U = np.asarray(u, np.float64)[:, None]
    P = M
    while U.shape[1] < n:
        U = np.concatenate([U, P @ U], axis=1)
        P = P @ P
    return U[:, :n]


def _check_kind(kind: str) -> str:
    return check_choice("kind (noise distribution)", kind, list(NOISE_KINDS))


class ContinualCounter:
    """A continual-counting mechanism ``A = B C`` with a streaming noise generator (module docstring).

    Subclasses are frozen dataclasses (hashable: they are static arguments of the learners'
    factories) and implement ``rows``, ``advance`` (traced) and ``sensitivity``,
    ``row_norms_sq``, ``dense`` (host, float64).
    """

    name: ClassVar[str] = ""

    # ------------------------------------------------------------------ streaming (traced)
    def rows(self, T_max: int) -> int:
        """Rows of the carried buffer for horizons ``T <= T_max``."""
        raise NotImplementedError

    def draw_count(self, state: CounterState, kind: str = "gaussian") -> int:
        """Fresh draws (each of shape ``shape``) per round (static; 1 unless a subclass says otherwise)."""
        return 1

    def init(self, T_max: int, shape: tuple = (), dtype: Any = None) -> CounterState:
        """An empty noise state for rounds ``t <= T_max`` and items of shape ``shape``."""
        T_max = check_positive_int("T_max", T_max)
        if not isinstance(shape, tuple) or not all(isinstance(s, int) and s >= 0 for s in shape):
            raise TypeError(f"shape must be a tuple of non-negative ints, got {shape!r}")
        dtype = jnp.result_type(float) if dtype is None else dtype
        return CounterState(buf=jnp.zeros((self.rows(T_max),) + shape, dtype), t=jnp.zeros((), jnp.int32))

    def advance(self, state: CounterState, z: jax.Array, kind: str = "gaussian") -> tuple[CounterState, jax.Array]:
        """One round: the fresh unit draws ``z`` (shape ``(draw_count,) + shape``) in, ``(state', w_t)`` out,
        ``w_t`` the round's noise in units of the draw scale (linear in ``z``)."""
        raise NotImplementedError

    def step(self, key: jax.Array, state: CounterState, scale, kind: str = "gaussian") -> tuple[CounterState, jax.Array]:
        """Draw this round's noise (``N(0, 1)`` or ``Lap(1)`` entries, scaled by ``scale``): ``(state', scale w_t)``.

        ``scale`` (may be traced) is the standard deviation ``sigma`` (Gaussian) or the Laplace scale ``b``
        of each draw; ``kind`` is static. One key per round, ``draw_count(state, kind)`` arrays of shape ``shape``.
        """
        _check_kind(kind)
        shape = (self.draw_count(state, kind),) + state.buf.shape[1:]
        dtype = state.buf.dtype
        z = jax.random.laplace(key, shape, dtype) if kind == "laplace" else jax.random.normal(key, shape, dtype)
        state, w = self.advance(state, z, kind)
        return state, jnp.asarray(scale, dtype) * w

    # ------------------------------------------------------------------ analysis (host, float64)
    def sensitivity(self, n: int, norm: str = "l2") -> float:
        """``max_j ||C_{:,j}||`` over the first ``n`` rounds (``norm`` ``"l2"`` or ``"l1"``)."""
        raise NotImplementedError

    def row_norms_sq(self, n: int) -> np.ndarray:
        """``||B_i||_2^2`` for ``i = 1..n`` (noise variance of query ``i`` per unit draw variance)."""
        raise NotImplementedError

    def dense(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``(B, C)`` with ``B C = A`` (``n`` rounds), float64; for checks at small ``n``."""
        raise NotImplementedError

    def query_errors(self, n: int) -> np.ndarray:
        """Noise standard deviation of each query at noise multiplier 1: ``sens(C) ||B_i||_2``, ``i = 1..n``."""
        n = check_positive_int("n", n)
        return self.sensitivity(n) * np.sqrt(self.row_norms_sq(n))

    def max_error(self, n: int) -> float:
        """``max_i sens(C) ||B_i||_2`` (the max-error / ``l_inf`` objective)."""
        return float(np.max(self.query_errors(n)))

    def rmse(self, n: int) -> float:
        """``sqrt(mean_i (sens(C) ||B_i||_2)^2)`` (the mean-squared-error objective)."""
        n = check_positive_int("n", n)
        return float(self.sensitivity(n) * math.sqrt(float(np.mean(self.row_norms_sq(n)))))

    def max_row_norm_sq(self, n: int) -> float:
        """``max_{t<=n} ||B_t||^2``: the largest noise variance of a release per unit draw variance."""
        return float(np.max(self.row_norms_sq(check_positive_int("n", n))))

    def carried_bytes(self, T_max: int, d: int = 1, itemsize: int = 4) -> int:
        """Bytes of noise state carried from one round to the next for ``d``-vectors (the round counter included)."""
        return int(self.rows(T_max)) * int(d) * int(itemsize) + 4

    # ------------------------------------------------------------------ privacy
    def noise_scale(self, noise_multiplier: float, sensitivity: float, n: int, norm: str = "l2") -> float:
        """Draw scale ``sigma = noise_multiplier * Delta * sens(C)``: the whole stream of ``n`` rounds is the
        Gaussian (``l2``) or Laplace (``l1``) mechanism with that noise multiplier when one item moves by at most
        ``Delta = sensitivity``."""
        check_positive("noise_multiplier", noise_multiplier)
        check_positive("sensitivity", sensitivity)
        return float(noise_multiplier) * float(sensitivity) * self.sensitivity(n, norm)

    def ledger_event(self, scale: float, sensitivity: float, steps: int, *, dim: int = 1, kind: str = "gaussian",
                     label: str = "", release: str = "raw"):
        """The ledger event of one pass over ``steps`` rounds with draw scale ``scale`` when one item moves by at
        most ``sensitivity`` (l2 for Gaussian, l1 for Laplace): ``gaussian(scale / (Delta sens_2))`` or
        ``laplace(scale / (Delta sens_1))``. The noisy prefix sums are released (``release="raw"``: no
        valid float floor) unless the algorithm only compares them."""
        from ...accounting import ledger as LG

        _check_kind(kind)
        check_positive("scale", scale)
        check_positive("sensitivity", sensitivity)
        steps = check_positive_int("steps", steps)
        lab = label or f"{self.describe()} over {steps} rounds"
        if kind == "gaussian":
            return LG.gaussian(float(scale) / (float(sensitivity) * self.sensitivity(steps, "l2")), label=lab,
                               dim=int(dim), release=release)
        return LG.laplace(float(scale) / (float(sensitivity) * self.sensitivity(steps, "l1")), label=lab,
                          dim=int(dim), release=release)

    def describe(self) -> str:
        return self.name


# ---------------------------------------------------------------------- noisy prefix sums


def counter_init(mech: ContinualCounter, T_max: int, shape: tuple = (), dtype: Any = None) -> PrefixState:
    """A noisy prefix-sum counter over ``mech`` (exact compensated sum + the mechanism's noise state).

    Args:
        mech: the continual-counting mechanism.
        T_max: the longest horizon the state must serve.
        shape: the shape of each streamed item.
        dtype: the float dtype of the sums and the noise (default: JAX's default float).

    Returns:
        A :class:`PrefixState` with a zero sum and ``mech.init(T_max, shape, dtype)``.
    """
    dtype = jnp.result_type(float) if dtype is None else dtype
    return PrefixState(S=packed_zeros(jnp.zeros(shape, dtype)), noise=mech.init(T_max, shape, dtype))


def counter_step(mech: ContinualCounter, key: jax.Array, state: PrefixState, a, scale,
                 kind: str = "gaussian") -> tuple[PrefixState, jax.Array]:
    """Add ``a`` and release ``c_t = S_t + scale (M z)_t`` (one key per round).

    The release is private when ``scale`` is calibrated by :meth:`ContinualCounter.noise_scale`
    (planners: :meth:`ContinualCounter.ledger_event`).

    Args:
        mech: the continual-counting mechanism (the one ``state`` was made with).
        key: JAX PRNG key for this round's draws.
        state: the counter's state after round ``t - 1``.
        a: the round's item ``x_t``, of the counter's ``shape``.
        scale: the draw scale: σ (Gaussian) or the Laplace scale ``b``; may be traced.
        kind: ``"gaussian"`` or ``"laplace"`` (static).

    Returns:
        ``(state', c_t)``: the updated state and the noisy prefix sum of round ``t``.
    """
    S = packed_add(state.S, jnp.asarray(a, state.noise.buf.dtype))
    noise, w = mech.step(key, state.noise, scale, kind)
    return PrefixState(S=S, noise=noise), packed_sum(S) + w
