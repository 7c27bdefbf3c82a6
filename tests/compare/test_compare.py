"""``jaxdp compare``: private learners pass the audit; a copy of Hedge in a user module reproduces the
built-in Hedge bit for bit and resumes; a learner failing the conformance checks stops the run with
status 2; bad arguments fail before anything runs. Where each learner lands on the leaderboard
(ranked, not ranked, reference), the exit statuses and the resume line: tests/compare/test_compare_trust.py."""
import textwrap

import numpy as np
import pandas as pd
import pytest

import jaxdp
from _helpers import ROOT
from jaxdp.cli import main
from jaxdp.compare import audit_learner, compare
from jaxdp.instances import get_instance, instances

USER_MODULE = textwrap.dedent('''
    """A user's module outside the package: follow-the-leader and a key-reusing learner (a verbatim copy
    of Hedge's source is written next to it: hedge_copy.py)."""
    import functools
    import math
    from typing import NamedTuple

    import jax
    import jax.numpy as jnp

    from jaxdp import Learner
    from jaxdp.core.random import sample_categorical, sample_from_weights


    class FState(NamedTuple):
        x: jax.Array
        cum: jax.Array


    @functools.lru_cache(maxsize=None)
    def ftl_learner(d):
        def init(key, params):
            return FState(x=jnp.int32(0), cum=jnp.zeros((d,), jnp.float32))

        def step(key, state, loss, params):
            cum = state.cum + loss
            x = jnp.argmin(cum).astype(jnp.int32)
            return FState(x=x, cum=cum), {"switched": x != state.x}

        return Learner(init, step)


    def ftl(d):
        """Follow the leader: deterministic, not private; it claims eps = 1."""
        return ftl_learner(d)


    ftl.claimed_eps = 1.0
    ftl.deterministic = True


    @functools.lru_cache(maxsize=None)
    def reuse_learner(d):
        def step(key, state, loss, params):
            cum = state.cum + loss
            g = jax.random.gumbel(key, (d,))
            x = sample_categorical(key, -cum + 0.0 * g)   # the key is used twice
            return FState(x=x, cum=cum), {}

        return Learner(ftl_learner(d).init, step)   # starts as follow-the-leader does


    def reuses_keys(d):
        return reuse_learner(d)
''')


def _hedge_copy_source() -> str:
    """The source of ``jaxdp.experts.hedge``, verbatim but for absolute imports, plus a factory."""
    import importlib
    import inspect

    h = importlib.import_module("jaxdp.experts.hedge")   # the module (jaxdp.experts.hedge is also the function)
    src = inspect.getsource(h).replace("from ..core", "from jaxdp.core").replace("from ..", "from jaxdp.")
    assert "from ." not in src.replace("from __future__", "")
    return src + textwrap.dedent('''

        def my_hedge(d, T):
            return hedge(d), hedge_params(d, T)
        ''')


@pytest.fixture(scope="module")
def user_module(tmp_path_factory):
    d = tmp_path_factory.mktemp("user")
    path = d / "user_learners.py"
    path.write_text(USER_MODULE)
    (d / "hedge_copy.py").write_text(_hedge_copy_source())
    return path


SMALL = dict(problem="experts", T=(64, 128), d=4, seeds=4, plot=False)


def test_audit_passes_private_learners():
    """The other side of the audit: private learners at their claim are not flagged (false-flag rate <= 1e-7)."""
    from jaxdp.compare import BUILTINS

    tree = {b.name: b for b in BUILTINS["experts"]}["tree_ftrl"]
    lrn, params, e = tree.make(4, 16, 16, 1.0, 1e-6, None)
    rep = audit_learner(lrn, params, problem_class="experts", d=4, T=16, claimed_eps=e, claimed_delta=1e-6,
                        n=20_000)
    assert not rep.violation, str(rep)
    ex = jaxdp.compare.load_factory(str(ROOT / "examples" / "my_learner.py") + ":make")
    lrn, params = ex(d=4, T_max=16, eps=1.0)
    rep = audit_learner(lrn, params, problem_class="experts", d=4, T=16, claimed_eps=1.0, claimed_delta=0.0,
                        n=20_000)
    assert not rep.violation, str(rep)


def test_hedge_copy_reproduces_builtin_bit_for_bit_and_resumes(user_module, tmp_path):
    out = tmp_path / "hedge"
    kw = dict(eps=(0.5, 1.0), learners=["hedge"], instances=["planted-expert", "alternating-batches"], audit=False,
              out=out, **SMALL)
    copy = user_module.parent / "hedge_copy.py"
    lb = compare(f"{copy}:my_hedge", **kw)
    df = pd.read_csv(out / "results.csv")
    key = ["instance", "eps", "T", "seed"]
    a = df[df["learner"] == "my_hedge"].sort_values(key).reset_index(drop=True)
    b = df[df["learner"] == "hedge"].sort_values(key).reset_index(drop=True)
    assert len(a) == len(b) == 2 * 2 * 2 * 4
    for col in ("regret", "loss", "best_loss", "expected_regret", "switches"):
        np.testing.assert_array_equal(a[col].to_numpy(), b[col].to_numpy(), err_msg=col)
    assert np.unique(a["regret"]).size > 4     # real runs, not constants
    for col in ("regret_mean", "regret_lo", "regret_hi", "switches_mean"):
        np.testing.assert_array_equal(lb.loc[lb["learner"] == "my_hedge", col].to_numpy(),
                                      lb.loc[lb["learner"] == "hedge", col].to_numpy())
    # resume: a second run computes nothing and returns the same table
    log = []
    again = compare(f"{copy}:my_hedge", log=log.append, **kw)
    assert any("0 chunks run" in m for m in log), log
    pd.testing.assert_frame_equal(again, lb)
    # another configuration in the same directory is refused before anything runs
    with pytest.raises(ValueError, match="holds another run"):
        compare(f"{copy}:my_hedge", **dict(kw, eps=(0.25,)))
    # the seeds are the instances' fixed lists: the built-in numbers match a direct simulate call
    inst = get_instance("planted-expert")
    from jaxdp import simulate
    from jaxdp.experts import hedge, hedge_params

    adv, ap = inst.build(4, 128, 1.0)
    direct = simulate(hedge(4), adv, inst.problem(4), hedge_params(4, 128), ap, inst.keys(4), 128)
    mine = b[(b["instance"] == "planted-expert") & (b["eps"] == 1.0) & (b["T"] == 128)]["regret"].to_numpy()
    np.testing.assert_allclose(mine, direct["regret"], rtol=0, atol=1e-4)


def test_cli_stops_on_conformance_failure(user_module, tmp_path, capsys):
    rc = main(["compare", f"{user_module}:reuses_keys", "--quick", "--out", str(tmp_path / "bad"), "--no-plot"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "fails the conformance checks" in err and "[key reuse]" in err
    assert not (tmp_path / "bad" / "leaderboard.csv").exists()


def test_bad_arguments_fail_before_anything_runs(user_module, tmp_path, capsys):
    assert main(["compare", f"{user_module}:ftl", "--problem", "label-dp", "--out", str(tmp_path / "x")]) == 2
    assert "problem must be one of" in capsys.readouterr().err
    assert main(["compare", f"{user_module}:ftl", "--eps", "0,1", "--out", str(tmp_path / "x")]) == 2
    assert "eps must be positive" in capsys.readouterr().err
    assert main(["compare", "no_colon_here", "--out", str(tmp_path / "x")]) == 2
    assert "MODULE:FACTORY" in capsys.readouterr().err
    for claim, msg in (("0", "claimed_eps must be positive (inf declares a non-private learner), got '0'"),
                       ("nan", "claimed_eps must be positive"), ("one", "claimed_eps must be a positive number"),
                       ("1,2", "claimed_eps must be one value or one per learner (1 learners), got '1,2'")):
        assert main(["compare", f"{user_module}:ftl", "--claimed-eps", claim, "--out", str(tmp_path / "x")]) == 2
        assert msg in capsys.readouterr().err, claim
    assert main(["compare", "--claimed-eps", "1", "--out", str(tmp_path / "x")]) == 2
    assert "no learner (MODULE:FACTORY) was given" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_registry_is_versioned_and_fixed():
    """Every online instance's first losses on its first seeds are pinned: changing an instance's
    parameters, seeds or stream must bump ``VERSION`` (and this digest)."""
    import importlib.util

    from conformance import instance_digest
    from jaxdp.instances import ONLINE_CLASSES, PROBLEM_CLASSES, VERSION

    names = [i.name for i in instances()]
    assert len(names) == len(set(names))
    for cls in PROBLEM_CLASSES:
        assert instances(cls), cls
    # the oblivious instances of version 1, unchanged in version 2 (the same digest as in version 1)
    digest = instance_digest([i for i in instances(include_data=False)
                              if i.problem_class in ONLINE_CLASSES and not i.adaptive], 8)
    if importlib.util.find_spec("sklearn") and importlib.util.find_spec("river"):   # the data extra
        real = {i.name for i in instances("experts") if not i.quick}
        assert real == {"real-phishing", "real-digits", "real-diabetes"}
    assert digest == "64e3f3ac1e21f40c794c3c5cf40113ab7c865d2f"
    # version 2 adds the adaptive instances (pinned by tests/compare/test_compare_adaptive.py)
    assert VERSION == "2"
    assert [i.name for i in instances() if i.adaptive] == ["adaptive-lazy-epochs", "punish-last-action",
                                                           "toward-last-iterate", "toward-last-iterate-simplex"]


def test_a_factory_file_imports_like_a_script(tmp_path):
    """``path/file.py:make`` may import a module beside it (its folder is importable, as for ``python file.py``);
    a module that is nowhere is a ValueError naming it, so the CLI exits 2."""
    (tmp_path / "beside.py").write_text("from jaxdp.experts import hedge\n\ndef make(d):\n    return hedge(d)\n")
    (tmp_path / "uses_beside.py").write_text("import beside\n\ndef make(d):\n    return beside.make(d)\n")
    (tmp_path / "uses_missing.py").write_text("import no_such_module_jaxdp\n\ndef make(d):\n    return None\n")
    make = jaxdp.compare.load_factory(f"{tmp_path / 'uses_beside.py'}:make")
    assert make(3).__class__.__name__ == jaxdp.experts.hedge(3).__class__.__name__
    with pytest.raises(ValueError, match="no_such_module_jaxdp"):
        jaxdp.compare.load_factory(f"{tmp_path / 'uses_missing.py'}:make")
    assert main(["compare", f"{tmp_path / 'uses_missing.py'}:make", "--quick"]) == 2
