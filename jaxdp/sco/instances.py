"""κ-growth instances for private SCO: data generators, objectives, minimizers, exact excess loss.

Source: GROWTH (Asi–Levy–Duchi 2021), Sec. 2, Thms 4-6; docs/algorithms/growth.md#setting, #instances. Every instance has domain ``X = B_2^d(0, R)``.

A sample is one row of a ``(n, m)`` float array. Each instance provides

* ``loss(x, s)`` — ``F(x; s)``; ``grad(x, s)`` — the minimum-norm subgradient of ``F(·; s)``;
* ``grad_lr(x, s)`` — (left, right) derivatives (``d = 1`` only; equal for smooth losses);
* ``sample(key, n)`` — ``n`` i.i.d. rows from ``P``;
* ``population_value(x)``, ``excess(x) = f(x) - f*`` (closed form, float64 when x64 is on),
  ``xstar``, ``fstar``; ``empirical_minimizer(data)`` where a closed form exists;
* constants ``L`` (Lipschitz on X), ``lam``, ``kappa`` of the ``(λ, κ)``-growth
  ``f(x) - f* >= (λ/κ) ||x - x*||^κ`` (GROWTH Assumption 1, RECONSTRUCTED display, docs/algorithms/growth.md#setting),
  and ``smooth`` (gradient-Lipschitz constant on X; ``inf`` if none).

Instances are cached (``functools.lru_cache``): the same arguments give the same object, so
jitted estimators compile once per instance. Excess losses reach 1e-10; evaluate them under
``jax.enable_x64()`` (the estimators in :mod:`jaxdp.sco` do).
"""
from __future__ import annotations

import dataclasses
import functools
import math
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from ..core.validation import check_choice, check_in_range, check_positive, check_positive_int

__all__ = [
    "SCOInstance", "inst_kappa_linear", "inst_kappa_1d_twopoint", "inst_kappa_regression", "inst_kappa_atom",
    "inst_sign_cube", "regression_constant", "growth_holds", "empirical_value", "empirical_grad", "growth_instance",
    "grid_floor", "GROWTH_INSTANCES", "check_sco_data",
]


@dataclasses.dataclass(frozen=True, eq=False)
class SCOInstance:
    """A convex SCO problem with (λ, κ)-growth on ``X = B_2^d(0, R)`` (see module docstring).

    Attributes:
        name: the instance's name.
        d: the dimension.
        m: the width of a sample row.
        R: the radius of ``X``.
        L: the Lipschitz constant on ``X``.
        lam, kappa: the ``(λ, κ)`` of the growth condition.
        smooth: the gradient-Lipschitz constant on ``X`` (``inf`` if none).
        loss: ``loss(x, s) = F(x; s)``.
        grad: ``grad(x, s)``, the minimum-norm subgradient of ``F(·; s)``.
        grad_lr: ``grad_lr(x, s)``, the (left, right) derivatives (``d = 1`` only), or ``None``.
        sample: ``sample(key, n)``, ``n`` i.i.d. rows from ``P``.
        population_value: ``f(x)``.
        excess: ``f(x) - f*`` in closed form.
        xstar: the population minimizer ``x*``.
        fstar: ``f*``.
        empirical_minimizer: ``empirical_minimizer(data)`` where a closed form exists, else ``None``.
        info: extra ``(name, value)`` pairs shown by ``repr``.
    """

    name: str
    d: int
    m: int                 # width of a sample row
    R: float
    L: float
    lam: float
    kappa: float
    smooth: float
    loss: Callable
    grad: Callable
    grad_lr: Optional[Callable]
    sample: Callable
    population_value: Callable
    excess: Callable
    xstar: tuple
    fstar: float
    empirical_minimizer: Optional[Callable] = None
    info: tuple = ()

    def __repr__(self) -> str:
        extra = ", ".join(f"{k}={v}" for k, v in self.info)
        return f"{self.name}(d={self.d}, kappa={self.kappa}, lam={self.lam:.4g}, L={self.L:.4g}, R={self.R}{', ' + extra if extra else ''})"


def _norm(x):
    return jnp.sqrt(jnp.sum(x * x, axis=-1))


def _pos_pow(base, e):
    """``base ** e`` for ``base > 0`` and a static exponent, without the generic power where a cheaper exact
    form exists (``e = 0``, ``±1/2``, integers): a float64 ``pow`` costs about 100 ns per element on CPU, and
    per-sample gradients inside the solvers' loops evaluate it ``n`` times per step."""
    e = float(e)
    if e == 0.0:
        return jnp.ones_like(base)
    if e == 0.5:
        return jnp.sqrt(base)
    if e == -0.5:
        return jax.lax.rsqrt(base)
    if e.is_integer() and abs(e) <= 8:
        return jax.lax.integer_pow(base, int(e))
    return base ** e


def _pow_norm_grad(v, kappa):
    """∇ (1/κ)||v||^κ = ||v||^{κ-2} v, with value 0 at v = 0 (κ > 1)."""
    sq = jnp.sum(v * v, axis=-1)
    pos = sq > 0
    safe = jnp.sqrt(jnp.where(pos, sq, 1.0))   # differentiable at v = 0 too (no sqrt(0) in the graph)
    return jnp.where(pos, _pos_pow(safe, kappa - 2.0), 0.0)[..., None] * v


def empirical_value(inst: SCOInstance, x, data):
    """``f_S(x) = (1/n) Σ F(x; s_i)``.

    Args:
        inst: the instance (:class:`SCOInstance`).
        x: the point ``(d,)``.
        data: the ``(n, m)`` dataset (one sample per row).

    Returns:
        ``f_S(x)``.
    """
    return jnp.mean(jax.vmap(lambda s: inst.loss(x, s))(data))


def empirical_grad(inst: SCOInstance, x, data):
    """Mean of the per-sample minimum-norm subgradients at ``x``.

    Args:
        inst, x, data: as in :func:`empirical_value`.

    Returns:
        The mean subgradient ``(d,)``.
    """
    return jnp.mean(jax.vmap(lambda s: inst.grad(x, s))(data), axis=0)


def growth_holds(inst: SCOInstance, xs, kappa: Optional[float] = None, lam: Optional[float] = None,
                 tol: float = 1e-12) -> np.ndarray:
    """For each row of ``xs``: ``f(x) - f* >= (λ/κ)||x - x*||^κ - tol`` (population growth check).

    Args:
        inst: the instance (:class:`SCOInstance`).
        xs: the ``(N, d)`` points.
        kappa: the exponent κ (``None``: the instance's).
        lam: the constant λ (``None``: the instance's).
        tol: the relative tolerance.

    Returns:
        A boolean ``(N,)`` array.
    """
    kappa = inst.kappa if kappa is None else kappa
    lam = inst.lam if lam is None else lam
    with jax.enable_x64():
        xs = jnp.asarray(xs, jnp.float64)
        ex = jax.vmap(inst.excess)(xs)
        dist = _norm(xs - jnp.asarray(inst.xstar, jnp.float64))
        return np.asarray(ex >= lam / kappa * dist ** kappa - tol * (1.0 + jnp.abs(ex)))


# --------------------------------------------------------------------------- (a) Theorem 4 family


@functools.lru_cache(maxsize=None)
def inst_kappa_linear(d: int, kappa: float, tau: float, *, a: float = 1.0, b: float = 1.0, R: float = 1.0,
                      dist: str = "fixed") -> SCOInstance:
    """GROWTH Theorem 4 family (docs/algorithms/growth.md#instances): ``F(x; s) = (a/κ)||x||^κ + b<x, s>``, ``s ∈ {±e_j}``, κ >= 2.

    ``dist="fixed"``: ``P(s = e_1) = (1+τ)/2``, ``P(s = -e_1) = (1-τ)/2`` (μ = τ e_1).
    ``dist="packing"``: ``j ~ Unif[d]``, sign with mean ``τ v_j`` for the fixed ``v = (1, -1, 1, ...)``
    (μ = τ v / d). Growth ``λ = a 2^{2-κ}`` (uniform convexity, Nesterov Lemma 4), ``L = aR^{κ-1} + b``.
    ``x* = -r* μ/||μ||`` with ``r* = (b||μ||/a)^{1/(κ-1)}`` (must be ``<= R``),
    ``f* = -(1 - 1/κ) a^{-1/(κ-1)} (b||μ||)^{κ/(κ-1)}``. For κ < 2 this family has no uniform κ-growth
    (GROWTH remark): use ``inst_kappa_1d_twopoint`` or ``inst_kappa_atom``.

    Args:
        d: the dimension.
        kappa: the growth exponent κ >= 2.
        tau: the bias τ of the sample distribution.
        a: the weight of the ``||x||^κ`` term.
        b: the weight of the linear term.
        R: the radius of ``X``.
        dist: ``"fixed"`` or ``"packing"``.

    Returns:
        The :class:`SCOInstance`.

    Raises:
        ValueError: invalid values, or ``r* > R``.
    """
    d = check_positive_int("d", d)
    check_in_range("kappa", kappa, 2.0, math.inf, hi_closed=False)
    check_in_range("tau", tau, 0.0, 1.0, lo_closed=False)
    for nm, val in (("a", a), ("b", b), ("R", R)):
        check_positive(nm, val)
    check_choice("dist", dist, ("fixed", "packing"))
    kappa, tau, a, b, R = float(kappa), float(tau), float(a), float(b), float(R)
    v: np.ndarray = np.where(np.arange(d) % 2 == 0, 1.0, -1.0)
    # NumPy float64 constants: converted at call time, so x64 runs keep full precision
    mu: np.ndarray = np.eye(d)[0] * tau if dist == "fixed" else np.asarray(tau * v / d)
    mnorm = float(np.linalg.norm(mu))
    rstar = (b * mnorm / a) ** (1.0 / (kappa - 1.0))
    if rstar > R:
        raise ValueError(f"inst_kappa_linear: the minimizer radius r*={rstar:.4g} exceeds R={R}; lower tau or b, or raise a")
    xstar = -rstar * mu / mnorm
    fstar = -(1.0 - 1.0 / kappa) * a ** (-1.0 / (kappa - 1.0)) * (b * mnorm) ** (kappa / (kappa - 1.0))

    def loss(x, s):
        return a / kappa * _norm(x) ** kappa + b * jnp.dot(x, s)

    def grad(x, s):
        return a * _pow_norm_grad(x, kappa) + b * s

    def sample(key, n):
        kj, ks = jax.random.split(key)
        u = jax.random.uniform(ks, (n,))
        if dist == "fixed":
            j = jnp.zeros((n,), jnp.int32)
            sign = jnp.where(u < (1.0 + tau) / 2.0, 1.0, -1.0)
        else:
            j = jax.random.randint(kj, (n,), 0, d)
            sign = jnp.where(u < (1.0 + tau * jnp.asarray(v, u.dtype)[j]) / 2.0, 1.0, -1.0)
        return jax.nn.one_hot(j, d, dtype=u.dtype) * sign[:, None]

    def population_value(x):
        return a / kappa * _norm(x) ** kappa + b * jnp.dot(x, jnp.asarray(mu, x.dtype))

    def excess(x):
        return jnp.maximum(population_value(x) - fstar, 0.0)

    def empirical_minimizer(data):
        m = jnp.mean(data, axis=0)
        mn = _norm(m)
        r = jnp.minimum((b * mn / a) ** (1.0 / (kappa - 1.0)), R)
        return -r * m / jnp.where(mn > 0, mn, 1.0)

    return SCOInstance(
        name="inst_kappa_linear", d=d, m=d, R=R, L=a * R ** (kappa - 1.0) + b, lam=a * 2.0 ** (2.0 - kappa),
        kappa=kappa, smooth=a * (kappa - 1.0) * R ** (kappa - 2.0), loss=loss, grad=grad,
        grad_lr=(lambda x, s: (grad(x, s), grad(x, s))) if d == 1 else None, sample=sample,
        population_value=population_value, excess=excess, xstar=tuple(float(t) for t in xstar), fstar=fstar,
        empirical_minimizer=empirical_minimizer, info=(("tau", tau), ("dist", dist)))


# --------------------------------------------------------------------------- (b) Theorem 5 two-point family


@functools.lru_cache(maxsize=None)
def inst_kappa_1d_twopoint(kappa: float, tau: float, sign: int = 1) -> SCOInstance:
    """Concrete GROWTH Theorem 5 instance (docs/algorithms/growth.md#instances; PROPOSED realization), ``κ ∈ (1, 2]``.

    ``d = 1``, ``X = [-1/2, 1/2]``, ``F(x; +1) = |x|``, ``F(x; -1) = |x - θ|``, ``θ = (κτ)^{1/(κ-1)}``,
    ``P(s = +1) = (1 + sign·τ)/2``. ``f_+`` is minimized at 0 and has ``(1, κ)``-growth (equality at θ);
    ``f_-`` is its mirror image, minimized at θ. ``L = 1``; excess is piecewise linear (exact).

    Args:
        kappa: the growth exponent κ in (1, 2].
        tau: the bias τ of the sample distribution.
        sign: the sign (±1) of the bias.

    Returns:
        The :class:`SCOInstance`.

    Raises:
        ValueError: invalid values, or ``θ > 1/2``.
    """
    check_in_range("kappa", kappa, 1.0, 2.0, lo_closed=False)
    check_in_range("tau", tau, 0.0, 1.0, lo_closed=False)
    check_choice("sign", sign, (1, -1))
    kappa, tau = float(kappa), float(tau)
    theta = (kappa * tau) ** (1.0 / (kappa - 1.0))
    if theta > 0.5:
        raise ValueError(f"inst_kappa_1d_twopoint: theta=(kappa*tau)^(1/(kappa-1))={theta:.4g} must be <= 1/2; lower tau")
    p = (1.0 + sign * tau) / 2.0
    xstar = 0.0 if sign == 1 else theta

    def centre(s):
        return jnp.where(s[0] > 0, 0.0, theta)

    def loss(x, s):
        return jnp.abs(x[0] - centre(s))

    def grad(x, s):
        return jnp.sign(x - centre(s))

    def grad_lr(x, s):
        z = x - centre(s)
        return jnp.where(z > 0, 1.0, -1.0), jnp.where(z >= 0, 1.0, -1.0)

    def sample(key, n):
        u = jax.random.uniform(key, (n, 1))
        return jnp.where(u < p, 1.0, -1.0)

    def population_value(x):
        return p * jnp.abs(x[0]) + (1.0 - p) * jnp.abs(x[0] - theta)

    fstar = p * abs(xstar) + (1.0 - p) * abs(xstar - theta)

    def excess(x):
        return jnp.maximum(population_value(x) - fstar, 0.0)

    def empirical_minimizer(data):
        ph = jnp.mean(data[:, 0] > 0)
        return jnp.where(ph >= 0.5, 0.0, theta)[None]

    return SCOInstance(
        name="inst_kappa_1d_twopoint", d=1, m=1, R=0.5, L=1.0, lam=1.0, kappa=kappa, smooth=math.inf, loss=loss,
        grad=grad, grad_lr=grad_lr, sample=sample, population_value=population_value, excess=excess,
        xstar=(xstar,), fstar=fstar, empirical_minimizer=empirical_minimizer,
        info=(("tau", tau), ("theta", theta), ("sign", sign)))


# --------------------------------------------------------------------------- (c) κ-norm regression


def regression_constant(d: int, kappa: float) -> float:
    """``c_{d,κ} = E|a_1|^κ`` for ``a ~ Unif(S^{d-1})`` = Γ(d/2)Γ((κ+1)/2) / (√π Γ((d+κ)/2)).

    Args:
        d: the dimension.
        kappa: the exponent κ.

    Returns:
        ``c_{d,κ}``.
    """
    return math.exp(math.lgamma(d / 2) + math.lgamma((kappa + 1) / 2) - 0.5 * math.log(math.pi)
                    - math.lgamma((d + kappa) / 2))


@functools.lru_cache(maxsize=None)
def inst_kappa_regression(d: int, kappa: float, *, R: float = 1.0) -> SCOInstance:
    """κ-norm regression (docs/algorithms/growth.md#instances; PROPOSED noiseless version of GROWTH's ``|b - <a,x>|^κ``).

    ``a ~ Unif(S^{d-1})``, ``b = <a, x0>`` with ``x0 = (R/4)(1,…,1)/√d``. Exactly
    ``f(x) = c_{d,κ}||x - x0||^κ``: ``(κ c_{d,κ}, κ)``-growth, ``f* = 0``, ``L = κ(1.5R)^{κ-1}``, any κ > 1.
    A sample row is ``(a, b)`` (width ``d + 1``). The ERM minimizer is ``x0`` whenever the ``a_i`` span R^d.

    Args:
        d: the dimension.
        kappa: the exponent κ > 1.
        R: the radius of ``X``.

    Returns:
        The :class:`SCOInstance`.

    Raises:
        ValueError: invalid values.
    """
    d = check_positive_int("d", d)
    check_in_range("kappa", kappa, 1.0, math.inf, lo_closed=False, hi_closed=False)
    check_positive("R", R)
    kappa, R = float(kappa), float(R)
    c = regression_constant(d, kappa)
    x0 = np.full(d, 0.25 * R / math.sqrt(d))

    def resid(x, s):
        return s[d] - jnp.dot(s[:d], x)

    def loss(x, s):
        return jnp.abs(resid(x, s)) ** kappa

    def grad(x, s):
        r = resid(x, s)
        return -kappa * jnp.abs(r) ** (kappa - 1.0) * jnp.sign(r) * s[:d]

    def sample(key, n):
        z = jax.random.normal(key, (n, d))
        a_ = z / _norm(z)[:, None]
        return jnp.concatenate([a_, (a_ @ jnp.asarray(x0, a_.dtype))[:, None]], axis=1)

    def population_value(x):
        return c * _norm(x - jnp.asarray(x0, x.dtype)) ** kappa

    return SCOInstance(
        name="inst_kappa_regression", d=d, m=d + 1, R=R, L=kappa * (1.5 * R) ** (kappa - 1.0), lam=kappa * c,
        kappa=kappa, smooth=kappa * (kappa - 1.0) * (1.5 * R) ** (kappa - 2.0) if kappa >= 2 else math.inf,
        loss=loss, grad=grad, grad_lr=(lambda x, s: (grad(x, s), grad(x, s))) if d == 1 else None, sample=sample,
        population_value=population_value, excess=population_value, xstar=tuple(float(t) for t in x0), fstar=0.0,
        empirical_minimizer=lambda data: jnp.broadcast_to(jnp.asarray(x0, data.dtype), (d,)), info=(("c", c),))


# --------------------------------------------------------------------------- (d) atom at the minimizer


@functools.lru_cache(maxsize=None)
def inst_kappa_atom(d: int, kappa: float, q: float = 0.5, *, R: float = 1.0) -> SCOInstance:
    """Fixed instance with exact κ-growth, κ ∈ (1, 2] (GROWTH Thms 4-6; docs/algorithms/growth.md#instances; PROPOSED).

    ``F(x; s) = (1/κ)||x - s||^κ``, ``s ~ q δ_0 + (1-q) Unif{±e_j}``. ``x* = 0``, ``(q, κ)``-growth,
    ``L = (R+1)^{κ-1}``, ``f(0) = (1-q)/κ``. The excess is evaluated without cancellation:
    ``f(x) - f(0) = (q/κ)||x||^κ + (1-q)/(2dκ) Σ_j [expm1((κ/2) log1p(||x||² ± 2x_j)) ...]``.

    Args:
        d: the dimension.
        kappa: the growth exponent κ in (1, 2].
        q: the mass of the atom at 0.
        R: the radius of ``X``.

    Returns:
        The :class:`SCOInstance`.

    Raises:
        ValueError: invalid values (``kappa <= 1``, ``q`` outside ``(0, 1]``, ``d`` or ``R`` not positive).
    """
    d = check_positive_int("d", d)
    check_in_range("kappa", kappa, 1.0, math.inf, lo_closed=False, hi_closed=False)
    check_in_range("q", q, 0.0, 1.0, lo_closed=False)
    check_positive("R", R)
    kappa, q, R = float(kappa), float(q), float(R)

    def loss(x, s):
        return _norm(x - s) ** kappa / kappa

    def grad(x, s):
        return _pow_norm_grad(x - s, kappa)

    def sample(key, n):
        ka, kj, ks = jax.random.split(key, 3)
        atom = jax.random.uniform(ka, (n,)) < q
        j = jax.random.randint(kj, (n,), 0, d)
        sign = jnp.where(jax.random.uniform(ks, (n,)) < 0.5, 1.0, -1.0)
        return jnp.where(atom[:, None], 0.0, jax.nn.one_hot(j, d) * sign[:, None])

    def excess(x):
        r2 = jnp.sum(x * x)
        em = lambda t: jnp.expm1(0.5 * kappa * jnp.log1p(t))
        sym = jnp.sum(em(r2 + 2 * x) + em(r2 - 2 * x))
        return q / kappa * _norm(x) ** kappa + (1.0 - q) / (2 * d * kappa) * sym

    fstar = (1.0 - q) / kappa

    def population_value(x):
        return fstar + excess(x)

    return SCOInstance(
        name="inst_kappa_atom", d=d, m=d, R=R, L=(R + 1.0) ** (kappa - 1.0), lam=q, kappa=kappa,
        smooth=(kappa - 1.0) * (R + 1.0) ** (kappa - 2.0) if kappa >= 2 else math.inf, loss=loss, grad=grad,
        grad_lr=(lambda x, s: (grad(x, s), grad(x, s))) if d == 1 else None, sample=sample,
        population_value=population_value, excess=excess, xstar=(0.0,) * d, fstar=fstar, info=(("q", q),))


# --------------------------------------------------------------------------- (e) Theorem 6 data


@functools.lru_cache(maxsize=None)
def inst_sign_cube(d: int, tau: float = 0.2, *, D: float = 1.0) -> SCOInstance:
    """GROWTH Theorem 6 data (docs/algorithms/growth.md#instances): ``s ∈ {±1/√d}^d``, ``F(x; s) = -<x, s>`` on ``B_2^d(D)``.

    Coordinates independent with ``P(s_j = +1/√d) = (1+τ)/2``, so ``μ = τ/√d · 1``, ``x* = Dμ/||μ||``,
    ``f* = -D||μ||``. No growth on its own (κ = ∞, λ = 0); with the regularization of GROWTH Prop. 3
    (docs/algorithms/growth.md#growth-reduction) it yields κ-growth ERM instances (``growth_reduction_erm``). ``L = 1``.

    Args:
        d: the dimension.
        tau: the bias τ of the sample distribution.
        D: the radius of the ball.

    Returns:
        The :class:`SCOInstance`.

    Raises:
        ValueError: invalid values.
    """
    d = check_positive_int("d", d)
    check_in_range("tau", tau, 0.0, 1.0, lo_closed=False)
    check_positive("D", D)
    tau, D = float(tau), float(D)
    mu = np.full(d, tau / math.sqrt(d))
    mnorm = float(np.linalg.norm(mu))

    def loss(x, s):
        return -jnp.dot(x, s)

    def grad(x, s):
        return -s

    def sample(key, n):
        u = jax.random.uniform(key, (n, d))
        return jnp.where(u < (1.0 + tau) / 2.0, 1.0, -1.0) / math.sqrt(d)

    def population_value(x):
        return -jnp.dot(x, jnp.asarray(mu, x.dtype))

    def excess(x):
        return D * mnorm + population_value(x)

    def empirical_minimizer(data):
        m = jnp.mean(data, axis=0)
        mn = _norm(m)
        return D * m / jnp.where(mn > 0, mn, 1.0)

    return SCOInstance(
        name="inst_sign_cube", d=d, m=d, R=D, L=1.0, lam=0.0, kappa=math.inf, smooth=0.0, loss=loss, grad=grad,
        grad_lr=(lambda x, s: (grad(x, s), grad(x, s))) if d == 1 else None, sample=sample,
        population_value=population_value, excess=excess, xstar=tuple(float(t) for t in D * mu / mnorm),
        fstar=-D * mnorm, empirical_minimizer=empirical_minimizer, info=(("tau", tau),))


#: the instances of docs/algorithms/growth.md#instances, by name (:func:`growth_instance`)
GROWTH_INSTANCES = ("regression", "atom", "linear", "linear_hard", "twopoint", "twopoint_hard")


def growth_instance(name: str, kappa: float, d: int, n: int) -> SCOInstance:
    """One instance of docs/algorithms/growth.md#instances by name, sized for ``n`` samples.

    Args:
        name: ``regression``, ``atom``, ``linear`` (τ = 1/2), ``twopoint``, or ``linear_hard`` /
            ``twopoint_hard`` whose bias shrinks as ``1/√n``.
        kappa: the growth exponent κ.
        d: the dimension (the two-point instances are 1-D).
        n: the sample size (the ``_hard`` instances' bias).

    Returns:
        The instance.

    Raises:
        ValueError: an unknown name.
    """
    tp = 0.5 ** (kappa - 1) / kappa
    make = {"regression": lambda: inst_kappa_regression(d, kappa), "atom": lambda: inst_kappa_atom(d, kappa, 0.5),
            "linear": lambda: inst_kappa_linear(d, kappa, 0.5),
            "linear_hard": lambda: inst_kappa_linear(d, kappa, min(0.5, 1.0 / math.sqrt(n))),
            "twopoint": lambda: inst_kappa_1d_twopoint(kappa, tp / 2),
            "twopoint_hard": lambda: inst_kappa_1d_twopoint(kappa, min(tp, 1.0 / math.sqrt(n)))}
    if name not in make:
        raise ValueError(f"unknown instance {name!r}")
    return make[name]()


def grid_floor(name: str, kappa: float, M: int) -> float:
    """The resolution floor of an ``M``-cell grid on a 1-D :func:`growth_instance`: the ERM excess of a uniform
    draw in a cell (``h = 2R/M``) with the minimizer on its edge.

    Args:
        name: ``"regression"`` (``h^κ/(κ+1)``) or a two-point instance (``(h/2)(1 + τ)/2``).
        kappa: the growth exponent κ.
        M: the number of grid cells.

    Returns:
        The floor.
    """
    ins = growth_instance(name, kappa, 1, 2)
    h = 2.0 * ins.R / M
    return h ** kappa / (kappa + 1.0) if name == "regression" else 0.5 * h * (1.0 + dict(ins.info)["tau"]) / 2.0


def check_sco_data(inst: SCOInstance, data, x0, *, min_rows: int = 1, what: str = "") -> None:
    """Host checks: ``data`` is ``(n, inst.m)`` with ``n >= min_rows``; ``x0`` is ``(d,)`` inside X.

    Args:
        inst: the instance (:class:`SCOInstance`).
        data: the ``(n, m)`` dataset (one sample per row).
        x0: the starting point.
        min_rows: the fewest rows allowed.
        what: text added to the error message.

    Raises:
        TypeError: ``inst`` is not an :class:`SCOInstance`.
        ValueError: wrong shapes, too few rows, or ``x0`` outside ``X``.
    """
    if not isinstance(inst, SCOInstance):
        raise TypeError(f"inst must be an SCOInstance (jaxdp.sco.inst_*), got {type(inst).__name__}")
    s = np.shape(data)
    if len(s) != 2 or s[1] != inst.m:
        raise ValueError(f"data must have shape (n, {inst.m}) for {inst.name}, got {s}")
    if s[0] < min_rows:
        raise ValueError(f"n={s[0]} samples is fewer than the number of phases {min_rows}{what}; "
                         "need at least one sample per phase")
    if np.shape(x0) != (inst.d,):
        raise ValueError(f"x0 must have shape ({inst.d},), got {np.shape(x0)}")
    if not isinstance(x0, jax.core.Tracer):
        xn = float(np.linalg.norm(np.asarray(x0, dtype=np.float64)))
        if not math.isfinite(xn) or xn > inst.R * (1 + 1e-9):
            raise ValueError(f"x0 must lie in X = B(0, {inst.R}), got ||x0|| = {xn}")
