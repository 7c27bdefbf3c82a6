"""The bootstrapped exponents of jaxdp.studies.specs.boot_claims (a ratio of two curves' slopes, a quantile over
the mean) and the slope-fit verdicts of jaxdp.studies.claims.judge_fits, against curves whose slopes are known in
closed form and least-squares fits by numpy.polyfit. Pandas and NumPy only: no JAX compile."""
import numpy as np
import pandas as pd

from jaxdp.studies.claims import Claim, Verdict, judge_fits
from jaxdp.studies.specs import boot_claims

XS = np.array([1.0, 10.0, 100.0, 1000.0])


def _boot(curves, rng: int = 1, claim=Claim("c", "rate", 0.0), **decl) -> list:
    """boot_claims' rows on per-seed curves ``[(Y (seeds, len(XS)), extra columns)]`` and one declaration."""
    df = pd.concat([pd.DataFrame(dict(seed=np.repeat(np.arange(len(Y)), len(XS)), x=np.tile(XS, len(Y)), y=Y.ravel(),
                                      **cols)) for Y, cols in curves])
    decl = dict(dict(claim="c", experiment="E", rows="x > 0", x="x", y="y", cell="c"), **decl)
    return boot_claims(df, [decl], {"c": claim}, np.random.default_rng(rng))


def test_slope_ratio_of_power_laws_is_exact_in_every_replicate():
    rng = np.random.default_rng(0)
    u, v = rng.exponential(size=(50, 1)), rng.exponential(size=(50, 1))
    row, = _boot([(u * XS ** -2.0, dict(pure=True)), (v * XS ** -1.0, dict(pure=False))], num="pure", den="not pure",
                 n_boot=300)
    assert np.allclose([row["slope"], row["slope_lo"], row["slope_hi"]], 2.0, rtol=0, atol=1e-9)
    # a noisy pair: the estimate is the ratio of the least-squares slopes of the log means
    num, den = u * XS ** -1.5 * rng.exponential(size=(50, 4)), v * XS ** -0.5 * rng.exponential(size=(50, 4))
    ref = np.polyfit(np.log(XS), np.log(num.mean(0)), 1)[0] / np.polyfit(np.log(XS), np.log(den.mean(0)), 1)[0]
    row, = _boot([(num, dict(pure=True)), (den, dict(pure=False))], 2, num="pure", den="not pure", n_boot=200)
    assert abs(row["slope"] - ref) < 1e-9 and row["slope_lo"] < row["slope"] < row["slope_hi"]
    assert row["n_seeds"] == 50


def test_quantile_over_mean_of_a_scaled_law_has_slope_zero():
    u = np.random.default_rng(0).exponential(size=(200, 1))
    row, = _boot([(u * XS ** -1.0, {})], quantile=0.99, n_boot=100)
    assert np.allclose([row["slope"], row["slope_lo"], row["slope_hi"]], 0.0, rtol=0, atol=1e-9)
    # a tail that widens with x: the slope of log(q99/mean) by numpy.polyfit; groups of ``by`` sorted, one row each
    Y = np.random.default_rng(3).exponential(size=(200, 4)) ** (1 + np.log10(XS))
    ref = np.polyfit(np.log(XS), np.log(np.quantile(Y, 0.99, axis=0) / Y.mean(0)), 1)[0]
    rows = _boot([(Y, dict(g="b")), (u * XS ** -1.0, dict(g="a"))], quantile=0.99, n_boot=10, by=["g"], cell="{g}")
    assert [r["cell"] for r in rows] == ["a", "b"] and abs(rows[1]["slope"] - ref) < 1e-9 and ref > 0


def test_boot_claims_judge_the_percentile_interval_over_the_span():
    rng = np.random.default_rng(0)
    u, v = rng.exponential(size=(50, 1)), rng.exponential(size=(50, 1))
    num, den = u * XS ** -1.5 * rng.exponential(size=(50, 4)), v * XS ** -0.5 * rng.exponential(size=(50, 4))
    curves = [(num, dict(pure=True)), (den, dict(pure=False))]
    # the bootstrap by hand: one set of seed indices per replicate for both curves, slopes of the log means
    idx = np.random.default_rng(2).integers(0, 50, size=(200, 50))
    fit = lambda M: np.array([np.polyfit(np.log(XS), np.log(m), 1)[0] for m in M])   # noqa: E731
    lo, hi = np.quantile(fit(num[idx].mean(1)) / fit(den[idx].mean(1)), [0.025, 0.975])
    est = fit(num.mean(0)[None])[0] / fit(den.mean(0)[None])[0]
    kw = dict(num="pure", den="not pure", n_boot=200)
    row, = _boot(curves, 2, Claim("ratio", "rate", est, hi - lo, link="x.md#why"), **kw)   # within its tolerance
    assert (row["verdict"], row["n_seeds"], row["link"]) == ("holds", 50, "x.md#why")
    assert np.allclose([row["slope"], row["slope_lo"], row["slope_hi"]], [est, lo, hi], rtol=1e-9, atol=0)
    far = Claim("ratio", "rate", est + 10 * (hi - lo), link="x.md#why")
    assert _boot(curves, 2, far, **kw)[0]["verdict"] == "misses"
    short = _boot(curves, 2, Claim("ratio", "rate", est, hi - lo), **dict(kw, rows="x < 50"))[0]   # 1 decade
    assert short["verdict"] == "not tested" and "1.00 decades" in short["reason"]
    assert _boot(curves, 2, far, **dict(kw, num="x < 0")) == []   # a curve without rows: no row


def test_judge_fits_merges_twins_and_applies_hooks():
    fit = dict(slope_lo=-1.02, slope_hi=-0.98, n_seeds=64, x_min=1.0, x_max=1000.0)
    slopes = pd.DataFrame([dict(exp="A", name="a", slope=-1.0, **fit), dict(exp="A", name="b", slope=-1.0, **fit),
                           dict(fit, exp="B", name="c", slope=-1.5, slope_lo=-1.52, slope_hi=-1.48),
                           dict(exp="Z", name="z", slope=0.0, **fit),
                           dict(exp="C", name="d", slope=-1.0, **fit)])
    claims = {e: Claim(f"claim {e}", "rate", -1.0, 0.05, link=f"#{e}") for e in "ABC"}
    hook = lambda r, g: ((r, Verdict("not tested", "hooked"), " (note)", "#hook") if r["exp"] == "C"
                         else (r, None, "", ""))
    rows = judge_fits(slopes, lambda r: claims.get(r["exp"]), lambda r: r["name"], lambda r: r["name"],
                      experiment="exp", twins={1: (0, 0.9995)}, same=lambda c: f"same {c:.4f}", hook=hook,
                      no_claim=None,
                      miss=lambda r, g: (f"why {g}", "#miss"))
    assert [r["cell"] for r in rows] == ["a = b", "c", "d (note)"]             # b shares a's row; Z has no claim
    assert rows[0]["verdict"] == "holds" and rows[0]["reason"].endswith("same 0.9995") and rows[0]["link"] == ""
    assert rows[1]["verdict"] == "misses" and rows[1]["reason"].endswith("; why c") and rows[1]["link"] == "#miss"
    assert (rows[2]["verdict"], rows[2]["reason"], rows[2]["link"]) == ("not tested", "hooked", "#hook")
    assert [r["experiment"] for r in rows] == ["A", "B", "C"]
    # a row standing for repeats: common leading parts once, then a repeat of another experiment in parentheses
    rep = pd.DataFrame([dict(exp="A", name="k, ρ agnostic", slope=-1.0, **fit),
                        dict(exp="A", name="k, ρ theorem", slope=-1.0, **fit), dict(exp="C", name="m", slope=-1.0, **fit)])
    row, = judge_fits(rep, lambda r: claims[r["exp"]], lambda r: r["name"], lambda r: None, experiment="exp",
                      twins={1: (0, 1.0), 2: (0, 1.0)})
    assert row["cell"] == "k, ρ agnostic = ρ theorem (= C: m)"
    miss = judge_fits(slopes.iloc[2:3], lambda r: claims["B"], str, lambda r: None, experiment="exp",
                      miss=lambda r, g: ("", None))[0]   # no reason added, the claim's link
    assert miss["verdict"] == "misses" and miss["link"] == "#B" and not miss["reason"].endswith("; ")
    # without no_claim=None a curve without a claim is a "not tested" row showing its fit
    z = judge_fits(slopes.iloc[3:4], lambda r: None, lambda r: r["name"], lambda r: None, experiment="exp")[0]
    assert (z["verdict"], z["cell"], z["slope"]) == ("not tested", "z", 0.0)


def test_against_reference_ratio_and_inside():
    from jaxdp.studies.claims import against_reference

    summ = pd.DataFrame(dict(k=[1, 2], y_mean=[2.0, 3.0], y_lo=[1.5, 2.9], y_hi=[2.5, 3.1]))
    t = against_reference(summ, lambda r: (r["k"] * 10, 2.0 * r["k"]), ["rho", "exact"], "y", ["k"])
    assert list(t.columns) == ["k", "rho", "exact", "measured_mean", "measured_lo", "measured_hi", "ratio", "inside"]
    assert list(t["rho"]) == [10, 20] and list(t["ratio"]) == [1.0, 0.75] and list(t["inside"]) == [True, False]
