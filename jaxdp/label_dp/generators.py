"""Data generators with known regression function / class probabilities (LABEL App. B, F, J; docs/algorithms/label-dp.md#lower-bounds, #generators, PROPOSED).

Every generator lives on ``X = [0,1]^d`` with ``X ~ Unif`` (density ``f ≡ 1``,
so Assumption 1(c),(d) of LABEL hold with ``c = 1``). A generator is a frozen,
hashable :class:`Generator` (constructors are cached, so jitted functions keyed
on it compile once) with three pure functions:

* ``instance(key, h0) -> theta``: the per-seed random part of the
  distribution (bump signs and locations for the minimax-hard constructions of
  LABEL App. B/F/J; an empty dict for fixed distributions). ``h0`` (traced) is
  the bump width; cells per axis ``m0 = max(1, round(1/h0))``, capped at the
  static ``m0_max``.
* ``eta(theta, x)``: class probabilities ``(..., K)`` (classification) or the
  regression function ``E[Y | X=x]`` ``(...,)``.
* ``labels(key, theta, x)``: labels given features.

``sample(gen, key, theta, N_max)`` draws ``N_max`` samples; a dataset of size
``N <= N_max`` is the first ``N`` rows (``mask = arange(N_max) < N``), so one
compilation serves every ``N`` and datasets of different sizes are nested.

Bumps: the tent ``φ(u) = Π_j (1 - 2|u_j|)_+`` (Hölder-β for every β ≤ 1 after
the ``h^β`` scaling, and margin exponent γ ≤ 1 holds at every scale), or the
smooth bump ``φ_1(u) = exp(1 - 1/(1-4u²))`` (``C^∞``, for β > 1).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from scipy import special

from ..core.types import fdt
from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int

__all__ = [
    "Generator", "sample", "quad_grid", "excess_risk",
    "gen_smooth_classification", "gen_margin_classification", "gen_bump_classification",
    "gen_smooth_regression", "gen_bump_regression", "gen_heavy_tail_regression",
    "student_t_abs_moment", "pareto_abs_moment", "task_generator",
]


@dataclasses.dataclass(frozen=True, eq=False)
class Generator:
    """A label-DP data distribution with exact ``eta`` (see module docstring).

    Attributes:
        name: the generator's name.
        task: ``"classification"`` or ``"regression"``.
        d: the dimension.
        K: the number of classes (0 for regression).
        instance: draws the instance's random parameters ``theta``.
        eta: the exact ``η(x)`` (class probabilities or regression function).
        labels: draws labels given ``x``.
        beta, gamma, L: Hölder exponent, margin exponent and Hölder constant that the construction satisfies.
        label_bound: ``T`` of Assumption 2 (``inf`` if unbounded).
        p, M_p: Assumption 3's moment: ``sup_x E[|Y|^p | x] <= M_p``.
        hard: the instance uses ``h0`` (minimax-hard).
        m0_max: the largest grid resolution per axis.
        info: further metadata.
    """

    name: str
    task: str
    d: int
    K: int
    instance: Callable[..., Any]
    eta: Callable[..., jax.Array]
    labels: Callable[..., jax.Array]
    beta: float = 1.0
    gamma: float = 1.0
    L: float = float("inf")
    label_bound: float = float("inf")
    p: float = float("inf")
    M_p: float = float("inf")
    hard: bool = False
    m0_max: int = 1
    info: tuple = ()

    def __repr__(self) -> str:
        return f"Generator({self.name}, task={self.task}, d={self.d}, K={self.K}, beta={self.beta}, gamma={self.gamma})"


def sample(gen: Generator, key: jax.Array, theta: Any, N_max: int):
    """``N_max`` i.i.d. samples ``(X (N_max, d) uniform on [0,1]^d, Y (N_max,))``.

    Args:
        gen: the :class:`Generator`.
        key: JAX PRNG key.
        theta: the instance's random parameters (from ``gen.instance``).
        N_max: the number of samples.

    Returns:
        ``(X, Y)``: ``X`` of shape ``(N_max, d)``, ``Y`` of shape ``(N_max,)``.
    """
    kx, ky = jax.random.split(key)
    X = jax.random.uniform(kx, (N_max, gen.d), dtype=fdt())
    return X, gen.labels(ky, theta, X)


@functools.lru_cache(maxsize=64)
def _grid_np(d: int, M: int) -> np.ndarray:
    g = (np.arange(M) + 0.5) / M
    mesh = np.meshgrid(*([g] * d), indexing="ij")
    return np.stack([m.ravel() for m in mesh], axis=-1)


def quad_grid(d: int, M: int) -> jax.Array:
    """Midpoint quadrature grid with ``M`` points per axis, shape ``(M^d, d)`` (weights ``M^{-d}``).

    Args:
        d: the dimension.
        M: points per axis.

    Returns:
        The grid, shape ``(M^d, d)``.
    """
    return jnp.asarray(_grid_np(int(d), int(M)), fdt())


def excess_risk(gen: Generator, theta: Any, grid: jax.Array, pred: jax.Array) -> jax.Array:
    """Exact excess risk of a fitted predictor by midpoint quadrature (``f ≡ 1``).

    Classification (LABEL Prop. 2, eq. (8)): ``∫ (η*(x) - η_{c(x)}(x)) dx`` for predicted
    classes ``pred`` (int, shape ``(M,)``). Regression (eq. (9)): ``∫ (η̂(x) - η(x))² dx`` for
    predicted values ``pred``.

    Args:
        gen: the :class:`Generator`.
        theta: the instance's random parameters (from ``gen.instance``).
        grid: the quadrature grid (:func:`quad_grid`).
        pred: predicted classes or values at the grid points.

    Returns:
        The excess risk.
    """
    e = gen.eta(theta, grid)
    if gen.task == "classification":
        chosen = jnp.take_along_axis(e, pred.astype(jnp.int32)[:, None], axis=-1)[:, 0]
        return jnp.mean(jnp.max(e, axis=-1) - chosen)
    return jnp.mean((pred - e) ** 2)


# --------------------------------------------------------------------------- bumps on a grid of cells


def _tent(u):
    return jnp.prod(jnp.clip(1.0 - 2.0 * jnp.abs(u), 0.0, 1.0), axis=-1)


def _smooth(u):
    s = 1.0 - 4.0 * u * u
    safe = jnp.where(s > 0, s, 1.0)
    return jnp.prod(jnp.where(s > 0, jnp.exp(1.0 - 1.0 / safe), 0.0), axis=-1)


def _cells(h0, m0_max: int):
    return jnp.clip(jnp.round(1.0 / jnp.asarray(h0, fdt())), 1, m0_max).astype(jnp.int32)


def _cell_of(x, m0):
    """Linear cell index and local coordinate ``u ∈ [-1/2, 1/2]^d`` of ``x`` in the ``m0^d`` grid."""
    d = x.shape[-1]
    idx = jnp.clip(jnp.floor(x * m0).astype(jnp.int32), 0, m0 - 1)
    u = x * m0 - idx - 0.5
    lin = jnp.sum(idx * (m0 ** jnp.arange(d, dtype=jnp.int32)), axis=-1)
    return lin, u


def _bump_instance(key, h0, d, m0_max, beta, gamma, C_M, all_cells: bool):
    """Random signs ``v`` and (for classification) a random set of ``m`` active cells."""
    m0 = _cells(h0, m0_max)
    G = m0 ** d
    Gmax = m0_max ** d
    ks, ka = jax.random.split(key)
    v = jnp.where(jax.random.bernoulli(ks, 0.5, (Gmax,)), 1.0, -1.0).astype(fdt())
    h = 1.0 / m0.astype(fdt())
    if all_cells:
        m = G
    else:
        m = jnp.minimum(G, jnp.floor(C_M * h ** (gamma * beta - d)).astype(jnp.int32))
        m = jnp.maximum(m, 1)
    score = jnp.where(jnp.arange(Gmax) < G, jax.random.uniform(ka, (Gmax,)), 2.0)
    rank = jnp.argsort(jnp.argsort(score))
    active = rank < m
    return {"m0": m0, "v": v * active}


def _bump_eval(theta, x, beta, A, shape):
    m0 = theta["m0"]
    lin, u = _cell_of(x, m0)
    h = 1.0 / m0.astype(fdt())
    phi = _tent(u) if shape == "tent" else _smooth(u)
    return A * h ** beta * theta["v"][lin] * phi


# --------------------------------------------------------------------------- classification


@functools.lru_cache(maxsize=None)
def gen_smooth_classification(d: int = 1, K: int = 2, freq: int = 1, amp: float = 0.4, s: float = 1.0,
                              phase: float = 0.7, random_phase: bool = False) -> Generator:
    """Fixed smooth class probabilities (LABEL; docs/algorithms/label-dp.md#generators): ``K = 2``: ``η_1(x) = 1/2 + amp·sin(2π·freq·x_1 + phase)``
    (the phase keeps the crossings off dyadic bin boundaries)
    (Lipschitz, β = 1, transversal crossings, γ = 1); ``K > 2``: ``η_j ∝ exp(s cos(2π(freq·x_1 - j/K)))``.

    Args:
        d: the dimension.
        K: the number of classes.
        freq: the frequency.
        amp: the amplitude.
        s: the sharpness for ``K > 2``.
        phase: the phase.
        random_phase: draw the phase per instance.

    Returns:
        The :class:`Generator`.
    """
    d = check_positive_int("d", d)
    K = check_positive_int("K", K, minimum=2)
    check_in_range("amp", amp, 0.0, 0.5, lo_closed=False)

    def eta(theta, x):
        x1 = x[..., 0]
        if K == 2:
            e1 = 0.5 + amp * jnp.sin(2 * jnp.pi * freq * x1 + theta.get("phase", phase))
            return jnp.stack([1.0 - e1, e1], axis=-1)
        j = jnp.arange(K, dtype=fdt())
        return jax.nn.softmax(s * jnp.cos(2 * jnp.pi * (freq * x1[..., None] - j / K) + theta.get("phase", phase)), axis=-1)

    def labels(key, theta, x):
        logits = jnp.log(jnp.maximum(eta(theta, x), 1e-30))
        return jax.random.categorical(key, logits, axis=-1).astype(jnp.int32)

    def instance(key, h0=None):
        # random_phase: a uniformly random phase per seed, so that averages over seeds do not depend on
        # where the class boundaries fall relative to the bin edges
        if random_phase:
            return {"phase": jax.random.uniform(key, (), fdt(), 0.0, 2 * jnp.pi)}
        return {}

    L = 2 * math.pi * freq * (amp if K == 2 else s)
    return Generator(f"smooth_classification(d={d},K={K},freq={freq})", "classification", d, K,
                     instance, eta, labels, beta=1.0, gamma=1.0, L=L, label_bound=float(K - 1))


@functools.lru_cache(maxsize=None)
def gen_margin_classification(a: float = 0.5) -> Generator:
    """``d = 1``, ``η_1(x) - 1/2 = ½ sign(x - ½)|2x - 1|^a`` (``0 < a ≤ 1``): Hölder β = a, margin
    γ = 1/a (``βγ = 1``, the largest allowed with an interior crossing in d = 1).

    Args:
        a: the exponent (``0 < a <= 1``).

    Returns:
        The :class:`Generator`.
    """
    check_in_range("a", a, 0.0, 1.0, lo_closed=False)

    def eta(theta, x):
        z = 2 * x[..., 0] - 1
        e1 = 0.5 + 0.5 * jnp.sign(z) * jnp.abs(z) ** a
        return jnp.stack([1.0 - e1, e1], axis=-1)

    def labels(key, theta, x):
        return jax.random.bernoulli(key, eta(theta, x)[..., 1]).astype(jnp.int32)

    return Generator(f"margin_classification(a={a})", "classification", 1, 2, lambda key, h0=None: {},
                     eta, labels, beta=float(a), gamma=1.0 / a, L=2.0 ** a, label_bound=1.0)


@functools.lru_cache(maxsize=None)
def gen_bump_classification(d: int = 1, beta: float = 1.0, gamma: float = 1.0, A: float = 0.5,
                            C_M: float = 1.0, m0_max: int = 1024, shape: str = "auto") -> Generator:
    """Minimax-hard classification (LABEL App. B eq. (36)–(37); docs/algorithms/label-dp.md#generators).

    ``K = 2``; ``η_1 - η_0 = A h^β Σ_k v_k φ((x - c_k)/h)`` over ``m = min(G, ⌊C_M h^{γβ-d}⌋)``
    random cells of the ``G = m0^d`` grid (side ``h = 1/m0``, ``m0 = round(1/h0)``) with random
    signs. ``A h^β ≤ 1/2`` keeps ``η_j ∈ [1/4, 3/4]``. With the tent (default for β ≤ 1) the
    margin condition holds with exponent ``γ ≤ 1`` at every scale; excess risk of any method
    scales as ``h0^{β(γ+1)}`` when ``h0`` is the lower-bound bandwidth.

    Args:
        d: the dimension.
        beta: the Hölder exponent β.
        gamma: the margin exponent γ.
        A: the amplitude.
        C_M: the constant of the number of bumps.
        m0_max: the largest grid resolution ``m0`` per axis.
        shape: the bump's shape (``"auto"``, ``"tent"``, ...).

    Returns:
        The :class:`Generator`.
    """
    d = check_positive_int("d", d)
    check_in_range("beta", beta, 0.0, 1.0 if shape == "tent" else 10.0, lo_closed=False)
    check_positive("gamma", gamma)
    check_in_range("A", A, 0.0, 0.5, lo_closed=False)
    shape = ("tent" if beta <= 1 else "smooth") if shape == "auto" else check_choice("shape", shape, ["tent", "smooth"])

    def instance(key, h0):
        return _bump_instance(key, h0, d, m0_max, beta, gamma, C_M, all_cells=False)

    def eta(theta, x):
        diff = _bump_eval(theta, x, beta, A, shape)
        return jnp.stack([(1 - diff) / 2, (1 + diff) / 2], axis=-1)

    def labels(key, theta, x):
        return jax.random.bernoulli(key, eta(theta, x)[..., 1]).astype(jnp.int32)

    L = A * (2.0 * d if shape == "tent" else 4.0 * d)
    return Generator(f"bump_classification(d={d},beta={beta},gamma={gamma})", "classification", d, 2,
                     instance, eta, labels, beta=float(beta), gamma=float(gamma), L=L, label_bound=1.0,
                     hard=True, m0_max=int(m0_max), info=(("A", A), ("C_M", C_M), ("shape", shape)))


# --------------------------------------------------------------------------- regression


@functools.lru_cache(maxsize=None)
def gen_smooth_regression(d: int = 1, T: float = 1.0, A: float = 0.5, noise: str = "binary") -> Generator:
    """Bounded regression (LABEL; docs/algorithms/label-dp.md#generators): ``η(x) = A Π_j sin(2π x_j)`` (``|η| ≤ A ≤ T/2``);
    ``noise="binary"``: ``Y ∈ {±T}`` with ``P(Y = T | x) = (1 + η/T)/2``; ``"uniform"``:
    ``Y = η + Unif[-T/2, T/2]``. ``|Y| ≤ T`` (Assumption 2).

    Args:
        d: the dimension.
        T: the label bound.
        A: the amplitude.
        noise: ``"binary"`` or ``"uniform"``.

    Returns:
        The :class:`Generator`.
    """
    d = check_positive_int("d", d)
    check_positive("T", T)
    check_in_range("A", A, 0.0, T / 2)
    check_choice("noise", noise, ["binary", "uniform"])

    def eta(theta, x):
        return A * jnp.prod(jnp.sin(2 * jnp.pi * x), axis=-1)

    def labels(key, theta, x):
        e = eta(theta, x)
        if noise == "binary":
            return jnp.where(jax.random.bernoulli(key, (1 + e / T) / 2), T, -T).astype(fdt())
        return e + jax.random.uniform(key, e.shape, fdt(), -T / 2, T / 2)

    return Generator(f"smooth_regression(d={d},T={T},{noise})", "regression", d, 0, lambda key, h0=None: {},
                     eta, labels, beta=1.0, L=2 * math.pi * A * math.sqrt(d), label_bound=float(T),
                     p=float("inf"), M_p=float(T))


@functools.lru_cache(maxsize=None)
def gen_bump_regression(d: int = 1, beta: float = 1.0, A: float = 0.5, m0_max: int = 1024,
                        shape: str = "auto") -> Generator:
    """Minimax-hard bounded regression (LABEL App. F eq. (121), CORRECTED ``/2``): bumps with random
    signs on all ``G`` cells, ``Y ∈ {±1}``, ``P(Y=1|x) = (1+η_v(x))/2``; ``|η_v| ≤ A h^β ≤ 1/2``.

    Args:
        d: the dimension.
        beta: the Hölder exponent β.
        A: the amplitude.
        m0_max: the largest grid resolution ``m0`` per axis.
        shape: the bump's shape (``"auto"``, ``"tent"``, ...).

    Returns:
        The :class:`Generator`.
    """
    d = check_positive_int("d", d)
    check_in_range("A", A, 0.0, 0.5, lo_closed=False)
    shape = ("tent" if beta <= 1 else "smooth") if shape == "auto" else shape

    def instance(key, h0):
        return _bump_instance(key, h0, d, m0_max, beta, 1.0, 1.0, all_cells=True)

    def eta(theta, x):
        return _bump_eval(theta, x, beta, A, shape)

    def labels(key, theta, x):
        return jnp.where(jax.random.bernoulli(key, (1 + eta(theta, x)) / 2), 1.0, -1.0).astype(fdt())

    return Generator(f"bump_regression(d={d},beta={beta})", "regression", d, 0, instance, eta, labels,
                     beta=float(beta), L=A * 2.0 * d, label_bound=1.0, M_p=1.0, hard=True, m0_max=int(m0_max))


def student_t_abs_moment(nu: float, p: float) -> float:
    """``E|t_ν|^p = ν^{p/2} Γ((p+1)/2) Γ((ν-p)/2) / (√π Γ(ν/2))`` (finite iff ν > p).

    Args:
        nu: the degrees of freedom ν.
        p: the moment order p.

    Returns:
        ``E|t_ν|^p`` (``inf`` unless ν > p).
    """
    if nu <= p:
        return float("inf")
    return float(nu ** (p / 2) * math.exp(special.gammaln((p + 1) / 2) + special.gammaln((nu - p) / 2)
                                          - special.gammaln(nu / 2)) / math.sqrt(math.pi))


def pareto_abs_moment(a: float, p: float) -> float:
    """``E[(U^{-1/a} - 1)^p] = a B(a - p, p + 1)`` (finite iff a > p).

    Args:
        a: the tail index.
        p: the moment order p.

    Returns:
        The moment (``inf`` unless a > p).
    """
    if a <= p:
        return float("inf")
    return float(a * math.exp(special.betaln(a - p, p + 1)))


@functools.lru_cache(maxsize=None)
def gen_heavy_tail_regression(d: int = 1, p: float = 2.0, family: str = "student_t", scale: float = 1.0,
                              A: float = 0.5, beta: float = 1.0, M_p: float = 1.0, m0_max: int = 1024) -> Generator:
    """Heavy-tailed regression (docs/algorithms/label-dp.md#generators; LABEL Assumption 3, App. J).

    * ``student_t``: ``Y = η(x) + s·t_ν``, ``ν = p + 1/2``;
    * ``pareto``: ``Y = η(x) ± s(U^{-1/a} - 1)``, ``a = p + 1/2`` (random sign);
    * ``three_point`` (minimax-hard, uses ``h0``): ``Y ∈ {-T, 0, T}`` with
      ``T = (M_p h^{-β}/2)^{1/(p-1)}``, ``E[Y|x] = η_v(x)`` (bumps of height ``A h^β``, ``A ≤ 2``)
      and ``E[|Y|^p | x] = M_p`` exactly (LABEL eq. (156)–(159)).

    For the first two ``η(x) = A Π_j sin(2π x_j)``, and ``M_p`` reported is the bound
    ``sup_x E|η(x) + ξ|^p ≤ 2^{p-1}(A^p + E|ξ|^p)`` with ``E|ξ|^p`` in closed form
    (``info["E_abs_xi_p"]``).

    Args:
        d: the dimension.
        p: the moment order p.
        family: ``"student_t"``, ``"pareto"`` or ``"three_point"``.
        scale: the noise scale ``s``.
        A: the amplitude.
        beta: the Hölder exponent β.
        M_p: the moment bound.
        m0_max: the largest grid resolution ``m0`` per axis.

    Returns:
        The :class:`Generator`.
    """
    d = check_positive_int("d", d)
    check_in_range("p", p, 2.0, 1e6)
    check_choice("family", family, ["student_t", "pareto", "three_point"])
    tail = p + 0.5

    if family == "three_point":
        check_in_range("A", A, 0.0, 2.0, lo_closed=False)

        def instance(key, h0):
            return _bump_instance(key, h0, d, m0_max, beta, 1.0, 1.0, all_cells=True)

        def eta(theta, x):
            return _bump_eval(theta, x, beta, A, "tent")

        def labels(key, theta, x):
            h = 1.0 / theta["m0"].astype(fdt())
            T = (0.5 * M_p * h ** (-beta)) ** (1.0 / (p - 1))
            e = eta(theta, x)
            q = M_p / T ** p
            u = jax.random.uniform(key, e.shape, fdt())
            p_plus = 0.5 * (q + e / T)
            p_minus = 0.5 * (q - e / T)
            return jnp.where(u < p_plus, T, jnp.where(u < p_plus + p_minus, -T, 0.0)).astype(fdt())

        return Generator(f"heavy_tail_regression(three_point,p={p})", "regression", d, 0, instance, eta, labels,
                         beta=float(beta), L=A * 2.0 * d, p=float(p), M_p=float(M_p), hard=True,
                         m0_max=int(m0_max), info=(("family", family),))

    check_positive("scale", scale)
    m_xi = scale ** p * (student_t_abs_moment(tail, p) if family == "student_t" else pareto_abs_moment(tail, p))

    def eta_sin(theta, x):
        return A * jnp.prod(jnp.sin(2 * jnp.pi * x), axis=-1)

    def labels_noisy(key, theta, x):
        e = eta_sin(theta, x)
        if family == "student_t":
            xi = jax.random.t(key, tail, e.shape, fdt())
        else:
            ks, ku = jax.random.split(key)
            u = jax.random.uniform(ku, e.shape, fdt(), minval=jnp.finfo(fdt()).tiny, maxval=1.0)
            sign = jnp.where(jax.random.bernoulli(ks, 0.5, e.shape), 1.0, -1.0)
            xi = sign * (u ** (-1.0 / tail) - 1.0)
        return e + scale * xi

    Mp = 2 ** (p - 1) * (A ** p + m_xi)
    return Generator(f"heavy_tail_regression({family},p={p})", "regression", d, 0, lambda key, h0=None: {},
                     eta_sin, labels_noisy, beta=1.0, L=2 * math.pi * A * math.sqrt(d), p=float(p), M_p=float(Mp),
                     info=(("family", family), ("E_abs_xi_p", m_xi), ("nu_or_a", tail)))


def task_generator(task: str, p: float = 0.0, K: int = 2, beta: float = 1.0, gamma: float = 1.0, *,
                   C_M: float = 2.0, m0_max: int = 4096) -> Generator:
    """The 1-D generator of a task of docs/algorithms/label-dp.md#studies.

    Args:
        task: ``"classification"`` (smooth, ``K`` classes, random phase), ``"regression"`` (smooth), ``"heavy"``
            (Student-t noise with ``p`` moments), ``"bump_cls"`` / ``"bump_reg"`` (the minimax-hard bumps of
            LABEL App. B/F).
        p: the heavy-tailed noise's moment order.
        K: the number of classes (``classification``).
        beta, gamma: the bumps' smoothness β and margin exponent γ (``bump_cls``).
        C_M: the bumps' count constant (``m = min(G, ⌊C_M h0^{γβ-d}⌋)``; ``bump_cls``).
        m0_max: the bumps' cells per axis at most (the smallest bump width).

    Returns:
        The :class:`Generator`.
    """
    if task == "classification":
        return gen_smooth_classification(1, int(K), random_phase=True)
    if task == "regression":
        return gen_smooth_regression(1)
    if task == "bump_cls":
        return gen_bump_classification(1, float(beta), float(gamma), C_M=C_M, m0_max=int(m0_max))
    if task == "bump_reg":
        return gen_bump_regression(1, float(beta), m0_max=int(m0_max))
    return gen_heavy_tail_regression(1, float(p), "student_t")
