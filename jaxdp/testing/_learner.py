"""The full check (:func:`check_learner`: every check on one compiled engine run per grid point, then
determinism and key sensitivity) and its run on a registered learner's case (:func:`check_case`).

Import these from ``jaxdp.testing``."""
from __future__ import annotations

import contextlib
from typing import Any, Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ..core import Adversary, Learner, Problem, seed_keys
from ._common import _RANGE_FIX, _fail, _sim_mod
from ._shapes import _check_static
from ._traces import _check_traces, _public, check_pure


#: learner keys per seed in check_learner's engine runs (two: the key-sensitivity check compares them)
_SALTS = 2


def check_learner(learner: Learner, adversary: Adversary, problem: Problem, params_list: Sequence[Any],
                  adv_params: Any, T: int = 64, seeds: int = 4, deterministic: bool = False,
                  loss_range: float = 1.0, key_reuse: bool = True, purity: bool = True,
                  d: Optional[int] = None) -> dict:
    """The conformance check every ``Learner`` in jaxdp passes (module docstring).

    One compiled engine run per grid point checks every round of ``seeds`` seeds, each with two
    learner keys against the same losses: every action in range (``[shapes]``), every metric and
    ``info`` entry finite (``[finite]``), determinism given the key, and sensitivity to the key.

    Args:
      learner, adversary, problem: the engine objects.
      params_list: at least two parameter settings (grid points) of one pytree structure.
      adv_params: the adversary's parameters.
      T: the horizon (``T_max``); alternate grid points run at ``3T/4`` (traced horizon).
      seeds: seeds per run (each run twice, with two learner keys).
      deterministic: the learner ignores its key (e.g. follow-the-leader); skips the key-sensitivity
        check (two learner keys against the same losses must change some output of some seed).
      loss_range: per-round loss range; regret must be ``>= -loss_range * T``.
      key_reuse, purity: also check key reuse (the engine runs under ``jax_debug_key_reuse``) and
        :func:`check_pure`.
      d: the number of experts (default: the length of a loss vector).

    Returns:
        The metrics of the first grid point (``(seeds,)`` arrays, equal to ``simulate``'s with the same keys).

    Raises:
        ConformanceError: a check failed; the message starts with the check's name in brackets:
            ``[shapes]``, ``[host callback]``, ``[key reuse]``, ``[impure step]``, ``[recompiles]``,
            ``[finite]``, ``[horizon]``, ``[deterministic]`` or ``[key]``.
        ValueError: ``params_list`` holds fewer than two grid points.
    """
    if not isinstance(learner, Learner):
        _fail("shapes", f"expected a jaxdp.Learner, got {type(learner).__name__}")
    if len(params_list) < 2:
        raise ValueError(f"params_list must hold at least two parameter settings (grid points), got {len(params_list)}")
    _, n = _check_static(learner, adversary, problem, params_list[0], adv_params, d)
    if purity:
        check_pure(learner, adversary, problem, params_list[0], adv_params)
    # every engine run of this check under jax_debug_key_reuse (one compilation; no separate key-reuse run)
    with jax.debug_key_reuse(True) if key_reuse else contextlib.nullcontext():
        outs, run = _check_traces(learner, adversary, problem, params_list, adv_params, T, seeds, _SALTS)
        for g, (T_i, out) in enumerate(outs):
            _check_engine_out(out, T_i, T, g, loss_range, n, seeds)
        keys = seed_keys(123, seeds)
        again = jax.tree_util.tree_map(np.asarray, run(params_list[0], adv_params, jax.random.clone(keys),
                                                       jnp.int32(T)))
    first = outs[0][1]
    for k in again:
        if not np.array_equal(again[k], first[k], equal_nan=True):
            _fail("deterministic", f"two runs with the same keys differ in {k!r}: the learner is not a function "
                                   "of its keys")
    for g, (_, out) in enumerate(outs):
        _check_losses_fixed(out, seeds, g)
    if not deterministic and not any(_salts_differ(out, seeds) for _, out in outs):
        _fail("key", f"two different learner keys against the same losses gave identical runs (every metric "
                     f"and info entry) on all {seeds} seeds and {len(outs)} grid points: the learner ignores "
                     f"its key. Draw its randomness from the key passed to init/step/end_block (split it: "
                     f"k1, k2 = jax.random.split(key)), or, if it is deterministic by design, pass "
                     f"deterministic=True (a jaxdp compare factory: set factory.deterministic = True)")
    return {k: v.reshape((seeds, _SALTS) + v.shape[1:])[:, 0] for k, v in _public(first).items()}


def _check_losses_fixed(out: dict, seeds: int, g: int) -> None:
    """The ``[key]`` check compares two learner keys against the same losses: the adversary's key is not
    salted, so each seed's comparator loss (``best_loss``, a function of the losses alone) is one number for
    both learner keys. Were it not, a learner that ignores its key would still see its outputs change (the
    losses would) and the check could never fire."""
    best = out["best_loss"].reshape((seeds, _SALTS))
    if not np.array_equal(best[:, :1].repeat(_SALTS, axis=1), best, equal_nan=True):
        raise AssertionError(f"jaxdp.testing: the learner keys of one seed faced different losses at grid point {g} "
                             f"(best_loss {best.tolist()}): the adversary's key must not depend on the learner's "
                             "salt (an engine bug, not the learner's)")


def _salts_differ(out: dict, seeds: int) -> bool:
    """Did the learner keys of some seed give different outputs?"""
    for k, v in _public(out).items():
        v = v.reshape((seeds, _SALTS) + v.shape[1:])
        a, b = v[:, :1], v[:, 1:]
        same = (a == b) | ((np.isnan(a) & np.isnan(b)) if v.dtype.kind in "fc" else False)
        if not same.all():
            return True
    return False


_ENGINE_KEYS = ("T", "loss", "best_loss", "regret", "regret_ckpt", "expected_loss", "expected_regret",
                "expected_regret_ckpt")


def _info_fix(name: str) -> str:
    return (f"info[{name!r}] must be a finite number in every round (the simulator sums it): guard the divisions "
            f"and logs that produce it, e.g. jnp.where(n > 0, s / n, 0.0)")


def _check_engine_out(out: dict, T_i: int, T: int, g: int, loss_range: float, n: Optional[int],
                      seeds: int) -> None:
    """``[shapes]``/``[finite]``/``[horizon]`` on one grid point's engine output (``seeds * salts`` rows)."""
    salts = max(1, out["regret"].shape[0] // seeds)
    bad_round = out.get("invalid_action_round")
    if bad_round is not None and np.any(bad_round >= 0):
        lane = int(np.argwhere(bad_round >= 0)[0][0])
        n_bad = int(np.sum(bad_round >= 0))
        _fail("shapes", f"state.x must be an expert index in [0, {n if n is not None else 'd'}), got "
                        f"{int(out['invalid_action'][lane])} in round {int(bad_round[lane])} (counting from 0) of "
                        f"seed {lane // salts} (learner key {lane % salts}) at grid point {g} ({n_bad} of "
                        f"{bad_round.size} runs of {T_i} rounds affected). "
                        + _RANGE_FIX.format(n=n if n is not None else "d"))
    ck_ok = np.asarray([1, T]) <= T_i      # the runner's checkpoint rounds: (1, T_max)
    for k, v in out.items():
        if k in _sim_mod.INVALID_ACTION_KEYS or v.dtype.kind not in "fc":
            continue
        vv = v[..., ck_ok] if k.endswith("_ckpt") else v
        if np.all(np.isfinite(vv)):
            continue
        at = tuple(int(i) for i in np.argwhere(~np.isfinite(vv))[0])
        where = f"seed {at[0] // salts} (learner key {at[0] % salts}) at grid point {g}"
        if k in _ENGINE_KEYS:
            _fail("finite", f"{k} is {vv[at].item()!r} for {where}: the incurred loss problem.value(loss, state.x) "
                            f"(or info['expected_loss']) is not finite; keep state.x finite and in the domain, and "
                            f"info['expected_loss'] finite")
        name = "switched" if k == "switches" else k
        _fail("finite", f"info[{name!r}] summed over the rounds is {vv[at].item()!r} for {where}. " + _info_fix(name))
    if not np.all(out["regret"] >= -loss_range * T - 1e-3):
        _fail("finite", f"regret {out['regret'].min()} is below the trivial lower bound -{loss_range} * T")
    if not np.all(out["T"] == T_i):
        _fail("horizon", f"runs report T={out['T']} instead of {T_i}")


# --------------------------------------------------------------------------- registered learners' cases


def check_case(case, d: Optional[int] = None, T: Optional[int] = None) -> dict:
    """Run :func:`check_learner` on a registered learner's :class:`jaxdp.registry.ConformanceCase` at ``d``, ``T``
    (default: the case's) with the case's options; returns the metrics of its first grid point.

    Args:
        case: a :class:`jaxdp.registry.ConformanceCase`.
        d: the number of experts (default: the case's).
        T: the horizon (default: the case's).

    Returns:
        The metrics of the first grid point.

    Raises:
        ConformanceError: a check failed.
    """
    T = int(T or case.T)
    learner, adversary, problem, params_list, adv_params = case.parts(d, T)
    kw = dict(T=T, seeds=case.seeds)
    kw.update(case.check)
    return check_learner(learner, adversary, problem, list(params_list), adv_params, **kw)
