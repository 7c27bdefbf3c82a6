"""The verdict table of ``realizable-oco`` is generated from the kept slopes (joint seed bootstrap) and has one
row per fitted cell. Pandas only: no JAX compile."""
import pandas as pd

from jaxdp.studies import realizable_oco as R
from jaxdp.studies.analysis import read_generated, stale_blocks


def test_page_is_generated_from_the_kept_run():
    assert stale_blocks(R.DOC_PAGE, R.page_blocks()) == [], "rerun jaxdp.studies.realizable_oco.publish()"
    slopes = pd.read_csv(R.RESULTS / "slopes.csv")
    assert (slopes["resample"] == "joint").all()
    rows = [ln for ln in read_generated(R.DOC_PAGE, R.BLOCK).splitlines()
            if ln.startswith("| R")]
    assert len(rows) == len(slopes)
    assert "#r7" in read_generated(R.DOC_PAGE, R.BLOCK) and "{#r7}" in R.DOC_PAGE.read_text()
