"""Oblivious adversaries for the experts problem (LAZY Thm 4.2; REAL Thm 5; docs/guide/concepts.md#adversary; docs/algorithms/lazy.md#lower-bound; docs/algorithms/realizable.md#lower-bound, #environments).

Each constructor takes the static number of experts ``d`` and returns an
``Adversary``; its parameters are a ``NamedTuple`` pytree (traced, so they can
be vmapped). ``loss(state, t)`` depends only on the adversary's key and the
0-indexed round ``t`` (``fold_in(key, t)``, or ``fold_in(key, epoch)`` for
losses constant on epochs), never on the learner.

Losses are float32 vectors in ``[0, 1]^d``; {0,1} losses are drawn from random
bits (32 fair coins per random word), the cheap path on CPU.
"""
from __future__ import annotations

import functools
import os
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.random import bernoulli_half
from ..core.io import load_array
from ..core.types import Adversary, fdt
from ..core.validation import check_choice, check_losses_in_range, check_positive_int
from ._common import checked_params

__all__ = [
    "AdvState",
    "BernoulliParams", "bernoulli_experts",
    "LazyEpochsParams", "adv_lazy_epochs", "lazy_epochs_layout",
    "AlternatingParams", "adv_alternating_batches",
    "RealizableBernoulliParams", "adv_realizable_bernoulli",
    "HalvingParams", "adv_realizable_halving",
    "RealizableLBParams", "adv_realizable_lb", "realizable_lb_k",
    "ReplayParams", "adv_replay", "load_losses", "check_replay", "REPLAY_PAST_END",
]


class AdvState(NamedTuple):
    """State of the experts adversaries.

    Attributes:
        key: the adversary's key (losses come from ``fold_in(key, t)``).
        star: the planted best expert, where there is one.
        perm: a permutation of the experts, where the adversary uses one.
    """
    key: jax.Array          # the adversary's own key
    star: jax.Array         # int32 planted expert (or 0 if none)
    perm: jax.Array         # (d,) int32 permutation (halving), else zeros


def _adversary(d: int, loss, random_star: bool = True, with_perm: bool = False) -> Adversary:
    """The adversary whose state is ``(AdvState, params)`` and whose loss is ``loss(adv_state, params, t)``."""
    def init(key, params):
        k_star, k_loss, k_perm = jax.random.split(key, 3)
        star = jax.random.randint(k_star, (), 0, d, dtype=jnp.int32) if random_star else jnp.int32(0)
        if with_perm:
            # a uniform permutation with perm[star] = 0: rank experts by uniform
            # scores, then swap rank 0 onto `star`
            perm = jax.random.permutation(k_perm, d).astype(jnp.int32)
            holder = jnp.argmin(perm)
            perm = perm.at[holder].set(perm[star]).at[star].set(0)
        else:
            perm = jnp.zeros((d,), jnp.int32)
        return (AdvState(key=k_loss, star=star, perm=perm), params)

    return Adversary(init=init, loss=lambda state_params, t: loss(*state_params, t))


def _round_draws(key, t, d: int, width: int):
    """Round ``t``'s random bits (``fold_in(key, t)``): ``d`` uint32 fields of ``width`` bits each (``32 // width``
    per word, low bits first) and one 24-bit uniform in ``[0, 1)`` from the word after them."""
    words = -(-d // (32 // width))
    bits = jax.random.bits(jax.random.fold_in(key, t), (words + 1,), dtype=jnp.uint32)
    shifts = jnp.arange(0, 32, width, dtype=jnp.uint32)
    fields = ((bits[:words, None] >> shifts[None, :]) & ((1 << width) - 1)).reshape(-1)[:d]
    return fields, (bits[words] >> 8).astype(fdt()) * (1.0 / (1 << 24))


def _experts_factory(minimum: int = 1) -> Callable[[Callable[[int], Adversary]], Callable[[int], Adversary]]:
    """Decorator of the adversary factories whose only argument is the number of experts ``d``: the factory checks
    ``d`` (an int ``>= minimum``) before ``build`` sees it and caches one adversary per ``d``."""

    def wrap(build: Callable[[int], Adversary]) -> Callable[[int], Adversary]:
        @functools.lru_cache(maxsize=None)
        @functools.wraps(build)
        def factory(d: int) -> Adversary:
            return build(check_positive_int("d", d, minimum=minimum))

        return factory

    return wrap


# --------------------------------------------------------------------------- i.i.d. Bernoulli


@checked_params(gap=dict(lo=0.0, hi=0.5))
class BernoulliParams(NamedTuple):
    """``gap`` in ``[0, 1/2]`` (checked on the host: ``jaxdp.core.validation.check_field``).

    Attributes:
        gap: the best expert's gap Δ in ``[0, 1/2]``.
    """
    gap: jax.Array    # Δ in [0, 1/2]: the planted expert has loss ~ Ber(1/2 - Δ), the others Ber(1/2)


@_experts_factory()
def bernoulli_experts(d: int) -> Adversary:
    """i.i.d. Bernoulli losses with a planted best expert ``x* ~ Unif[d]`` of gap Δ.

    ``l_t(i) ~ Ber(1/2)`` for ``i != x*`` and ``l_t(x*) ~ Ber(1/2 - Δ)``, independent
    over rounds. ``Δ = 0`` is the pure-noise instance (the √T lower-bound
    regime). Cost per round: ``ceil(d/32) + 1`` random words.

    Args:
        d: the number of experts.

    Returns:
        The :class:`jaxdp.Adversary` (params :class:`BernoulliParams`).
    """
    def loss(state, params, t):
        coins, u = _round_draws(state.key, t, d, 1)
        star_loss = (u < 0.5 - params.gap).astype(coins.dtype)
        return coins.at[state.star].set(star_loss).astype(fdt())

    return _adversary(d, loss)


# --------------------------------------------------------------------------- LAZY lower bound


@checked_params(T=dict(lo=1), eps=dict(lo=0.0, lo_open=True), epoch_len=dict(lo=0))
class LazyEpochsParams(NamedTuple):
    """``T >= 1``, ``eps > 0`` finite, ``epoch_len >= 0`` (checked on the host).

    Attributes:
        T: the horizon (>= 1).
        eps: ε (> 0, finite).
        epoch_len: epoch length (0: from ``T`` and ``eps``).
    """
    T: jax.Array           # horizon the construction is built for
    eps: jax.Array         # privacy level ε of the algorithm under attack
    epoch_len: jax.Array   # int32; 0: the paper's B_ep = T/E; > 0: batch-aligned epochs of this length


def lazy_epochs_layout(T, eps, epoch_len=0):
    """``(E, B_ep)`` of LAZY Thm 4.2's adversary (App. C): ``E = clip(floor((Tε)^{4/3}), 1, T)``
    epochs of ``B_ep = floor(T/E)`` rounds (the last epoch absorbs the remainder), or
    ``B_ep = epoch_len`` if positive (LAZY Thm 4.2; docs/algorithms/lazy.md#lower-bound).

    Args:
        T: the horizon.
        eps: the privacy parameter ε.
        epoch_len: the epoch length (0: from ``T`` and ``eps``).

    Returns:
        ``(E, B_ep)``.
    """
    T_f = jnp.asarray(T, jnp.float32)
    E = jnp.clip(jnp.floor((T_f * eps) ** (4.0 / 3.0)), 1.0, T_f).astype(jnp.int32)
    B_ep = jnp.maximum(jnp.asarray(T, jnp.int32) // E, 1)
    el = jnp.asarray(epoch_len, jnp.int32)
    B_ep = jnp.where(el > 0, el, B_ep)
    E = jnp.where(el > 0, (jnp.asarray(T, jnp.int32) + el - 1) // jnp.maximum(el, 1), E)
    return E, B_ep


@_experts_factory()
def adv_lazy_epochs(d: int) -> Adversary:
    """LAZY Thm 4.2 / App. C lower-bound adversary: ``l^{(e)} ~ Ber(1/2)^d`` i.i.d. per epoch,
    played for every round of the epoch. ``S_adv = (Tε)^{2/3}``, ``E = S_adv^2`` epochs of
    ``B_ep = T/E`` rounds; needs ``ε <= T^{-1/4}`` for ``B_ep >= 1`` (otherwise ``E = T``:
    i.i.d. per round). With ``epoch_len = B`` it is the batch-aligned variant of LAZY Thm 3.2, Prop. 3.3; docs/algorithms/lazy.md#batching-term.

    Args:
        d: the number of experts.

    Returns:
        The :class:`jaxdp.Adversary` (params :class:`LazyEpochsParams`).
    """
    def loss(state, params, t):
        E, B_ep = lazy_epochs_layout(params.T, params.eps, params.epoch_len)
        e = jnp.minimum(t // B_ep, E - 1)
        return bernoulli_half(jax.random.fold_in(state.key, e), (d,)).astype(fdt())

    return _adversary(d, loss, random_star=False)


@checked_params(B=dict(lo=1))
class AlternatingParams(NamedTuple):
    """``B >= 1`` (checked on the host).

    Attributes:
        B: the batch length (>= 1); set it to the learner's batch length.
    """
    B: jax.Array    # int32 batch length of the alternation (set to the learner's B)


@_experts_factory(minimum=2)
def adv_alternating_batches(d: int) -> Adversary:
    """Worst case for batch-constant lazy algorithms (LAZY Thm 3.2, Prop. 3.3, Thm 4.2; docs/algorithms/lazy.md#batching-term, #lower-bound; PROPOSED).

    In batch ``s = floor(t / B)`` expert 0 has loss ``1[s even]``, expert 1 has
    ``1[s odd]``, all others 1. Deterministic. L2P-MW's expected regret is
    ``≈ (T/4) tanh(η B / 2)``, per-round MW's ``≈ (T/4) tanh(η/2)``.

    Args:
        d: the number of experts (>= 2).

    Returns:
        The :class:`jaxdp.Adversary` (params :class:`AlternatingParams`).
    """
    def loss(_, params, t):
        s = t // jnp.maximum(jnp.asarray(params.B, jnp.int32), 1)
        even = (s % 2 == 0).astype(fdt())
        ell = jnp.ones((d,), fdt())
        return ell.at[0].set(even).at[1].set(1.0 - even)

    return _adversary(d, loss, random_star=False)


# --------------------------------------------------------------------------- realizable (REAL)


@checked_params(q=dict(lo=0.0, hi=1.0), q_star=dict(lo=0.0, hi=1.0))
class RealizableBernoulliParams(NamedTuple):
    """``q`` and ``q_star`` in ``[0, 1]`` (checked on the host).

    Attributes:
        q: loss probability of the other experts, in ``[0, 1]``.
        q_star: loss probability of the best expert, in ``[0, 1]`` (0: realizable).
    """
    q: jax.Array         # loss probability of every expert but x*
    q_star: jax.Array    # loss probability of x* (0: realizable; L*/T: near-realizable)


@_experts_factory()
def adv_realizable_bernoulli(d: int) -> Adversary:
    """``adv_realizable_bernoulli`` / ``adv_near_realizable`` (REAL; docs/algorithms/realizable.md#environments).

    ``x* ~ Unif[d]``; ``l_t(x*) ~ Ber(q_star)`` (0 in the realizable case) and
    ``l_t(x) ~ Ber(q)`` for ``x != x*``, i.i.d. Probabilities are quantized to
    multiples of 1/256 for ``q`` (8 random bits per coin) and 2^-24 for ``q_star``.

    Args:
        d: as in :func:`bernoulli_experts`.

    Returns:
        The :class:`jaxdp.Adversary` (params :class:`RealizableBernoulliParams`).
    """
    def loss(state, params, t):
        bytes_, u = _round_draws(state.key, t, d, 8)
        coins = bytes_ < jnp.round(params.q * 256.0).astype(jnp.uint32)
        coins = coins.at[state.star].set(u < params.q_star)
        return coins.astype(fdt())

    return _adversary(d, loss)


@checked_params(r=dict(lo=1))
class HalvingParams(NamedTuple):
    """``r >= 1`` (checked on the host).

    Attributes:
        r: rounds per epoch (>= 1).
    """
    r: jax.Array    # int32 rounds per halving epoch


@_experts_factory()
def adv_realizable_halving(d: int) -> Adversary:
    """``adv_realizable_halving(d, r)`` (REAL; docs/algorithms/realizable.md#environments): a uniform permutation π with
    ``π(x*) = 0``; in epoch ``e = floor(t / r)`` expert x is alive iff
    ``π(x) < ceil(d / 2^e)``; ``l_t(x) = 1[x dead]``. Realizable (x* never dies),
    forces ≈ log2(d) eliminations.

    Args:
        d: the number of experts.

    Returns:
        The :class:`jaxdp.Adversary` (params :class:`HalvingParams`).
    """
    def loss(state, params, t):
        e = jnp.minimum(t // jnp.maximum(params.r, 1), 40)
        alive_n = jnp.ceil(d / 2.0 ** e.astype(fdt()))
        return (state.perm.astype(fdt()) >= alive_n).astype(fdt())

    return _adversary(d, loss, with_perm=True)


@checked_params(T=dict(lo=1), eps=dict(lo=0.0, lo_open=True))
class RealizableLBParams(NamedTuple):
    """``T >= 1``, ``eps > 0`` finite (checked on the host).

    Attributes:
        T: the horizon (>= 1).
        eps: ε (> 0, finite).
    """
    T: jax.Array      # int32 horizon
    eps: jax.Array    # ε of the algorithm under attack


def realizable_lb_k(d, eps):
    """``k = ceil(ln d / (2 ε))`` rounds of the lower-bound construction (REAL Thm 5).

    Args:
        d: the number of experts.
        eps: the privacy parameter ε.

    Returns:
        k.
    """
    return jnp.ceil(jnp.log(jnp.asarray(d, jnp.float32)) / (2.0 * eps)).astype(jnp.int32)


@_experts_factory(minimum=2)
def adv_realizable_lb(d: int) -> Adversary:
    """REAL Theorem 5 (docs/algorithms/realizable.md#lower-bound): ``j ~ Unif[d]``; ``l_t ≡ 0`` for ``t < T - k`` and
    ``l_t = l_j`` (0 at j, 1 elsewhere) for the last ``k = ceil(ln d / (2ε))`` rounds.
    Every (ε, δ)-DP algorithm has ``E[Reg_T] >= Ω(log(d)/ε)``.

    Args:
        d: the number of experts (>= 2).

    Returns:
        The :class:`jaxdp.Adversary` (params :class:`RealizableLBParams`).
    """
    def loss(state, params, t):
        k = realizable_lb_k(d, params.eps)
        late = t >= jnp.asarray(params.T, jnp.int32) - k
        ell_j = jnp.ones((d,), fdt()).at[state.star].set(0.0)
        return jnp.where(late, ell_j, jnp.zeros((d,), fdt()))

    return _adversary(d, loss)


# --------------------------------------------------------------------------- replay


class _ReplayParams(NamedTuple):
    losses: jax.Array   # (T_data, d) losses in [0, 1]


class ReplayParams(_ReplayParams):
    """A ``(T_data, d)`` loss array, finite with every entry in ``[0, 1]`` and ``T_data, d >= 1``
    (checked on the host when given as a NumPy or JAX array; ``load_losses`` also loads files).

    Attributes:
        losses: a ``(T_data, d)`` loss array in ``[0, 1]``.
    """

    __slots__ = ()

    def __new__(cls, losses):
        if hasattr(losses, "shape") and hasattr(losses, "dtype"):
            from ..core.validation import _host_numeric

            host = _host_numeric(losses)
            if host is not None:
                if host.ndim < 2 or host.shape[-1] < 1 or host.shape[-2] < 1:
                    raise ValueError(f"ReplayParams: losses must be a (T_data, d) array with T_data >= 1 and "
                                     f"d >= 1, got shape {host.shape}")
                check_losses_in_range("ReplayParams: losses", host, 0.0, 1.0)
        return super().__new__(cls, losses)


REPLAY_PAST_END = ("error", "hold", "wrap")


@functools.lru_cache(maxsize=None)
def adv_replay(d: int, past_end: str = "error") -> Adversary:
    """Plays a user-supplied loss array: ``l_t = losses[t]``.

    Build the parameters with ``ReplayParams(load_losses(array_or_path, d))`` so the
    data are validated (finite, in [0, 1], 2-D with ``d`` columns). The array is
    an argument, not a compile-time constant, and is shared by all seeds.

    ``past_end`` says what happens for rounds beyond the data: ``"error"`` (default)
    refuses a horizon longer than the data (:func:`check_replay`; the host-side
    check run by ``jaxdp.core.validation.check_adversary_params``), ``"hold"``
    repeats the last row, ``"wrap"`` starts again from the first row
    (``l_t = losses[t mod T_data]``). Under tracing the contract is the caller's:
    with ``"error"`` and an unchecked horizon the last row is repeated. A loss
    array whose column count is not ``d`` is refused when the adversary is traced,
    before anything is compiled.

    Args:
        d: the number of experts.
        past_end: ``"error"``, ``"hold"`` or ``"wrap"``.

    Returns:
        The :class:`jaxdp.Adversary` (params :class:`ReplayParams`).
    """
    d = check_positive_int("d", d)
    check_choice("past_end", past_end, REPLAY_PAST_END)

    def loss(_, params, t):
        n, cols = params.losses.shape[-2], params.losses.shape[-1]
        if cols != d:
            raise ValueError(f"adv_replay(d={d}): the loss array has {cols} columns; it needs d={d} "
                             f"(shape {tuple(params.losses.shape)})")
        idx = t % n if past_end == "wrap" else jnp.minimum(t, n - 1)
        return jnp.asarray(params.losses)[idx].astype(fdt())

    def host_check(params, T):
        check_replay(params, d, T, past_end)

    adv = _adversary(d, loss, random_star=False)
    adv.loss.host_check = host_check  # type: ignore[attr-defined]  # read by jaxdp.core before compiling
    return adv


def check_replay(params: "ReplayParams", d: int, T: Any, past_end: str = "error") -> None:
    """Host-side checks of replayed data against ``d`` and the horizon ``T`` (an int or array).

    Args:
        params: the :class:`ReplayParams` holding the loss array (rows: rounds, columns: experts).
        d: the number of experts the adversary was built for.
        T: the horizon, an int or an array of horizons (the largest is checked), or ``None`` to skip that check.
        past_end: what the adversary does past the last row: ``"error"`` (then ``T`` must not exceed the rows),
            ``"wrap"`` or ``"hold"``.

    Raises:
        ValueError: the array does not have ``d`` columns, or ``T`` is longer than the data under
            ``past_end="error"``.
    """
    shape = np.shape(params.losses)
    if len(shape) < 2 or shape[-1] != d:
        raise ValueError(f"adv_replay: the loss array has shape {shape}; it needs d={d} columns")
    if past_end == "error" and T is not None:
        t_max = int(np.max(np.asarray(T)))
        if t_max > shape[-2]:
            raise ValueError(f"adv_replay: T={t_max} is longer than the data ({shape[-2]} rows); pass "
                             f"past_end='wrap' or past_end='hold' to adv_replay, or give more rows")


def load_losses(source: Any, d: int | None = None, *, key: str | None = None, skip_header: int = 0) -> np.ndarray:
    """Validate a loss array, or load one from ``.npy``, ``.npz`` (one array, or ``key=``), ``.csv`` or
    ``.txt`` (``skip_header`` rows skipped).

    Returns a float32 ``(T, d)`` array with every entry finite and in ``[0, 1]``.

    Args:
        source: an array, or a path to a ``.npy``, ``.npz``, ``.csv`` or ``.txt`` file.
        d: the expected number of columns (``None``: any).
        key: the array's name in a ``.npz`` file.
        skip_header: rows skipped in a text file.

    Returns:
        A float32 ``(T, d)`` array, finite, in ``[0, 1]``.

    Raises:
        ValueError: the data are not a finite 2-D array in ``[0, 1]`` with ``d`` columns, or the file cannot be read.
    """
    arr = load_array(source, "losses", key=key, skip_header=skip_header)
    where = f"losses file {os.fspath(source)!r}" if isinstance(source, (str, os.PathLike)) else "losses"
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ValueError(f"{where} must be a 2-D array (T, d) with T >= 1, got shape {arr.shape}")
    if d is not None and arr.shape[1] != d:
        raise ValueError(f"{where} must have d={d} columns, got shape {arr.shape}")
    check_losses_in_range(where, arr, 0.0, 1.0)
    return arr.astype(np.float32)
