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


def test_real_data_scores_pair_seeds_across_methods_and_chunks():
    """Seed i's split and key do not depend on the other seeds of a chunk; a regression reports MSE only."""
    from types import SimpleNamespace

    from jaxdp.label_dp.real_setups import real_data_scores

    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    cls = SimpleNamespace(X=X, y=(X[:, 0] > 0).astype(int), task="classification", n_classes=2)
    pts = [("nonprivate_bins_cls", np.inf), ("local_rr_kary", 1.0)]
    full = real_data_scores(cls, pts, seed=3, seeds=np.arange(3), train_frac=0.7)
    last = real_data_scores(cls, pts, seed=3, seeds=np.array([2]), train_frac=0.7)
    for a, b in zip(full, last):
        assert a["accuracy"][2] == b["accuracy"][0] and np.isnan(a["mse"]).all()
        assert ((0 <= a["accuracy"]) & (a["accuracy"] <= 1)).all()
    reg = SimpleNamespace(X=X, y=X[:, 1] * 5 + 2, task="regression", n_classes=0)
    out = real_data_scores(reg, [("nonprivate_knn", np.inf)], seed=0, seeds=np.arange(2), train_frac=0.5)[0]
    assert list(out) == ["mse", "accuracy"] and np.isnan(out["accuracy"]).all() and (out["mse"] > 0).all()
