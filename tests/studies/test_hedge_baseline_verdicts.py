"""The verdict table of ``hedge-baseline`` is generated from the kept results (joint seed bootstrap across T): one row
per fitted curve of ``slopes.csv`` with the kept seeds, a tally that counts its rows, the dartboard rows "holds by
construction" exactly where its expected regret is Hedge's at every seed, every miss linked to a section that exists;
and :func:`jaxdp.studies.hedge_baseline.verdicts` follows its claims on a small synthetic table. Pandas only: no JAX
compile."""
import re

import numpy as np
import pandas as pd

from _helpers import assert_page_current, miss_links_resolve, one_row_each, verdict_rows
from jaxdp.studies import hedge_baseline as H
from jaxdp.studies.analysis import VERDICTS, read_generated

BLOCK = "hedge-baseline verdicts"


def _verdict(ln: str) -> str:
    cell = ln.split(" | ")[7].strip("* ")
    return next(v for v in sorted(VERDICTS, key=len, reverse=True) if cell.startswith(v))


def test_verdict_block_is_generated_from_the_kept_run():
    assert_page_current(H, BLOCK)


def test_one_row_per_fitted_curve_and_the_dartboard_twins():
    slopes = pd.read_csv(H.RESULTS / "slopes.csv")
    summary = pd.read_csv(H.RESULTS / "summary.csv")
    df = pd.read_csv(H.RESULTS / "results.csv")
    twins = H.same_expected_regret(df)
    block = read_generated(H.DOC_PAGE, BLOCK)
    assert "resampled jointly" in block
    rows = verdict_rows(block)
    for r, row in one_row_each(rows, slopes, lambda r: f"| regret vs T | {r.learner}, {r.adversary}, d = {int(r.d)} |"):
        g = summary[(summary["learner"] == r.learner) & (summary["adversary"] == r.adversary) & (summary["d"] == r.d)]
        assert row.split(" | ")[6] == str(int(g["n_seeds"].min())), row
        by_construction = _verdict(row) == "holds by construction"
        assert by_construction == (r.learner == "dartboard" and (r.adversary, r.d) in twins), row
    said = re.search(r"(\d+) in all: ([^.]*)\.", block)
    assert said and int(said.group(1)) == len(rows)
    tally = {p.split(" ", 1)[1]: int(p.split(" ", 1)[0]) for p in said.group(2).split(", ")}
    assert tally == {v: n for v in VERDICTS if (n := sum(_verdict(ln) == v for ln in rows))}


def test_every_miss_links_an_existing_anchor():
    miss_links_resolve(H.DOC_PAGE, read_generated(H.DOC_PAGE, BLOCK))


def test_verdicts_follow_the_claims():
    Ts = [1024, 2048, 4096]
    bound = np.array([H._hedge_bound(10, T) for T in Ts])
    curves = {("hedge", "noise"): (0.49, 0.47, 0.51, 0.7 * bound),
              ("hedge", "epochs"): (0.53, 0.51, 0.55, np.array([0.55, 0.57, 0.59]) * bound),
              ("hedge", "alternating"): (0.503, 0.503, 0.503, 0.85 * bound),
              ("dartboard", "epochs"): (0.53, 0.51, 0.55, np.array([0.55, 0.57, 0.59]) * bound),
              ("ftpl", "alternating"): (0.56, 0.52, 0.60, np.array([1.4, 1.45, 1.5]) * bound),
              ("sketch", "noise"): (0.5, 0.4, 0.6, bound)}
    slopes = pd.DataFrame([dict(learner=ln, adversary=a, d=10, slope=s, slope_lo=lo, slope_hi=hi, x_min=Ts[0],
                                x_max=Ts[-1]) for (ln, a), (s, lo, hi, _) in curves.items()])
    summary = pd.DataFrame([dict(learner=ln, adversary=a, d=10, T=T, n_seeds=8, fit_regret_mean=m)
                            for (ln, a), (*_, means) in curves.items() for T, m in zip(Ts, means)])
    v = H.verdicts(slopes, summary)
    assert list(v["verdict"]) == ["holds", "misses", "not tested", "holds by construction", "misses", "not tested"]
    assert (v["n_seeds"] == 8).all()
    assert "0.55 → 0.59" in v["reason"][1] and v["link"][1] == H.MISS_LINK
    assert "deterministic" in v["reason"][2]
    assert v["claimed"][3] == 0.53 and "Hedge's" in v["reason"][3]
    assert "1.40 to 1.50" in v["reason"][4]
    # a dartboard curve that is not Hedge's twin is tested against 1/2 on its own
    alone = H.verdicts(slopes, summary, twins=set())
    assert alone["verdict"][3] == "misses"
