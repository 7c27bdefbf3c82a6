"""The verdict table of ``realizable-experts`` is generated from the kept run by the claims rubric
(:func:`jaxdp.studies.claims.judge`): one row per fitted cell, learners that ran the same regret seed by seed merged
into one row, Thm 5's lower bound tested at every (d, ε), the tally in the header, every miss linked to an anchor of
the page. Pandas only: no JAX compile."""
import math
import re

import pandas as pd

from jaxdp.studies import realizable_experts as R
from jaxdp.studies.analysis import read_generated, stale_blocks
from jaxdp.studies.claims import VERDICTS


def _rows(block):
    return [ln for ln in block.splitlines() if ln.startswith("| ") and not ln.startswith("| experiment")]


def test_page_is_generated_from_the_kept_run():
    assert stale_blocks(R.DOC_PAGE, R.page_blocks()) == [], "rerun jaxdp.studies.realizable_experts.publish()"
    slopes = pd.read_csv(R.RESULTS / "slopes.csv")
    assert (slopes["resample"] == "joint").all()
    block = read_generated(R.DOC_PAGE, R.BLOCKS[0])
    rows = _rows(block)
    # the adaptive test's two signs on L* are one run seed by seed: one row; plus one row for Thm 5 (merged too)
    assert len(rows) == len(slopes) - 1 + 1
    assert sum(bool(re.fullmatch(r"\w+ = \w+", r.split(" | ")[1])) for r in rows) == 2   # merged: "a = b"
    assert max(len(ln) for ln in block.split("\n\n", 1)[1].splitlines()) <= 120   # the table fits 120 columns
    assert sum(r.startswith("| regret vs Lstar |") for r in rows) == 2
    assert sum(r.startswith("| Thm 5 bound / regret") for r in rows) == 1
    verdicts = [re.sub(r"\*\*", "", r.rsplit(" | ", 1)[1]).split(" (n")[0].rstrip(" |") for r in rows]
    tally = re.search(r"Verdicts: (.*)\.\n", block + "\n").group(1)
    assert tally == ", ".join(f"{verdicts.count(k)} {k}" for k in VERDICTS if k in verdicts)
    assert verdicts.count("holds") == 1 and verdicts.count("not tested") == 19
    page = R.DOC_PAGE.read_text()
    for anchor in set(re.findall(r"\]\(#([\w-]+)\)", block)):
        assert "{#" + anchor + "}" in page
    assert "{#misses}" in page and "{#r6}" in page


def test_the_kept_run_merges_only_identical_runs():
    df = pd.read_csv(R.RESULTS / "results.csv")
    lstar = df[df["exp"] == "Lstar"].pivot_table(index=["Lstar", "seed"], columns="learner", values="regret")
    assert (lstar["adaptive_printed"] == lstar["adaptive_flipped"]).all()
    assert not (lstar["sparse_vector_known_Lstar"] == lstar["adaptive_flipped"]).all()


def _slope(fit, learner, lo, hi, x=(1.0, 1000.0), delta=math.nan, adversary=None, n=64):
    return dict(fit=fit, learner=learner, adversary=adversary, slope=(lo + hi) / 2, slope_lo=lo, slope_hi=hi,
                x_min=x[0], x_max=x[1], n_seeds=n, delta=delta)


def test_verdicts_follow_the_rubric():
    sl = pd.DataFrame([
        _slope("regret vs eps", "sparse_vector", -1.03, -0.97),                        # holds: within ±0.05 of −1
        _slope("regret vs eps", "sparse_vector", -1.2, -0.9),                          # contains −1, too wide
        _slope("regret vs T", "potential", 0.8, 0.95, adversary="halving"),           # above 0 over 3 decades
        _slope("regret vs T", "potential", 0.8, 0.95, x=(2 ** 14, 2 ** 17), adversary="halving"),   # 0.9 decades
        _slope("regret vs T", "hedge", 0.0, 0.0, adversary="bernoulli"),               # no spread
        _slope("em_draws vs log d", "binary_tree", 1.5, 1.7, delta=0.0),               # no exponent stated
        _slope("regret vs log d", "sparse_vector", 1.0, 1.4, delta=1e-6),              # at most 1.5: holds
        _slope("regret vs Lstar", "adaptive_flipped", 0.0, 0.1),
        _slope("regret vs Lstar", "adaptive_printed", 0.0, 0.1),                       # merged into the row above
    ])
    lb = pd.DataFrame([dict(learner=lrn, d=32, eps=e, n_seeds=64, ratio_mean=m, ratio_lo=m - 0.01, ratio_hi=m + 0.01,
                            bound_1_over_32=1 / 32) for lrn, m in (("potential", 0.5), ("sparse_vector", 0.02))
                       for e in (0.05, 0.1)])
    v = R.verdicts(sl, lb, same=(("Lstar", ("adaptive_flipped", "adaptive_printed")),))
    assert list(v["verdict"]) == ["holds", "consistent, unresolved", "misses", "not tested", "not tested",
                                  "not tested", "holds", "holds", "holds", "misses"]
    assert "seeds would resolve" in v["reason"][1]
    assert v["link"][2] == "#misses" and v["link"][9] == "#r6"
    assert "decades" in v["reason"][3] and "no spread" in v["reason"][4] and "no exponent" in v["reason"][5]
    assert v["cell"][7] == "adaptive_flipped = adaptive_printed"
    assert v["cell"][8] == "potential" and v["slope_hi"][8] < 0.07   # (1/32) / 0.49: the bound at 0.06 of the regret
    # without the merge the two L* learners are two rows, and the same learners on the lower bound stay apart
    assert len(R.verdicts(sl, lb)) == len(v) + 1


def test_lower_bound_and_theory_curves_are_generic():
    """``judge_curve`` with ``lower`` inverts each point's interval (its ends swap) and judges bound / measured ≤ 1 at every
    point; ``theory_curves`` evaluates a spec's expressions in ``x`` and refuses dunder access."""
    import numpy as np
    import pytest

    from jaxdp.studies.claims import Claim, judge_curve, theory_curves

    c = Claim("regret ≥ 1 at every point", kind="bound", value=1.0)
    pts = pd.DataFrame(dict(ratio_mean=[4.0, 2.0], ratio_lo=[3.0, 1.6], ratio_hi=[5.0, 2.5], n_seeds=[9, 8],
                            bound=[1.0, 1.0]))
    r = judge_curve(c, None, pts, stem="ratio", lower=True, experiment="e", cell="c")
    assert (r["slope"], r["slope_lo"], r["slope_hi"], r["n_seeds"]) == (0.5, 0.2, 1 / 1.6, 8)
    assert r["verdict"] == "holds"
    low = pts.assign(ratio_mean=[4.0, 0.5], ratio_lo=[3.0, 0.4], ratio_hi=[5.0, 0.6])   # one point under its bound
    assert judge_curve(c, None, low, stem="ratio", lower=True, experiment="e", cell="c")["verdict"] == "misses"
    th = theory_curves({"a": "k * np.sqrt(x)", "b": "np.full_like(x, math.log(k))"}, {"k": 4.0})
    np.testing.assert_array_equal(th["a"](np.array([1.0, 4.0])), [4.0, 8.0])
    assert list(th) == ["a", "b"] and th["b"](np.zeros(2))[0] == np.log(4.0)
    with pytest.raises(ValueError, match="double underscore"):
        theory_curves({"a": "x.__class__"}, {})
