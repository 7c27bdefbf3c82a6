"""DP-Sniper's benchmark: twenty mechanisms at claimed ε = 0.1 as registered audits (``jaxdp audit --suite dpsniper``).

The mechanisms of the evaluation of Bichsel, Steffen, Bogunovic, Vechev, "DP-Sniper: Black-Box
Discovery of Differential Privacy Violations using Classifiers" (IEEE S&P 2021), written as
jittable ``(key, a) -> output`` functions, each registered as ``dpsniper-<name>`` and audited with
the learned-event auditor (:func:`jaxdp.privacy.audit.audit_learned`) over the StatDP input patterns
(:func:`jaxdp.privacy.audit.pairs.pattern_pairs`) at confidence 0.9, the benchmark's setting. Inputs are
vectors of sensitivity-1 query answers; neighbours differ by at most 1 in every entry
(``componentwise``: report-noisy-max, the sparse vectors, prefix sums) or in one entry (the
others). ``Lap(b)``: Laplace noise of scale ``b``; ``Exp(b)``: exponential noise of scale ``b``.

* ``laplace``: ``a + Lap(1/ε)``. ε-DP.
* ``truncated-geometric``: Balcer–Vadhan GeoSample(ε, n = 5) ("Differential Privacy on Finite
  Computers", ITCS 2018, Alg. 4.8), exact integer sampling; it is ``ln(1 + 2^-⌈ln(2/ε)⌉)``-DP
  (their Thm 4.7), i.e. ``ln(9/8) = 0.1178`` at ε = 0.1: above the claim.
* ``noisy-hist-1``: ``a + Lap(1/ε)`` per cell (ε-DP); ``noisy-hist-2``: ``a + Lap(ε)`` (10-DP at
  ε = 0.1; Ding et al., "Detecting Violations of Differential Privacy", CCS 2018, Algs. 9–10).
* ``report-noisy-max-1``/``-2``: ``argmax(a + Lap(2/ε))`` / ``argmax(a + Exp(2/ε))`` (ε-DP);
  ``-3``/``-4`` release the noisy maximum VALUE instead (Ding et al. Algs. 5–8): ``-3`` is
  ``dε/2 = 0.25``-DP for ``d = 5``, ``-4`` is not DP at all (the support ``[max a, ∞)`` moves).
* ``svt-1`` … ``svt-6``: Algorithms 1–6 of Lyu, Su, Li, "Understanding the Sparse Vector Technique
  for Differential Privacy", PVLDB 10(6) 2017, with ``c = 1``, ``ε₁ = ε/2`` (Alg. 4: ``ε/4``),
  threshold ``t = 1`` (Alg. 1: ``0.5``), 10 queries, output TRUE = 1 / FALSE = 0 / ABORTED = −1 per
  query. Alg. 1 (``ρ = Lap(1/ε₁)``, ``ν = Lap(2c/ε₂)``) and Alg. 2 (the threshold noise ``Lap(c/ε₁)``
  redrawn after every TRUE) are ε-DP; Alg. 3 (releases the noisy value ``a_i + ν_i``, ``ν = Lap(c/ε₂)``,
  FALSE = −1000, ABORTED = −2000) is not DP; Alg. 4 (``ν = Lap(1/ε₂)``) is ``(1 + 6c)ε/4 = 0.175``-DP;
  Alg. 5 (no query noise) and Alg. 6 (never aborts) are not DP.
* ``numerical-svt`` (Wang, Ding, Wang, Kifer, Zhang, "Proving Differential Privacy with Shadow
  Execution", PLDI 2019): ``c = 2``, threshold noise ``Lap(3/ε)``, comparison noise ``Lap(6c/ε)``,
  released value ``a_i + Lap(3c/ε)`` for TRUE, 0 for FALSE, −1000 once aborted. ε-DP.
* ``rappor`` (Erlingsson, Pihur, Korolova, CCS 2014, steps 1–3): the value hashed into a Bloom
  filter of 20 bits by 4 MurmurHash3 functions (seeds 0–3 of the value's decimal string), permanent
  randomized response ``f = 0.75``, instantaneous ``p = 0.45``, ``q = 0.55``; ``one-time-rappor``:
  ``f = 0.95``, permanent response only. Their ε does not depend on the claim: with ``D`` filter
  bits that differ between the neighbours, ``D · ln(0.5125/0.4875)`` and ``D · ln(0.525/0.475)``;
  ``D = 6`` for the pair 0/1 here (0.30 and 0.60).
* ``laplace-parallel``: 20 copies of ``a + Lap(1/0.005)`` (0.1-DP by composition).
* ``svt34-parallel``: Algs. 3 and 4 with ``c = 2`` on the same input (not DP, Alg. 3 is not).
* ``prefix-sum``: the prefix sums of ``a + Lap(1/ε)`` (Wang et al. 2019): with every entry moving
  (the componentwise neighbourhood), ``10ε = 1``-DP.

``CLAIMED_EPS = 0.1`` for every entry (as in the benchmark); ``SUITE[name]`` records whether the
mechanism really is 0.1-DP (``broken``) and its exact privacy loss where known (``true_eps``).
"""
from __future__ import annotations

import functools
import math
import typing

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.privacy.accounting.floating import FLOAT32_DELTA_FLOOR, delta_float
from jaxdp.registry import register_audit
from jaxdp.privacy.audit.auditor import AuditReport
from jaxdp.privacy.audit.learned import Histogram, Logistic, MLP, audit_learned, flag_features, onehot_features
from jaxdp.privacy.audit.pairs import pattern_pairs
from ._dpsniper_primitives import bloom_filter, geo_sample_cdf, murmur3_32
from ._dpsniper_report import REFERENCE, _fmt_eps, suite_markdown  # noqa: F401

__all__ = ["SUITE", "CLAIMED_EPS", "CONFIDENCE", "REFERENCE", "murmur3_32", "bloom_filter", "geo_sample_cdf",
           "run_suite", "suite_names", "suite_markdown", "audit_suite_entry"]

CLAIMED_EPS = 0.1
CONFIDENCE = 0.9          # the benchmark's confidence for ε lower bounds
EPS = CLAIMED_EPS
N_QUERIES = 10
SUITE: dict[str, dict] = {}


# ----------------------------------------------------------------------------- mechanisms
def laplace(key, a):
    """The Laplace mechanism: ``a + Lap(1/ε)`` in every entry; ε-DP when one entry moves by at most 1.

    Args:
        key: typed PRNG key.
        a: the query answers, a float vector (length 1 in the suite).

    Returns:
        ``a`` plus independent ``Lap(1/ε)`` noise, of the shape of ``a``.
    """
    return a + (1.0 / EPS) * jax.random.laplace(key, a.shape)


_GEO_K, _GEO_D, _GEO_F = geo_sample_cdf()
_GEO_FJ = jnp.asarray(_GEO_F, jnp.int32)


def truncated_geometric(key, a):
    """Balcer–Vadhan GeoSample(ε, n = 5): a geometric around a count, truncated to ``[0, 5]``, sampled exactly.

    Draws ``u`` uniform on ``{1, …, d}`` and outputs the smallest ``z`` with ``F_c(z) >= u``, where ``F`` is the
    integer CDF of :func:`geo_sample_cdf`: no floating point enters the sampling. The mechanism is
    ``ln(1 + 2^-k)``-DP with ``k = ⌈ln(2/ε)⌉``, i.e. ``ln(9/8) = 0.1178`` at ε = 0.1, above the claimed ε.

    Args:
        key: typed PRNG key.
        a: a length-1 vector holding the count ``c`` (cast to an integer and clipped to ``[0, 5]``).

    Returns:
        The sampled ``z`` in ``[0, 5]``, an int32 scalar.
    """
    c = jnp.clip(a[0].astype(jnp.int32), 0, _GEO_F.shape[0] - 1)
    u = jax.random.randint(key, (), 1, _GEO_D + 1, dtype=jnp.int32)
    return jnp.argmax(_GEO_FJ[c] >= u).astype(jnp.int32)


def noisy_hist_1(key, a):
    """Noisy histogram (Ding et al., CCS 2018, Alg. 9): ``a + Lap(1/ε)`` per cell; ε-DP when one cell moves by 1.

    Args:
        key: typed PRNG key.
        a: the histogram's counts, a float vector (5 cells in the suite).

    Returns:
        The noisy counts, of the shape of ``a``.
    """
    return a + (1.0 / EPS) * jax.random.laplace(key, a.shape)


def noisy_hist_2(key, a):
    """Noisy histogram with the scale inverted (Ding et al., CCS 2018, Alg. 10): ``a + Lap(ε)`` per cell.

    The noise has scale ε instead of ``1/ε``, so the mechanism is only ``1/ε``-DP (10-DP at ε = 0.1).

    Args:
        key: typed PRNG key.
        a: the histogram's counts, a float vector (5 cells in the suite).

    Returns:
        The noisy counts, of the shape of ``a``.
    """
    return a + EPS * jax.random.laplace(key, a.shape)


def _exp_noise(key, shape, scale):
    return scale * jax.random.exponential(key, shape)


def report_noisy_max_1(key, a):
    """Report noisy max with Laplace noise: the index of the largest ``a_i + Lap(2/ε)``; ε-DP.

    Args:
        key: typed PRNG key.
        a: the query answers, each of sensitivity 1 (5 in the suite).

    Returns:
        The index of the noisy maximum, an int32 scalar.
    """
    return jnp.argmax(a + (2.0 / EPS) * jax.random.laplace(key, a.shape)).astype(jnp.int32)


def report_noisy_max_2(key, a):
    """Report noisy max with exponential noise: the index of the largest ``a_i + Exp(2/ε)``; ε-DP.

    Args:
        key, a: as in :func:`report_noisy_max_1`.

    Returns:
        The index of the noisy maximum, an int32 scalar.
    """
    return jnp.argmax(a + _exp_noise(key, a.shape, 2.0 / EPS)).astype(jnp.int32)


def report_noisy_max_3(key, a):
    """Noisy max with Laplace noise that releases the VALUE ``max_i (a_i + Lap(2/ε))`` instead of its index.

    Ding et al. (CCS 2018): releasing the value costs the budget of every answer, ``dε/2`` for ``d`` answers
    (0.25 at ``d = 5``, ε = 0.1), above the claimed ε.

    Args:
        key: typed PRNG key.
        a: the query answers, each of sensitivity 1 (5 in the suite).

    Returns:
        The noisy maximum, a float scalar.
    """
    return jnp.max(a + (2.0 / EPS) * jax.random.laplace(key, a.shape))


def report_noisy_max_4(key, a):
    """Noisy max with exponential noise that releases the VALUE ``max_i (a_i + Exp(2/ε))``; not DP at all.

    Exponential noise is non-negative, so the output is never below ``max a``: the support ``[max a, ∞)`` moves with
    the input, and an output between the two maxima of a neighbour pair has probability 0 under one of them.

    Args:
        key, a: as in :func:`report_noisy_max_3`.

    Returns:
        The noisy maximum, a float scalar.
    """
    return jnp.max(a + _exp_noise(key, a.shape, 2.0 / EPS))


def _abort_after(above, c):
    """TRUE = 1 / FALSE = 0 per query, ABORTED = −1 once ``c`` TRUEs were answered before it."""
    ab = above.astype(jnp.int32)
    before = jnp.cumsum(ab) - ab
    return jnp.where(before >= c, -1, ab), before >= c


def _svt_cmp(key, a, t, b_thr, b_q):
    k1, k2 = jax.random.split(key)
    rho = b_thr * jax.random.laplace(k1, ())
    nu = b_q * jax.random.laplace(k2, a.shape) if b_q > 0 else jnp.zeros_like(a)
    return a + nu, a + nu >= rho + t


def svt_1(key, a, c=1, t=0.5):
    """Sparse vector, Lyu–Su–Li Alg. 1: threshold ``t + Lap(1/ε₁)``, query noise ``Lap(2c/ε₂)``, abort after ``c``.

    The budget is split ``ε₁ = ε₂ = ε/2``. Query ``i`` is TRUE when ``a_i + ν_i >= t + ρ`` (``ρ`` drawn once); every
    query after the ``c``-th TRUE is ABORTED. ε-DP.

    Args:
        key: typed PRNG key.
        a: the query answers, each of sensitivity 1 (10 in the suite).
        c: the number of TRUE answers before the mechanism aborts.
        t: the public threshold.

    Returns:
        One int32 per query: 1 (TRUE), 0 (FALSE) or −1 (ABORTED).
    """
    e1 = EPS / 2
    _, above = _svt_cmp(key, a, t, 1.0 / e1, 2.0 * c / (EPS - e1))
    return _abort_after(above, c)[0]


def svt_2(key, a, c=1, t=1.0):
    """Sparse vector, Lyu–Su–Li Alg. 2: the threshold noise ``Lap(c/ε₁)`` is drawn afresh after every TRUE.

    ``ε₁ = ε₂ = ε/2``; query noise ``Lap(2c/ε₂)``; query ``i`` is TRUE when ``a_i + ν_i >= t + ρ`` for the current
    ``ρ``, and every query after the ``c``-th TRUE is ABORTED. ε-DP.

    Args:
        key, a, c, t: as in :func:`svt_1`.

    Returns:
        One int32 per query: 1 (TRUE), 0 (FALSE) or −1 (ABORTED).
    """
    e1 = EPS / 2
    k1, k2, k3 = jax.random.split(key, 3)
    nu = (2.0 * c / (EPS - e1)) * jax.random.laplace(k2, a.shape)
    fresh = (c / e1) * jax.random.laplace(k3, a.shape)

    def body(carry, inp):
        rho, count = carry
        v, r_new = inp
        above = v >= rho + t
        out = jnp.where(count >= c, -1, above.astype(jnp.int32))
        return (jnp.where(above, r_new, rho), count + above.astype(jnp.int32)), out

    rho0 = (c / e1) * jax.random.laplace(k1, ())
    _, out = jax.lax.scan(body, (rho0, jnp.int32(0)), (a + nu, fresh))
    return out


def svt_3(key, a, c=1, t=1.0):
    """Sparse vector, Lyu–Su–Li Alg. 3: a TRUE releases the noisy answer ``a_i + ν_i`` itself; not DP.

    ``ε₁ = ε/2``: threshold ``t + Lap(1/ε₁)``, query noise ``ν = Lap(c/ε₂)``; after ``c`` TRUEs every query is
    ABORTED. Releasing the noisy answers of the TRUE queries leaks beyond any finite ε.

    Args:
        key, a, c, t: as in :func:`svt_1`.

    Returns:
        One float per query: the noisy answer (TRUE), −1000 (FALSE) or −2000 (ABORTED).
    """
    e1 = EPS / 2
    noisy, above = _svt_cmp(key, a, t, 1.0 / e1, c / (EPS - e1))
    _, aborted = _abort_after(above, c)
    return jnp.where(aborted, -2000.0, jnp.where(above, noisy, -1000.0))


def svt_4(key, a, c=1, t=1.0):
    """Sparse vector, Lyu–Su–Li Alg. 4: ``ε₁ = ε/4`` and query noise ``Lap(1/ε₂)`` that does not grow with ``c``.

    Threshold ``t + Lap(1/ε₁)``, query noise ``Lap(1/ε₂)`` with ``ε₂ = 3ε/4``, abort after ``c`` TRUEs. The query
    noise is too small for ``c`` answers: the mechanism is ``(1 + 6c)ε/4``-DP (0.175 at ``c = 1``, ε = 0.1).

    Args:
        key, a, c, t: as in :func:`svt_1`.

    Returns:
        One int32 per query: 1 (TRUE), 0 (FALSE) or −1 (ABORTED).
    """
    e1 = EPS / 4
    _, above = _svt_cmp(key, a, t, 1.0 / e1, 1.0 / (EPS - e1))
    return _abort_after(above, c)[0]


def svt_5(key, a, c=1, t=1.0):
    """Sparse vector, Lyu–Su–Li Alg. 5: threshold noise ``Lap(2/ε)`` only, no query noise, never aborts; not DP.

    Args:
        key, a, t: as in :func:`svt_1`.
        c: unused (Alg. 5 never aborts); kept so every sparse vector has the same signature.

    Returns:
        One int32 per query: 1 (``a_i >= t + ρ``) or 0.
    """
    e1 = EPS / 2
    _, above = _svt_cmp(key, a, t, 1.0 / e1, 0.0)
    return above.astype(jnp.int32)


def svt_6(key, a, c=1, t=1.0):
    """Sparse vector, Lyu–Su–Li Alg. 6: threshold ``t + Lap(2/ε)``, query noise ``Lap(2/ε)``, never aborts; not DP.

    Without a cutoff every TRUE answer costs privacy, and nothing bounds how many are given.

    Args:
        key, a, t: as in :func:`svt_1`.
        c: unused (Alg. 6 never aborts); kept so every sparse vector has the same signature.

    Returns:
        One int32 per query: 1 (TRUE) or 0 (FALSE).
    """
    e1 = EPS / 2
    _, above = _svt_cmp(key, a, t, 1.0 / e1, 1.0 / (EPS - e1))
    return above.astype(jnp.int32)


def numerical_svt(key, a, c=2, t=1.0):
    """Numerical sparse vector (Wang et al., PLDI 2019): a TRUE releases a freshly noised answer; ε-DP.

    Threshold ``t + Lap(3/ε)``, comparison noise ``Lap(6c/ε)`` per query; a TRUE query releases ``a_i + Lap(3c/ε)``
    (noise independent of the comparison), a FALSE one 0, and every query after the ``c``-th TRUE −1000.

    Args:
        key, a, c, t: as in :func:`svt_1`.

    Returns:
        One float per query: the noisy answer (TRUE), 0 (FALSE) or −1000 (ABORTED).
    """
    k1, k2, k3 = jax.random.split(key, 3)
    rho1 = (3.0 / EPS) * jax.random.laplace(k1, ())
    rho2 = (6.0 * c / EPS) * jax.random.laplace(k2, a.shape)
    rho3 = (3.0 * c / EPS) * jax.random.laplace(k3, a.shape)
    above = a + rho2 >= t + rho1
    _, aborted = _abort_after(above, c)
    return jnp.where(aborted, -1000.0, jnp.where(above, a + rho3, 0.0))


RAPPOR_DOMAIN = (-10, 10)
_BLOOM = jnp.asarray(np.stack([bloom_filter(v) for v in range(RAPPOR_DOMAIN[0], RAPPOR_DOMAIN[1] + 1)]))


def _permanent(key, bits, f):
    u = jax.random.uniform(key, bits.shape)
    return jnp.where(u < f / 2, 1.0, jnp.where(u < f, 0.0, bits))


def rappor(key, a, f=0.75, p=0.45, q=0.55):
    """RAPPOR (Erlingsson, Pihur, Korolova, CCS 2014, steps 1–3) of one integer value.

    The value's 20-bit Bloom filter (:func:`bloom_filter`, 4 hashes) goes through the permanent randomized response
    (each bit set to 1 with probability ``f/2``, to 0 with ``f/2``, kept otherwise) and then the instantaneous one
    (report 1 with probability ``q`` for a 1, ``p`` for a 0). Its ε does not depend on the claim: ``D · ln(0.5125 /
    0.4875)`` for ``D`` filter bits that differ between the neighbours (0.30 for the pair 0/1).

    Args:
        key: typed PRNG key.
        a: a length-1 vector holding the value, an integer in ``[−10, 10]`` (clipped to it).
        f: the probability of the permanent response replacing a bit by a fair coin.
        p: the probability of reporting 1 for a permanent bit 0.
        q: the probability of reporting 1 for a permanent bit 1.

    Returns:
        The 20 reported bits, as float32.
    """
    k1, k2 = jax.random.split(key)
    bits = _BLOOM[jnp.clip(a[0].astype(jnp.int32) - RAPPOR_DOMAIN[0], 0, _BLOOM.shape[0] - 1)]
    b = _permanent(k1, bits, f)
    return (jax.random.uniform(k2, b.shape) < jnp.where(b > 0, q, p)).astype(jnp.float32)


def one_time_rappor(key, a, f=0.95):
    """One-time RAPPOR: the permanent randomized response of the value's Bloom filter only, ``f = 0.95``.

    Each of the 20 bits (:func:`bloom_filter`, 4 hashes) is set to 1 with probability ``f/2``, to 0 with ``f/2`` and
    kept otherwise; ``D · ln(0.525/0.475)``-DP for ``D`` filter bits that differ between the neighbours (0.60 for the
    pair 0/1), whatever the claim.

    Args:
        key: typed PRNG key.
        a: a length-1 vector holding the value, an integer in ``[−10, 10]`` (clipped to it).
        f: the probability of replacing a bit by a fair coin.

    Returns:
        The 20 reported bits, as float32.
    """
    bits = _BLOOM[jnp.clip(a[0].astype(jnp.int32) - RAPPOR_DOMAIN[0], 0, _BLOOM.shape[0] - 1)]
    return _permanent(key, bits, f)


def laplace_parallel(key, a, n=20, eps_each=0.005):
    """``n`` independent Laplace releases of one answer, ``a[0] + Lap(1/eps_each)`` each.

    ``n · eps_each``-DP by composition (0.1 with the defaults).

    Args:
        key: typed PRNG key.
        a: a length-1 vector holding the answer.
        n: the number of releases.
        eps_each: the ε of each release.

    Returns:
        The ``n`` noisy copies of ``a[0]``.
    """
    return a[0] + (1.0 / eps_each) * jax.random.laplace(key, (n,))


def svt34_parallel(key, a):
    """Lyu–Su–Li Algs. 3 and 4 (``c = 2``, ``t = 1``) run with independent keys on the same answers; not DP.

    Not DP because Alg. 3 (:func:`svt_3`) is not.

    Args:
        key: typed PRNG key.
        a: the query answers, each of sensitivity 1 (10 in the suite).

    Returns:
        ``svt_3``'s outputs followed by ``svt_4``'s (as float32), one per query each.
    """
    k3, k4 = jax.random.split(key)
    return jnp.concatenate([svt_3(k3, a, c=2, t=1.0), svt_4(k4, a, c=2, t=1.0).astype(jnp.float32)])


def prefix_sum(key, a):
    """Prefix sums of the noisy answers: the cumulative sums of ``a + Lap(1/ε)`` (Wang et al., PLDI 2019).

    ε-DP when one entry moves; with every entry moving by 1 (the componentwise neighbourhood of the suite) the
    privacy loss adds up over the entries, ``10ε = 1`` for 10 answers.

    Args:
        key: typed PRNG key.
        a: the answers, each of sensitivity 1 (10 in the suite).

    Returns:
        The noisy prefix sums, of the shape of ``a``.
    """
    return jnp.cumsum(a + (1.0 / EPS) * jax.random.laplace(key, a.shape))


# ----------------------------------------------------------------------------- features
_B3 = (3 ** np.arange(N_QUERIES)).astype(np.int32)
_B2 = (2 ** np.arange(N_QUERIES)).astype(np.int32)


def _code3(out):
    """TRUE/FALSE/ABORTED answers of 10 queries as one cell in ``[0, 3^10)``."""
    return jnp.sum((jnp.asarray(out).astype(jnp.int32) + 1) * _B3)


def _code2(out):
    """TRUE/FALSE answers of 10 queries as one cell in ``[0, 2^10)``."""
    return jnp.sum(jnp.asarray(out).astype(jnp.int32) * _B2)


def _svt34_features(out):
    return jnp.concatenate([flag_features((-1000.0, -2000.0))(out[:N_QUERIES]),
                            onehot_features(3, 1)(out[N_QUERIES:])])


_LOG = Logistic()
_MLP1 = MLP(steps=400)          # scalar / small outputs
_MLP = MLP(steps=300, batch=2048)


def _spec(fn, d, componentwise, classifiers, true_eps, broken, *, lo=None, hi=None, dtype=np.float32,
          cost=1, floor=("laplace", 1)):
    return dict(mechanism=fn, d=d, componentwise=componentwise, classifiers=tuple(classifiers), true_eps=true_eps,
                broken=broken, lo=lo, hi=hi, dtype=dtype, cost=cost, floor=floor)


def _rappor_d():
    return int(np.sum(bloom_filter(0) != bloom_filter(1)))


_RAP_LOSS = math.log(0.5125 / 0.4875)
_OTR_LOSS = math.log(0.525 / 0.475)

# name -> spec (d: input length; cost: relative sampling cost, scales the full-size sample counts down)
_SPECS = {
    "laplace": _spec(laplace, 1, False, [_LOG], 0.1, False),
    "truncated-geometric": _spec(truncated_geometric, 1, False, [Histogram(6), Logistic(onehot_features(6))],
                                 math.log(1 + 2.0 ** -_GEO_K), True, lo=0, hi=5, dtype=np.int32, floor=None),
    "noisy-hist-1": _spec(noisy_hist_1, 5, False, [_LOG], 0.1, False, floor=("laplace", 5)),
    "noisy-hist-2": _spec(noisy_hist_2, 5, False, [_LOG], 1.0 / EPS, True, floor=("laplace", 5)),
    "report-noisy-max-1": _spec(report_noisy_max_1, 5, True, [Histogram(5)], 0.1, False, floor=("laplace", 5)),
    "report-noisy-max-2": _spec(report_noisy_max_2, 5, True, [Histogram(5)], 0.1, False, floor=("laplace", 5)),
    "report-noisy-max-3": _spec(report_noisy_max_3, 5, True, [_LOG, _MLP1], 5 * EPS / 2, True,
                                floor=("laplace", 5)),
    "report-noisy-max-4": _spec(report_noisy_max_4, 5, True, [_LOG, _MLP1], math.inf, True, floor=("laplace", 5)),
    "svt-1": _spec(svt_1, N_QUERIES, True, [Histogram(3 ** N_QUERIES, _code3)], 0.1, False, cost=2,
                   floor=("laplace", N_QUERIES + 1)),
    "svt-2": _spec(svt_2, N_QUERIES, True, [Histogram(3 ** N_QUERIES, _code3)], 0.1, False, cost=3,
                   floor=("laplace", 2 * N_QUERIES + 1)),
    "svt-3": _spec(svt_3, N_QUERIES, True, [Logistic(flag_features((-1000.0, -2000.0))),
                                             MLP(flag_features((-1000.0, -2000.0)), steps=300, batch=2048)],
                   math.inf, True, cost=2, floor=("laplace", N_QUERIES + 1)),
    "svt-4": _spec(svt_4, N_QUERIES, True, [Histogram(3 ** N_QUERIES, _code3)], (1 + 6) / 4 * EPS, True, cost=2,
                   floor=("laplace", N_QUERIES + 1)),
    "svt-5": _spec(svt_5, N_QUERIES, True, [Histogram(2 ** N_QUERIES, _code2)], math.inf, True, cost=2,
                   floor=("laplace", 1)),
    "svt-6": _spec(svt_6, N_QUERIES, True, [Histogram(2 ** N_QUERIES, _code2), Logistic()], math.inf, True,
                   cost=2, floor=("laplace", N_QUERIES + 1)),
    "numerical-svt": _spec(numerical_svt, N_QUERIES, True, [Logistic(flag_features((0.0, -1000.0)))], 0.1, False,
                           cost=3, floor=("laplace", 2 * N_QUERIES + 1)),
    "rappor": _spec(rappor, 1, False, [_LOG], _rappor_d() * _RAP_LOSS, True, lo=RAPPOR_DOMAIN[0],
                    hi=RAPPOR_DOMAIN[1], dtype=np.int32, cost=2, floor=("bernoulli", 40)),
    "one-time-rappor": _spec(one_time_rappor, 1, False, [_LOG], _rappor_d() * _OTR_LOSS, True,
                             lo=RAPPOR_DOMAIN[0], hi=RAPPOR_DOMAIN[1], dtype=np.int32, cost=2,
                             floor=("bernoulli", 20)),
    "laplace-parallel": _spec(laplace_parallel, 1, False, [_LOG], 0.1, False, cost=2, floor=("laplace", 20)),
    "svt34-parallel": _spec(svt34_parallel, N_QUERIES, True, [Logistic(_svt34_features)], math.inf, True, cost=4,
                            floor=("laplace", 2 * N_QUERIES + 2)),
    "prefix-sum": _spec(prefix_sum, N_QUERIES, True, [_LOG, _MLP], N_QUERIES * EPS, True, cost=2,
                        floor=("laplace", N_QUERIES)),
}

#: runs per input: (n_train, n_select, n_eval, n_refine) at quick and at full size (full: divided by ``cost``)
QUICK = (10_000, 25_000, 100_000, 0)
FULL = (1_000_000, 1_000_000, 10_000_000, 5_000_000)
#: runs per input on an accelerator: DP-Sniper's 2·10⁸ fresh runs for every mechanism (not divided by ``cost``),
#: counted on the device in chunks of ``DEVICE_BATCH``
DEVICE = (2_000_000, 2_000_000, 200_000_000, 20_000_000)
DEVICE_BATCH = 1 << 20


def suite_names() -> list:
    """The registered audit names of the suite, ``dpsniper_<mechanism>`` (the registry's spelling: underscores;
    ``dpsniper-<mechanism>`` is an alias), in the benchmark's order.

    Returns:
        The twenty names, e.g. ``"dpsniper_laplace"``.
    """
    return [f"dpsniper_{k}".replace("-", "_") for k in _SPECS]


@functools.lru_cache(maxsize=None)
def _pairs(name: str) -> dict:
    s = _SPECS[name]
    return pattern_pairs(s["d"], componentwise=s["componentwise"], dtype=s["dtype"], lo=s["lo"], hi=s["hi"])


def _floor(name: str, eps: float) -> float:
    """Float δ floor of the mechanism's draws (``jaxdp.privacy.accounting.floating``); integer sampling: ``2^-23``."""
    fl = _SPECS[name]["floor"]
    if fl is None:
        return FLOAT32_DELTA_FLOOR
    kind, d = fl
    return delta_float(kind, eps=eps, draws=d) if kind == "bernoulli" else delta_float(kind, eps=eps, d=d)


def audit_suite_entry(name: str, *, quick: bool = False, seed: int = 0, claim_factor: float = 1.0,
                      sizes=None, confidence: float = CONFIDENCE, n_best: int = 2,
                      device: bool = False, n_rerank: int = 0) -> AuditReport:
    """Audit one mechanism of the suite at ``confidence``.

    Args:
        name: the mechanism, without the ``dpsniper-`` prefix.
        quick: use the ``QUICK`` sizes (CI and false-alarm runs).
        seed: the auditor's seed.
        claim_factor: audit the claim ``0.1 / claim_factor`` instead of 0.1 (power studies).
        sizes: ``(n_train, n_select, n_eval, n_refine)`` runs per input, overriding the presets.
        confidence: ``1 - α`` of the family-wise bound.
        n_best: candidates evaluated on fresh runs.
        device: DP-Sniper's sample size (``DEVICE``: 2·10⁸ fresh runs per input) with the fresh runs counted
            on the device (:func:`jaxdp.privacy.audit.learned.count_event_on_device`); meant for an accelerator.
        n_rerank: candidates refined and re-ranked before the ``n_best`` are chosen
            (:func:`jaxdp.privacy.audit.audit_learned`).

    Returns:
        The :class:`jaxdp.privacy.audit.AuditReport`.

    Raises:
        ValueError: ``name`` is not a mechanism of the suite.
    """
    if name not in _SPECS:
        raise ValueError(f"name: unknown DP-Sniper mechanism {name!r}; known: {sorted(_SPECS)}")
    s = _SPECS[name]
    if sizes is None:
        if device:
            sizes = DEVICE
        else:
            sizes = QUICK if quick else tuple(max(v // s["cost"], 10_000) if v else 0 for v in FULL)
    n_train, n_select, n_eval, n_refine = tuple(sizes) + (0,) * (4 - len(sizes))
    eps = CLAIMED_EPS / claim_factor
    return audit_learned(s["mechanism"], _pairs(name), claimed_eps=eps, key=jax.random.key(seed),
                         classifiers=s["classifiers"], n_train=n_train, n_select=n_select, n_eval=n_eval,
                         n_best=n_best, n_refine=n_refine, n_rerank=n_rerank, alpha=1.0 - confidence, name=f"dpsniper-{name}",
                         delta_float=_floor(name, eps), device_batch=DEVICE_BATCH if device else None)


def _register(name: str):
    s = _SPECS[name]
    doc = (f"DP-Sniper benchmark: {name} at claimed eps = 0.1 (learned events over the StatDP patterns, "
           f"confidence 0.9){'; not 0.1-DP' if s['broken'] else ''}")

    def run(*, quick: bool = False, seed: int = 0, claim_factor: float = 1.0) -> AuditReport:
        return audit_suite_entry(name, quick=quick, seed=seed, claim_factor=claim_factor)

    run.__name__ = f"audit_dpsniper_{name.replace('-', '_')}"
    SUITE[name] = dict(fn=run, claimed_eps=CLAIMED_EPS, broken=s["broken"], true_eps=s["true_eps"],
                       description=doc)
    register_audit(f"dpsniper-{name}", doc, claimed_eps=CLAIMED_EPS, broken=s["broken"])(run)


for _name in _SPECS:
    _register(_name)


def _eps_at_delta0(ev: dict) -> typing.Optional[float]:
    """``ln(p0_lo / p1_hi)`` from the evidence's bounds: the ε lower bound at δ = 0, DP-Sniper's setting (the report's
    own bound subtracts the float δ floor of the mechanism's draws from ``p0_lo`` first)."""
    lo, hi = ev.get("p0_lo"), ev.get("p1_hi")
    if lo is None or hi is None or lo <= 0.0 or hi <= 0.0:
        return None
    return max(math.log(lo / hi), 0.0)


def run_suite(*, quick: bool = False, seed: int = 0, names=None, sizes=None, verbose: bool = True,
              device: bool = False, on_row: typing.Optional[typing.Callable] = None, n_best: int = 2,
              n_rerank: int = 0) -> list:
    """Audit every mechanism of the suite (in ``names``' order when given).

    Args:
        quick: the ``QUICK`` sizes.
        seed: the auditor's seed.
        names: mechanisms to audit (with or without the ``dpsniper-`` prefix); all when empty.
        sizes: runs per input overriding the presets (:func:`audit_suite_entry`).
        verbose: print one line per mechanism.
        device: DP-Sniper's sample size, fresh runs counted on the device (:func:`audit_suite_entry`).
        on_row: called with each row as soon as it is done (to save partial results).
        n_best: candidates evaluated on fresh runs (1: DP-Sniper's single witness, α split over its two bounds only).
        n_rerank: candidates refined and re-ranked before the ``n_best`` are chosen (:func:`audit_suite_entry`).

    Returns:
        One row per mechanism: the bound, verdict, pair, sample counts and wall time.
    """
    import time

    rows = []
    order = list(_SPECS)
    if names:
        spelt = {k.replace("-", "_"): k for k in _SPECS}    # either spelling, with or without the prefix
        order = [spelt.get(n.replace("-", "_").removeprefix("dpsniper_"), n) for n in names]
        unknown = [n for n in order if n not in _SPECS]
        if unknown:
            raise ValueError(f"names: unknown DP-Sniper mechanism(s) {unknown}; known: {sorted(_SPECS)}")
    for name in order:
        t = time.perf_counter()
        rep = audit_suite_entry(name, quick=quick, seed=seed, sizes=sizes, device=device, n_best=n_best,
                                n_rerank=n_rerank)
        ev = rep.evidence
        rows.append(dict(name=name, eps_lower=rep.eps_lower, violation=rep.violation, pair=rep.pair,
                         event=ev.get("event", "-"), n_train=ev.get("n_train"), n_select=ev.get("n_select"),
                         n_refine=ev.get("n_refine", 0),
                         n_eval=rep.n, n_pairs=rep.n_pairs, n_candidates=rep.n_candidates,
                         seconds=time.perf_counter() - t, true_eps=SUITE[name]["true_eps"],
                         broken=SUITE[name]["broken"], platform=jax.devices()[0].platform,
                         n_best=n_best, n_rerank=n_rerank, k0=ev.get("k0"), k1=ev.get("k1"),
                         p0_lo=ev.get("p0_lo"), p1_hi=ev.get("p1_hi"), delta_float=rep.delta_float,
                         eps_lower_delta0=_eps_at_delta0(ev)))
        if on_row is not None:
            on_row(rows[-1])
        if verbose:
            print(f"{name:<22} eps_lower={rep.eps_lower:.4f} true={SUITE[name]['true_eps']:.4g} "
                  f"{'VIOLATION' if rep.violation else 'consistent'} pair={rep.pair} ({rows[-1]['seconds']:.1f}s)",
                  flush=True)
    return rows


def run_suite_kept(out, *, quick: bool = False, seed: int = 0, names=None, verbose: bool = True,
                   log: typing.Optional[typing.Callable] = None) -> list:
    """:func:`run_suite` with its results kept in ``out`` and a real resume (``jaxdp audit --suite dpsniper --out``).

    Each mechanism's row is written to ``out/rows/<mechanism>.json`` (atomically) as soon as it is done; a rerun
    into the same directory audits only the mechanisms without a row, so an interrupted suite (about 50 minutes
    at full size) resumes where it stopped. ``out/manifest.json`` records the settings: a directory that holds a
    run at other settings is refused, naming each difference.

    Args:
        out: the results directory (created if missing).
        quick: the ``QUICK`` sizes.
        seed: the auditor's seed.
        names: mechanisms to audit (either spelling, with or without the ``dpsniper`` prefix); all when empty.
        verbose: print one line per mechanism audited now.
        log: called with a line saying how many mechanisms were already done (default: silent).

    Returns:
        One row per mechanism, in the suite's order (or ``names``' order), the kept ones read back from ``out``.

    Raises:
        ValueError: ``out`` holds a run at other settings, or an unknown mechanism is named.
    """
    import json
    import pathlib

    from jaxdp.core.io import atomic_write

    out = pathlib.Path(out)
    spelt = {k.replace("-", "_"): k for k in _SPECS}
    order = list(_SPECS)
    if names:
        order = [spelt.get(str(n).replace("-", "_").removeprefix("dpsniper_"), n) for n in names]
        unknown = [n for n in order if n not in _SPECS]
        if unknown:
            raise ValueError(f"names: unknown DP-Sniper mechanism(s) {unknown}; known: {sorted(_SPECS)}")
    config = {"suite": "dpsniper", "quick": bool(quick), "seed": int(seed)}
    manifest = out / "manifest.json"
    if manifest.exists():
        try:
            old = json.loads(manifest.read_text())
        except ValueError:
            old = None
        if not isinstance(old, dict) or old.get("suite") != "dpsniper":
            raise ValueError(f"out: {str(out)!r} holds another run (not a DP-Sniper suite); use another --out or "
                             "delete it")
        diffs = [f"--{k}: {old.get(k)!r} there, {v!r} now" for k, v in config.items() if old.get(k) != v]
        if diffs:
            raise ValueError(f"out: {str(out)!r} holds a DP-Sniper suite run at other settings ("
                             + "; ".join(diffs) + "); use another --out, or delete the directory")
    rows_dir = out / "rows"
    rows_dir.mkdir(parents=True, exist_ok=True)
    if not manifest.exists():
        atomic_write(manifest, json.dumps(config, indent=2) + "\n")

    def path(name):
        return rows_dir / f"{name.replace('-', '_')}.json"

    def kept(name):
        try:
            row = json.loads(path(name).read_text())
        except (OSError, ValueError):   # none yet, or damaged: audited (again)
            return None
        return row if isinstance(row, dict) and row.get("name") == name else None

    todo = [n for n in order if kept(n) is None]
    if log is not None:
        log(f"dpsniper: {len(order) - len(todo)} of {len(order)} mechanisms already done in {out}; "
            f"{len(todo)} to audit")
    if todo:
        run_suite(quick=quick, seed=seed, names=todo, verbose=verbose,
                  on_row=lambda row: atomic_write(path(row["name"]), json.dumps(row, indent=2) + "\n"))
    rows = [kept(n) for n in order]
    missing = [n for n, r in zip(order, rows) if r is None]
    if missing:   # pragma: no cover - a row written above and unreadable now
        raise RuntimeError(f"dpsniper: no kept result for {missing} in {rows_dir}")
    return rows
