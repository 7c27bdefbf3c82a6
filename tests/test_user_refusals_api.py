"""The refusals a user meets through the Python API, one table row per mistake: the conformance check
(``jaxdp.testing.check_learner``) fails, naming the check and the fix, a learner with a NaN ``info``
metric, a ``jax.debug.print`` in ``step``, an ignored key (without ``deterministic=True``) or an
expert index ``d`` played only late in the run or only for some seeds; ``simulate`` refuses a run in
which a learner plays an out-of-range index instead of returning a finite regret (``rollout``
returns NaN); ``seed_keys`` refuses zero seeds and seeds that would alias another seed (a float,
``2**32``, ``-1``) naming the parameter, the value and the allowed range; ``load_losses`` explains a
``;``-delimited CSV, a blank cell, a NaN, a damaged ``.npy`` file and a bool array; and ``compare``
refuses a learner factory whose required arguments it cannot pass, listing the allowed names. Each
row gives the case, the call, the exception type and a regex its message must match (regexes also
encode what the message must not say, e.g. ``skip_header`` for a delimiter problem)."""
import re
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from _helpers import ADV, AP, D, PARAMS, PROB
from jaxdp import Learner, rollout, seed_keys, simulate
from jaxdp.compare import compare
from jaxdp.core.random import sample_categorical
from jaxdp.experts import hedge, hedge_params, load_losses
from jaxdp.testing import ConformanceError, FACTORY_ARGS, call_factory, check_learner

T = 48              # out-of-range actions are planted at round LATE > 8: a check of 8 rounds misses them
LATE = 40


class S(NamedTuple):
    x: jax.Array
    cum: jax.Array
    t: jax.Array       # rounds played
    bad: jax.Array     # (some learners) drawn at init: this run plays an out-of-range index


def _learner(draw=None, info=None, p_bad=0.0):
    """Hedge-like: plays ``draw(key, logits, state)`` (default: a sample of softmax(logits)); ``info(x, state)``
    is its info dict; with ``p_bad > 0`` each run (init key) is bad with that probability."""

    def init(key, params):
        k1, k2 = jax.random.split(key)
        return S(x=sample_categorical(k1, jnp.zeros((D,))), cum=jnp.zeros((D,), jnp.float32), t=jnp.int32(0),
                 bad=jax.random.uniform(k2) < p_bad)

    def step(key, state, loss, params):
        cum = state.cum + loss
        lg = -params.eta * cum
        x = sample_categorical(key, lg) if draw is None else draw(key, lg, state)
        new = S(x=x, cum=cum, t=state.t + 1, bad=state.bad)
        return new, ({"switched": x != state.x} if info is None else info(x, state))

    return Learner(init, step)


def _with_print(key, lg, state):
    jax.debug.print("played {x}", x=state.x)
    return sample_categorical(key, lg)


def _follow_the_leader():
    """Deterministic by design: ignores its keys."""

    def init(key, params):
        return S(x=jnp.int32(0), cum=jnp.zeros((D,), jnp.float32), t=jnp.int32(0), bad=jnp.bool_(False))

    def step(key, state, loss, params):
        cum = state.cum + loss
        x = jnp.argmin(cum).astype(jnp.int32)
        return S(x=x, cum=cum, t=state.t + 1, bad=state.bad), {"switched": x != state.x}

    return Learner(init, step)


# plays index d (out of range) only in round LATE (> 8) of every run
LATE_OOR = _learner(lambda k, lg, s: jnp.where(s.t == LATE - 1, jnp.int32(D), sample_categorical(k, lg)))
# plays index d from round LATE on, only in the runs whose init key drew `bad` (about 1 in 4)
SOME_SEEDS_OOR = _learner(lambda k, lg, s: jnp.where(s.bad & (s.t >= LATE - 1), jnp.int32(D),
                                                     sample_categorical(k, lg)), p_bad=0.25)
FTL = _follow_the_leader()


def _check(learner, **kw):
    return lambda: check_learner(learner, ADV, PROB, PARAMS, AP, T=T, seeds=4, **kw)


def _without(*words):
    """A regex prefix: the (whole) message contains none of ``words``."""
    return "(?s)^" + "".join(f"(?!.*{re.escape(w)})" for w in words)


def _short(n):
    """A regex prefix: the message has fewer than ``n`` characters and holds no printed array."""
    return f"(?s)^(?!.{{{n}}})(?!.*\\[\\[)"


# --------------------------------------------------------------------------- A. check_learner

CONFORMANCE = [
    ("NaN info metric", _check(_learner(info=lambda x, s: {"x": jnp.float32(jnp.nan)})), ConformanceError,
     r"^\[finite\] info\['x'\] .*is nan for seed \d+.*must be a finite number in every round.*guard the divisions"),
    ("jax.debug.print in step", _check(_learner(_with_print)), ConformanceError,
     r"^\[host callback\] learner\.step calls the host \(debug_print.*Remove it from the learner"),
    ("ignores its key, deterministic not declared", _check(FTL), ConformanceError,
     r"^\[key\] two different learner keys .*identical runs.*ignores its key.*jax\.random\.split"
     r".*deterministic=True"),
    ("plays index d in round 40 only (not within the first 8 rounds)", _check(LATE_OOR), ConformanceError,
     rf"^\[shapes\] state\.x must be an expert index in \[0, {D}\), got {D} in round {LATE} \(counting from 0\) "
     r"of seed \d+.*fix the sampler"),
    ("plays index d late and only for some seeds", _check(SOME_SEEDS_OOR), ConformanceError,
     rf"^\[shapes\] state\.x must be an expert index in \[0, {D}\), got {D} in round {LATE} .*of seed \d+ "
     r"\(learner key \d\).*\(([1-7]) of 8 runs .*affected\).*fix the sampler"),
]


@pytest.mark.parametrize("case,call,exc,pattern", CONFORMANCE, ids=[c[0] for c in CONFORMANCE])
def test_check_learner_refuses(case, call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_check_learner_passes_correct_learners():
    """The other side of every row above: a correct learner passes, and so does the deterministic one
    once it says so."""
    check_learner(hedge(D), ADV, PROB, [hedge_params(D, T), hedge_params(D, T, eta=0.5)], AP, T=T, seeds=4)
    out = _check(_learner())()
    assert out["regret"].shape == (4,) and np.all(np.isfinite(out["regret"]))
    _check(FTL, deterministic=True)()


# --------------------------------------------------------------------------- B. simulate

def _sim(learner):
    return lambda: simulate(learner, ADV, PROB, PARAMS[0], AP, seed_keys(0, 4), T)


_SIM_OOR = (rf"^simulate: the learner played action {D} in round {LATE} \(counting from 0\) of seed \d+, outside "
            rf"the experts \[0, {D}\) \(\d+ run\(s\) affected; their loss and regret would be NaN\).*"
            r"check_learner")

SIMULATE = [
    ("plays index d in round 40 of every seed", _sim(LATE_OOR), ValueError, _SIM_OOR),
    ("plays index d only for some seeds", _sim(SOME_SEEDS_OOR), ValueError,
     _SIM_OOR.replace(r"\d+ run", "[1-3] run")),
    ("empty key array", lambda: simulate(hedge(D), ADV, PROB, hedge_params(D, T), AP,
                                         jax.random.split(jax.random.key(0), 0), T),
     ValueError, r"^keys must hold at least one seed.*seed_keys\(seed, n\) with n >= 1"),
]


@pytest.mark.parametrize("case,call,exc,pattern", SIMULATE, ids=[c[0] for c in SIMULATE])
def test_simulate_refuses(case, call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


def test_rollout_gives_nan_regret_for_out_of_range_actions():
    """rollout cannot raise under jit: its documented answer is NaN loss and regret, never a clamped value."""
    run = jax.jit(jax.vmap(lambda k: rollout(LATE_OOR, ADV, PROB, PARAMS[0], AP, k, T)))
    out = run(seed_keys(0, 2))
    assert np.all(np.isnan(np.asarray(out["regret"]))) and np.all(np.isnan(np.asarray(out["loss"])))


# --------------------------------------------------------------------------- C. seed_keys

_SEED_RANGE = r"must be an integer in \[0, 2\*\*32\)"

SEEDS = [
    ("zero seeds", lambda: seed_keys(0, 0), ValueError,
     _without("division") + r"seeds must be a positive integer \(the number of seeds, at least 1\).*got 0$"),
    ("negative number of seeds", lambda: seed_keys(0, -3), ValueError,
     r"^seeds must be a positive integer.*got -3$"),
    ("float seed 0.5", lambda: seed_keys(0.5, 2), TypeError,
     rf"^seed {_SEED_RANGE}, got 0\.5 \(float\): a float seed would be truncated to another seed; pass an int"),
    ("float seed 1.0", lambda: seed_keys(1.0, 2), TypeError, rf"^seed {_SEED_RANGE}, got 1\.0"),
    ("seed 2**32", lambda: seed_keys(2**32, 2), ValueError,
     rf"^seed {_SEED_RANGE} \(seeds are 32-bit: 4294967296 would give the same keys as seed 0\), got 4294967296$"),
    ("seed -1", lambda: seed_keys(-1, 2), ValueError,
     rf"^seed {_SEED_RANGE} \(seeds are 32-bit: -1 would give the same keys as seed 4294967295\), got -1$"),
    ("numpy seed -1", lambda: seed_keys(np.int64(-1), 2), ValueError, rf"^seed {_SEED_RANGE}.*got -1$"),
    ("bool seed", lambda: seed_keys(True, 2), TypeError, rf"^seed {_SEED_RANGE}, got bool True$"),
    ("seed index 2**32", lambda: seed_keys(0, np.array([0, 2**32])), ValueError,
     r"^seed indices must be integers in \[0, 2\*\*32\), got values in \[0, 4294967296\]$"),
]


@pytest.mark.parametrize("case,call,exc,pattern", SEEDS, ids=[c[0] for c in SEEDS])
def test_seed_keys_refuses(case, call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# --------------------------------------------------------------------------- D. load_losses

def _file(name, content):
    """A loader of ``tmp_path / name`` written with ``content`` (text, bytes, or an array for np.save)."""

    def load(tmp_path):
        path = tmp_path / name
        if isinstance(content, np.ndarray):
            np.save(path, content)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
        return load_losses(path)

    return load


_NAN = np.full((3, 2), 0.5)
_NAN[2, 1] = np.nan
_TRUNCATED = b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }"

LOADS = [
    ("';' delimiter in a .csv", _file("semi.csv", "0.1;0.2;0.3\n0.4;0.5;0.6\n"), ValueError,
     _without("skip_header") + r"losses file '.*semi\.csv', row 1, column 1: '0\.1;0\.2;0\.3' holds several "
     r"numbers separated by ';'; a \.csv file must be comma-separated: replace ';' by ','"),
    ("blank cell", _file("blank.csv", "0.1,0.2,0.3\n0.4,,0.6\n"), ValueError,
     _without("skip_header") + r"losses file '.*blank\.csv', row 2, column 2: the cell is empty"),
    ("blank cell in the first row", _file("blank1.csv", "0.1,,0.3\n0.4,0.5,0.6\n"), ValueError,
     _without("skip_header") + r"losses file '.*blank1\.csv', row 1, column 2: the cell is empty"),
    ("NaN in a .csv", _file("nan.csv", "0.1,0.2\n0.4,nan\n"), ValueError,
     r"^losses file '.*nan\.csv', row 2, column 2: 'nan' is not a finite number"),
    ("NaN in a .npy", _file("nan.npy", _NAN), ValueError,
     r"^losses \(from '.*nan\.npy'\) must be finite, got nan at row 2, column 1 \(counting from 0\)"),
    ("NaN in an array", lambda tmp_path: load_losses(_NAN), ValueError,
     r"^losses must be finite, got nan at row 2, column 1 \(counting from 0\)"),
    ("corrupt .npy", _file("bad.npy", b"\x93NUMPY garbage, not an array"), ValueError,
     r"^losses file '.*bad\.npy' cannot be read as a \.npy file .*damaged or not saved with numpy\.save"),
    ("truncated .npy", _file("cut.npy", _TRUNCATED), ValueError,
     r"^losses file '.*cut\.npy' cannot be read as a \.npy file"),
    ("bool array", lambda tmp_path: load_losses(np.zeros((1000, 50), bool)), TypeError,
     _short(300) + r"losses must be a number or array of numbers, got ndarray of dtype bool and shape \(1000, 50\); "
     r"convert it with \.astype\(numpy\.float32\)$"),
    ("bool .npy", _file("flags.npy", np.ones((500, 20), bool)), TypeError,
     _short(300) + r"losses file '.*flags\.npy' must be a number or array of numbers, got ndarray of dtype bool"),
]


@pytest.mark.parametrize("case,call,exc,pattern", LOADS, ids=[c[0] for c in LOADS])
def test_load_losses_refuses(case, call, exc, pattern, tmp_path):
    with pytest.raises(exc, match=pattern):
        call(tmp_path)


def test_load_losses_reads_the_fixed_files(tmp_path):
    """The fixes the messages name work: a comma-separated file with every cell filled in loads."""
    (tmp_path / "ok.csv").write_text("0.1,0.2,0.3\n0.4,0.5,0.6\n")
    np.testing.assert_allclose(load_losses(tmp_path / "ok.csv"), [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]], rtol=1e-6)
    np.testing.assert_array_equal(load_losses(np.zeros((2, 3), bool).astype(np.float32)), np.zeros((2, 3)))


# --------------------------------------------------------------------------- E. compare's factories

def _n_experts_factory(n_experts, T, eps):     # `n_experts` is not a name compare passes (d is)
    return hedge(n_experts), hedge_params(n_experts, T)


def _epsilon_factory(d, T, epsilon):           # `epsilon` instead of `eps`
    return hedge(d), hedge_params(d, T)


def _seed_factory(d, T, seed):                 # an argument compare has no value for
    return hedge(d), hedge_params(d, T)


def _positional_only_factory(d, T, /):         # compare passes by keyword
    return hedge(d), hedge_params(d, T)


def _call(factory):
    return lambda tmp_path: call_factory(factory, d=D, T=16, eps=1.0, delta=1e-6)


def _compare(factory):
    return lambda tmp_path: compare(factory, quick=True, d=2, T=(16,), seeds=2, instances=["iid-noise"],
                                    learners=["hedge"], audit=False, plot=False, out=tmp_path / "out")


_ALLOWED = r"a factory receives, by keyword, any of " + re.escape(", ".join(FACTORY_ARGS)) + r" \(or \*\*kwargs\)"

FACTORIES = [
    ("n_experts instead of d (compare)", _compare(_n_experts_factory), TypeError,
     r"^factory .*_n_experts_factory\(n_experts, T, eps\) has required parameter\(s\) n_experts that jaxdp cannot "
     rf"pass: {_ALLOWED}\. Rename them \(n_experts -> d\) or give them defaults$"),
    ("epsilon instead of eps (compare)", _compare(_epsilon_factory), TypeError,
     rf"required parameter\(s\) epsilon .*{_ALLOWED}\. Rename them \(epsilon -> eps\)"),
    ("an argument compare has no value for (compare)", _compare(_seed_factory), TypeError,
     rf"required parameter\(s\) seed .*{_ALLOWED}\. Rename them or give them defaults$"),
    ("positional-only arguments (call_factory)", _call(_positional_only_factory), TypeError,
     rf"required parameter\(s\) d, T .*{_ALLOWED}.*d, T must not be positional-only \(drop the '/'\)$"),
    ("n_experts instead of d (call_factory)", _call(_n_experts_factory), TypeError,
     rf"{_ALLOWED}\. Rename them \(n_experts -> d\)"),
]


@pytest.mark.parametrize("case,call,exc,pattern", FACTORIES, ids=[c[0] for c in FACTORIES])
def test_factory_arguments_refused(case, call, exc, pattern, tmp_path):
    with pytest.raises(exc, match=pattern):
        call(tmp_path)
    assert not (tmp_path / "out").exists()    # refused before compare writes anything


def test_call_factory_accepts_allowed_names():
    """The allowed names (any subset, defaults for the others, or **kwargs) are called normally."""

    def f(d, T_max, eps, delta, extra=3):
        return hedge(d), hedge_params(d, T_max)

    assert call_factory(f, d=D, T=16, eps=1.0, delta=1e-6)[0] is hedge(D)
    assert call_factory(lambda **kw: hedge(kw["d"]), d=D, T=16, eps=1.0, delta=1e-6) == (hedge(D), None)
    lrn, params = call_factory(lambda d, T: (hedge(d), hedge_params(d, T)), d=D, T=16, eps=1.0, delta=1e-6)
    assert lrn is hedge(D) and params is not None
