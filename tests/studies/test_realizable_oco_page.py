"""The verdict table of ``realizable-oco`` is generated from the kept run by the claims rubric
(``jaxdp.studies.claims``): every claim is a bound with its constant, judged by mean regret / bound at every point of
its sweep; one row per sweep, the tally in the header matches the rows, every miss links to a section that exists,
and a synthetic summary gives each verdict the study can give. Pandas only: no JAX compile."""
import json
import re

import numpy as np
import pandas as pd
import pytest

from _helpers import assert_page_current, miss_links_resolve, the_row, verdict_rows
from jaxdp.oco.realizable import realizable_dp_ftrl_bound
from jaxdp.studies import realizable_oco as R
from jaxdp.studies.analysis import read_generated
from jaxdp.studies.claims import VERDICTS


def _verdict(line: str) -> str:
    return re.sub(r"\*", "", line.strip("|").split("|")[7].strip()).split(":")[0]


@pytest.fixture(scope="module")
def kept():
    if not (R.RESULTS / "summary.csv").exists():
        pytest.skip(f"no kept results in {R.RESULTS}")
    return pd.read_csv(R.RESULTS / "summary.csv")


def test_page_is_generated_from_the_kept_run(kept):
    assert_page_current(R, R.BLOCK, R.BOUNDS_BLOCK)
    assert "{#r7}" in R.DOC_PAGE.read_text() and "{#r8}" in R.DOC_PAGE.read_text()


def test_one_row_per_sweep_and_the_tally_matches(kept):
    block = read_generated(R.DOC_PAGE, R.BLOCK)
    rows = verdict_rows(block)
    sweeps = (kept[kept["part"] != "R8"].groupby(["part", "env"]).ngroups
              + kept[kept["part"] == "R8"].groupby(["learner", "d"]).ngroups)
    assert len(rows) == sweeps == 8
    assert "No two rows are one piece of evidence twice" in block
    for cell in ("noisy, T = 1024 … 32768", "realizable, T = 1024 … 32768", "realizable, ε = 1 … 16",
                 "realizable, d = 2 … 32"):
        the_row(rows, f"| R7: regret / bound | {cell} |")
    for learner in ("experts_oco_net", "potential_oco"):
        for d in (1, 2):
            the_row(rows, f"| R8: regret / bound | {learner} d={d}, T = 1024 … 262144 |")
    got = [_verdict(r) for r in rows]
    assert set(got) <= set(VERDICTS)
    tally = ", ".join(f"{got.count(k)} {k}" for k in VERDICTS if got.count(k))
    assert f"{len(rows)} in all: {tally}." in block
    # the kept run: DP-FTRL and potential_oco hold, experts_oco_net reaches its ln(M) x threshold scale
    assert _verdict(the_row(rows, "| R8: regret / bound | experts_oco_net d=2")) == "misses"
    assert _verdict(the_row(rows, "| R8: regret / bound | experts_oco_net d=1")) == "consistent, unresolved"
    assert got.count("holds") == 6


def test_every_miss_links_to_a_section_that_exists(kept):
    links = miss_links_resolve(R.DOC_PAGE, read_generated(R.DOC_PAGE, R.BLOCK), only_misses=True)
    assert links == ["#r8"]


def _synthetic(ratio: dict, halfwidth: float = 0.01) -> pd.DataFrame:
    """A summary with the kept run's points whose mean regret is ``ratio[(part, setting)]`` times its bound."""
    cfg = {**R.DEFAULTS, **json.loads((R.RESULTS / "manifest.json").read_text())["config"]}
    s = pd.read_csv(R.RESULTS / "summary.csv")
    s["bound"] = [realizable_dp_ftrl_bound(r.env, r.T, r.d, r.eps, cfg["delta"], cfg["D"], R.BETA)
                  if r.learner == "dp_ftrl" else
                  R._r8_bound(r.learner, cfg, int(r.T), int(r.d))[0] for r in s.itertuples(index=False)]
    k = np.array([ratio.get((p, e if p != "R8" else f"{ln} d={d}"), 0.5)
                  for p, e, ln, d in zip(s["part"], s["env"], s["learner"], s["d"])])
    s["regret_mean"] = k * s["bound"]
    s["regret_lo"], s["regret_hi"] = (k - halfwidth) * s["bound"], (k + halfwidth) * s["bound"]
    return s.drop(columns="bound"), cfg


def test_synthetic_summary_gives_every_verdict(kept):
    s, cfg = _synthetic({("R7-T", "noisy"): 1.2, ("R7-eps", "realizable"): 1.0,
                         ("R8", "potential_oco d=1"): 0.3}, halfwidth=0.06)
    # zero width: every seed alike
    same = (s["part"] == "R8") & (s["learner"] == "experts_oco_net") & (s["d"] == 2)
    s.loc[same, "regret_lo"] = s.loc[same, "regret_hi"] = s.loc[same, "regret_mean"]
    v = R.verdicts(s, cfg).set_index("cell")["verdict"]
    assert len(v) == 8
    assert v["noisy, T = 1024 … 32768"] == "misses"
    assert v["realizable, ε = 1 … 16"] == "consistent, unresolved"
    assert v["realizable, T = 1024 … 32768"] == "holds"
    assert v["potential_oco d=1, T = 1024 … 262144"] == "holds"
    assert v["experts_oco_net d=2, T = 1024 … 262144"] == "not tested"
    # an interval reaching just over the cap, within the tolerance, holds; one point above its bound is a miss
    s2, _ = _synthetic({("R7-d", "realizable"): 1.0}, halfwidth=0.03)
    assert R.verdicts(s2, cfg).set_index("cell")["verdict"]["realizable, d = 2 … 32"] == "holds"
    s3, _ = _synthetic({}, halfwidth=0.005)
    s3.loc[(s3["part"] == "R7-d") & (s3["d"] == 32), ["regret_mean", "regret_lo", "regret_hi"]] *= 2.2  # 1.1 of it
    assert R.verdicts(s3, cfg).set_index("cell")["verdict"]["realizable, d = 2 … 32"] == "misses"
