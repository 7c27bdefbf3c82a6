"""The docs page of ``lazy-switching`` is generated from the kept run and lists every cell it ran; the
prediction checks test an exact expectation. Pandas only: no JAX compile."""
import pathlib

import numpy as np
import pandas as pd

from jaxdp.studies import lazy_switching as L
from jaxdp.studies.analysis import read_generated, stale_blocks


def test_page_is_generated_from_the_kept_run():
    assert stale_blocks(L.DOC_PAGE, L.page_blocks()) == [], "rerun jaxdp.studies.lazy_switching.publish()"
    s = pd.read_csv(L.RESULTS / "summary.csv")
    block = read_generated(L.DOC_PAGE, L.BLOCKS[0])
    rows = [ln for ln in block.splitlines() if ln.startswith("| ") and not ln.startswith("| learner")]
    assert len(rows) == len(s)
    m = pd.read_csv(L.RESULTS / "marginals.csv")
    assert len([ln for ln in read_generated(L.DOC_PAGE, L.BLOCKS[2]).splitlines()
                if ln.startswith("| ") and not ln.startswith("| batch")]) == len(m)


def test_prediction_checks_catch_a_wrong_prediction(tmp_path):
    """Residuals with exact mean 0 hold; counts inflated by 5% at large counts miss."""
    rng = np.random.default_rng(0)
    rows = []
    for T, nb in ((1024, 51), (65536, 3000)):
        for i in range(256):
            n_real = rng.binomial(nb, 0.3)
            rows.append(dict(exp="Z5_Z8", learner="l2p_paper", eps=0.1, T=T, p=0.25, n_batches=nb, n_real=n_real,
                             n_fake=rng.binomial(nb - n_real, 0.25), n_yres=rng.binomial(nb, 0.25)))
    df = pd.DataFrame(rows)
    assert (L.prediction_checks(df)["verdict"] == "holds").all()
    bad = df.assign(n_yres=np.round(df["n_yres"] * 1.05))
    c = L.prediction_checks(bad)
    assert c[(c["T"] == 65536) & (c["count"] == "shadow resamples")]["verdict"].item() == "misses"
    assert pathlib.Path(L.DOC_PAGE).exists()
