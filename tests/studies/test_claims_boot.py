"""The bootstrapped exponents and the slope-fit verdicts of jaxdp.studies.claims (slope_ratio_boot,
quantile_ratio_slope_boot, judge_fits) and their rows by jaxdp.studies.specs.boot_claims, against curves whose
slopes are known in closed form and least-squares fits by numpy.polyfit. Pandas and NumPy only: no JAX compile."""
import numpy as np
import pandas as pd

from jaxdp.studies.claims import Claim, Verdict, judge_fits, quantile_ratio_slope_boot, slope_ratio_boot
from jaxdp.studies.specs import boot_claims

XS = np.array([1.0, 10.0, 100.0, 1000.0])


def test_slope_ratio_of_power_laws_is_exact_in_every_replicate():
    rng = np.random.default_rng(0)
    u, v = rng.exponential(size=(50, 1)), rng.exponential(size=(50, 1))
    est, boots = slope_ratio_boot(u * XS ** -2.0, v * XS ** -1.0, XS, 300, np.random.default_rng(1))
    assert abs(est - 2.0) < 1e-9 and boots.shape == (300,) and np.allclose(boots, 2.0)
    # a noisy pair: the estimate is the ratio of the least-squares slopes of the log means
    num, den = u * XS ** -1.5 * rng.exponential(size=(50, 4)), v * XS ** -0.5 * rng.exponential(size=(50, 4))
    ref = np.polyfit(np.log(XS), np.log(num.mean(0)), 1)[0] / np.polyfit(np.log(XS), np.log(den.mean(0)), 1)[0]
    est, boots = slope_ratio_boot(num, den, XS, 200, np.random.default_rng(2))
    assert abs(est - ref) < 1e-9 and np.nanquantile(boots, 0.025) < est < np.nanquantile(boots, 0.975)


def test_quantile_over_mean_of_a_scaled_law_has_slope_zero():
    u = np.random.default_rng(0).exponential(size=(200, 1))
    est, boots = quantile_ratio_slope_boot(u * XS ** -1.0, XS, 0.99, 100, np.random.default_rng(1))
    assert abs(est) < 1e-9 and boots.shape == (100,) and np.allclose(boots, 0.0, atol=1e-9)
    # a tail that widens with x: the slope of log(q99/mean) by numpy.polyfit
    Y = np.random.default_rng(3).exponential(size=(200, 4)) ** (1 + np.log10(XS))
    ref = np.polyfit(np.log(XS), np.log(np.quantile(Y, 0.99, axis=0) / Y.mean(0)), 1)[0]
    assert abs(quantile_ratio_slope_boot(Y, XS, 0.99, 10, np.random.default_rng(1))[0] - ref) < 1e-9 and ref > 0


def test_boot_claims_judge_the_percentile_interval_over_the_span():
    rng = np.random.default_rng(0)
    u, v = rng.exponential(size=(50, 1)), rng.exponential(size=(50, 1))
    num, den = u * XS ** -1.5 * rng.exponential(size=(50, 4)), v * XS ** -0.5 * rng.exponential(size=(50, 4))
    df = pd.concat([pd.DataFrame(dict(seed=np.repeat(np.arange(50), 4), x=np.tile(XS, 50), y=Y.ravel(), pure=p))
                    for Y, p in ((num, True), (den, False))])
    decl = dict(claim="r", experiment="E", rows="x > 0", num="pure", den="not pure", x="x", y="y", n_boot=200,
                cell="ratio")
    est, boots = slope_ratio_boot(num, den, XS, 200, np.random.default_rng(2))
    lo, hi = np.nanquantile(boots, [0.025, 0.975])
    wide = {"r": Claim("ratio", "rate", est, hi - lo, link="x.md#why")}        # the interval within its tolerance
    row, = boot_claims(df, [decl], wide, np.random.default_rng(2))
    assert (row["verdict"], row["slope"], row["slope_lo"], row["slope_hi"], row["n_seeds"], row["link"]) == (
        "holds", est, lo, hi, 50, "x.md#why")
    far = {"r": Claim("ratio", "rate", est + 10 * (hi - lo), link="x.md#why")}
    assert boot_claims(df, [decl], far, np.random.default_rng(2))[0]["verdict"] == "misses"
    short = boot_claims(df, [dict(decl, rows="x < 50")], wide, np.random.default_rng(2))[0]   # 1 decade: no rate
    assert short["verdict"] == "not tested" and "1.00 decades" in short["reason"]
    assert boot_claims(df, [dict(decl, num="x < 0")], wide, np.random.default_rng(2)) == []   # a curve without rows


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
                      merge=lambda a, b, r, t: f"{a}+{b}/{r['exp']}{t['exp']}", no_claim=None,
                      miss=lambda r, g: (f"why {g}", "#miss"))
    assert [r["cell"] for r in rows] == ["a+b/AA", "c", "d (note)"]            # b shares a's row; Z has no claim
    assert rows[0]["verdict"] == "holds" and rows[0]["reason"].endswith("same 0.9995") and rows[0]["link"] == ""
    assert rows[1]["verdict"] == "misses" and rows[1]["reason"].endswith("; why c") and rows[1]["link"] == "#miss"
    assert (rows[2]["verdict"], rows[2]["reason"], rows[2]["link"]) == ("not tested", "hooked", "#hook")
    assert [r["experiment"] for r in rows] == ["A", "B", "C"]
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
