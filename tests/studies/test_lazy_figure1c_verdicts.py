"""The verdict tables of ``lazy-figure1c`` and ``lazy-figure1c-large`` are generated from the kept results (seed
indices resampled jointly across each curve's horizons): one row per fitted cell, every miss linked to an anchor
that exists. Pandas only: no JAX compile."""
import math
import re

import numpy as np
import pandas as pd

from _helpers import assert_page_current, miss_links_resolve, verdict_rows
from jaxdp.studies import lazy_figure1c as C
from jaxdp.studies import lazy_figure1c_large as L
from jaxdp.studies.analysis import read_generated

C_BLOCK, L_BLOCK = "lazy-figure1c verdicts", "lazy-figure1c-large verdicts"


def _current_rows(study, block: str, kept_csv: str, n: int):
    """Assert that ``study``'s page is generated from the kept run and that its verdict table ``block`` has one row per
    line of the kept ``kept_csv`` (``n`` of them); return that table and the rows."""
    assert_page_current(study, block)
    kept = pd.read_csv(study.RESULTS / kept_csv)
    rows = verdict_rows(read_generated(study.DOC_PAGE, block))
    assert len(rows) == len(kept) == n
    return kept, rows


# --------------------------------------------------------------------------- lazy-figure1c


def test_figure1c_verdicts_are_current_with_one_row_per_cell():
    kept, rows = _current_rows(C, C_BLOCK, "exponents.csv", 36)
    for r in kept.itertuples(index=False):
        assert sum(f"| {r.learner}, {r.adversary}, α = {r.alpha:g} |" in ln for ln in rows) == 1, r
    # the measured slopes are the realized-regret slopes of the exponents table, cell by cell
    expo = [ln for ln in read_generated(C.DOC_PAGE, C.BLOCKS[0]).splitlines()
            if ln.startswith("| ") and not ln.startswith("| learner |")]
    assert len(expo) == 36
    for ln in expo:
        learner, adversary, alpha, realized = ln[2:].split(" | ")[:4]
        assert any(f"| {learner}, {adversary}, α = {alpha} |" in v and f"| {realized} |" in v for v in rows), ln
    head = read_generated(C.DOC_PAGE, C_BLOCK).splitlines()[0]
    assert "resampled jointly" in head


def test_figure1c_misses_link_to_existing_anchors():
    # every miss carries a link to an anchor that exists, and only misses do
    miss_links_resolve(C.DOC_PAGE, read_generated(C.DOC_PAGE, C_BLOCK), only_misses=True)
    df = pd.read_csv(C.RESULTS / "results.csv")
    v = C.verdicts(pd.read_csv(C.RESULTS / "exponents_realized.csv").assign(n_seeds=int(df["seed"].nunique())))
    assert set(v["verdict"]) <= {"holds", "misses", "not tested"}
    assert (v[v["verdict"] != "holds"]["reason"].str.len() > 0).all()
    assert (v[v["cell"].str.startswith("sketch,")]["verdict"] == "not tested").all()
    assert (v[v["cell"].str.startswith("hedge,")]["verdict"] == "holds").all()


def test_figure1c_verdicts_follow_the_claims():
    sl = pd.DataFrame([
        dict(learner="hedge", adversary="paper_epochs", alpha=0.5, slope=0.50, slope_lo=0.47, slope_hi=0.53, n_seeds=8),
        dict(learner="l2p_paper", adversary="alternating", alpha=0.5, slope=0.74, slope_lo=0.71, slope_hi=0.76,
             n_seeds=8),
        dict(learner="sketch", adversary="alternating", alpha=0.5, slope=0.49, slope_lo=0.47, slope_hi=0.51,
             n_seeds=8),
        dict(learner="l2p_retuned", adversary="aligned_epochs", alpha=0.25, slope=0.62, slope_lo=0.58,
             slope_hi=0.67, n_seeds=8),
        dict(learner="l2p_paper", adversary="paper_epochs", alpha=0.25, slope=0.51, slope_lo=math.nan,
             slope_hi=math.nan, n_seeds=8),
    ])
    v = C.verdicts(sl)
    assert list(v["verdict"]) == ["holds", "misses", "not tested", "misses", "not tested"]
    assert v["link"][1] == "#between" and v["link"][3] == "#misses"
    assert np.isclose(v["claimed"][1], 2 / 3) and np.isclose(v["claimed"][3], 0.55) and v["kind"][1] == "at_most"
    assert v["reason"][2] and v["reason"][4]


def test_figure1c_bound_ratios_stay_below_one():
    """The misses section rests on the valid bound: the expected regret never exceeds ln d/η + ηTB/8."""
    df = pd.read_csv(C.RESULTS / "results.csv")
    t = C.bound_ratios(df, 16)
    assert len(t) == 2 * 3 * 3 * 4
    assert (t["ratio"] < 1).all()


# --------------------------------------------------------------------------- lazy-figure1c-large


def test_large_verdicts_are_current_with_one_row_per_local_slope():
    kept, rows = _current_rows(L, L_BLOCK, "local_slopes.csv", 10)
    for r in kept.itertuples(index=False):
        cell = f"| α = {r.alpha:g}, T = {L._pow2(r.x_min)}–{L._pow2(r.x_max)} |"
        assert sum(cell in ln for ln in rows) == 1, cell
    assert "resampled jointly" in read_generated(L.DOC_PAGE, L_BLOCK).splitlines()[0]


def test_large_misses_link_to_existing_anchors_and_the_model_claim_of_the_page():
    block = read_generated(L.DOC_PAGE, L_BLOCK)
    miss_links_resolve(L.DOC_PAGE, block, only_misses=True)
    # the page says the model's local slope lies inside 9 of the 10 intervals
    rows = verdict_rows(block)
    inside = 0
    for ln in rows:
        lo, hi = (float(x.replace("−", "-")) for x in re.search(r"\[([^,]+), ([^\]]+)\]", ln).groups())
        model = float(re.search(r"local slope ([0-9.]+) here", ln).group(1))
        inside += lo <= model <= hi
    assert inside == 9 and "in 9 of the 10 cells" in L.DOC_PAGE.read_text(encoding="utf-8")


def test_large_verdicts_follow_the_claim():
    sl = pd.DataFrame([
        dict(alpha=0.25, x_min=2 ** 14, x_max=2 ** 16, slope=0.62, slope_lo=0.60, slope_hi=0.64, n_seeds=8,
             model_slope=0.62),
        dict(alpha=0.5, x_min=2 ** 14, x_max=2 ** 16, slope=0.66, slope_lo=0.64, slope_hi=0.69, n_seeds=8,
             model_slope=0.70),
        dict(alpha=0.5, x_min=2 ** 16, x_max=2 ** 18, slope=0.7, slope_lo=math.nan, slope_hi=math.nan, n_seeds=1,
             model_slope=0.71),
    ])
    v = L.verdicts(sl)
    assert list(v["verdict"]) == ["misses", "holds", "not tested"]
    assert v["link"][0] == "../algorithms/lazy.md#batching-term" and "0.620" in v["reason"][0]
    assert v["reason"][2] and not v["reason"][1]
