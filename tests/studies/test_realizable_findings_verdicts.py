"""The verdict table of ``realizable-findings`` is generated from the kept results (joint seed bootstrap): one row per
fitted cell of ``slopes.csv``, every miss linked to an anchor that exists, and the rules of ``verdicts`` (the claims'
scales, the horizons they are derived for, the sphere instance) checked on a small synthetic table. Pandas only: no
JAX compile."""
import re

import numpy as np
import pandas as pd

from _helpers import ROOT, assert_page_current, miss_links_resolve, verdict_rows
from jaxdp.studies import realizable_findings as R
from jaxdp.studies.analysis import read_generated
from jaxdp.studies.claims import VERDICTS
from jaxdp.studies.specs import fstring

BLOCK = "realizable-findings verdicts"
TS = (2 ** 16, 2 ** 19, 2 ** 23)   # Alg. 2's synthetic horizons: 2.1 decades, all above 10 L₀


def test_page_is_generated_from_the_kept_run():
    assert_page_current(R, BLOCK)


def test_one_row_per_fitted_cell():
    slopes = pd.read_csv(R.RESULTS / "slopes.csv")
    assert (slopes["resample"] == "joint").all()
    block = read_generated(R.DOC_PAGE, BLOCK)
    assert "resampled jointly" in block
    rows = verdict_rows(block)
    assert len(rows) == len(slopes)
    # the same cells, fit by fit: the experiment column and the curve of each row
    got = sorted((ln.split(" | ")[0][2:], ln.split(" | ")[1]) for ln in rows)
    want = sorted((r.fit, fstring(R.S.data["cells"][r.fit.split(":")[0]], r._asdict()))
                  for r in slopes.itertuples(index=False))
    assert got == want
    # the counts line (the rubric's tally) agrees with the rows
    m = re.search(r"\*\*(\d+) fitted cells: (.*)\.\*\*", block)
    assert m and int(m.group(1)) == len(rows)
    last = [ln.rstrip(" |").split(" | ")[-1] for ln in rows]
    counts = {k: sum(c == k or c.startswith(f"{k}: ") or c.startswith(f"**{k}**") for c in last) for k in VERDICTS}
    assert m.group(2) == ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    assert sum(counts.values()) == len(rows)


def test_every_miss_links_to_an_existing_anchor():
    block = read_generated(R.DOC_PAGE, BLOCK)
    miss_links_resolve(R.DOC_PAGE, block)
    for ln in verdict_rows(block):    # every verdict but "holds" carries its reason
        v = ln.rstrip(" |").split(" | ")[-1]
        assert v == "holds" or ": " in v, ln
    assert (ROOT / "docs" / "algorithms" / "realizable-findings.md").exists()


def _synthetic():
    """Per-seed rows of three curves: Alg. 2 flipped in rate mode (threshold growing with T, regret in step), the
    printed potential algorithm (linear regret on half the seeds, √T on the others) and the sphere instance (regret
    falling with d). The T curves span two decades, the least over which the rubric tests a rate."""
    rows = []
    for s in range(4):
        for k, T in enumerate(TS):
            L0 = 400.0 * np.log(T)
            rows.append(dict(exp="adaptive", learner="adaptive_flipped", mode="rate", d=16, T=T, Lstar=0.0, seed=s,
                             regret=3 * L0 * (1 + 0.02 * ((s + k) % 4)), em_draws=3.0, phases=np.nan, threshold0=L0,
                             margin=-100.0))
        for T in (2 ** 10, 2 ** 17):
            rows.append(dict(exp="potential", learner="potential", mode="rate", d=16, T=T, Lstar=0.0, seed=s,
                             regret=0.6 * T if s % 2 else np.sqrt(T), em_draws=1.0, phases=np.nan, eta=0.01))
        for d in (2, 8):
            rows.append(dict(exp="oco", learner="dp_ftrl_sphere", mode="paper", d=d, T=1024, Lstar=0.0, seed=s,
                             regret=60.0 / d, em_draws=np.nan, phases=np.nan, lam=100.0 * d ** 0.3))
    return pd.DataFrame(rows)


def test_verdicts_follow_the_claims():
    res = _synthetic()
    fits = R._fit_table(res, n_boot=200)
    v = R.verdicts(fits, res).set_index("cell")
    flipped = v.loc["adaptive_flipped, rate, L* = 0"]
    # regret = 3 L₀ times seed noise: the raw slope is about L₀'s own (positive); after ÷ L₀ the interval holds 0
    raw = fits[fits["learner"] == "adaptive_flipped"].iloc[0]
    shift = raw["slope"] - flipped["slope"]
    assert raw["slope_lo"] > 0 and abs(shift - np.polyfit(np.log(TS), np.log(np.log(TS)), 1)[0]) < 1e-9
    assert flipped["slope_lo"] <= 0 <= flipped["slope_hi"] and flipped["verdict"] == "holds"
    pot = v.loc["potential"]
    assert pot["verdict"] == "misses" and pot["link"].endswith("realizable-findings.md#potential")
    assert "50% of seeds" in pot["reason"]
    sphere = v.loc["sphere"]
    assert sphere["verdict"] == "not tested" and sphere["reason"] and sphere["claimed"] == 1 / 3


def test_below_the_horizon_is_not_tested():
    res = _synthetic()
    res.loc[res["exp"] == "adaptive", "threshold0"] *= 100     # 10 L₀ now far above every T of the grid
    v = R.verdicts(R._fit_table(res, n_boot=50), res).set_index("cell")
    row = v.loc["adaptive_flipped, rate, L* = 0"]
    assert row["verdict"] == "not tested" and "below 10 L₀" in row["reason"]
    # a curve the docs state no claim for is reported, not tested
    res2 = res.assign(learner=res["learner"].replace({"potential": "other"}))
    v2 = R.verdicts(R._fit_table(res2, n_boot=50), res2).set_index("cell")
    assert v2.loc["other", "verdict"] == "not tested"
