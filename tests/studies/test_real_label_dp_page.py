"""The docs page of ``real-label-dp`` is generated from the kept run: every dataset's claim, every
(dataset, ε) prior comparison and every table cell. Pandas only: no JAX compile."""
import numpy as np
import pandas as pd

from jaxdp.studies import real_label_dp as R
from jaxdp.studies.analysis import read_generated, stale_blocks


def test_page_is_generated_from_the_kept_run():
    assert stale_blocks(R.DOC_PAGE, R.page_blocks()) == [], "rerun jaxdp.studies.real_label_dp.publish()"
    df = pd.read_csv(R.RESULTS / "results.csv")
    claims = read_generated(R.DOC_PAGE, R.BLOCKS[0])
    for dataset in df["dataset"].unique():
        assert f"| {dataset} |" in claims, dataset


def test_paired_difference_uses_the_pairing():
    """Method b = method a + 0.01 at every seed: the paired interval is the point 0.01 whatever the spread."""
    rng = np.random.default_rng(0)
    acc = rng.uniform(0.3, 0.9, size=64)
    df = pd.DataFrame({"dataset": "x", "seed": np.tile(np.arange(64), 2), "eps": 0.1,
                       "method": ["a"] * 64 + ["b"] * 64, "accuracy": np.concatenate([acc, acc + 0.01])})
    m, lo, hi, n = R.paired_difference(df, "x", "accuracy", "b", "a", 0.1)
    assert n == 64 and abs(m - 0.01) < 1e-12 and abs(lo - 0.01) < 1e-9 and abs(hi - 0.01) < 1e-9
