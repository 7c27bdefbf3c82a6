"""The verdict table of ``bandits`` is generated from the kept results by the one rubric (jaxdp.studies.claims): one
row per fitted curve of ``slopes.csv`` with the kept seeds, a bound tested by regret/bound at its points (the kept
means, the trivial caps left out), the batched DP-EXP3's points that are the per-round DP-EXP3's runs counted once, a
tally that counts its rows, every miss linked to a section that exists; and :func:`jaxdp.studies.bandits.verdicts`
gives each verdict it can on a small synthetic table. Pandas only: no JAX compile."""
import math
import re

import numpy as np
import pandas as pd

from _helpers import assert_page_current, miss_links_resolve, one_row_each, verdict_rows
from jaxdp.studies import bandits as B
from jaxdp.studies.analysis import read_generated
from jaxdp.studies.claims import VERDICTS

BLOCK = "bandits verdicts"
_X = {"T": "T", "eps": "ε", "K": "K"}


def _verdict(ln: str) -> str:
    cell = ln.split(" | ")[7].strip("* ")
    return next(v for v in sorted(VERDICTS, key=len, reverse=True) if cell.startswith(v))


def _claim(learner: str, instance: str):
    return B.CLAIMS[(learner, instance)] if (learner, instance) in B.CLAIMS else B.CLAIMS[learner]


def _experiment(r) -> str:
    c = _claim(r.learner, r.instance)
    return f"regret / bound over {_X[r.sweep]}" if c is not None and c.kind == "bound" else f"regret vs {_X[r.sweep]}"


def test_verdict_block_is_generated_from_the_kept_run():
    assert_page_current(B, BLOCK)


def test_one_row_per_fitted_curve_bounds_by_their_ratio_and_a_tally_that_counts():
    slopes = pd.read_csv(B.RESULTS / "slopes.csv")
    summary = pd.read_csv(B.RESULTS / "summary.csv")
    block = read_generated(B.DOC_PAGE, BLOCK)
    assert "resampled jointly" in block and "index.md#verdicts" in block
    rows = verdict_rows(block)
    for r, row in one_row_each(rows, slopes, lambda r: f"| {_experiment(r)} | {B.LABELS[r.learner]}, {r.instance} |"):
        pts = summary[(summary["sweep"] == r.sweep) & (summary["learner"] == r.learner)
                      & (summary["instance"] == r.instance)]
        pts = pts[(pts[r.sweep] >= r.x_min) & (pts[r.sweep] <= r.x_max)]
        cols = row.split(" | ")
        assert cols[6] == str(int(pts["n_seeds"].min())), row
        c = _claim(r.learner, r.instance)
        if c is None or c.kind != "bound":
            continue
        # the measurement is the largest mean regret/bound over the points whose bound is not the trivial cap
        dmax = np.where(pts["instance"] == "gap", B.DEFAULTS["gap"], 0.8)
        capped = np.isclose(pts["theory"], pts["T"] * dmax) | np.isclose(pts["theory"], pts["T"])
        if r.learner == "dp_exp3_batched":
            capped |= pts["eps"].to_numpy() >= 1          # the per-round DP-EXP3's runs (blocks of one round)
        ratio = (pts["regret_mean"] / pts["theory"])[~capped]
        assert cols[4].startswith(f"{ratio.max():.3f} [".replace("-", "−")), row
        assert ("trivial cap" in row) == bool(capped.any()) or r.learner == "dp_exp3_batched", row
    said = re.search(r"(\d+) in all: ([^;.]*)[;.]", block)
    assert said and int(said.group(1)) == len(rows)
    tally = {p.split(" ", 1)[1]: int(p.split(" ", 1)[0]) for p in said.group(2).split(", ")}
    assert tally == {v: n for v in VERDICTS if (n := sum(_verdict(ln) == v for ln in rows))}


def test_the_batched_repeats_are_counted_once():
    """Where the batched DP-EXP3's runs are the per-round one's, seed by seed (``results.csv``), its row leaves them
    out and says so, and so does the head (one piece of evidence is one row's)."""
    df = pd.read_csv(B.RESULTS / "results.csv")
    e = df[df["sweep"] == "eps"]
    a = e[e["learner"] == "dp_exp3"].set_index(["eps", "seed"])["regret"]
    b = e[e["learner"] == "dp_exp3_batched"].set_index(["eps", "seed"])["regret"]
    dif = (a - b).abs().groupby(level=0).max()
    same = sorted(float(k) for k, v in dif.items() if v == 0.0)
    assert same == [1.0, 3.0, 10.0]
    block = read_generated(B.DOC_PAGE, BLOCK)
    named = ", ".join(f"ε = {x:g}" for x in same)
    assert "evidence shown twice is shown once" in block and f"DP-EXP3 (batched)'s points at {named}" in block
    row = [ln for ln in verdict_rows(block) if "| DP-EXP3 (batched), linspace |" in ln]
    assert len(row) == 1 and f"at {named} its runs are DP-EXP3's" in row[0]


def test_every_miss_links_an_existing_anchor():
    miss_links_resolve(B.DOC_PAGE, read_generated(B.DOC_PAGE, BLOCK))


def _points(sweep, learner, instance, xs, regret, theory, hw, K=9, T=2 ** 16, eps=1.0):
    rows = []
    for x, reg, th in zip(xs, regret, theory):
        p = dict(sweep=sweep, learner=learner, instance=instance, K=K, T=T, eps=eps, n_seeds=8, regret_mean=reg,
                 regret_lo=reg - hw, regret_hi=reg + hw, theory=th)
        p[sweep] = x
        rows.append(p)
    return rows


def _slope(sweep, learner, instance, xs, slope=0.5, lo=0.45, hi=0.55, theory_slope=math.nan):
    return dict(sweep=sweep, learner=learner, instance=instance, x_min=min(xs), x_max=max(xs), slope=slope,
                slope_lo=lo, slope_hi=hi, theory_slope=theory_slope)


def test_verdicts_follow_the_claims():
    Ts, Ks, eps = [2 ** 14, 2 ** 15, 2 ** 16], [2, 4, 8], [0.1, 1.0, 10.0]
    cap = 0.2 * 2 ** 16                                       # T·gap: the trivial cap of the K sweep
    summary = pd.DataFrame(
        _points("T", "exp3", "linspace", Ts, [100, 141, 200], [200, 283, 400], 2)             # 0.5 of it: holds
        + _points("T", "exp3_ix", "linspace", Ts, [100, 150, 420], [200, 283, 400], 5)        # above it: misses
        + _points("T", "dp_exp3", "linspace", Ts, [100, 150, 400], [200, 283, 400], 40)       # [0.9, 1.1]: unresolved
        + _points("T", "exp3_ix", "switch", Ts, [-100, -200, -300], [200, 283, 400], 5)       # below the best arm
        + _points("T", "ucb1", "switch", Ts, [-10, -20, -40], [math.nan] * 3, 5)               # no claim
        + _points("T", "thompson", "linspace", Ts, [50, 55, 60], [80, 85, 90], 2)              # a rate, 0.6 decades
        + _points("K", "dp_se", "gap", Ks, [1000, 5000, 12000], [8000, cap, cap], 0)          # exact, capped at 4, 8
        + _points("K", "ldp_ucb", "gap", Ks, [3000, 5000, 9000], [cap] * 3, 50)               # capped everywhere
        + _points("eps", "dp_exp3_batched", "linspace", eps, [100, 5000, 5000], [200, 1000, 1000], 5))
    slopes = pd.DataFrame([_slope("T", "exp3", "linspace", Ts), _slope("T", "exp3_ix", "linspace", Ts),
                           _slope("T", "dp_exp3", "linspace", Ts), _slope("T", "exp3_ix", "switch", Ts),
                           _slope("T", "ucb1", "switch", Ts, math.nan, math.nan, math.nan),
                           _slope("T", "thompson", "linspace", Ts, 0.2, 0.18, 0.22, 0.09),
                           _slope("K", "dp_se", "gap", Ks), _slope("K", "ldp_ucb", "gap", Ks),
                           _slope("eps", "dp_exp3_batched", "linspace", eps)])
    flagged = B.flagged(summary, 0.2)                        # the batched DP-EXP3 at ε = 1, 10: DP-EXP3's runs
    assert flagged.loc[flagged["learner"] == "dp_exp3_batched", "repeated"].tolist() == [False, True, True]
    v = B.verdicts(slopes, flagged)
    assert list(v["verdict"]) == ["holds", "misses", "consistent, unresolved", "holds", "not tested", "not tested",
                                  "holds", "not tested", "holds"]
    assert (v["n_seeds"] == 8).all()
    assert list(v["experiment"][:3]) == ["regret / bound over T"] * 3 and v["experiment"][5] == "regret vs T"
    assert v["slope"][0] == 0.5 and v["slope_hi"][0] == 102 / 200   # the largest ratio, the largest upper end
    assert v["link"][1] == B.MISS_LINK and "above its bound" in v["reason"][1]
    assert "about" in v["reason"][2] and "seeds" in v["reason"][2]            # how many would resolve it
    assert "below the best fixed arm" in v["reason"][3]
    assert "stochastic arms" in v["reason"][4]
    assert "decades" in v["reason"][5] and v["claimed"][5] == 0.09            # the rate's slope over the range
    assert "exact evaluation" in v["reason"][6] and "K = 4, K = 8" in v["reason"][6] and v["slope"][6] == 1000 / 8000
    assert "every fitted point" in v["reason"][7]
    assert "ε = 1, ε = 10" in v["reason"][8] and "DP-EXP3's" in v["reason"][8]
    assert set(v.loc[v["verdict"] != "misses", "link"]) == {""}
    # the repeated points are DP-EXP3's evidence: counted here, they would put the batched learner above its bound
    alone = B.verdicts(slopes, flagged.assign(repeated=False))
    assert alone["verdict"][8] == "misses" and alone["verdict"][:8].tolist() == v["verdict"][:8].tolist()
    # an exact evaluation above its bound misses
    over = summary.assign(regret_mean=np.where(summary["learner"] == "dp_se", 9000.0, summary["regret_mean"]))
    over = over.assign(regret_lo=over["regret_mean"] - (summary["regret_mean"] - summary["regret_lo"]),
                       regret_hi=over["regret_mean"] + (summary["regret_hi"] - summary["regret_mean"]))
    ex = B.verdicts(slopes, B.flagged(over, 0.2))
    assert ex["verdict"][6] == "misses" and "exact evaluation above" in ex["reason"][6]


def test_a_rate_over_two_decades_is_judged_by_its_slope():
    Ts = [2 ** 8, 2 ** 12, 2 ** 16]                                       # 2.4 decades
    summary = pd.DataFrame(_points("T", "thompson", "linspace", Ts, [30, 45, 60], [40, 70, 90], 2)
                           + _points("T", "dp_se", "switch", Ts, [50, 800, 12000], [math.nan] * 3, 2))
    cells = [("thompson", "linspace", 0.10, 0.08, 0.12), ("thompson", "linspace", 0.20, 0.18, 0.22),
             ("thompson", "linspace", 0.10, 0.0, 0.20), ("dp_se", "switch", 0.976, 0.975, 0.977),
             ("dp_se", "switch", 0.99, 0.98, 1.01)]
    slopes = pd.DataFrame([_slope("T", ln, inst, Ts, s, lo, hi, 0.1) for ln, inst, s, lo, hi in cells])
    v = B.verdicts(slopes, B.flagged(summary, 0.2))
    assert list(v["verdict"]) == ["holds", "misses", "consistent, unresolved", "misses", "holds"]
    assert list(v["claimed"]) == [0.1, 0.1, 0.1, 1.0, 1.0]
    assert list(v["link"]) == ["", B.MISS_LINK, "", B.MISS_LINK, ""]
