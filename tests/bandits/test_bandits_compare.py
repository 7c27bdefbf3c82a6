"""``jaxdp compare --problem bandits`` (alias ``bandit``): the bandit class's benchmark instances, its
built-ins (the registered bandit learners: private ones certified by their planners and ranked,
non-private ones references), the pseudo-regret, the bandit-feedback conformance check and the audit
of a learner of yours, with the ranking rules of every other class.

One CLI run at tiny sizes (one instance, T in {32, 64}, 2 seeds, 4000 audit runs) serves most tests.
"""
import math
import textwrap

import numpy as np
import pandas as pd
import pytest
from conformance import instance_digest

from jaxdp.cli import main
from jaxdp.compare import BUILTINS, EXIT_REFUTED, RANKED, builtin_learners, compare
from jaxdp.instances import BANDIT_CLASSES, PROBLEM_CLASSES, VERSION, instances

PRIVATE = ["dp_ucb_tree", "dp_se", "dp_exp3", "ldp_ucb"]
NONPRIVATE = ["ucb1", "thompson", "exp3", "exp3_ix"]

USER = textwrap.dedent('''
    import jax
    import jax.numpy as jnp
    from typing import NamedTuple

    from jaxdp import Learner
    from jaxdp.bandits import UCB1Params, ucb1
    from jaxdp.registry import get_learner


    def ucb1_claims_eps1(d):
        """UCB1 (not private) claiming eps = 1."""
        return ucb1(d), UCB1Params(jnp.float32(2.0))

    ucb1_claims_eps1.claimed_eps = 1.0


    def my_dp_exp3(d, T, eps, delta):
        """DP-EXP3 configured by its planner: claims each eps it is compared at."""
        e = get_learner("dp_exp3")
        plan = e.certified_plan(eps=eps, delta=delta, T=T, d=d)
        return e.factory(d), e.params_from_plan(plan)


    class S(NamedTuple):
        x: jax.Array
        cum: jax.Array


    def _init(key, params):
        return S(x=jax.random.randint(key, (), 0, 9, jnp.int32), cum=jnp.zeros((9,), jnp.float32))


    def _step(key, s, loss, params):
        cum = s.cum + (loss.loss if hasattr(loss, "loss") else loss)   # reads every arm's loss
        return S(x=jnp.argmin(cum).astype(jnp.int32), cum=cum), {}


    _PEEKS = Learner(_init, _step)


    def peeks(d):
        """Follow the leader on the full loss vector: not a bandit learner."""
        return _PEEKS
''')

TINY = ["--problem", "bandit", "--quick", "--T", "32,64", "--seeds", "2", "--instances", "bernoulli-linspace",
        "--audit-n", "4000", "--no-progress", "--no-plot"]
#: the built-ins of the CLI run: every private one, two references (Thompson's and EXP3-IX's compilations
#: are left out for time; test_builtins_are_the_registered_bandit_learners builds all of them)
RUN_BUILTINS = PRIVATE + ["ucb1", "exp3"]


@pytest.fixture(scope="module")
def user_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("user") / "bandit_learners.py"
    path.write_text(USER)
    return str(path)


@pytest.fixture(scope="module")
def run(user_module, tmp_path_factory):
    """The CLI on the bandit class with two learners of yours: UCB1 claiming eps = 1, planner-configured DP-EXP3."""
    out = tmp_path_factory.mktemp("cmp") / "o"
    rc = main(["compare", f"{user_module}:ucb1_claims_eps1", f"{user_module}:my_dp_exp3", *TINY,
               "--learners", ",".join(RUN_BUILTINS), "--out", str(out)])
    return rc, out, pd.read_csv(out / "leaderboard.csv")


def test_builtins_are_the_registered_bandit_learners():
    assert "bandits" in PROBLEM_CLASSES and BANDIT_CLASSES == ("bandits",)
    names = [b.name for b in builtin_learners("bandits")]
    assert names == NONPRIVATE + PRIVATE        # references first, then the private ones, in registration order
    assert [b.name for b in builtin_learners("bandit")] == names     # the alias
    assert [b.name for b in BUILTINS["bandits"]] == names
    for b in builtin_learners("bandits"):
        lrn, params, e = b.make(9, 64, 128, 0.5, 1e-6, None)
        assert lrn is b.make(9, 128, 128, 1.0, 1e-6, None)[0]         # one Learner per sweep: one compilation
        assert (e == math.inf) != b.private and (not b.private or e <= 0.5 * (1 + 1e-9)), (b.name, e)


def test_bandit_instances_are_pinned():
    """The bandit instances' first losses on their first seeds (a change bumps the benchmark version)."""
    insts = instances("bandits")
    assert [i.name for i in insts] == ["bernoulli-linspace", "bernoulli-gap", "late-arm"]
    assert all(i.quick and i.problem(9) is insts[0].problem(9) for i in insts)
    assert (VERSION, instance_digest(insts, 9)) == ("2", "2a45980454e61edbb3edd509cdcd9d2561a880a2")
    # linspace(0.1, 0.9, 9): the expected losses of the first round are 1 - means
    adv, ap = insts[0].build(9, 64, 1.0)
    np.testing.assert_allclose(adv.loss(adv.init(insts[0].keys(1)[0], ap), 0).mean, 1 - np.linspace(0.1, 0.9, 9),
                               atol=1e-4)


def test_leaderboard_ranks_and_references(run):
    rc, out, lb = run
    assert rc == EXIT_REFUTED
    assert set(lb["instance"]) == {"bernoulli-linspace"} and set(lb["T"]) == {64}
    by = {r["learner"]: r for _, r in lb.iterrows()}
    assert set(by) == set(RUN_BUILTINS) | {"ucb1_claims_eps1", "my_dp_exp3"}
    for nm in PRIVATE:   # certified by their planners' ledgers at eps = 1, ranked
        assert by[nm]["status"] == "certified" and by[nm]["eps_certified"] <= 1.0 + 1e-9 and by[nm]["rank"] >= 1
    for nm in ("ucb1", "exp3"):   # references, never ranked
        assert by[nm]["status"] == "non-private" and pd.isna(by[nm]["rank"]) and by[nm]["eps_certified"] == math.inf
    mine = by["my_dp_exp3"]   # a private learner of yours, not refuted: ranked with the built-ins
    assert (mine["kind"], mine["status"], bool(mine["ranked"])) == ("yours", "not-refuted", True)
    assert mine["audit_eps_lower"] <= 1.0
    ranked = lb[lb["status"].isin(RANKED)].sort_values("rank")
    assert len(ranked) == 5 and ranked["rank"].min() == 1
    assert list(ranked["regret_mean"]) == sorted(ranked["regret_mean"])
    # yours is the built-in DP-EXP3 under another name: the same runs (common seeds), the same rank
    assert mine["regret_mean"] == by["dp_exp3"]["regret_mean"] and mine["rank"] == by["dp_exp3"]["rank"]
    md = (out / "leaderboard.md").read_text()
    assert "Regret is the pseudo-regret" in md and "# Leaderboard: bandits" in md
    assert "--problem bandits" in (out / "command.txt").read_text()


def test_non_private_user_learner_is_refuted_and_unranked(run, capsys):
    rc, out, lb = run
    assert rc == EXIT_REFUTED
    ucb = lb[lb["learner"] == "ucb1_claims_eps1"].iloc[0]
    assert (ucb["kind"], ucb["status"], bool(ucb["ranked"])) == ("yours", "refuted", False)
    assert pd.isna(ucb["rank"]) and ucb["audit_eps_lower"] > 1.0
    md = (out / "leaderboard.md").read_text()
    assert "**ucb1_claims_eps1** ⚠ REFUTED" in md.split("**Not ranked**")[1]
    # the pseudo-regret of the built-ins is the engine's: UCB1 below the private learners at T = 64
    assert (lb.set_index("learner").loc["ucb1", "regret_mean"]
            < lb.set_index("learner").loc["dp_se", "regret_mean"])


def test_learner_reading_unplayed_arms_fails_conformance(user_module, tmp_path, capsys):
    out = tmp_path / "peeks"
    rc = main(["compare", f"{user_module}:peeks", *TINY, "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err[-2000:]
    assert "fails the conformance checks" in err and "[bandit feedback]" in err
    assert "reads more than the played arm's loss" in err
    assert not (out / "leaderboard.csv").exists()


def test_bad_problem_name_lists_allowed_values(tmp_path):
    with pytest.raises(ValueError, match=r"problem must be one of \[.*'bandits'\].*bandit = bandits"):
        compare(None, "bandids", out=tmp_path / "x")
    assert not (tmp_path / "x").exists()
