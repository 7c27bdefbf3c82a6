"""The verdict table of ``lazy-batching`` is generated from the kept run by the claims rubric
(``jaxdp.studies.claims``): one row per fitted cell (learner) of the kept slopes (the two learners are separate runs,
so no row repeats another's evidence), the tally in its header and on the results overview matches the rows, every
miss is linked to a section that exists, and each learner is judged against the slope of its stated term over the
grid. Pandas only: no JAX compile."""
import re

import pandas as pd
import pytest

from _helpers import assert_page_current, miss_links_resolve, the_row, verdict_rows
from jaxdp.studies import lazy_batching as M
from jaxdp.studies.analysis import read_generated
from jaxdp.studies.claims import VERDICTS


def _verdict(line: str) -> str:
    return re.sub(r"\*", "", line.strip("|").split("|")[7].strip()).split(":")[0]


def test_page_is_generated_from_the_kept_run():
    assert_page_current(M, M.VERDICT_BLOCK)
    text = M.DOC_PAGE.read_text(encoding="utf-8")
    assert text.index(f"BEGIN GENERATED: {M.VERDICT_BLOCK}") < text.index(f"BEGIN GENERATED: {M.BLOCKS[0]}")


def test_one_verdict_row_per_fitted_cell_and_the_tally():
    slopes = pd.read_csv(M.RESULTS / "slopes.csv")
    assert (slopes["resample"] == "joint").all()
    block = read_generated(M.DOC_PAGE, M.VERDICT_BLOCK)
    rows = verdict_rows(block)
    assert len(rows) == len(slopes) == len(M.CLAIMS)
    for r in slopes.itertuples(index=False):
        ln = the_row(rows, f"| regret vs T | {r.learner} |")
        assert f"| {int(r.n_seeds)} |" in ln
    assert "no row repeats another's evidence" in block and "2.41 decades" in block
    counts = pd.Series([_verdict(ln) for ln in rows]).value_counts()
    tally = ", ".join(f"{int(counts[k])} {k}" for k in VERDICTS if k in counts)
    assert f"Verdicts: {tally}." in block
    # the kept run: both claims miss (L2P above Prop. 3.3's exponent, MW's interval excluding Tη/8's)
    assert [_verdict(ln) for ln in rows] == ["misses", "misses"]
    overview = (M.DOC_PAGE.parent / "index.md").read_text(encoding="utf-8")
    assert "| [`lazy-batching`](lazy-batching.md) | 1024 | 2 | 0 | 0 | 0 | 2 | 0 |" in overview


def test_every_miss_links_to_a_section_that_exists():
    links = miss_links_resolve(M.DOC_PAGE, read_generated(M.DOC_PAGE, M.VERDICT_BLOCK), only_misses=True)
    assert links == ["../algorithms/lazy.md#batching-term", "#misses"]


def _cell(learner, slope, half, x_min=2.0 ** 14, x_max=2.0 ** 22, t8=0.65, claimed=0.30):
    return dict(learner=learner, slope=slope, slope_lo=slope - half, slope_hi=slope + half, n_seeds=64,
                x_min=x_min, x_max=x_max, slope_TBeta8=t8, slope_claimed=claimed)


def test_verdicts_follow_the_rubric():
    sl = pd.DataFrame([_cell("l2p_paper", 0.25, 0.02),                  # within 0.30 + 0.05: holds
                       _cell("l2p_paper", 0.30, 0.08),                  # reaches 0.38 > 0.35: unresolved
                       _cell("l2p_paper", 0.64, 0.01),                  # wholly above 0.30: misses
                       _cell("mw_same_eta", 0.65, 0.03),                # within 0.65 ± 0.05: holds
                       _cell("mw_same_eta", 0.62, 0.08),                # contains 0.65, wider: unresolved
                       _cell("mw_same_eta", 0.50, 0.05),                # excludes 0.65: misses
                       _cell("mw_same_eta", 0.65, 0.01, x_min=2.0 ** 12, x_max=2.0 ** 14),  # 0.60 decades
                       _cell("l2p_paper", 0.30, 0.0)])                  # no spread over seeds
    v = M.verdicts(sl)
    assert list(v["verdict"]) == ["holds", "consistent, unresolved", "misses", "holds", "consistent, unresolved",
                                  "misses", "not tested", "not tested"]
    assert list(v["claimed"]) == [0.30] * 3 + [0.65] * 4 + [0.30]
    assert list(v["kind"]) == ["at_most"] * 3 + ["equals"] * 4 + ["at_most"]
    assert list(v["link"]) == ["", "", "../algorithms/lazy.md#batching-term", "", "", "#misses", "", ""]
    assert "seeds would resolve it" in v["reason"][1] and "seeds would resolve it" in v["reason"][4]
    assert "0.60 decades" in v["reason"][6] and "no spread" in v["reason"][7]
    assert (v.loc[v["verdict"] != "holds", "reason"].str.len() > 0).all()
    with pytest.raises(KeyError):
        M.verdicts(pd.DataFrame([_cell("hedge", 0.5, 0.05)]))
