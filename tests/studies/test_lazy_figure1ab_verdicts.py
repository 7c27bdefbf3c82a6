"""The verdict table of ``lazy-figure1ab`` is generated from the kept results by the claims rubric
(``jaxdp.studies.claims``): one row per fitted cell of ``slopes.csv`` and ``nonsmooth_slopes.csv`` (non-private
FTRL's same runs at every α share one), the same intervals as the detailed tables, every miss linked to a section
that exists. Pandas only: no JAX compile."""
import re

import numpy as np
import pandas as pd
import pytest

from _helpers import anchor_exists, assert_page_current, miss_links_resolve, the_row, verdict_rows
from jaxdp.oco import figure1_oco_exponent
from jaxdp.studies import lazy_figure1ab as m
from jaxdp.studies.analysis import read_generated
from jaxdp.studies.claims import VERDICTS

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


def _verdict(line: str) -> str:
    return re.sub(r"\*", "", line.strip("|").split("|")[7].strip()).split(":")[0]


def test_one_row_per_fitted_cell_and_the_same_runs_share_one(kept):
    slopes = pd.read_csv(m.RESULTS / "slopes.csv")
    ns_path = m.RESULTS / "nonsmooth_slopes.csv"
    ns = pd.read_csv(ns_path) if ns_path.exists() else pd.DataFrame(columns=["loss", "alpha"])
    block = read_generated(m.DOC_PAGE, VERDICT_BLOCK)
    rows = verdict_rows(block)
    # non-private FTRL on the biased adversary: one run at every α (seed by seed), so one row per panel
    df = pd.read_csv(m.RESULTS / "results.csv")
    ftrl = df[(df["loss"] == "linear") & (df["learner"] == "nonprivate") & (df["adversary"] == "biased")]
    by_alpha = ftrl.pivot_table(index=["panel", "T", "seed"], columns="alpha", values="regret")
    alphas = sorted(slopes["alpha"].unique())
    assert by_alpha.shape[1] == len(alphas) > 1
    assert (by_alpha.max(axis=1) == by_alpha.min(axis=1)).all()     # FTRL does not depend on ε: the same runs
    same = (slopes["learner"] == "nonprivate") & (slopes["adversary"] == "biased")
    assert len(rows) == int((~same).sum()) + slopes[same]["panel"].nunique() + len(ns)
    for r in slopes[~same].itertuples(index=False):
        the_row(rows, f"| linear, {r.adversary}, panel ({r.panel}) | {r.learner}, α = {r.alpha:g} |")
    for panel in slopes[same]["panel"].unique():
        the_row(rows, f"| linear, biased, panel ({panel}) | nonprivate, α = {', '.join(f'{a:g}' for a in alphas)} "
                      "(one run) |")
    for r in ns.itertuples(index=False):
        the_row(rows, f"| {r.loss} loss (MALA), panel (a) | l2p_rmw, α = {r.alpha:g} |")
    assert "same evidence, one row per panel" in block
    # the same interval as the detailed table of the same cell (a merged row: its first α's)
    detail = _table_rows(read_generated(m.DOC_PAGE, m.BLOCKS[0]), "| learner | adversary | panel |")
    for ln in detail:
        learner, adversary, panel, alpha, interval = [c.strip() for c in ln.strip("|").split("|")[:5]]
        if learner == "nonprivate" and adversary == "biased" and alpha != f"{alphas[0]:g}":
            continue
        (hit,) = [v for v in rows if v.startswith(f"| linear, {adversary}, panel ({panel}) | {learner}, α = {alpha}")]
        measured = hit.strip("|").split("|")[4].strip()
        assert measured == interval or (" [" not in interval and measured.startswith(interval)), (ln, hit)
    # every row's verdict is the rubric's, and the tally of the block's head adds up
    verdicts = [_verdict(ln) for ln in rows]
    assert set(verdicts) <= set(VERDICTS)
    said = re.search(r"Verdicts: ([^.]*)\.", block)
    assert said
    tally = {p.split(" ", 1)[1]: int(p.split(" ", 1)[0]) for p in said.group(1).split(", ")}
    assert tally == {v: n for v in VERDICTS if (n := verdicts.count(v))}
    assert block.split("\n\n")[0].count(f"{len(rows)} rows for {len(slopes)} linear-loss and {len(ns)} non-smooth") == 1
    # the kept run fits T over a factor of 4: no slope tests a rate (the one rule every row answers)
    decades = np.log10(slopes["x_max"] / slopes["x_min"])
    assert (decades < 2).all()
    assert all(v == "not tested" and ("decades" in ln or "contains 0" in ln) for v, ln in zip(verdicts, rows))


def test_every_miss_links_to_an_existing_anchor(kept):
    # every miss, and every other row's link (on this page or another), names an anchor that exists
    miss_links_resolve(m.DOC_PAGE, read_generated(m.DOC_PAGE, VERDICT_BLOCK))
    # the anchor the claims link a miss to exists on the page
    assert all(anchor_exists(c.link, m.DOC_PAGE) for c in m.CLAIMS.values())


def test_claims_are_data():
    assert {c.kind for c in m.CLAIMS.values()} == {"at_most_rate"}
    assert all(c.tolerance == m.TOL == 0.05 and c.min_decades == 2.0 for c in m.CLAIMS.values())
    # each cell's claimed exponent is Figure 1's at its alpha (the library's, tested in tests/oco)
    assert set(m.CLAIMS) == {f"{l}_{p}" for l in ("l2p_rmw", "dp_ftrl", "nonprivate") for p in "ab"} | {
        "l2p_rmw_nonsmooth"}
    assert figure1_oco_exponent("dp_ftrl", "b", 0.3) == pytest.approx(7 / 12 + 0.15)
    assert figure1_oco_exponent("l2p_rmw", "a", 0.5) == pytest.approx(2 / 3)
    assert "any convex Lipschitz loss" in m.CLAIMS["l2p_rmw_nonsmooth"].text


def test_verdicts_follow_the_claims():
    Ts = (2.0 ** 4, 2.0 ** 8, 2.0 ** 12, 2.0 ** 16)           # fitted: the upper three, 2.4 decades

    def cell(learner, adversary, alpha, lo, hi, x_min=Ts[1]):
        return dict(learner=learner, adversary=adversary, panel="a", alpha=alpha, slope=(lo + hi) / 2, slope_lo=lo,
                    slope_hi=hi, x_min=x_min, x_max=Ts[-1], theory_slope=figure1_oco_exponent(learner, "a", alpha))

    slopes = pd.DataFrame([cell("l2p_rmw", "biased", 0.5, 0.95, 1.02),         # above 2/3: misses
                           cell("nonprivate", "biased", 0.1, 0.44, 0.45),      # below 1/2: holds
                           cell("nonprivate", "biased", 0.5, 0.44, 0.45),      # the same runs as α = 0.1
                           cell("dp_ftrl", "alternating", 0.1, -0.7, 0.2),     # regret interval contains 0
                           cell("nonprivate", "alternating", 0.1, 0.5, 0.5),   # deterministic
                           cell("dp_ftrl", "biased", 0.1, 0.3, 0.7),           # contains 0.55, wide: unresolved
                           cell("dp_ftrl", "biased", 0.3, 0.3, 0.4, x_min=Ts[-2])])   # 1.2 decades: no rate
    summ = []
    for r in slopes.itertuples(index=False):
        for T in Ts:
            # 0 inside the regret interval: at a fitted T for DP-FTRL on the alternating adversary; below the
            # fitted range (which does not count) for L2P-RMW
            zero = (r.learner, r.adversary, T) in (("dp_ftrl", "alternating", Ts[2]), ("l2p_rmw", "biased", Ts[0]))
            summ.append(dict(learner=r.learner, adversary=r.adversary, panel="a", alpha=r.alpha, T=T, n_seeds=8,
                             regret_lo=-1.0 if zero else 1.0, regret_hi=2.0))
    summ = pd.DataFrame(summ)
    ns = pd.DataFrame([dict(loss="absolute", alpha=0.5, slope=0.96, slope_lo=0.94, slope_hi=0.98, x_min=Ts[1],
                            x_max=Ts[-1], theory_slope=2 / 3)])
    nsumm = pd.DataFrame([dict(loss="absolute", alpha=0.5, T=T, n_seeds=8, regret_lo=1.0, regret_hi=2.0) for T in Ts])
    fitted = m.fitted(slopes, summ, m.BY)
    assert fitted.set_index(["learner", "adversary", "alpha"])[["n_fit", "zero"]].to_dict("index")[
        ("dp_ftrl", "alternating", 0.1)] == {"n_fit": 3, "zero": 1}
    # a 0 inside the regret interval below the fitted range does not count
    assert fitted.set_index(["learner", "adversary", "alpha"]).loc[("l2p_rmw", "biased", 0.5), "zero"] == 0
    v = m.verdicts(fitted, m.fitted(ns, nsumm, m.NBY), ftrl_same_runs=True)
    assert len(v) == len(slopes) + len(ns) - 1                  # the two FTRL rows share one
    by_cell = v.set_index(v["experiment"] + " / " + v["cell"])
    got = by_cell["verdict"].to_dict()
    assert got == {
        "linear, biased, panel (a) / l2p_rmw, α = 0.5": "misses",
        "linear, biased, panel (a) / dp_ftrl, α = 0.1": "consistent, unresolved",
        "linear, biased, panel (a) / dp_ftrl, α = 0.3": "not tested",
        "linear, biased, panel (a) / nonprivate, α = 0.1, 0.5 (one run)": "holds",
        "linear, alternating, panel (a) / dp_ftrl, α = 0.1": "not tested",
        "linear, alternating, panel (a) / nonprivate, α = 0.1": "not tested",
        "absolute loss (MALA), panel (a) / l2p_rmw, α = 0.5": "misses",
    }
    miss = by_cell.loc["linear, biased, panel (a) / l2p_rmw, α = 0.5"]
    assert miss["link"] == "#saturated" and miss["kind"] == "at_most" and miss["claimed"] == pytest.approx(2 / 3)
    assert "excludes" in miss["reason"] or "above" in miss["reason"]
    assert "seeds" in by_cell.loc["linear, biased, panel (a) / dp_ftrl, α = 0.1", "reason"]   # how many resolve it
    assert "1.20 decades" in by_cell.loc["linear, biased, panel (a) / dp_ftrl, α = 0.3", "reason"]
    assert "0 at 1 of 3 fitted T" in by_cell.loc["linear, alternating, panel (a) / dp_ftrl, α = 0.1", "reason"]
    assert "no spread" in by_cell.loc["linear, alternating, panel (a) / nonprivate, α = 0.1", "reason"]
    assert (v.loc[v["verdict"] != "misses", "link"] == "").all()
    # without the same runs, every α of non-private FTRL is its own row
    apart = m.verdicts(fitted)
    assert len(apart) == len(slopes) and not apart["cell"].str.contains("one run").any()
    # biased adversary first, the non-smooth cells last; every row has the fewest seeds of its fitted points
    assert v.iloc[0]["experiment"].startswith("linear, biased")
    assert v.iloc[-1]["experiment"].startswith("absolute loss") and v.iloc[-1]["link"] == "#saturated"
    assert v["n_seeds"].eq(8).all()
