"""The verdict table of ``realizable-experts`` is generated from the kept slopes (joint seed bootstrap): one row
per fitted cell, every miss linked to its explanation. Pandas only: no JAX compile."""
import pandas as pd

from jaxdp.studies import realizable_experts as R
from jaxdp.studies.analysis import read_generated, stale_blocks


def test_page_is_generated_from_the_kept_run():
    assert stale_blocks(R.DOC_PAGE, R.page_blocks()) == [], "rerun jaxdp.studies.realizable_experts.publish()"
    slopes = pd.read_csv(R.RESULTS / "slopes.csv")
    assert (slopes["resample"] == "joint").all()
    block = read_generated(R.DOC_PAGE, R.BLOCKS[0])
    rows = [ln for ln in block.splitlines() if ln.startswith("| ") and not ln.startswith("| experiment")]
    assert len(rows) == len(slopes)
    if "(#misses)" in block:
        assert "{#misses}" in R.DOC_PAGE.read_text()


def test_verdicts_follow_the_claims():
    sl = pd.DataFrame([dict(fit="regret vs eps", learner="sparse_vector", slope=-1.0, slope_lo=-1.1, slope_hi=-0.9,
                            n_seeds=8, delta=float("nan")),
                       dict(fit="regret vs T", learner="potential", adversary="halving", slope=0.9, slope_lo=0.8,
                            slope_hi=1.0, n_seeds=8, delta=float("nan")),
                       dict(fit="em_draws vs log d", learner="binary_tree", slope=1.6, slope_lo=1.5, slope_hi=1.7,
                            n_seeds=8, delta=0.0)])
    v = R.verdicts(sl)
    assert list(v["verdict"]) == ["holds", "misses", "not tested"]
    assert v["link"][1].endswith("#potential")
