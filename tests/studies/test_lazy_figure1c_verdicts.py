"""The verdict tables of ``lazy-figure1c`` (on the claims rubric, :mod:`jaxdp.studies.claims`) and
``lazy-figure1c-large`` are generated from the kept results (seed indices resampled jointly across each curve's
horizons): one row per fitted cell, the tally as the rows say, every miss linked to an anchor that exists. Pandas
only: no JAX compile."""
import math
import re

import numpy as np
import pandas as pd

from _helpers import anchor_exists, assert_page_current, miss_links_resolve, verdict_rows
from jaxdp.studies import lazy_figure1c as C
from jaxdp.studies import lazy_figure1c_large as L
from jaxdp.studies.analysis import read_generated, summarize
from jaxdp.studies.claims import VERDICTS

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


def _verdict(line: str) -> str:
    return line.rsplit(" | ", 1)[1].split(":")[0].strip(" |*")


def test_figure1c_verdicts_are_current_with_one_row_per_cell():
    kept, rows = _current_rows(C, C_BLOCK, "exponents.csv", 36)
    for r in kept.itertuples(index=False):
        assert sum(f"| {r.learner}, {r.adversary}, α = {r.alpha:g} |" in ln for ln in rows) == 1, r
    # an exponent's row measures the realized-regret slope of the exponents table; Hedge's row its bound's ratio
    expo = [ln for ln in read_generated(C.DOC_PAGE, C.BLOCKS[0]).splitlines()
            if ln.startswith("| ") and not ln.startswith("| learner |")]
    assert len(expo) == 36
    for ln in expo:
        learner, adversary, alpha, realized = ln[2:].split(" | ")[:4]
        row = next(v for v in rows if f"| {learner}, {adversary}, α = {alpha} |" in v)
        if learner == "hedge":
            assert row.startswith("| E[regret] / √(T ln d/2), fitted T |") and "| ≤ 1.000 |" in row, row
        else:
            assert row.startswith("| regret vs T, ε = T^−α |") and f"| {realized} |" in row, row
    head = read_generated(C.DOC_PAGE, C_BLOCK).splitlines()[0]
    assert "resample seed indices jointly" in head and "index.md#verdicts" in head and "span 0.90" in head


def test_figure1c_tally_matches_the_rows():
    block = read_generated(C.DOC_PAGE, C_BLOCK)
    rows = verdict_rows(block)
    counts = {v: sum(_verdict(ln) == v for ln in rows) for v in VERDICTS}
    assert sum(counts.values()) == len(rows) == 36
    told = dict((k, int(n)) for n, k in re.findall(r"(\d+) (holds|consistent, unresolved|misses|not tested)",
                                                     block.splitlines()[0].split("Verdicts: ")[1]))
    assert told == {k: n for k, n in counts.items() if n} == {"holds": 9, "not tested": 27}
    # the overview counts the same
    line = next(ln for ln in (C.DOC_PAGE.parent / "index.md").read_text(encoding="utf-8").splitlines()
                if ln.startswith("| [`lazy-figure1c`]"))
    assert line.endswith("| 256 | 36 | 0 | 9 | 0 | 0 | 27 |"), line


def test_figure1c_misses_link_to_existing_anchors():
    # every miss carries a link to an anchor that exists, and only misses do (a miss links to #misses)
    miss_links_resolve(C.DOC_PAGE, read_generated(C.DOC_PAGE, C_BLOCK), only_misses=True)
    assert anchor_exists(C.CLAIMS["hedge"].link, C.DOC_PAGE) and anchor_exists("#between", C.DOC_PAGE)
    # the kept run's verdicts from its kept slopes: Hedge's bound holds, no exponent spans two decades
    df = pd.read_csv(C.RESULTS / "results.csv")
    v = C.verdicts(pd.read_csv(C.RESULTS / "exponents_realized.csv").assign(n_seeds=256),
                   summarize(df, ["learner", "adversary", "alpha", "T"], ["regret"], n_boot=200), 16)
    assert (v[v["cell"].str.startswith("hedge,")]["verdict"] == "holds").all()
    l2p = v[v["cell"].str.startswith("l2p_")]
    assert len(l2p) == 18 and (l2p["verdict"] == "not tested").all()
    assert l2p["reason"].str.contains("spans 0.90 decades").all()
    assert (v[v["cell"].str.startswith("sketch,")]["verdict"] == "not tested").all()


def test_figure1c_verdicts_follow_the_claims():
    """A synthetic table: every verdict the study can give, through claims.judge."""
    def cell(learner, alpha=0.5, slope=0.5, lo=0.47, hi=0.53, x_min=2 ** 10, x_max=2 ** 17, adv="paper_epochs"):
        return dict(learner=learner, adversary=adv, alpha=alpha, slope=slope, slope_lo=lo, slope_hi=hi,
                    x_min=x_min, x_max=x_max, n_seeds=8)

    def points(adv, ratios, halfwidth):   # Hedge's mean regret at these ratios of √(T ln d/2), d = 16
        return [dict(learner="hedge", adversary=adv, alpha=0.5, T=T, n_seeds=8, regret_mean=q * b,
                     regret_lo=(q - halfwidth) * b, regret_hi=(q + halfwidth) * b)
                for T, q in zip((2 ** 10, 2 ** 17), ratios) for b in [math.sqrt(T * math.log(16) / 2)]]

    sl = pd.DataFrame([
        cell("hedge", adv="paper_epochs"),                            # ratios 0.6, 0.9 ± 0.04: holds
        cell("hedge", adv="alternating"),                             # 0.9, 1.0 ± 0.1: reaches 1.1, unresolved
        cell("hedge", adv="aligned_epochs"),                          # 0.9, 1.2 ± 0.1: lower end 1.1 > 1, misses
        cell("l2p_paper", slope=0.62, lo=0.60, hi=0.70),              # 2.1 decades, ≤ 2/3 + 0.05: holds
        cell("l2p_paper", alpha=0.25, slope=0.52, lo=0.45, hi=0.60),  # claim 0.5: unresolved
        cell("l2p_retuned", alpha=0.25, slope=0.62, lo=0.58, hi=0.67),  # claim 0.55 below the interval: misses
        cell("l2p_retuned", alpha=0.25, slope=0.62, lo=0.58, hi=0.67, x_min=2 ** 14),  # 0.90 decades
        cell("l2p_paper", slope=0.51, lo=math.nan, hi=math.nan),      # no interval
        cell("sketch"),                                               # no claim
    ])
    summ = pd.DataFrame(points("paper_epochs", (0.6, 0.9), 0.04) + points("alternating", (0.9, 1.0), 0.1)
                        + points("aligned_epochs", (0.9, 1.2), 0.1))
    v = C.verdicts(sl, summ, 16)
    assert list(v["verdict"]) == ["holds", "consistent, unresolved", "misses", "holds", "consistent, unresolved",
                                  "misses", "not tested", "not tested", "not tested"]
    assert np.allclose(v["slope"][:3], [0.9, 1.0, 1.2]) and np.allclose(v["slope_hi"][:3], [0.94, 1.1, 1.3])
    assert (v["claimed"][:3] == 1.0).all() and np.isclose(v["claimed"][3], 2 / 3) and np.isclose(v["claimed"][5], 0.55)
    assert list(v["link"]) == ["", "", "#misses", "", "", "#misses", "", "", ""]
    assert "seeds would resolve it" in v["reason"][1] and "seeds would resolve it" in v["reason"][4]
    assert "spans 0.90 decades" in v["reason"][6] and "no finite measurement" in v["reason"][7]
    assert v["reason"][8] == C.NO_CLAIM and v["kind"][8] == "equals"


def test_figure1c_bound_ratios_stay_below_one():
    """The misses section rests on the valid bound: the expected regret never exceeds ln d/η + ηTB/8."""
    from jaxdp.experts import l2p_mw_regret_bound
    from jaxdp.studies.analysis import upper_half

    df = pd.read_csv(C.RESULTS / "results.csv")
    g = df[df["learner"].isin(["l2p_paper", "l2p_retuned"]) & df["T"].isin(upper_half(sorted(df["T"].unique())))]
    t = g.groupby(["learner", "adversary", "alpha", "T"]).agg(
        r=("expected_regret", "mean"), eta=("eta", "first"), B=("B", "first")).reset_index()
    assert len(t) == 2 * 3 * 3 * 4
    assert (t["r"] < l2p_mw_regret_bound(16, t["T"], t["eta"], t["B"])).all()


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
    # the claims rubric: an exponent is tested only by a slope over two decades of T (2^10-2^17: 2.1 decades)
    sl = pd.DataFrame([
        dict(alpha=0.25, x_min=2 ** 10, x_max=2 ** 17, slope=0.62, slope_lo=0.60, slope_hi=0.64, n_seeds=8,
             model_slope=0.62),
        dict(alpha=0.5, x_min=2 ** 10, x_max=2 ** 17, slope=0.66, slope_lo=0.64, slope_hi=0.69, n_seeds=8,
             model_slope=0.70),
        dict(alpha=0.5, x_min=2 ** 16, x_max=2 ** 18, slope=0.7, slope_lo=math.nan, slope_hi=math.nan, n_seeds=1,
             model_slope=0.71),
        dict(alpha=0.25, x_min=2 ** 14, x_max=2 ** 16, slope=0.62, slope_lo=0.60, slope_hi=0.64, n_seeds=8,
             model_slope=0.62),
    ])
    v = L.verdicts(sl)
    assert list(v["verdict"]) == ["misses", "holds", "not tested", "not tested"]
    assert v["link"][0] == "../algorithms/lazy.md#batching-term" and "0.620" in v["reason"][0]
    assert "Θ(TBη)" in v["reason"][0] and (v["link"][1:] == "").all()
    assert v["reason"][2] and not v["reason"][1]
    assert "spans 0.60 decades" in v["reason"][3] and "local slope 0.620 here" in v["reason"][3]
