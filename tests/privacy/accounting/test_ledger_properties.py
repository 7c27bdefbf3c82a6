"""Properties of the ledger algebra (hypothesis): what any valid accountant must satisfy.

* more invocations, or a larger ε per invocation, never certify a smaller ε;
* parallel composition (disjoint data) never certifies more than sequential composition of the same items;
* ``delta_extra`` (failure events) is charged additively: certifying a ledger with ``delta_extra = x`` at budget
  ``δ`` gives the same ε as certifying it without at ``δ − x``;
* a ledger missing any one of its events certifies no more, and for a pure ledger at δ = 0 strictly less.

Where either side is certified by ``dp_accounting``'s privacy-loss distribution, whose grid
(``scale / PLD_MAX_SUPPORT``) moves with the ledger, both numbers are valid upper bounds that round the losses
differently: the orderings hold up to ``PLD_TOL`` (2%) there, and exactly for every other bound.
"""
import dataclasses
import math

import pytest

hyp = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, Phase, given, settings, strategies as st  # noqa: E402

from jaxdp.privacy.accounting import certify  # noqa: E402
from jaxdp.privacy.accounting import ledger as LG  # noqa: E402

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow])
REL = 1e-9

eps_s = st.floats(min_value=1e-3, max_value=3.0, allow_nan=False)
count_s = st.integers(min_value=1, max_value=400)
nm_s = st.floats(min_value=0.3, max_value=20.0, allow_nan=False)


@st.composite
def events(draw):
    kind = draw(st.sampled_from(["pure", "exponential", "laplace", "gaussian", "approx"]))
    c = draw(count_s)
    if kind == "laplace":
        return LG.laplace(draw(nm_s), count=c)
    if kind == "gaussian":
        return LG.gaussian(draw(nm_s), count=c)
    if kind == "approx":
        return LG.approx(draw(eps_s), draw(st.sampled_from([0.0, 1e-9, 1e-7])), count=c)
    return LG.Event(kind, eps=draw(eps_s), count=c)


ledgers = st.lists(events(), min_size=1, max_size=4)
budget_s = st.sampled_from([1e-8, 1e-6, 1e-3])


PLD_TOL = 0.02


def _eps(items, delta, **kw):
    return certify(LG.sequential(*items, **kw), delta)


def _le(a, b):
    tol = PLD_TOL if "pld" in (a.bound, b.bound) else REL
    return a.eps <= b.eps * (1 + tol) + 1e-12


@SETTINGS
@given(ledgers, budget_s, st.data())
def test_monotone_in_counts(items, delta, data):
    i = data.draw(st.integers(0, len(items) - 1))
    more = list(items)
    more[i] = dataclasses.replace(items[i], count=items[i].count + data.draw(st.integers(1, 300)))
    assert _le(_eps(items, delta), _eps(more, delta))


@SETTINGS
@given(ledgers, budget_s, st.data())
def test_monotone_in_eps(items, delta, data):
    i = data.draw(st.integers(0, len(items) - 1))
    e = items[i]
    factor = data.draw(st.floats(1.0, 3.0))
    if e.kind in ("laplace", "gaussian"):
        bigger = dataclasses.replace(e, noise_multiplier=e.noise_multiplier / factor,
                                     eps=(factor / e.noise_multiplier) if e.kind == "laplace" else 0.0)
    else:
        bigger = dataclasses.replace(e, eps=e.eps * factor)
    more = list(items)
    more[i] = bigger
    assert _le(_eps(items, delta), _eps(more, delta))


@SETTINGS
@given(ledgers, budget_s)
def test_parallel_never_above_sequential(items, delta):
    par = certify(LG.parallel(*items), delta)
    assert _le(par, _eps(items, delta))


@SETTINGS
@given(ledgers, budget_s, st.floats(min_value=0.0, max_value=0.9))
def test_delta_extra_adds(items, delta, frac):
    x = delta * frac
    with_extra = certify(LG.sequential(*items, delta_extra=x), delta)
    without = certify(LG.sequential(*items), delta - x)
    assert with_extra.eps == pytest.approx(without.eps, rel=1e-9, abs=1e-12)
    if math.isfinite(with_extra.eps):
        assert with_extra.delta <= delta * (1 + 1e-12)


@SETTINGS
@given(ledgers, budget_s, st.data())
def test_missing_event_certifies_no_more(items, delta, data):
    if len(items) < 2:
        items = items + [LG.pure(0.1)]
    i = data.draw(st.integers(0, len(items) - 1))
    fewer = items[:i] + items[i + 1:]
    assert _le(_eps(fewer, delta), _eps(items, delta))


@SETTINGS
@given(st.lists(st.tuples(eps_s, count_s), min_size=2, max_size=4), st.data())
def test_missing_pure_event_certifies_strictly_less(pairs, data):
    items = [LG.pure(e, count=c) for e, c in pairs]
    i = data.draw(st.integers(0, len(items) - 1))
    fewer = items[:i] + items[i + 1:]
    assert _eps(fewer, 0.0).eps < _eps(items, 0.0).eps


BAD_EVENTS = [
    (dict(kind="gausian", noise_multiplier=0.5, count=100), "kind must be one of"),
    (dict(kind="gaussian", noise_multiplier=0.0), "noise_multiplier"),
    (dict(kind="gaussian", noise_multiplier=1.0, eps=1.0), "noise_multiplier alone"),
    (dict(kind="pure", eps=float("nan")), "eps must be a number"),
    (dict(kind="pure", eps=-1.0), "eps must be a number"),
    (dict(kind="pure", eps=1.0, delta=0.1), "delta must be 0"),
    (dict(kind="approx", eps=1.0, delta=1.5), "delta must be in"),
    (dict(kind="laplace", eps=3.0, noise_multiplier=0.5), "1/noise_multiplier"),
    (dict(kind="pure", eps=1.0, noise_multiplier=2.0), "not a parameter"),
    (dict(kind="pure", eps=1.0, count=2.5), "count must be an integer"),
    (dict(kind="pure", eps=1.0, count=-1), "count must be an integer"),
    (dict(kind="pure", eps=1.0, count=True), "count must be an integer"),
    (dict(kind="tree_aggregation", noise_multiplier=1.0), "steps"),
    (dict(kind="pure", eps=1.0, steps=3), "steps"),
]


@pytest.mark.parametrize("kw,match", BAD_EVENTS)
def test_event_refuses_what_the_accountant_cannot_account(kw, match):
    with pytest.raises(ValueError, match=match):
        LG.Event(**kw)


def test_event_kind_enum_and_spelling():
    assert LG.Event(LG.EventKind.GAUSSIAN, noise_multiplier=0.5, count=100).kind == "gaussian"
    assert certify(LG.Event("gaussian", noise_multiplier=0.5, count=100), 1e-5).eps > 200


@pytest.mark.parametrize("build,exc,match", [
    (lambda: LG.Ledger(items=(LG.pure(1.0),), composition="paralel"), ValueError, "composition must be one of"),
    (lambda: LG.Ledger(items=(LG.pure(1.0), "pure")), TypeError, "items\\[1\\]"),
    (lambda: LG.Ledger(items=(LG.pure(1.0),), count=-2), ValueError, "count"),
    (lambda: LG.Ledger(items=(LG.pure(1.0),), delta_extra=2.0), ValueError, "delta_extra"),
    (lambda: certify({"kind": "pure", "eps": 1.0}, 0.0), TypeError, "ledger must be"),
    (lambda: certify(LG.pure(1.0), 1.0), ValueError, "delta"),
    (lambda: certify(LG.pure(1.0), -1e-9), ValueError, "delta"),
    (lambda: certify(LG.pure(1.0), float("nan")), ValueError, "delta"),
])
def test_ledger_and_certify_refuse_bad_structure(build, exc, match):
    with pytest.raises(exc, match=match):
        build()
