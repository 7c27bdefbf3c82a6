"""L2P: the lazy-to-private transformation (LAZY Algorithm 1; docs/algorithms/lazy.md#l2p).

Source: Lazy private online learning (docs/algorithms/lazy.md) (Asi, Koren, Liu,
Talwar, *Private Online Learning via Lazy Algorithms*), Algorithm 1, Thm 3.2.

Input: a family of measures ``mu_t`` (depending on ``l_1..l_{t-1}``) that
satisfies Assumption 3.1:

1. ``D_inf^{delta0}(mu_{t+1}, mu_t) <= eta`` (normalized measures), and
2. ``mu_{t+1}(x) / mu_t(x) = func(l_t, x)`` (unnormalized measures),

given as a :class:`LazyMeasure`. With batches of ``B`` rounds and
``nu_s = mu_{(s-1)B+1}`` (the measure after the first ``(s-1)B`` losses):

.. code-block:: text

    x_1, y_1 ~ nu_1 independently
    for every batch boundary s = 2, 3, ...:
        S_s  ~ Ber(min(1, nu_s(x)/nu_{s-1}(x) * nu_{s-1}(y)/nu_s(y) * e^{-2 B eta}))
        S'_s ~ Ber(1 - p)                        # S'_s = 0: a fake switch
        x_s  ~ nu_s if S_s = 0 or S'_s = 0, else x_s = x_{s-1}
        A_s  ~ Ber(1 - p);  y_s ~ nu_s if A_s = 0, else y_s = y_{s-1}
        play x_s for the rounds of batch s

The shadow model ``y`` is never played: the unnormalized ratio at ``y``
cancels the normalizing constants, so the acceptance probability is a
function of the previous batch's losses only,

    log(ratio) = sum_{i in batch s-1} [log func(l_i, x) - log func(l_i, y)],

which is what makes each loss influence O(1) switching decisions (Thm 3.2).
A final partial batch (``T`` not divisible by ``B``) is simply played to the
end; accounting uses ``ceil(T/B)`` batches.

Two execution modes (same algorithm, same random variables):

* ``block_size=B`` (static int): the engine's nested scan
  (``Learner.block_size``/``end_block``). ``step`` only accumulates the batch
  log-ratios and the sufficient statistics; the boundary decision and the two
  fresh samples run in ``end_block``, once per batch, so the per-round cost
  does not depend on the cost of a fresh sample. ``B`` is fixed at
  construction (the constructor is cached on ``(measure, B)``); ``params.B``
  is ignored in the algorithm (use :func:`l2p_params` to keep it consistent).
* ``block_size=None``: ``B`` is traced (``params.B``); the boundary work sits
  in a ``lax.cond`` on the round counter. The counter depends only on the
  scan index, so under the engine's vmap over seeds the predicate is not
  batched and the ``cond`` stays a real branch (fresh samples once per
  batch). Under a vmap over a parameter grid in which ``B`` or ``T`` vary,
  ``cond`` becomes ``select`` and a fresh sample is paid every round: use this
  mode for cheap measures (MW) and sweeps over ``B``, the block mode for
  expensive samplers.

Keys: ``init`` splits 2 (``x``, ``y``); a boundary splits 5
(``S``, ``S'``, ``A``, fresh ``x``, fresh ``y``), all drawn at every boundary.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, NamedTuple, Optional

import jax
import jax.numpy as jnp

from ..core.random import log_uniform
from ..core.types import Learner, tree_where
from ..core.validation import check_in_range, check_positive, check_positive_int

__all__ = ["LazyMeasure", "L2PParams", "L2PState", "l2p", "l2p_params", "l2p_expected_counts"]


class LazyMeasure(NamedTuple):
    """A measure family satisfying LAZY Assumption 3.1, as pure functions.

    * ``stats_init(loss_example) -> stats``: sufficient statistics of the empty
      history (``loss_example`` is whatever was given to :func:`l2p`, possibly
      ``None``; measures that know their shapes may ignore it).
    * ``stats_update(stats, loss, mparams) -> stats``: absorb one loss.
    * ``log_ratio(loss, x, mparams) -> float``: ``log mu_{t+1}(x)/mu_t(x)`` for
      the unnormalized measures, a function of the new loss only
      (Assumption 3.1(2)). MW: ``-eta * loss[x]``.
    * ``sample(key, stats, mparams) -> x``: an exact draw from the normalized
      measure defined by ``stats``.
    * ``summary(stats, mparams) -> pytree`` and ``expected_loss(summary, loss)
      -> float`` (optional, both or neither): ``E_{x ~ mu}[loss(x)]`` for the
      batch's measure, reported as ``info["expected_loss"]`` (the marginal of
      ``x_s`` is ``nu_s`` when ``delta0 = 0``, Lemma 3.4). ``summary`` runs
      once per batch, ``expected_loss`` every round.

    Attributes:
        stats_init: ``stats_init(loss_example) -> stats``.
        stats_update: ``stats_update(stats, loss, mparams) -> stats``.
        log_ratio: ``log_ratio(loss, x, mparams)``.
        sample: ``sample(key, stats, mparams) -> x``.
        summary: ``summary(stats, mparams) -> pytree`` (optional).
        expected_loss: ``expected_loss(summary, loss)`` (optional).
    """

    stats_init: Callable[[Any], Any]
    stats_update: Callable[[Any, Any, Any], Any]
    log_ratio: Callable[[Any, Any, Any], jax.Array]
    sample: Callable[[jax.Array, Any, Any], Any]
    summary: Optional[Callable[[Any, Any], Any]] = None
    expected_loss: Optional[Callable[[Any, Any], jax.Array]] = None


class L2PParams(NamedTuple):
    """Traced hyperparameters of L2P.

    * ``measure``: the measure's own parameter pytree (``mparams``).
    * ``eta``: the ``eta`` of Assumption 3.1 (per-round ``D_inf`` bound), used
      in the ``e^{2 B eta}`` of the acceptance ratio and in Thm 3.2.
    * ``p``: fake-switch probability in ``[0, 1]``.
    * ``B``: batch size (int32; used only when ``l2p(..., block_size=None)``).

    Attributes:
        measure: the measure's own parameter pytree.
        eta: the η of Assumption 3.1.
        p: fake-switch probability.
        B: batch size (int32).
    """

    measure: Any
    eta: jax.Array
    p: jax.Array
    B: jax.Array


class L2PState(NamedTuple):
    """State of L2P (LAZY Algorithm 1).

    Attributes:
        x: the played sample.
        y: the shadow sample that drives switching.
        stats: the measure's sufficient statistics.
        blx, bly: the batch log-ratios of ``x`` and ``y``.
        t: the round.
        summ: the batch's measure summary (for ``expected_loss``).
    """
    x: Any            # model played in the current batch
    y: Any            # shadow model (never played)
    stats: Any        # sufficient statistics of all losses seen so far
    blx: jax.Array    # sum over the current batch of log func(l_i, x)
    bly: jax.Array    # sum over the current batch of log func(l_i, y)
    t: jax.Array      # int32 number of rounds absorbed
    summ: Any         # measure summary of nu_s (for expected_loss), or ()


def l2p_params(mparams: Any, eta: float, p: float, B: int, *, block_size: Optional[int] = None) -> L2PParams:
    """Validated :class:`L2PParams` (host side). ``block_size``, if given, must equal ``B``.

    Args:
        mparams: the measure's parameters.
        eta: the η of Assumption 3.1.
        p: the fake-switch probability.
        B: the batch size.
        block_size: the learner's static batch size, if any (must equal ``B``).

    Returns:
        :class:`L2PParams`.

    Raises:
        ValueError: invalid values, or ``block_size != B``.
    """
    check_positive("eta", eta)
    check_in_range("p", p, 0.0, 1.0)
    B = check_positive_int("B", B)
    if block_size is not None and int(block_size) != B:
        raise ValueError(f"B must equal the learner's block_size={block_size} in block mode, got B={B}")
    fdt = jnp.result_type(float)
    return L2PParams(measure=mparams, eta=jnp.asarray(eta, fdt), p=jnp.asarray(p, fdt), B=jnp.int32(B))


@functools.lru_cache(maxsize=None)
def l2p(measure: LazyMeasure, block_size: Optional[int] = None, loss_example: Any = None) -> Learner:
    """The L2P transformation of ``measure`` (LAZY Algorithm 1) as a ``Learner``.

    Args:
      measure: a :class:`LazyMeasure` (Assumption 3.1). Its functions must be
        the same objects across calls for the constructor cache (and the
        simulator's compile cache) to hit.
      block_size: static batch size ``B`` (engine nested-scan path: fresh
        samples once per batch, ``B`` fixed per compiled learner), or ``None``
        for a traced ``params.B`` (see module docstring).
      loss_example: passed to ``measure.stats_init`` (hashable, e.g. ``None``
        or a ``jax.ShapeDtypeStruct``).

    Params: :class:`L2PParams` ``(measure, eta, p, B)``.

    Info (summed by the simulator): ``switches`` (the played model changed),
    ``n_real`` (boundaries with ``S_s = 0``), ``n_fake`` (``S_s = 1`` and
    ``S'_s = 0``), ``n_yres`` (shadow resamples, ``A_s = 0``), ``n_batches``
    (boundaries), and ``expected_loss`` if the measure provides it.
    Fresh ``x`` draws = ``n_real + n_fake``.

    Example::

        from jaxdp.experts import l2p, mw_measure, l2p_params
        learner = l2p(mw_measure(16), block_size=8)
        params = l2p_params(mw_measure_params(0.05), eta=0.05, p=0.1, B=8, block_size=8)

    Returns:
        The L2P :class:`jaxdp.Learner`.
    """
    if not isinstance(measure, LazyMeasure):
        raise TypeError(f"measure must be a jaxdp.experts.LazyMeasure, got {type(measure).__name__}")
    if block_size is not None:
        block_size = check_positive_int("block_size", block_size)
    if (measure.summary is None) != (measure.expected_loss is None):
        raise ValueError("measure.summary and measure.expected_loss must be given together (or neither)")
    has_exp = measure.summary is not None and measure.expected_loss is not None
    fdt = jnp.result_type(float)

    def summarize(stats, mparams):
        return measure.summary(stats, mparams) if has_exp else ()

    def init(key, params):
        kx, ky = jax.random.split(key)
        stats = measure.stats_init(loss_example)
        x = measure.sample(kx, stats, params.measure)
        y = measure.sample(ky, stats, params.measure)
        zero = jnp.zeros((), fdt)
        return L2PState(x=x, y=y, stats=stats, blx=zero, bly=zero, t=jnp.int32(0),
                        summ=summarize(stats, params.measure))

    def absorb(state, loss, params):
        mp = params.measure
        blx = state.blx + jnp.asarray(measure.log_ratio(loss, state.x, mp), fdt)
        bly = state.bly + jnp.asarray(measure.log_ratio(loss, state.y, mp), fdt)
        stats = measure.stats_update(state.stats, loss, mp)
        info = {}
        if has_exp:
            info["expected_loss"] = jnp.asarray(measure.expected_loss(state.summ, loss), fdt)
        return state._replace(blx=blx, bly=bly, stats=stats, t=state.t + 1), info

    def boundary(key, state, params, B):
        """Lines 5-12 of Algorithm 1 at the start of a new batch (``state.stats`` holds its first sB losses)."""
        kS, kSp, kA, kx, ky = jax.random.split(key, 5)
        mp = params.measure
        log_acc = jnp.minimum(0.0, (state.blx - state.bly) - 2.0 * jnp.asarray(B, fdt) * params.eta)
        S = log_uniform(kS) < log_acc                   # S_s = 1: the ratio test says "keep"
        Sp = jax.random.uniform(kSp, dtype=fdt) >= params.p   # S'_s = 1 w.p. 1 - p
        A = jax.random.uniform(kA, dtype=fdt) >= params.p     # A_s = 1 w.p. 1 - p
        x_fresh = measure.sample(kx, state.stats, mp)
        y_fresh = measure.sample(ky, state.stats, mp)
        keep = S & Sp
        x = tree_where(keep, state.x, x_fresh)
        y = tree_where(A, state.y, y_fresh)
        zero = jnp.zeros((), fdt)
        new = state._replace(x=x, y=y, blx=zero, bly=zero, summ=summarize(state.stats, mp))
        info = {
            "switched": functools.reduce(jnp.logical_or, jax.tree_util.tree_leaves(
                jax.tree_util.tree_map(lambda u, v: jnp.any(u != v), x, state.x)), jnp.bool_(False)),
            "n_real": ~S,
            "n_fake": S & ~Sp,
            "n_yres": ~A,
            "n_batches": jnp.bool_(True),
        }
        return new, info

    if block_size is None:
        def step(key, state, loss, params):
            state, info = absorb(state, loss, params)
            B = jnp.maximum(jnp.asarray(params.B, jnp.int32), 1)
            at_boundary = state.t % B == 0

            def no_boundary(k, s):
                _, binfo = jax.eval_shape(lambda: boundary(k, s, params, B))
                return s, jax.tree_util.tree_map(lambda v: jnp.zeros(v.shape, v.dtype), binfo)

            # the key crosses the cond as its bits: under vmap both branches run, and jax_debug_key_reuse would
            # count a typed key once per branch (the draws are the key's either way)
            typed = jnp.issubdtype(key.dtype, jax.dtypes.prng_key)
            impl = jax.random.key_impl(key) if typed else None

            def keyed(branch):
                return lambda kd, s: branch(jax.random.wrap_key_data(kd, impl=impl) if typed else kd, s)

            state, binfo = jax.lax.cond(at_boundary, keyed(lambda k, s: boundary(k, s, params, B)),
                                        keyed(no_boundary), jax.random.key_data(key) if typed else key, state)
            info.update(binfo)
            return state, info

        return Learner(init=init, step=step)

    B_static = int(block_size)

    def step_b(key, state, loss, params):
        del key  # nothing random happens inside a batch
        return absorb(state, loss, params)

    def end_block(key, state, params):
        return boundary(key, state, params, B_static)

    return Learner(init=init, step=step_b, block_size=B_static, end_block=end_block)


def l2p_expected_counts(n_batches, n_real, p):
    """The exact expected counts of L2P's fake switches and shadow resamples given its boundaries.

    Each batch boundary draws ``A_s`` (a shadow resample with probability ``p``) and, where ``S_s = 1``, a fake
    switch with probability ``p``: ``E[n_fake] = p (n_batches - n_real)``, ``E[n_yres] = p n_batches`` (LAZY
    Algorithm 1; the counts of :func:`l2p`'s info). Works on NumPy arrays and pandas columns.

    Args:
        n_batches: the number of batch boundaries.
        n_real: the number of real switches (boundaries with ``S_s = 0``).
        p: the switching probability.

    Returns:
        ``(n_fake, n_yres)``: the expected fake switches and shadow resamples.
    """
    return p * (n_batches - n_real), p * n_batches
