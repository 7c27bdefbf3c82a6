"""The verdict table of ``real-experts`` is generated from the kept results: one row per seed-paired comparison
(best private learner against the runner-up and tree DP-FTRL against L2P-MW at every (dataset, ε); the sparse
vector against Hedge and L2P-MW at the largest ε), each claim of the page's findings checked against its paired
interval, every miss linked to its explanation. Pandas only: no JAX compile."""
import pandas as pd

from _helpers import ROOT, anchor_exists, assert_page_current, miss_links_resolve, verdict_rows
from jaxdp.studies import real_experts as R
from jaxdp.studies.analysis import read_generated

VERDICTS_BLOCK = "real-experts verdicts"


def test_verdict_block_is_current_and_has_one_row_per_comparison():
    assert_page_current(R, VERDICTS_BLOCK)
    df = pd.read_csv(ROOT / "results" / "real-experts" / "results.csv")
    points = df[["dataset", "eps"]].drop_duplicates()
    n_top = int((points["eps"] == R.EPS_TOP).sum())
    rows = verdict_rows(read_generated(R.DOC_PAGE, VERDICTS_BLOCK))
    assert len(rows) == 2 * len(points) + 2 * n_top == 60
    for r in points.itertuples(index=False):
        n = sum(ln.split(" | ")[1].startswith(f"{r.dataset}, ε = {r.eps:g}:") for ln in rows)
        assert n == (4 if r.eps == R.EPS_TOP else 2), (r.dataset, r.eps)
    # every claim of the findings meets a comparison of the kept run (none silently untested)
    comp = R.comparisons(df, pd.read_csv(ROOT / "results" / "real-experts" / "summary.csv"))
    have = set(zip(comp["experiment"], comp["dataset"], comp["eps"].astype(float)))
    assert set(R.CLAIMS) <= have
    # the tally in the block's head counts the rows
    v = R.verdicts(comp)
    head = read_generated(R.DOC_PAGE, VERDICTS_BLOCK).splitlines()[0]
    for k, c in v["verdict"].value_counts().items():
        assert f"{c} {k}" in head
    assert sum(ln.endswith("| holds |") for ln in rows) == int((v["verdict"] == "holds").sum())


def test_every_miss_links_to_an_existing_anchor():
    d = ROOT / "results" / "real-experts"
    v = R.verdicts(R.comparisons(pd.read_csv(d / "results.csv"), pd.read_csv(d / "summary.csv")))
    assert set(v["verdict"]) <= {"holds", "holds by construction", "misses", "not tested"}
    for r in v[v["verdict"] != "holds"].itertuples(index=False):
        assert r.reason, r.cell
    for r in v[v["verdict"] == "misses"].itertuples(index=False):
        assert r.link and anchor_exists(r.link, R.DOC_PAGE), (r.cell, r.link)
    miss_links_resolve(R.DOC_PAGE, read_generated(R.DOC_PAGE, VERDICTS_BLOCK))
    assert anchor_exists("#comparisons", R.DOC_PAGE)   # where a miss of this table would point


def test_verdicts_follow_the_claims():
    def row(exp, ds, eps, base, other, ratio, lo, hi):
        return dict(experiment=exp, dataset=ds, eps=eps, base=base, other=other, base_label=base,
                    other_label=other, ratio=ratio, ratio_lo=lo, ratio_hi=hi, n_seeds=8)

    comp = pd.DataFrame([
        row(R.BEST, "digits", 10.0, "sparse_vector", "tree_ftrl", 1.9, 1.8, 2.0),        # claimed, above 1
        row(R.TREE, "digits", 10.0, "l2p_mw", "tree_ftrl", 1.02, 0.98, 1.06),            # claimed below 1: level
        row(R.BEST, "phishing", 0.3, "l2p_mw", "sparse_vector", 1.03, 0.93, 1.14),       # no claim
        row(R.BEST, "digits", 3.0, "tree_ftrl", "sparse_vector", 1.5, 1.4, 1.6),         # wrong learner best
        row(R.TREE, "bananas", 0.1, "l2p_mw", "tree_ftrl", 1.2, 1.1, 1.3),               # claimed level: above
    ])
    v = R.verdicts(comp).set_index("cell")
    got = [v.loc[f"{r['dataset']}, ε = {r['eps']:g}: {r['other']} / {r['base']}", "verdict"]
           for r in comp.to_dict("records")]
    assert got == ["holds", "misses", "not tested", "misses", "misses"]
    assert "not sparse_vector" in v.loc["digits, ε = 3: sparse_vector / tree_ftrl", "reason"]
    assert (v[v["verdict"] == "misses"]["link"] == "#comparisons").all()
    assert v.loc["phishing, ε = 0.3: sparse_vector / l2p_mw", "reason"]


def test_judge_order_is_the_paired_order_rubric():
    import math

    import pytest

    from jaxdp.studies.claims import Verdict, judge_order as _order

    def judge_order(relation, lo, hi, **kw):   # the row's verdict and reason
        row = _order("c", relation, 1.1, lo, hi, 8, experiment="e", cell="x", link="#l", **kw)
        assert row["link"] == ("#l" if row["verdict"] == "misses" else "") and row["n_seeds"] == 8
        return Verdict(row["verdict"], row["reason"])

    assert judge_order("above", 1.01, 1.2).verdict == "holds"
    assert judge_order("above", 0.99, 1.2).reason == "the interval does not lie above 1"
    assert judge_order("below", 0.8, 0.99).verdict == "holds"
    assert judge_order("level", 0.9, 1.1).verdict == "holds"
    assert judge_order("level", 1.01, 1.1).reason == "the interval excludes 1"
    assert judge_order("", 1.5, 2.0).verdict == "not tested"
    assert judge_order("above", math.nan, 2.0).reason == "no paired interval"
    v = judge_order("above", 1.5, 2.0, best="a", claimed_best="b", label="a †")
    assert (v.verdict, v.reason) == ("misses", "the best by mean is a †, not b")
    with pytest.raises(ValueError, match="relation"):
        judge_order("ahead", 1.5, 2.0)


def test_replay_expert_pool_pairs_stream_order_and_key_by_seed():
    """Seed i replays stream order ``seed * 100003 + i`` with algorithm key i, whatever the other seeds of the chunk:
    the same as replaying that one stream alone."""
    import numpy as np
    import pytest

    pytest.importorskip("sklearn")
    import jax.numpy as jnp

    from jaxdp.core import seed_keys
    from jaxdp.data import expert_pool_losses
    from jaxdp.experts.realizable_setups import replay_certified, replay_expert_pool

    kw = dict(T=64, n_experts=4, pool_seed=0, delta=1e-6)
    out = replay_expert_pool("wine", [("sparse_vector", 1.0), ("hedge", 1.0)], 2, np.arange(3), **kw)
    losses = expert_pool_losses("wine", 64, 4, order_seed=2 * 100003 + 2, pool_seed=0)
    alone = replay_certified("sparse_vector", jnp.asarray(losses[None]), seed_keys(2, np.array([2])), eps=1.0, delta=1e-6)
    assert out[0]["regret"][2] == alone["regret"][0] and out[0]["regret_per_round"][2] == alone["regret"][0] / 64
    assert out[1]["best_loss"][2] == losses.sum(axis=0).min() and np.isinf(out[1]["eps_certified"]).all()
