"""The verdict table of ``hedge-baseline`` is generated from the kept results (joint seed bootstrap across T): one row
per fitted curve of ``slopes.csv`` with the kept seeds, a tally that counts its rows, the dartboard rows "holds by
construction" exactly where its expected regret is Hedge's at every seed, every miss linked to a section that exists;
and :func:`jaxdp.studies.hedge_baseline.verdicts` follows its claims on a small synthetic table. Pandas only: no JAX
compile."""
import re

import numpy as np
import pandas as pd

from _helpers import assert_page_current, miss_links_resolve, one_row_each, verdict_rows
from jaxdp.experts.hedge import hedge_tuned_regret_bound
from jaxdp.studies import hedge_baseline as H
from jaxdp.studies.analysis import VERDICTS, equal_expected_regret, read_generated

BLOCK = "hedge-baseline verdicts"


def _verdict(ln: str) -> str:
    cell = ln.split(" | ")[7].strip("* ")
    return next(v for v in sorted(VERDICTS, key=len, reverse=True) if cell.startswith(v))


def test_verdict_block_is_generated_from_the_kept_run():
    assert_page_current(H, BLOCK)


def test_one_row_per_fitted_curve_and_the_dartboard_twins_share_hedges():
    slopes = pd.read_csv(H.RESULTS / "slopes.csv")
    summary = pd.read_csv(H.RESULTS / "summary.csv")
    df = pd.read_csv(H.RESULTS / "results.csv")
    twins = equal_expected_regret(df, "dartboard", "hedge", ["adversary", "d"], 1e-6)
    block = read_generated(H.DOC_PAGE, BLOCK)
    assert "resampled jointly" in block
    rows = verdict_rows(block)
    # every fitted curve has its row, except a dartboard curve that is Hedge's seed by seed (it is Hedge's row)
    kept = slopes[~slopes.apply(lambda r: r.learner == "dartboard" and (r.adversary, r.d) in twins, axis=1)]
    name = lambda r: "hedge = dartboard" if r.learner == "hedge" and (r.adversary, r.d) in twins else r.learner  # noqa: E731
    exp = lambda r: "regret / bound" if r.learner in ("hedge", "dartboard") else "regret vs T"  # noqa: E731
    for r, row in one_row_each(rows, kept, lambda r: f"| {exp(r)} | {name(r)}, {r.adversary}, d = {int(r.d)} |"):
        g = summary[(summary["learner"] == r.learner) & (summary["adversary"] == r.adversary) & (summary["d"] == r.d)]
        assert row.split(" | ")[6] == str(int(g["n_seeds"].min())), row
    assert len(rows) == len(kept)
    said = re.search(r"(\d+) in all: ([^;.]*)[;.]", block)
    assert said and int(said.group(1)) == len(rows)
    tally = {p.split(" ", 1)[1]: int(p.split(" ", 1)[0]) for p in said.group(2).split(", ")}
    assert tally == {v: n for v in VERDICTS if (n := sum(_verdict(ln) == v for ln in rows))}


def test_every_miss_links_an_existing_anchor():
    miss_links_resolve(H.DOC_PAGE, read_generated(H.DOC_PAGE, BLOCK))


def test_verdicts_follow_the_claims():
    Ts = [1024, 2048, 4096]
    bound = np.array([hedge_tuned_regret_bound(10, T) for T in Ts])
    # (learner, adversary): slope, its interval, the per-point means, their half-width
    curves = {("hedge", "noise"): (0.49, 0.47, 0.51, 0.7 * bound, 0.01 * bound),          # well below: holds
              ("hedge", "epochs"): (0.53, 0.51, 0.55, np.array([0.55, 0.57, 1.2]) * bound, 0.02 * bound),  # above
              ("hedge", "alternating"): (0.503, 0.503, 0.503, 0.85 * bound, 0 * bound),    # exact, below: holds
              ("dartboard", "planted"): (0.53, 0.51, 0.55, np.array([0.9, 0.95, 1.0]) * bound, 0.08 * bound),
              ("ftpl", "alternating"): (0.56, 0.52, 0.60, np.array([1.4, 1.45, 1.5]) * bound, 0.02 * bound),
              ("sketch", "noise"): (0.5, 0.4, 0.6, bound, 0.01 * bound)}
    slopes = pd.DataFrame([dict(learner=ln, adversary=a, d=10, slope=s, slope_lo=lo, slope_hi=hi, n_seeds=8,
                                x_min=Ts[0], x_max=Ts[-1]) for (ln, a), (s, lo, hi, _, _) in curves.items()])
    summary = pd.DataFrame([dict(learner=ln, adversary=a, d=10, T=T, n_seeds=8, fit_regret_mean=m,
                                 fit_regret_lo=m - w, fit_regret_hi=m + w, bound=b)
                            for (ln, a), (*_, means, hw) in curves.items()
                            for T, m, w, b in zip(Ts, means, hw, bound)])
    v = H.verdicts(slopes, summary)
    assert list(v["verdict"]) == ["holds", "misses", "holds", "consistent, unresolved", "not tested", "not tested"]
    assert (v["n_seeds"] == 8).all()
    assert v["link"][1] == H.MISS_LINK and "above its bound" in v["reason"][1]
    assert "exact evaluation" in v["reason"][2]
    assert "seeds" in v["reason"][3]                                   # how many would resolve it
    assert "decades" in v["reason"][4]                                 # FTPL: 0.6 decades of T, no rate
    # a dartboard curve that is Hedge's seed by seed is Hedge's row
    twin = H.verdicts(slopes, summary, twins={("planted", 10)})
    assert len(twin) == len(v) - 1 and "dartboard" not in " ".join(twin["cell"])
    hedge_planted = summary[summary["learner"] == "dartboard"].assign(learner="hedge")
    both = H.verdicts(pd.concat([slopes, slopes.assign(learner="hedge")[3:4]]), pd.concat([summary, hedge_planted]),
                      twins={("planted", 10)})
    assert "hedge = dartboard, planted, d = 10" in list(both["cell"])


def test_baseline_setup_tunes_per_horizon_and_refuses_unknown_names():
    import math

    import pytest

    from jaxdp.experts.realizable_setups import baseline_setup

    _, params, _, ap = baseline_setup("ftpl", "planted", 10, [64, 256], gap=0.2)
    assert np.allclose(params.eta, [math.sqrt(math.log(10) / T) for T in (64, 256)], rtol=1e-6)   # Kalai-Vempala's
    assert np.allclose(ap.gap, 0.2)
    _, params, _, _ = baseline_setup("hedge", "noise", 10, [64])
    assert np.allclose(params.eta, math.sqrt(8 * math.log(10) / 64), rtol=1e-6)
    for kw in ({"learner": "sketch"}, {"adversary": "lb"}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            baseline_setup(**{"learner": "hedge", "adversary": "noise", **kw}, d=10, T=[64])
