"""Oblivious adversaries for online convex optimization (REAL; docs/guide/concepts.md#adversary; docs/algorithms/realizable.md#environments; PROPOSED environments).

As for the experts adversaries, ``loss(state, t)`` is a pure function of the
adversary's own key and the 0-indexed round ``t`` (``fold_in(key, t)``);
parameters are ``NamedTuple`` pytrees of traced scalars (vmappable), kept in
the adversary state. Build parameters with the ``*_params`` helpers, which
validate host inputs.

* :func:`adv_linear_oco` — linear losses ``g_t = L v_t`` for ``linear_problem``
  (L2P-RMW, DP-FTRL), three modes selected by a traced code:

  - ``"biased"``: with probability ``bias`` ``v_t = s* e_{j*}`` (a fixed signed
    coordinate drawn once), otherwise ``v_t = ±e_j`` with ``j`` uniform and a
    fair sign. ``E[g_t] = L bias s* e_{j*}``, so the best point
    ``-D s* e_{j*}`` beats the origin by ``≈ T L D bias``.
  - ``"rademacher"``: i.i.d. Rademacher coordinates scaled to norm ``L``
    (``v_t = r_t / sqrt(d)``).
  - ``"alternating"``: ``v_t = (-1)^{floor(t / B)} v`` for a fixed unit ``v``
    drawn once uniformly on the sphere (the OCO analogue of
    ``adv_alternating_batches``; worst case for batch-lazy methods, LAZY Thm 3.12; docs/algorithms/lazy.md#l2p-rmw).

* :func:`adv_smooth_realizable` (and its non-realizable twin :func:`adv_smooth_noisy`, ``sigma > 0``) — squared
  losses with ``a_t`` uniform on the unit sphere and ``b_t = <a_t, x*> + sigma xi_t`` (REAL Thm 4);
  :func:`adv_nonsmooth` the same rows for the absolute and logistic losses.
* :func:`adv_replay_oco` — replays validated user data (``load_oco_data``).
"""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..core.io import load_array
from ..core.types import Adversary, fdt
from ..core.validation import check_choice, check_nonneg, check_positive, check_positive_int, check_probability
from .problems import ABLoss

__all__ = [
    "LINEAR_MODES", "LinearOCOParams", "linear_oco_params", "adv_linear_oco",
    "SmoothRealizableParams", "smooth_realizable_params", "adv_smooth_realizable", "adv_smooth_noisy",
    "adv_nonsmooth", "ReplayOCOParams", "adv_replay_oco", "load_oco_data",
]

LINEAR_MODES = ("biased", "rademacher", "alternating")


def _with_params(init, loss_sp) -> Adversary:
    def init2(key, params):
        return (init(key, params), params)

    return Adversary(init=init2, loss=loss_sp)


# --------------------------------------------------------------------------- linear


class LinearOCOParams(NamedTuple):
    """Parameters of :func:`adv_linear_oco` (:func:`linear_oco_params`).

    Attributes:
        L: the gradient norm ``||g_t|| = L``.
        mode: the int32 index of the mode in ``LINEAR_MODES``.
        bias: the probability of the planted direction (``"biased"``).
        B: the int32 period of the sign flips (``"alternating"``).
    """
    L: jax.Array       # ||g_t|| = L
    mode: jax.Array    # int32 index into LINEAR_MODES
    bias: jax.Array    # probability of the planted direction ("biased")
    B: jax.Array       # int32 period of the sign flips ("alternating")


def linear_oco_params(mode: str = "biased", L: float = 1.0, bias: float = 0.2, B: int = 1) -> LinearOCOParams:
    """Validated parameters for :func:`adv_linear_oco`.

    Args:
        mode: one of ``LINEAR_MODES``.
        L: the gradient norm.
        bias: the probability of the planted direction.
        B: the period of the sign flips.

    Returns:
        :class:`LinearOCOParams`.

    Raises:
        ValueError: invalid values.
    """
    check_choice("mode", mode, LINEAR_MODES)
    check_positive("L", L)
    check_probability("bias", bias)
    B = check_positive_int("B", B)
    return LinearOCOParams(L=jnp.asarray(L, fdt()), mode=jnp.int32(LINEAR_MODES.index(mode)),
                           bias=jnp.asarray(bias, fdt()), B=jnp.int32(B))


class _LinState(NamedTuple):
    key: jax.Array
    star: jax.Array     # int32 planted coordinate
    sign: jax.Array     # ±1 planted sign
    v: jax.Array        # (d,) fixed unit vector (alternating)


@functools.lru_cache(maxsize=None)
def adv_linear_oco(d: int) -> Adversary:
    """Linear-loss adversary ``g_t = L v_t`` (modes in the module docstring; REAL, docs/algorithms/realizable.md#environments).

    Params: :func:`linear_oco_params` (``mode`` is traced, so modes can form a
    grid in one compilation). Random words per round: 2 + ``ceil(d/32)``.

    Args:
        d: the dimension.

    Returns:
        The :class:`jaxdp.Adversary`.
    """
    d = check_positive_int("d", d)
    words = -(-d // 32)

    def init(key, params):
        k_star, k_sign, k_v, k_loss = jax.random.split(key, 4)
        star = jax.random.randint(k_star, (), 0, d, dtype=jnp.int32)
        sign = jnp.where(jax.random.bernoulli(k_sign), 1.0, -1.0).astype(fdt())
        v = jax.random.normal(k_v, (d,), fdt())
        v = v / jnp.maximum(jnp.linalg.norm(v), 1e-30)
        return _LinState(key=k_loss, star=star, sign=sign, v=v)

    def loss(sp, t):
        st, p = sp
        bits = jax.random.bits(jax.random.fold_in(st.key, t), (words + 2,), dtype=jnp.uint32)
        shifts = jnp.arange(32, dtype=jnp.uint32)
        coins = ((bits[:words, None] >> shifts[None, :]) & 1).reshape(-1)[:d]
        rad = (2.0 * coins.astype(fdt()) - 1.0) / jnp.sqrt(jnp.asarray(d, fdt()))
        # biased: one uniform for the planted event, one word for (coordinate, sign)
        u = (bits[words] >> 8).astype(fdt()) * (1.0 / (1 << 24))
        w = bits[words + 1]
        j = ((w >> 1) % jnp.uint32(d)).astype(jnp.int32)
        s = jnp.where((w & 1) == 1, 1.0, -1.0).astype(fdt())
        planted = u < p.bias
        jj = jnp.where(planted, st.star, j)
        ss = jnp.where(planted, st.sign, s)
        biased = jax.nn.one_hot(jj, d, dtype=fdt()) * ss
        flip = ((t // jnp.maximum(p.B, 1)) % 2 == 1)
        alt = jnp.where(flip, -st.v, st.v)
        v = jnp.where(p.mode == 0, biased, jnp.where(p.mode == 1, rad, alt))
        return p.L * v

    return _with_params(init, loss)


# --------------------------------------------------------------------------- smooth realizable


class SmoothRealizableParams(NamedTuple):
    """Parameters of :func:`adv_smooth_realizable` and :func:`adv_smooth_noisy` (:func:`smooth_realizable_params`).

    Attributes:
        D: the domain radius (``||x*|| = D/2``).
        sigma: the noise of the targets (0: realizable).
        grid_h: ``> 0``: snap ``x*`` to the cell centres ``-D + h(i + 1/2)`` of the grid of spacing ``h``.
    """
    D: jax.Array       # domain radius; ||x*|| = D/2
    sigma: jax.Array   # target noise (0: realizable)
    grid_h: Any = 0.0  # > 0: snap x* to the cell centres -D + h(i + 1/2) of a grid of spacing h


def smooth_realizable_params(D: float = 1.0, sigma: float = 0.0, grid_h: float = 0.0) -> SmoothRealizableParams:
    """Validated parameters for :func:`adv_smooth_realizable` / :func:`adv_smooth_noisy`.

    ``grid_h > 0`` (PROPOSED, for the grid-net learners of REAL Thm 3 / App. C)
    snaps ``x*`` to the nearest cell centre of the grid with spacing ``h``
    (``ball_grid(D, d, m)`` with ``h = 2D/m``), so the instance is realizable
    on the net itself and the discretization error ``T L rho`` vanishes.
    Needs ``h <= D/2``.

    Args:
        D: the domain radius.
        sigma: the noise of the targets (0: realizable).
        grid_h: the spacing of the grid ``x*`` snaps to (0: no snapping).

    Returns:
        :class:`SmoothRealizableParams`.

    Raises:
        ValueError: invalid values, or ``grid_h > D/2``.
    """
    check_positive("D", D)
    check_nonneg("sigma", sigma)
    check_nonneg("grid_h", grid_h)
    if grid_h > D / 2:
        raise ValueError(f"grid_h must be <= D/2 = {D / 2} (so that the snapped x* stays in the ball), got {grid_h}")
    return SmoothRealizableParams(D=jnp.asarray(D, fdt()), sigma=jnp.asarray(sigma, fdt()),
                                  grid_h=jnp.asarray(grid_h, fdt()))


class _SmoothState(NamedTuple):
    key: jax.Array
    x_star: jax.Array   # (d,) the planted minimizer x*


@functools.lru_cache(maxsize=None)
def adv_smooth_realizable(d: int) -> Adversary:
    """``adv_smooth_realizable(d, D)`` (REAL; docs/algorithms/realizable.md#environments): squared losses ``ABLoss(a_t, b_t)`` with ``a_t``
    uniform on the unit sphere, ``b_t = <a_t, x*> + sigma xi_t``, ``||x*|| = D/2``.

    With ``sigma = 0``: ``L* = 0``; on the ball of radius ``D`` the loss is
    1-smooth and ``(3D/2 <= 2D)``-Lipschitz. Use with ``squared_problem(d, D)``.
    ``d + 1`` normals per round.

    Args:
        d: the dimension.

    Returns:
        The :class:`jaxdp.Adversary`.
    """
    d = check_positive_int("d", d)

    def init(key, params):
        k_star, k_loss = jax.random.split(key)
        u = jax.random.normal(k_star, (d,), fdt())
        xs = 0.5 * params.D * u / jnp.maximum(jnp.linalg.norm(u), 1e-30)
        h = jnp.asarray(params.grid_h, fdt())
        hs = jnp.maximum(h, 1e-30)
        snapped = -params.D + hs * (jnp.floor((xs + params.D) / hs) + 0.5)
        return _SmoothState(key=k_loss, x_star=jnp.where(h > 0, snapped, xs))

    def loss(sp, t):
        st, p = sp
        z = jax.random.normal(jax.random.fold_in(st.key, t), (d + 1,), fdt())
        a = z[:d] / jnp.maximum(jnp.linalg.norm(z[:d]), 1e-30)
        b = jnp.dot(a, st.x_star) + p.sigma * z[d]
        return ABLoss(a=a, b=b)

    return _with_params(init, loss)


def adv_smooth_noisy(d: int) -> Adversary:
    """The non-realizable twin of :func:`adv_smooth_realizable` (``b_t = <a_t, x*> + sigma xi_t``,
    ``xi_t ~ N(0, 1)``): the same adversary; pass ``smooth_realizable_params(D, sigma>0)``.

    Args:
        d: the dimension.

    Returns:
        The :class:`jaxdp.Adversary`.
    """
    return adv_smooth_realizable(d)


@functools.lru_cache(maxsize=None)
def adv_nonsmooth(d: int, loss: str) -> Adversary:
    """The noisy smooth adversary for a non-smooth loss (LAZY's RMW with MALA, docs/algorithms/lazy.md#rmw-nonsmooth).

    Args:
        d: the dimension.
        loss: ``"absolute"`` (:func:`adv_smooth_noisy` as it is, ``b = <a, x*> + σξ``) or ``"logistic"`` (the same
            rows with labels ``sign(b)``).

    Returns:
        The :class:`jaxdp.Adversary`; pass ``smooth_realizable_params(D, sigma)``.
    """
    base = adv_smooth_noisy(d)
    if loss == "absolute":
        return base

    def labels(sp, t):
        l = base.loss(sp, t)
        return ABLoss(a=l.a, b=jnp.where(l.b >= 0, 1.0, -1.0).astype(l.a.dtype))

    return Adversary(init=base.init, loss=labels)


# --------------------------------------------------------------------------- replay


class ReplayOCOParams(NamedTuple):
    """Parameters of :func:`adv_replay_oco`.

    Attributes:
        data: the ``(T_data, d)`` gradients (``kind="linear"``) or ``(T_data, d+1)`` rows ``[a, b]`` (``kind="ab"``).
    """
    data: jax.Array   # (T_data, d) gradients (kind="linear") or (T_data, d+1) rows [a, b] (kind="ab")


def load_oco_data(source: Any, d: int, kind: str = "linear", max_norm: float | None = None) -> np.ndarray:
    """Validate user OCO data, or load it from ``.npy``, ``.npz`` (first array), ``.csv`` or ``.txt``.

    ``kind="linear"``: a ``(T, d)`` array of gradients ``g_t``;
    ``kind="ab"``: a ``(T, d+1)`` array of rows ``[a_t, b_t]``. Entries must be
    finite; with ``max_norm``, every ``||g_t||`` (or ``||a_t||``) must be
    ``<= max_norm`` (the Lipschitz bound the privacy calibration assumes).
    Returns float32.

    Args:
        source: an array, or the path of a ``.npy``, ``.npz``, ``.csv`` or ``.txt`` file.
        d: the dimension.
        kind: ``"linear"`` or ``"ab"``.
        max_norm: the bound on the row norms (``None``: not checked).

    Returns:
        The float32 data array.

    Raises:
        ValueError: wrong shape, non-finite entries or a norm above ``max_norm``.
    """
    d = check_positive_int("d", d)
    check_choice("kind", kind, ("linear", "ab"))
    arr = load_array(source, "data")
    cols = d if kind == "linear" else d + 1
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] != cols:
        raise ValueError(f"data of kind={kind!r} must have shape (T, {cols}) with T >= 1 (d={d}), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"data must be finite, got {arr[tuple(bad)]!r} at index {tuple(int(i) for i in bad)}")
    if max_norm is not None:
        check_positive("max_norm", max_norm)
        norms = np.linalg.norm(arr[:, :d], axis=1)
        if norms.max() > max_norm * (1 + 1e-6):
            i = int(np.argmax(norms))
            raise ValueError(f"data row {i} has norm {norms[i]:.6g} > max_norm={max_norm}")
    return arr.astype(np.float32)


@functools.lru_cache(maxsize=None)
def adv_replay_oco(d: int, kind: str = "linear", past_end: str = "error") -> Adversary:
    """Replays user data ``ReplayOCOParams(load_oco_data(source, d, kind))``: ``g_t = data[t]``
    (``kind="linear"``) or ``ABLoss(data[t, :d], data[t, d])`` (``kind="ab"``). The array is a
    traced argument shared by all seeds.

    ``past_end``: ``"error"`` (default) refuses a horizon longer than the data (host-side check,
    ``jaxdp.core.validation.check_adversary_params``); ``"hold"`` repeats the last row; ``"wrap"``
    starts again from the first row. Under tracing the contract is the caller's (``"error"``
    then holds the last row).

    Args:
        d: the dimension.
        kind: ``"linear"`` (rows are gradients) or ``"ab"`` (rows ``[a, b]``).
        past_end: ``"error"``, ``"hold"`` or ``"wrap"`` (see above).

    Returns:
        The :class:`jaxdp.Adversary`.

    Raises:
        ValueError: the data do not fit ``kind`` and ``d``, or the horizon is longer than the data with
            ``past_end="error"``.
    """
    d = check_positive_int("d", d)
    check_choice("kind", kind, ("linear", "ab"))
    check_choice("past_end", past_end, ("error", "hold", "wrap"))

    def init(key, params):
        return jnp.zeros((), jnp.int32)

    def loss(sp, t):
        _, p = sp
        if p.data.shape[-1] != (d if kind == "linear" else d + 1):
            raise ValueError(f"replay data has {p.data.shape[-1]} columns; kind={kind!r} with d={d} needs "
                             f"{d if kind == 'linear' else d + 1}")
        n = p.data.shape[-2]
        row = jnp.asarray(p.data)[t % n if past_end == "wrap" else jnp.minimum(t, n - 1)].astype(fdt())
        if kind == "linear":
            return row
        return ABLoss(a=row[:d], b=row[d])

    def host_check(p, T):
        shape = np.shape(p.data)
        cols = d if kind == "linear" else d + 1
        if len(shape) < 2 or shape[-1] != cols:
            raise ValueError(f"adv_replay_oco: the data have shape {shape}; kind={kind!r} with d={d} needs {cols} "
                             f"columns")
        if past_end == "error" and T is not None and int(np.max(np.asarray(T))) > shape[-2]:
            raise ValueError(f"adv_replay_oco: T={int(np.max(np.asarray(T)))} is longer than the data ({shape[-2]} "
                             f"rows); pass past_end='wrap' or past_end='hold' to adv_replay_oco, or give more rows")

    loss.host_check = host_check  # type: ignore[attr-defined]  # read by jaxdp.core before compiling
    return _with_params(init, loss)
