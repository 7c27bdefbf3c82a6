"""The verdict table of ``lazy-batching`` is generated from the kept run (joint seed bootstrap): one row per fitted
cell (learner) of the kept slopes, every miss linked to a section that exists, and each learner tested against the
slope of its stated term over the grid. Pandas only: no JAX compile."""
import pandas as pd

from _helpers import assert_page_current, miss_links_resolve, verdict_rows
from jaxdp.studies import lazy_batching as M
from jaxdp.studies.analysis import read_generated


def test_page_is_generated_from_the_kept_run():
    assert_page_current(M, M.VERDICT_BLOCK)


def test_one_verdict_row_per_fitted_cell():
    slopes = pd.read_csv(M.RESULTS / "slopes.csv")
    assert (slopes["resample"] == "joint").all()
    rows = verdict_rows(read_generated(M.DOC_PAGE, M.VERDICT_BLOCK))
    assert len(rows) == len(slopes)
    for r in slopes.itertuples(index=False):
        assert sum(ln.startswith(f"| regret vs T | {r.learner} |") for ln in rows) == 1, r
        assert f"| {int(r.n_seeds)} |" in next(ln for ln in rows if f"| {r.learner} |" in ln)
    text = M.DOC_PAGE.read_text(encoding="utf-8")
    assert text.index(f"BEGIN GENERATED: {M.VERDICT_BLOCK}") < text.index(f"BEGIN GENERATED: {M.BLOCKS[0]}")


def test_every_miss_links_to_a_section_that_exists():
    assert miss_links_resolve(M.DOC_PAGE, read_generated(M.DOC_PAGE, M.VERDICT_BLOCK)), "the table has no miss"


def _cell(learner, slope, half, t8=0.65, claimed=0.30):
    return dict(learner=learner, slope=slope, slope_lo=slope - half, slope_hi=slope + half, n_seeds=64,
                slope_TBeta8=t8, slope_claimed=claimed)


def test_verdicts_follow_the_claims():
    sl = pd.DataFrame([_cell("l2p_paper", 0.25, 0.02),      # below Prop. 3.3's slope: an upper bound holds
                       _cell("l2p_paper", 0.64, 0.01),      # above it: misses, and T B η/8's slope lies inside
                       _cell("mw_same_eta", 0.65, 0.05),    # ≈ Tη/8: holds
                       _cell("mw_same_eta", 0.50, 0.05),    # misses
                       _cell("hedge", 0.5, 0.05)])          # no stated exponent: not tested
    v = M.verdicts(sl)
    assert list(v["verdict"]) == ["holds", "misses", "holds", "misses", "not tested"]
    assert list(v["claimed"][:4]) == [0.30, 0.30, 0.65, 0.65]
    assert list(v["kind"][:4]) == ["at_most", "at_most", "equals", "equals"]
    assert v["link"][1] == "../algorithms/lazy.md#batching-term" and "0.650" in v["reason"][1]
    assert v["link"][3] == "#misses"
    assert (v.loc[v["verdict"] != "holds", "reason"].str.len() > 0).all()
