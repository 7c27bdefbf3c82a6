"""Every bad input of issue 18 is refused up front: exit code 2, one line naming the parameter, nothing created.

Study cases run the real CLI in-process (``jaxdp.cli.main``): validation happens before any
directory is created or anything is compiled, so each case costs milliseconds. Library cases
call the public constructors directly.
"""
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from jaxdp.cli import main

Q = ["--quick"]

# (argv after `study run`, the parameter the message must name, the allowed range it must state)
STUDY_CASES = [
    (["hedge-baseline", *Q, "--set", "gap=nan"], "gap", "[0, 0.5]"),
    (["hedge-baseline", *Q, "--set", "gap=inf"], "gap", "[0, 0.5]"),
    (["hedge-baseline", *Q, "--set", "gap=0.9"], "gap", "[0, 0.5]"),
    (["hedge-baseline", *Q, "--set", "gap=-0.3"], "gap", "[0, 0.5]"),
    (["hedge-baseline", *Q, "--set", "T=inf"], "T", "integer"),
    (["hedge-baseline", *Q, "--set", "d=1"], "d", "[2, 1048576]"),
    (["hedge-baseline", *Q, "--set", "learners=hedge,zzz"], "learners", "hedge, dartboard, ftpl"),
    (["realizable-experts", *Q, "--set", "eps=inf"], "eps", "> 0"),
    (["realizable-experts", *Q, "--set", "Lstar=nan"], "Lstar", ">= 0"),
    (["growth-rates", *Q, "--set", "eps_priv=-1"], "eps_priv", "> 0"),
    (["growth-rates", *Q, "--set", "n=0"], "n", "[2, 1073741824]"),
    (["growth-rates", *Q, "--set", "kappas=1"], "kappas", "> 1"),
    (["lazy-figure1c", *Q, "--set", "alpha=-1"], "alpha", "[0, 1)"),
    (["lazy-figure1c", *Q, "--set", "d=1"], "d", "[2, 1048576]"),
    (["lazy-figure1c", *Q, "--set", "delta=nan"], "delta", "(0, 1)"),
    (["lazy-figure1c", *Q, "--set", "T=0"], "T", "[2, 2147483646]"),
    (["lazy-switching", *Q, "--set", "eps=0"], "eps", "(0, 1]"),
    (["lazy-switching", *Q, "--set", "eps=-0.1"], "eps", "(0, 1]"),
    (["lazy-switching", *Q, "--set", "d=1"], "d", "[2, 1048576]"),
    (["realizable-oco", *Q, "--set", "r7_eps=0"], "r7_eps", "> 0"),
    (["lazy-figure1ab", *Q, "--set", "alpha=nan"], "alpha", "[0, 1)"),
    (["label-dp-rates", *Q, "--set", "eps=inf"], "eps", "> 0"),
    (["label-dp-rates", *Q, "--set", "l7_pairs=1:x"], "l7_pairs", "BETA:GAMMA"),
    (["hedge-baseline", *Q, "--processes", "0"], "--processes", "positive"),
]


@pytest.mark.parametrize("argv,param,allowed", STUDY_CASES, ids=[" ".join(c[0]) for c in STUDY_CASES])
def test_bad_study_input_exits_2_before_anything(argv, param, allowed, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["study", "run", *argv, "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jaxdp: error: "), err
    assert "Traceback" not in err
    assert param in lines[0] and allowed in lines[0], lines[0]
    assert not out.exists(), "a refused run must not create its results directory"


def test_every_registered_study_declares_its_parameters():
    from jaxdp import registry
    from jaxdp.studies.framework import PARAM_SPECS

    registry.load_all()
    mine = [n for n in registry.STUDIES if n in PARAM_SPECS]
    assert len(mine) >= 8
    for n in mine:
        assert set(PARAM_SPECS[n]) == set(registry.STUDIES[n].extra["defaults"]), n


# ------------------------------------------------------------------ library: params constructors


def _lib_cases():
    import jax.numpy as jnp

    from jaxdp.core import seed_keys
    from jaxdp.experts import (
        AlternatingParams, BernoulliParams, HalvingParams, HedgeParams, LazyEpochsParams, RealizableBernoulliParams,
        RealizableLBParams,
    )

    nan = float("nan")
    return [
        (lambda: HedgeParams(eta=nan), "eta"),
        (lambda: HedgeParams(eta=-1.0), "eta"),
        (lambda: HedgeParams(eta=0.0), "eta"),
        (lambda: HedgeParams(eta=jnp.asarray([0.1, nan])), "eta"),
        (lambda: BernoulliParams(gap=nan), "gap"),
        (lambda: BernoulliParams(gap=math.inf), "gap"),
        (lambda: BernoulliParams(gap=0.9), "gap"),
        (lambda: BernoulliParams(gap=jnp.asarray([0.1, -0.2])), "gap"),
        (lambda: AlternatingParams(B=jnp.int32(0)), "B"),
        (lambda: LazyEpochsParams(T=jnp.int32(0), eps=1.0, epoch_len=0), "T"),
        (lambda: LazyEpochsParams(T=16, eps=nan, epoch_len=0), "eps"),
        (lambda: LazyEpochsParams(T=16, eps=1.0, epoch_len=jnp.int32(-1)), "epoch_len"),
        (lambda: RealizableBernoulliParams(q=1.5, q_star=0.0), "q"),
        (lambda: RealizableBernoulliParams(q=0.5, q_star=nan), "q_star"),
        (lambda: HalvingParams(r=jnp.int32(0)), "r"),
        (lambda: RealizableLBParams(T=16, eps=-1.0), "eps"),
        (lambda: seed_keys(0, -5), "seeds"),
    ]


def test_library_constructors_refuse_bad_values():
    for make, name in _lib_cases():
        with pytest.raises(ValueError, match=name):
            make()


def test_library_constructors_accept_good_values_and_tracers():
    import jax
    import jax.numpy as jnp

    from jaxdp.experts import BernoulliParams, HedgeParams

    assert float(HedgeParams(eta=0.5).eta) == 0.5
    assert BernoulliParams(gap=jnp.zeros(3)).gap.shape == (3,)
    # under tracing the contract is documented, not checked: no error, no host sync
    f = jax.jit(lambda e: HedgeParams(eta=e).eta * 2)
    assert float(f(jnp.float32(-1.0))) == -2.0
    # pytree round trips (vmap, tree_map) rebuild params from arbitrary leaves
    p = jax.tree_util.tree_map(lambda x: x, HedgeParams(eta=jnp.ones(2)))
    assert p.eta.shape == (2,)
    jax.vmap(lambda q: q.eta + 1)(HedgeParams(eta=jnp.ones(4)))


def test_replay_data_is_checked():
    import jax.numpy as jnp

    from jaxdp.core import seed_keys, simulate
    from jaxdp.core.validation import check_adversary_params
    from jaxdp.experts import ReplayParams, adv_replay, experts_problem, hedge, load_losses

    with pytest.raises(ValueError, match="losses"):
        ReplayParams(losses=np.array([[0.1, np.nan]], np.float32))
    with pytest.raises(ValueError, match="losses"):
        ReplayParams(losses=np.zeros((5, 0), np.float32))
    data = ReplayParams(losses=load_losses(np.full((5, 2), 0.5)))
    with pytest.raises(ValueError, match="d=3"):
        check_adversary_params(adv_replay(3), data, 5)
    with pytest.raises(ValueError, match="past_end='wrap'"):
        check_adversary_params(adv_replay(2), data, 8)
    check_adversary_params(adv_replay(2, "wrap"), data, 8)
    with pytest.raises(ValueError, match="past_end"):
        adv_replay(2, "loop")
    # through simulate: columns != d and T past the data are refused before anything is compiled
    with pytest.raises(ValueError, match="needs d=2 columns"):
        simulate(hedge(2), adv_replay(2), experts_problem(), HedgeParams_(0.1),
                 ReplayParams(losses=jnp.full((5, 3), 0.5)), seed_keys(0, 2), 5)
    with pytest.raises(ValueError, match="T=8 is longer than the data"):
        simulate(hedge(2), adv_replay(2), experts_problem(), HedgeParams_(0.1), data, seed_keys(0, 2), 8)
    # and when traced without the host check, a column mismatch is refused at trace time
    with pytest.raises(ValueError, match="3 columns; it needs d=2"):
        adv_replay(2).loss((None, ReplayParams(losses=jnp.full((5, 3), 0.5))), jnp.int32(0))
    wrapped = simulate(hedge(2), adv_replay(2, "wrap"), experts_problem(), HedgeParams_(0.1), data,
                       seed_keys(0, 2), 8)
    assert np.all(np.isfinite(wrapped["regret"]))


def HedgeParams_(eta):
    import jax.numpy as jnp

    from jaxdp.experts import HedgeParams

    return HedgeParams(eta=jnp.float32(eta))


# ------------------------------------------------------------------ loaders


def test_loaders_name_the_file_and_the_fix(tmp_path):
    from jaxdp.core.io import load_array

    z = tmp_path / "two.npz"
    np.savez(z, a=np.zeros((3, 2)), b=np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"two\.npz.*2 arrays.*key="):
        load_array(z, "losses")
    assert load_array(z, "losses", key="b").sum() == 6
    with pytest.raises(ValueError, match=r"no array 'c'.*a, b"):
        load_array(z, "losses", key="c")
    c = tmp_path / "head.csv"
    c.write_text("e1,e2\n0.1,0.2\n0.3,0.4\n")
    with pytest.raises(ValueError, match=r"head\.csv.*row 1.*skip_header=1"):
        load_array(c, "losses")
    assert load_array(c, "losses", skip_header=1).shape == (2, 2)
    bad = tmp_path / "bad.csv"
    bad.write_text("0.1,0.2\n0.3,x\n")
    with pytest.raises(ValueError, match=r"bad\.csv.*row 2"):
        load_array(bad, "losses")
    with pytest.raises(ValueError, match=r"losses.*zero-width|empty"):
        load_array(np.zeros((5, 0)), "losses")
    with pytest.raises(ValueError, match="missing.npy"):
        load_array(tmp_path / "missing.npy", "losses")


# ------------------------------------------------------------------ one writer per directory


def test_two_configs_racing_for_one_directory_exactly_one_wins(tmp_path):
    """Two `jaxdp study run` with different configs started together on one fresh directory."""
    out = tmp_path / "race"
    base = [sys.executable, "-m", "jaxdp.cli", "study", "run", "hedge-baseline", "--quick", "--out", str(out),
            "--no-progress", "--no-plot", "--set", "T=16,32", "--set", "d=3", "--set", "learners=hedge",
            "--set", "adversaries=noise", "--seeds", "2"]
    procs = [subprocess.Popen(base + ["--set", f"gap={g}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for g in (0.1, 0.2)]
    res = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    codes = sorted(r[0] for r in res)
    assert codes == [0, 2], res
    loser = next(err for rc, err in res if rc == 2)
    assert "holds a different study/config" in loser and "gap" in loser
    winner_gap = json.loads((out / "manifest.json").read_text())["config"]["gap"]
    assert winner_gap in (0.1, 0.2)
    import pandas as pd

    assert len(pd.read_csv(out / "results.csv")) == 2 * 2


# ------------------------------------------------------------------ Ctrl-C


def test_ctrl_c_stops_with_130_and_a_rerun_resumes(tmp_path):
    import signal
    import time

    out = tmp_path / "int"
    args = [sys.executable, "-m", "jaxdp.cli", "study", "run", "hedge-baseline", "--quick", "--out", str(out),
            "--no-progress", "--no-plot", "--set", "T=16,32,64", "--set", "d=3", "--set", "learners=hedge,ftpl",
            "--set", "adversaries=noise,planted", "--seeds", "4"]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and p.poll() is None and not list((out / "chunks").glob("*.json")):
        time.sleep(0.01)
    assert p.poll() is None, "the study finished before it could be interrupted"
    p.send_signal(signal.SIGINT)
    rc = p.wait(timeout=300)
    err = p.stderr.read()
    assert rc == 130, err[-2000:]
    assert "interrupted; rerun to resume" in err and "Traceback" not in err
    done = len(list((out / "chunks").glob("*.csv")))
    assert 1 <= done < 4 and not (out / "results.csv").exists()
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and f"({4 - done} chunks run, {done} already done)" in r.stderr, r.stderr[-2000:]


def test_misfits_in_the_engine_name_their_cause():
    """A learner and an adversary of different sizes, or per-grid-point parameters without ``grid=True``, are one
    ValueError raised while tracing (nothing compiled) that says what does not fit; an experts learner takes d >= 2
    experts, as the command line does."""
    import jax.numpy as jnp

    from jaxdp.core import seed_keys, simulate
    from jaxdp.experts import BernoulliParams, HedgeParams, bernoulli_experts, experts_problem, ftpl, hedge

    keys = seed_keys(0, 2)
    with pytest.raises(ValueError, match=r"do not fit together \(.*\(8,\) and \(5,\)"):
        simulate(hedge(8), bernoulli_experts(5), experts_problem(), HedgeParams(eta=0.1), BernoulliParams(gap=0.1),
                 keys, 8)
    with pytest.raises(ValueError, match="grid=True"):
        simulate(hedge(4), bernoulli_experts(4), experts_problem(), HedgeParams(eta=0.1),
                 BernoulliParams(gap=jnp.ones(3) * 0.1), keys, 8)
    for make in (hedge, ftpl):
        with pytest.raises(ValueError, match="d must be an integer >= 2"):
            make(1)
