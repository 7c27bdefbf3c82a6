"""The learner registry (``jaxdp.registry.register_learner``): every registered learner passes its own
conformance case (a registered learner without one fails here), its planner's plans become its typed
params (``Plan.to_params``), ``jaxdp compare``'s built-ins and the benchmark suite's cases are registered
learners, and the page docs/guide/add-a-learner.md registers a new learner that works end to end.

Each conformance case is small (d <= 4, T = 16, 2 seeds x 2 learner keys) and compiled once; cases of
one learner object share the compilation."""
import dataclasses
import functools
import math
import re
import types

import numpy as np
import pytest

from _helpers import ROOT
from jaxdp import registry

registry.load_all()
NAMES = sorted(registry.LEARNERS)

#: ``jaxdp compare``'s built-ins per class, in order: a results directory records this list (resuming a
#: run checks it), so registering another built-in is a visible change of every default comparison.
EXPECTED_BUILTINS = {
    "experts": ["hedge", "l2p_mw", "tree_ftrl"],
    "realizable-experts": ["hedge", "l2p_mw", "tree_ftrl", "sparse_vector", "potential"],
    "oco-ball": ["ftrl", "dp_ftrl"],
    "oco-simplex": ["ftrl", "dp_ftrl"],
    "bandits": ["ucb1", "thompson", "exp3", "exp3_ix", "dp_ucb_tree", "dp_se", "dp_exp3", "ldp_ucb"],
}


@functools.lru_cache(maxsize=None)
def _parts(name: str) -> tuple:
    """A learner's conformance case, built once (``(learner, adversary, problem, params_list, adv_params)``)."""
    return registry.LEARNERS[name].conformance.parts()


def _key(name: str) -> tuple:
    """Cases that run the same learner, adversary and problem objects at the same size share a compilation."""
    import jax

    c = registry.LEARNERS[name].conformance
    learner, adversary, problem, params_list, adv_params = _parts(name)
    check = tuple(sorted((k, v) for k, v in c.check.items() if k != "deterministic"))
    return (id(learner), id(adversary), id(problem), c.T, c.seeds, check,
            str(jax.tree_util.tree_structure(params_list[0])),
            tuple(np.asarray(x).tobytes() for x in jax.tree_util.tree_leaves(adv_params)))


_RESULTS: dict = {}


def _conformance(entry: registry.LearnerEntry) -> dict:
    """Run ``entry``'s conformance case. Learners whose cases share a learner object (``ftrl`` is
    ``dp_ftrl`` without noise) are checked in one ``check_learner`` call over all their grid points:
    one compilation; the key-sensitivity check then needs some grid point of the group to use the key,
    and is skipped only if every member declares ``deterministic=True``."""
    if entry.conformance is None:
        pytest.fail(f"registered learner {entry.name!r} has no conformance case: pass "
                    "register_learner(..., conformance=ConformanceCase(build)) (docs/guide/add-a-learner.md)")
    key = _key(entry.name)
    members = [n for n in NAMES if registry.LEARNERS[n].conformance is not None and _key(n) == key]
    if members == [entry.name]:
        from jaxdp.testing import check_case

        return check_case(entry.conformance)
    if key not in _RESULTS:
        from jaxdp.testing import check_learner

        c = entry.conformance
        learner, adversary, problem, _, adv_params = _parts(entry.name)
        kw = dict(T=c.T, seeds=c.seeds, **{k: v for k, v in c.check.items() if k != "deterministic"})
        kw["deterministic"] = all(registry.LEARNERS[n].conformance.check.get("deterministic", False)
                                  for n in members)
        _RESULTS[key] = check_learner(learner, adversary, problem, [p for n in members for p in _parts(n)[3]],
                                      adv_params, **kw)
    return _RESULTS[key]


@pytest.mark.parametrize("name", NAMES)
def test_conformance(name):
    """Shapes, key reuse, purity, one compilation for every grid point, finite metrics, key sensitivity."""
    out = _conformance(registry.LEARNERS[name])
    assert np.all(np.isfinite(out["regret"]))


def test_a_learner_without_a_conformance_case_fails():
    entry = dataclasses.replace(registry.LEARNERS["hedge"], name="no_case", conformance=None)
    with pytest.raises(pytest.fail.Exception, match="'no_case' has no conformance case"):
        _conformance(entry)


def test_conformance_case_by_reference():
    """A case's ``build`` may be a ``"module:function"`` reference, imported on first use: it builds what the
    function builds; one that does not resolve is a ValueError naming the reference, raised when the case is
    built (registration imports nothing), and a malformed reference or a non-callable is refused at once."""
    from jaxdp.experts.conformance import hedge_case

    case = registry.ConformanceCase("jaxdp.experts.conformance:hedge_case")
    assert case.builder() is hedge_case
    learner, adversary, problem, params_list, adv_params = case.parts()
    want = hedge_case(4, 16)
    assert (learner, adversary, problem) == want[:3]
    assert [float(p.eta) for p in params_list] == [float(p.eta) for p in want[3]]
    assert float(adv_params.gap) == float(want[4].gap)

    missing_module = registry.ConformanceCase("jaxdp.no_such_module:some_case")   # nothing imported yet
    with pytest.raises(ValueError, match=r"build='jaxdp.no_such_module:some_case': cannot import module "
                                         r"'jaxdp.no_such_module'"):
        missing_module.parts()
    with pytest.raises(ValueError, match=r"build='jaxdp.experts.conformance:no_such_case': module "
                                         r"'jaxdp.experts.conformance' has no function 'no_such_case'"):
        registry.ConformanceCase("jaxdp.experts.conformance:no_such_case").parts()
    with pytest.raises(ValueError, match=r"has no function '__all__' \(it is a list\)"):
        registry.ConformanceCase("jaxdp.experts.conformance:__all__").builder()
    for bad in ("jaxdp.experts.conformance.hedge_case", "jaxdp.experts.conformance:", ":hedge_case",
                "jaxdp.experts.conformance:hedge_case:x", "jaxdp experts:hedge_case"):
        with pytest.raises(ValueError, match=r"a reference must be 'module:function'"):
            registry.ConformanceCase(bad)
    with pytest.raises(TypeError, match="a callable build\\(d, T\\) or a 'module:function' string, got int"):
        registry.ConformanceCase(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", NAMES)
def test_entry(name):
    """A complete entry: its problem class, a params NamedTuple its case uses, a registered planner."""
    e = registry.LEARNERS[name]
    assert e.problem in registry.LEARNER_PROBLEMS and callable(e.factory)
    assert issubclass(e.params_type, tuple) and hasattr(e.params_type, "_fields"), "params_type: a NamedTuple"
    assert e.description and e.reference
    assert e.conformance is not None
    learner, _, _, params_list, _ = _parts(name)
    assert len(params_list) >= 2 and all(isinstance(p, e.params_type) for p in params_list)
    if e.planner is not None:
        assert e.planner in registry.PLANNERS and e.plans[0] == e.planner
    assert bool(e.plans) == (e.from_plan is not None)
    if e.compare is not None:
        assert e.compare.how


@pytest.mark.parametrize("name", [n for n in NAMES if registry.LEARNERS[n].planner])
def test_plan_to_params(name):
    """The one conversion: ``plan.to_params()`` is the learner's typed params, and the learner built
    from the plan is the one its factory builds."""
    e = registry.LEARNERS[name]
    plan = registry.get_planner(e.planner).fn(eps=1.0, delta=1e-6, T=64, d=2)
    p = plan.to_params()
    assert isinstance(p, e.params_type)
    assert registry.learner_for_plan(plan) is e
    q = e.params_from_plan(plan)
    assert all(np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(_leaves(p), _leaves(q)))
    with pytest.raises(ValueError, match="takes the parameters of plans"):
        registry.get_learner("hedge").params_from_plan(plan)


def _leaves(tree):
    import jax

    return jax.tree_util.tree_leaves(tree)


def test_compare_builtins_come_from_the_registry():
    from jaxdp.compare import BUILTINS, CLASS_LEARNERS, builtin_learners

    assert {cls: [b.name for b in bs] for cls, bs in BUILTINS.items()} == EXPECTED_BUILTINS
    for cls in CLASS_LEARNERS:
        for b in builtin_learners(cls):
            e = registry.get_learner(b.name)
            assert b.make is e.compare.make and b.private == e.private and e.problem in CLASS_LEARNERS[cls]



def test_benchmark_cases_are_registered_learners():
    from benchmarks.harness.suite import CASE_LEARNERS, CASE_NAMES

    assert set(CASE_LEARNERS) <= set(CASE_NAMES)
    for case, name in CASE_LEARNERS.items():
        assert registry.get_learner(name).conformance is not None, case


def test_register_learner_refuses():
    e = registry.LEARNERS["hedge"]
    kw = dict(params_type=e.params_type, conformance=e.conformance, description="x", private=False)
    with pytest.raises(ValueError, match="registered twice"):
        registry.register_learner("hedge", factory=lambda d: None, problem="experts", **kw)
    assert registry.register_learner("hedge", factory=e.factory, problem="experts", **kw) is e   # idempotent
    with pytest.raises(ValueError, match="problem must be one of"):
        registry.register_learner("x_unknown", factory=e.factory, problem="no_such_class", **kw)
    with pytest.raises(ValueError, match="needs from_plan"):
        registry.register_learner("x_planned", factory=e.factory, problem="experts", planner="l2p_mw", **kw)
    with pytest.raises(ValueError, match="unknown learner 'no_such_learner'"):
        registry.get_learner("no_such_learner")
    assert "x_unknown" not in registry.LEARNERS and "x_planned" not in registry.LEARNERS


# --------------------------------------------------------------------------- docs/guide/add-a-learner.md


def _doc_blocks() -> dict:
    """The page's Python blocks, by the file each one says it is (its first line, ``# path``)."""
    text = (ROOT / "docs" / "guide" / "add-a-learner.md").read_text()
    blocks = {}
    for code in re.findall(r"```python\n(.*?)```", text, flags=re.S):
        first = code.splitlines()[0]
        if first.startswith("# ") and first.endswith(".py"):
            blocks[first[2:].strip()] = code
    return blocks


def test_add_a_learner_page():
    """The page's learner module registers its planner and learner; the planner certifies ε with the
    ledger, ``Plan.to_params`` builds its params, ``jaxdp compare`` and the registry's conformance
    test pick it up, and the page's own test passes. Everything it registers is removed again."""
    blocks = _doc_blocks()
    module_path = "jaxdp/experts/noisy_leader.py"
    assert {module_path, "tests/experts/test_noisy_leader.py"} <= set(blocks), sorted(blocks)
    before = (dict(registry.LEARNERS), dict(registry.PLANNERS))
    mod = types.ModuleType("jaxdp.experts.noisy_leader")
    mod.__package__ = "jaxdp.experts"
    try:
        exec(compile(blocks[module_path], module_path, "exec"), mod.__dict__)
        e = registry.get_learner("noisy_leader")
        assert e.problem == "experts" and e.private and e.planner == "noisy_leader"
        from jaxdp.compare import builtin_learners

        assert [b.name for b in builtin_learners("experts")] == EXPECTED_BUILTINS["experts"] + ["noisy_leader"]
        plan = registry.get_planner("noisy_leader").fn(eps=0.5, delta=0.0, T=100, d=8, mode="certified")
        assert plan.certified and math.isclose(plan.eps_certified, 0.5, rel_tol=1e-9)
        assert isinstance(plan.to_params(), mod.Params)
        lrn, params, eps_c = e.compare.make(8, 64, 256, 0.5, 1e-6, None)
        assert lrn is e.compare.make(8, 128, 256, 1.0, 1e-6, None)[0] and eps_c == 0.5
        test_ns = {"__name__": "test_noisy_leader"}
        test_path = "tests/experts/test_noisy_leader.py"
        exec(compile(blocks[test_path], test_path, "exec"), test_ns)
        tests = [f for n, f in test_ns.items() if n.startswith("test_") and callable(f)]
        assert tests
        for f in tests:    # the page's tests (its conformance case among them)
            f()
    finally:
        registry.LEARNERS.clear()
        registry.LEARNERS.update(before[0])
        registry.PLANNERS.clear()
        registry.PLANNERS.update(before[1])



def test_load_all_imports_every_public_module():
    """A module that registers itself is found though its package's ``__init__`` does not import it: after
    ``load_all`` every public module of every subpackage is imported (a new learner is one module and its test)."""
    import importlib
    import pkgutil
    import sys

    import jaxdp

    registry.load_all()
    pkgs = [f"jaxdp.{m.name}" for m in pkgutil.iter_modules(jaxdp.__path__) if m.ispkg]
    pkgs += [f"jaxdp.privacy.{m.name}" for m in pkgutil.iter_modules(importlib.import_module("jaxdp.privacy").__path__)]
    missing = [f"{p}.{m.name}" for p in pkgs for m in pkgutil.iter_modules(importlib.import_module(p).__path__)
               if not m.name.startswith("_") and f"{p}.{m.name}" not in sys.modules]
    assert not missing, f"load_all left out: {missing}"
