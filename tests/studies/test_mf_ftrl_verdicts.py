"""The verdict table of ``mf-ftrl`` is generated from the kept run (joint seed bootstrap): one row per fitted cell
of the kept slopes, every miss linked to a section that exists, and the claims applied as stated (in T, after the
mechanism's own noise factor is divided out). Pandas only: no JAX compile."""
import math
import pandas as pd

from _helpers import assert_page_current, miss_links_resolve, verdict_rows
from jaxdp.studies import mf_ftrl as M
from jaxdp.studies.analysis import read_generated


def test_page_is_generated_from_the_kept_run():
    assert_page_current(M, M.VERDICT_BLOCK)


def test_one_verdict_row_per_fitted_cell():
    slopes = pd.read_csv(M.RESULTS / "slopes.csv")
    rows = verdict_rows(read_generated(M.DOC_PAGE, M.VERDICT_BLOCK))
    assert len(rows) == len(slopes)
    for r in slopes.itertuples(index=False):
        exp = "T" if r.sweep == "T" else "ε"
        assert sum(ln.startswith(f"| regret vs {exp} | {r.mechanism}, {r.env} |") for ln in rows) == 1, r
    # the verdicts head the findings: the block comes before the ratio table
    text = M.DOC_PAGE.read_text(encoding="utf-8")
    assert text.index(f"BEGIN GENERATED: {M.VERDICT_BLOCK}") < text.index(f"BEGIN GENERATED: {M.RATIO_BLOCK}")


def test_every_miss_links_to_a_section_that_exists():
    assert miss_links_resolve(M.DOC_PAGE, read_generated(M.DOC_PAGE, M.VERDICT_BLOCK)), "the table has no miss"


def _summary():
    """Two mechanisms' λ on a T grid: the realizable noise factor (E||b||²)^{1/3} grows like T^{0.2}."""
    rows = []
    for mech in ("tree", "blt"):
        for T in (1024, 2048, 4096):
            lam = 32 * M.BETA + T ** (1 / 3) * T ** 0.2          # (λ - 32β) / T^{1/3} = T^{0.2}
            for env in ("realizable", "noisy"):
                rows.append(dict(part="T", mechanism=mech, env=env, T=T, eps=4.0, lam=lam, sigma=1.0,
                                 regret_mean=10.0))
    return pd.DataFrame(rows)


def _cell(sweep, mech, env, slope, half, n_x=3, x=(1024, 4096)):
    return dict(sweep=sweep, mechanism=mech, env=env, slope=slope, slope_lo=slope - half, slope_hi=slope + half,
                n_x=n_x, x_min=float(x[0]), x_max=float(x[1]), n_seeds=64)


def test_verdicts_follow_the_claims():
    sl = pd.DataFrame([
        _cell("T", "tree", "realizable", 0.50, 0.02),      # 0.50 - 0.2 = 0.30 <= 1/3: holds only after the division
        _cell("T", "tree", "noisy", 0.90, 0.02),           # far above 1/2 after any small factor: misses
        _cell("eps", "tree", "realizable", -2 / 3, 0.01, n_x=5, x=(1, 16)),   # Thm 4's -2/3 exactly: holds
        _cell("eps", "blt", "realizable", -0.55, 0.01, n_x=5, x=(1, 16)),     # misses
        _cell("eps", "blt", "noisy", -0.5, 0.01, n_x=5, x=(1, 16)),           # no stated exponent: not tested
        _cell("T", "blt", "realizable", 0.30, math.nan),   # no interval: not tested
    ])
    v = M.verdicts(sl, _summary())
    assert list(v["verdict"]) == ["holds", "misses", "holds", "misses", "not tested", "not tested"]
    assert abs(v["slope"][0] - 0.30) < 1e-9 and abs(v["slope_hi"][0] - 0.32) < 1e-9
    assert v["claimed"][0] == 1 / 3 and v["kind"][0] == "at_most" and v["claimed"][2] == -2 / 3
    assert (v.loc[v["verdict"] == "misses", "link"] == "#misses").all()
    assert (v.loc[v["verdict"] != "holds", "reason"].str.len() > 0).all()
    assert list(v["cell"][:2]) == ["tree, realizable", "tree, noisy"]


def test_bounds_are_the_theory_curves():
    """The bounds recovered from λ are the module's theory curves (constants 1): realizable
    βD² + D²(λ - 32β), noisy 2D sqrt(T L (L + sqrt(E||b||²))) with the realizable twin's E||b||²."""
    s = pd.DataFrame([dict(part="T", mechanism="tree", env=env, T=2048, eps=4.0, lam=lam, sigma=1.0, regret_mean=1.0)
                      for env, lam in (("realizable", 356.172947), ("noisy", 748.302965))])
    b = M.bounds(s, D=1.0).set_index("env")
    assert abs(b.at["realizable", "bound"] - (M.BETA + 356.172947 - 32 * M.BETA)) < 1e-6
    eb2 = (356.172947 - 32 * M.BETA) ** 3 / (M.BETA * 2048)
    assert abs(b.at["noisy", "bound"] - 2 * math.sqrt(2048 * 2.0 * (2.0 + math.sqrt(eb2)))) < 1e-6
