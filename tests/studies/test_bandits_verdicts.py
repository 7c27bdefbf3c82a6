"""The verdict table of ``bandits`` is generated from the kept results (joint seed bootstrap over each curve): one row
per fitted curve of ``slopes.csv`` with the kept seeds, a tally that counts its rows, every miss linked to a section
that exists; and :func:`jaxdp.studies.bandits.verdicts` follows its claims on a small synthetic table. Pandas only:
no JAX compile."""
import math
import re

import pandas as pd

from _helpers import assert_page_current, miss_links_resolve, one_row_each, verdict_rows
from jaxdp.studies import bandits as B
from jaxdp.studies.analysis import VERDICTS, read_generated

BLOCK = "bandits verdicts"


def test_verdict_block_is_generated_from_the_kept_run():
    assert_page_current(B, BLOCK)


def test_one_row_per_fitted_curve_with_the_kept_seeds():
    slopes = pd.read_csv(B.RESULTS / "slopes.csv")
    summary = pd.read_csv(B.RESULTS / "summary.csv")
    block = read_generated(B.DOC_PAGE, BLOCK)
    assert "resampled jointly" in block
    rows = verdict_rows(block)
    for r, row in one_row_each(rows, slopes, lambda r: f"| {B.EXPERIMENTS[r.sweep]} | {B.LABELS[r.learner]}, "
                                                      f"{r.instance} |"):
        pts = summary[(summary["sweep"] == r.sweep) & (summary["learner"] == r.learner)
                      & (summary["instance"] == r.instance)]
        pts = pts[(pts[r.sweep] >= r.x_min) & (pts[r.sweep] <= r.x_max)]
        assert row.split(" | ")[6] == str(int(pts["n_seeds"].min())), row
    # the head's tally counts the rows' verdicts
    assert _tally(block) == _counts(rows)


def _tally(block: str) -> dict:
    """``{verdict: count}`` as the block's head states it (``... N in all: 12 holds, 6 misses, ...``)."""
    said = re.search(r"(\d+) in all: ([^.]*)\.", block)
    assert said, "the head has no tally"
    out = {}
    for part in said.group(2).split(", "):
        n, v = part.split(" ", 1)
        out[v] = int(n)
    assert sum(out.values()) == int(said.group(1))
    return out


def _counts(rows: list) -> dict:
    """``{verdict: count}`` of the table's rows (the verdict column starts with one of VERDICTS)."""
    out: dict = {}
    for ln in rows:
        cell = ln.split(" | ")[7].strip("* ")
        v = next(v for v in sorted(VERDICTS, key=len, reverse=True) if cell.startswith(v))
        out[v] = out.get(v, 0) + 1
    return out


def test_every_miss_links_an_existing_anchor():
    miss_links_resolve(B.DOC_PAGE, read_generated(B.DOC_PAGE, BLOCK))


def _points(sweep, learner, instance, xs, regret, theory, K=9, T=2 ** 16, eps=1.0):
    rows = []
    for x, reg, th in zip(xs, regret, theory):
        p = dict(sweep=sweep, learner=learner, instance=instance, K=K, T=T, eps=eps, n_seeds=8,
                 regret_mean=reg, theory=th)
        p[sweep] = x
        rows.append(p)
    return rows


def _slope(sweep, learner, instance, xs, slope, lo, hi, theory_slope=math.nan):
    return dict(sweep=sweep, learner=learner, instance=instance, x_min=min(xs), x_max=max(xs), slope=slope,
                slope_lo=lo, slope_hi=hi, theory_slope=theory_slope)


def test_verdicts_follow_the_claims():
    Ts = [2 ** 14, 2 ** 15, 2 ** 16]
    Ks = [2, 4, 8]
    eps = [0.1, 1.0, 10.0]
    cost = [B.late_arm_cost(9, T) for T in Ts]
    summary = pd.DataFrame(
        _points("T", "exp3", "linspace", Ts, [100, 141, 200], [200, 283, 400])
        + _points("T", "ucb1", "linspace", Ts, [100, 115, 130], [1000, 1050, 1100])
        + _points("T", "ucb1", "switch", Ts, [-10, -20, -40], [math.nan] * 3)
        + _points("T", "dp_se", "switch", Ts, [c + 200 for c in cost], [math.nan] * 3)
        + _points("K", "dp_se", "gap", Ks, [1000, 5000, 12000], [8000, 0.2 * 2 ** 16, 0.2 * 2 ** 16])
        + _points("eps", "ldp_ucb", "linspace", eps, [10000, 50, 1], [20000, 2000, 100]))
    slopes = pd.DataFrame([
        _slope("T", "exp3", "linspace", Ts, 0.5, 0.45, 0.55, 0.5),
        _slope("T", "ucb1", "linspace", Ts, 0.2, 0.18, 0.22, 0.09),
        _slope("T", "ucb1", "switch", Ts, math.nan, math.nan, math.nan),
        _slope("T", "dp_se", "switch", Ts, 0.97, 0.96, 0.98),
        _slope("K", "dp_se", "gap", Ks, 1.2, 1.1, 1.3, 0.4),
        _slope("eps", "ldp_ucb", "linspace", eps, -2.5, -2.6, -2.4, -1.0),
    ])
    v = B.verdicts(slopes, summary, gap=0.2)
    assert list(v["verdict"]) == ["holds", "misses", "not tested", "misses", "not tested", "misses"]
    assert (v["n_seeds"] == 8).all()                          # from the summary: slopes.csv has no seed column
    assert "rising toward it" in v["reason"][1] and v["link"][1] == B.MISS_LINK
    assert "stochastic arms" in v["reason"][2] and "≤ 0 at 3 of the 3" in v["reason"][2]
    assert "linear cost" in v["reason"][3] and "200 → 200" in v["reason"][3]
    assert "trivial cap" in v["reason"][4] and "K = 4, K = 8" in v["reason"][4]
    assert v["kind"][5] == "between" and (v["claimed"][5], v["claimed_hi"][5]) == (-2.0, 0.0)
    # the same slope inside the range of the terms' exponents holds
    ok = B.verdicts(slopes.assign(slope_lo=-0.8, slope_hi=-0.6, slope=-0.7).iloc[[5]], summary, gap=0.2)
    assert list(ok["verdict"]) == ["holds"]
