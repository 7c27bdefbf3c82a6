"""What a new process imports before a study's first chunk (issue 40; benchmarks/FIRST_CHUNK.md measures the time).

Looking up one study imports that study's module and what it uses, not every subpackage; ``scipy.stats`` and
``pandas`` stay out until a function that needs them runs. One name's lookup of a planner, audit or learner
imports the module that registers it; an unknown name, and a listing, still load everything. Behaviour only:
which modules are in ``sys.modules``, never how long anything took.
"""
import json
import re
import os
import subprocess
import sys

import pytest

import _helpers
from jaxdp import registry

HEAVY = ("scipy", "scipy.stats", "scipy.special", "scipy.optimize", "pandas", "optax", "matplotlib")


def _fresh(code: str) -> dict:
    """Run ``code`` in a new interpreter (the checkout first on the path); it leaves a dict in ``out``."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(_helpers.ROOT), os.environ.get("PYTHONPATH", "")]))
    prog = "import json, sys\nout = {}\n" + code + "\nprint(json.dumps(out))\n"
    res = subprocess.run([sys.executable, "-c", prog], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_one_study_imports_its_module_and_no_scipy_stats_or_pandas():
    out = _fresh(
        "from jaxdp import registry\n"
        "e = registry.get_study('hedge-baseline')\n"
        "cfg = {**e.extra['defaults'], **e.extra['quick']}\n"
        "study = e.fn(cfg)\n"
        "from jaxdp.studies.framework import validate_study\n"
        "validate_study(study)\n"
        f"out['heavy'] = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "out['loaded'] = registry._LOADED\n"
        "out['module'] = e.fn.__module__\n"
        "out['others'] = sorted(m for m in sys.modules if m.startswith('jaxdp.studies.') and m.count('.') == 2\n"
        "                       and m.rpartition('.')[2] in {'bandits', 'mf_ftrl', 'growth_rates', 'lazy_switching'})\n"
        "out['bandits'] = 'jaxdp.bandits' in sys.modules\n")
    assert out["heavy"] == [], f"imported before the first chunk: {out['heavy']}"
    assert out["loaded"] is False
    assert out["module"] == "jaxdp.studies.hedge_baseline"
    assert out["others"] == [] and out["bandits"] is False


def test_one_name_imports_its_home_and_an_unknown_name_loads_everything():
    out = _fresh(
        "from jaxdp import registry\n"
        "out['planner'] = registry.get_planner('dp-exp3').fn.__module__\n"
        "out['audit'] = registry.get_audit('l2p-mw').fn.__module__\n"
        "out['learner'] = registry.get_learner('ucb1').factory.__module__\n"
        "out['helper'] = registry.get_learner('hedge').factory.__module__\n"   # registered through a helper
        "out['looped'] = registry.get_audit('laplace').name\n"                  # registered in a loop
        "out['loaded'] = registry._LOADED\n"
        "out['oco'] = 'jaxdp.oco' in sys.modules\n"
        "try:\n"
        "    registry.get_study('no-such-study')\n"
        "except ValueError as e:\n"
        "    out['unknown'] = str(e)\n"
        "out['loaded_after'] = registry._LOADED\n")
    assert out["planner"].startswith("jaxdp.bandits") and out["audit"].startswith("jaxdp.experts")
    assert out["learner"].startswith("jaxdp.bandits") and out["helper"] == "jaxdp.experts.hedge"
    assert out["looped"] == "laplace"
    assert out["loaded"] is False and out["oco"] is False
    assert "hedge-baseline" in out["unknown"] and "mf-ftrl" in out["unknown"]
    assert out["loaded_after"] is True


def test_every_built_in_study_lives_in_its_own_module():
    """The lazy lookup finds a study at ``jaxdp.studies.<name with _ for ->``: every built-in one is there (a
    study elsewhere is still found, through ``load_all``, only slower)."""
    registry.load_all()
    misplaced = {name: e.fn.__module__ for name, e in registry.STUDIES.items()
                 if e.fn.__module__.startswith("jaxdp.") and e.fn.__module__ != f"jaxdp.studies.{name.replace('-', '_')}"}
    assert not misplaced


@pytest.mark.parametrize("kind", ["planner", "audit", "learner"])
def test_the_source_scan_points_at_the_registering_module(kind):
    """For every name whose registration the source scan finds, the module it would import is the one (or the
    package of the private one) that defines the registered function."""
    registry.load_all()
    table = {"planner": registry.PLANNERS, "audit": registry.AUDITS, "learner": registry.LEARNERS}[kind]
    wrong, checked = {}, 0
    for name, e in table.items():
        fn = e.factory if kind == "learner" else e.fn
        pat = re.compile(rf"register_{kind}\(\s*[\"'](?:{re.escape(name)}|{re.escape(name.replace('_', '-'))})[\"']")
        homes = [m for m, text in registry._sources() if pat.search(text)]
        checked += bool(homes)
        if homes and not any(getattr(fn, "__module__", "").startswith(h) for h in homes):
            wrong[name] = (homes, fn.__module__)
    assert checked and not wrong, json.dumps(wrong)
