"""The verdict table of ``lazy-figure1ab`` is generated from the kept results: one row per fitted cell of
``slopes.csv`` and ``nonsmooth_slopes.csv``, the same intervals as the detailed tables, every miss linked to a
section that exists. Pandas only: no JAX compile."""
import re

import pandas as pd
import pytest

from _helpers import assert_page_current, miss_links_resolve, verdict_rows
from jaxdp.studies import lazy_figure1ab as m
from jaxdp.studies.analysis import VERDICTS, read_generated

VERDICT_BLOCK = "lazy-figure1ab verdicts"


def _table_rows(block: str, header_start: str) -> list:
    """The data lines of the table of ``block`` whose header starts with ``header_start``."""
    out, on = [], False
    for ln in block.splitlines():
        if ln.startswith(header_start):
            on = True
        elif on and ln.startswith("| "):
            out.append(ln)
        elif on and not ln.startswith("|---"):
            break
    return out


@pytest.fixture(scope="module")
def kept():
    if not (m.RESULTS / "results.csv").exists():
        pytest.skip(f"no kept results in {m.RESULTS}")
    return m.RESULTS


def test_verdict_block_is_current(kept):
    assert_page_current(m, VERDICT_BLOCK)
    # the verdict table is the headline: its block comes first in the findings
    text = m.DOC_PAGE.read_text()
    findings = text.index("## Findings")
    assert findings < text.index(f"<!-- BEGIN GENERATED: {VERDICT_BLOCK} -->") < text.index("## Tables")
    assert "independent draws" in read_generated(m.DOC_PAGE, VERDICT_BLOCK)


def test_one_row_per_fitted_cell(kept):
    slopes = pd.read_csv(m.RESULTS / "slopes.csv")
    ns_path = m.RESULTS / "nonsmooth_slopes.csv"
    ns = pd.read_csv(ns_path) if ns_path.exists() else pd.DataFrame(columns=["loss", "alpha"])
    rows = verdict_rows(read_generated(m.DOC_PAGE, VERDICT_BLOCK))
    assert len(rows) == len(slopes) + len(ns)
    for r in slopes.itertuples(index=False):
        hits = [ln for ln in rows if ln.startswith(f"| linear, {r.adversary}, panel ({r.panel}) | "
                                                   f"{r.learner}, α = {r.alpha:g}")]
        assert len(hits) == 1, r
    for r in ns.itertuples(index=False):
        assert sum(ln.startswith(f"| {r.loss} loss (MALA), panel (a) | l2p_rmw, α = {r.alpha:g} |")
                   for ln in rows) == 1, r
    # the same interval as the detailed table of the same cell
    detail = _table_rows(read_generated(m.DOC_PAGE, m.BLOCKS[0]), "| learner | adversary | panel |")
    for ln in detail:
        learner, adversary, panel, alpha, interval = [c.strip() for c in ln.strip("|").split("|")[:5]]
        (hit,) = [v for v in rows if v.startswith(f"| linear, {adversary}, panel ({panel}) | {learner}, α = {alpha}")]
        measured = hit.strip("|").split("|")[4].strip()
        assert measured == interval or (" [" not in interval and measured.startswith(interval)), (ln, hit)
    # every row's verdict is one of the standard's, and the counts of the block's head add up
    verdicts = [re.sub(r"\*", "", ln.strip("|").split("|")[7].strip()).split(":")[0] for ln in rows]
    assert set(verdicts) <= set(VERDICTS)
    head = read_generated(m.DOC_PAGE, VERDICT_BLOCK).split("\n\n")[0]
    for v in VERDICTS:
        n = verdicts.count(v)
        assert (f"{n} {v}" in head) == (n > 0), v


def test_every_miss_links_to_an_existing_anchor(kept):
    # every miss, and every other row's link (on this page or another), names an anchor that exists
    miss_links_resolve(m.DOC_PAGE, read_generated(m.DOC_PAGE, VERDICT_BLOCK))


def test_verdicts_follow_the_claims():
    def cell(learner, adversary, alpha, lo, hi, slope=None):
        return dict(learner=learner, adversary=adversary, panel="a", alpha=alpha, slope=(lo + hi) / 2
                    if slope is None else slope, slope_lo=lo, slope_hi=hi, x_min=4.0, x_max=16.0,
                    theory_slope=m.theory_slope(learner, "a", alpha))

    def point(learner, adversary, alpha, T, lo, hi):
        return dict(learner=learner, adversary=adversary, panel="a", alpha=alpha, T=T, n_seeds=8, regret_lo=lo,
                    regret_hi=hi)

    slopes = pd.DataFrame([cell("l2p_rmw", "biased", 0.5, 0.95, 1.02),         # above 2/3: misses
                           cell("nonprivate", "biased", 0.1, 0.44, 0.45),      # below 1/2: holds
                           cell("nonprivate", "biased", 0.5, 0.44, 0.45),      # the same runs as α = 0.1
                           cell("dp_ftrl", "alternating", 0.1, -0.7, 0.2),     # regret interval contains 0
                           cell("nonprivate", "alternating", 0.1, 0.5, 0.5),   # deterministic
                           cell("dp_ftrl", "biased", 0.1, 0.3, 0.6),           # contains 0.55: holds
                           cell("l2p_rmw", "alternating", 0.3, 0.1, 0.4)])     # below 0.533, regret > 0: holds
    summ = []
    for r in slopes.itertuples(index=False):
        for T in (2.0, 4.0, 8.0, 16.0):
            # 0 inside the regret interval: at a fitted T for DP-FTRL on the alternating adversary; below the
            # fitted range (which does not count) for L2P-RMW
            zero = (r.learner, r.adversary, T) in (("dp_ftrl", "alternating", 8.0), ("l2p_rmw", "biased", 2.0))
            summ.append(point(r.learner, r.adversary, r.alpha, T, -1.0 if zero else 1.0, 2.0))
    summ = pd.DataFrame(summ)
    ns = pd.DataFrame([dict(loss="absolute", alpha=0.5, slope=0.96, slope_lo=0.94, slope_hi=0.98, x_min=4.0,
                            x_max=16.0, theory_slope=m.theory_slope("l2p_rmw", "a", 0.5))])
    nsumm = pd.DataFrame([dict(loss="absolute", alpha=0.5, T=T, n_seeds=8, regret_lo=1.0, regret_hi=2.0)
                          for T in (4.0, 8.0, 16.0)])
    v = m.verdicts(slopes, summ, ns, nsumm, ftrl_same_runs=True)
    assert len(v) == len(slopes) + len(ns)
    got = dict(zip(zip(v["experiment"], v["cell"].str.split(" \\(").str[0]), v["verdict"]))
    assert got[("linear, biased, panel (a)", "l2p_rmw, α = 0.5")] == "misses"
    assert got[("linear, biased, panel (a)", "nonprivate, α = 0.1")] == "holds"
    assert got[("linear, biased, panel (a)", "dp_ftrl, α = 0.1")] == "holds"
    assert got[("linear, alternating, panel (a)", "dp_ftrl, α = 0.1")] == "not tested"
    assert got[("linear, alternating, panel (a)", "nonprivate, α = 0.1")] == "not tested"
    assert got[("absolute loss (MALA), panel (a)", "l2p_rmw, α = 0.5")] == "misses"
    by_cell = v.set_index(v["experiment"] + " / " + v["cell"])
    miss = by_cell.loc["linear, biased, panel (a) / l2p_rmw, α = 0.5"]
    assert miss["link"] == "#saturated" and miss["kind"] == "at_most" and miss["claimed"] == pytest.approx(2 / 3)
    assert "0 at 1 of 3 fitted T" in by_cell.loc["linear, alternating, panel (a) / dp_ftrl, α = 0.1", "reason"]
    assert "deterministic" in by_cell.loc["linear, alternating, panel (a) / nonprivate, α = 0.1", "reason"]
    # a private curve on the alternating adversary holds, with its largest regret and why its slope is not a rate
    alt = by_cell.loc["linear, alternating, panel (a) / l2p_rmw, α = 0.3"]
    assert alt["verdict"] == "holds" and alt["link"] == "#alternating"
    assert alt["reason"].startswith("regret at most 2.0 at every fitted T") and "not a rate" in alt["reason"]
    # non-private FTRL's α rows are the same runs: visible in the cell and the reason, not a silent confirmation
    dup = v[v["cell"].str.startswith("nonprivate, α = 0.5")].iloc[0]
    assert "the runs of α = 0.1" in dup["cell"] and dup["reason"].endswith(m.REPEAT)
    assert not m.verdicts(slopes, summ)["reason"].str.endswith(m.REPEAT).any()
    # biased adversary first, and the miss of the non-smooth cell links to the same section
    assert list(v["experiment"]).index("linear, alternating, panel (a)") > 0
    assert v.iloc[0]["experiment"].startswith("linear, biased")
    assert v.iloc[-1]["link"] == "#saturated"
    assert v["n_seeds"].eq(8).all()
