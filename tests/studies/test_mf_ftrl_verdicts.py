"""The verdict table of ``mf-ftrl`` is generated from the kept run by the claims rubric (``jaxdp.studies.claims``):
one row per (sweep, mechanism, instance), the square root and BLT (one piece of evidence twice) sharing one row, the
tally as stated, every miss linked to a section that exists, and the bounds tested by regret / bound at every point.
Pandas only: no JAX compile."""
import math
import re

import numpy as np
import pandas as pd

from _helpers import anchor_exists, assert_page_current, miss_links_resolve, verdict_rows
from jaxdp.studies import mf_ftrl as M
from jaxdp.studies.analysis import read_generated
from jaxdp.studies.claims import VERDICTS


def _verdict(row: str) -> str:
    cell = row.rstrip(" |").split(" | ")[-1].replace("**", "")
    return next(v for v in sorted(VERDICTS, key=len, reverse=True) if cell.startswith(v))


def test_page_is_generated_from_the_kept_run():
    assert_page_current(M, M.VERDICT_BLOCK)


def test_one_row_per_cell_the_twins_share_one_and_the_tally_matches():
    summary = pd.read_csv(M.RESULTS / "summary.csv")
    twins = M.same_evidence(pd.read_csv(M.RESULTS / "results.csv"))
    # the square root and BLT are one piece of evidence twice on every sweep; nothing else is
    assert {(a, b) for _, _, a, b in twins} == {("sqrt_toeplitz", "blt")} and len(twins) == 3
    block = read_generated(M.DOC_PAGE, M.VERDICT_BLOCK)
    assert "one piece of evidence twice" in block
    rows = verdict_rows(block)
    merged = {(p, e, b) for p, e, _, b in twins}
    cells = summary[["part", "mechanism", "env"]].drop_duplicates()
    kept = [c for c in cells.itertuples(index=False) if (c.part, c.env, c.mechanism) not in merged]
    assert len(rows) == len(kept) == len(cells) - len(twins) == 12
    for c in kept:
        name = next((f"{a} = {b}" for p, e, a, b in twins if (p, e, a) == (c.part, c.env, c.mechanism)), c.mechanism)
        prefix = f"| regret / bound vs {'T' if c.part == 'T' else 'ε'} | {name}, {c.env} |"
        assert sum(ln.startswith(prefix) for ln in rows) == 1, prefix
    said = re.search(r"(\d+) in all: ([^;]*);", block)
    assert said and int(said.group(1)) == len(rows)
    tally = {p.split(" ", 1)[1]: int(p.split(" ", 1)[0]) for p in said.group(2).split(", ")}
    assert tally == {v: n for v in VERDICTS if (n := sum(_verdict(ln) == v for ln in rows))}
    # the verdicts head the findings: the block comes before the ratio table
    text = M.DOC_PAGE.read_text(encoding="utf-8")
    assert text.index(f"BEGIN GENERATED: {M.VERDICT_BLOCK}") < text.index(f"BEGIN GENERATED: {M.RATIO_BLOCK}")


def test_every_miss_links_to_a_section_that_exists():
    links = miss_links_resolve(M.DOC_PAGE, read_generated(M.DOC_PAGE, M.VERDICT_BLOCK))
    assert all(anchor_exists(c.link, M.DOC_PAGE) for c in M.CLAIMS.values())   # where a miss would be explained
    assert links == [link for link in links if link == "#misses"]


def _summary():
    """Realizable T-sweep points whose bound is 100 (λ = 32β + 99 at D = 1: bound = βD² + D²(λ - 32β)), with the
    mean regret and its interval of each mechanism at the three horizons."""
    regret = {"tree": [(10, 1)] * 3,                              # 0.1 of the bound: holds
              "honaker": [(90, 5), (99, 5), (120, 5)],            # above it at the last T: misses
              "sqrt_toeplitz": [(98, 10)] * 3,                    # 0.98 [0.88, 1.08]: consistent, unresolved
              "banded": [(50, 0)] * 3,                            # no spread over seeds: not tested
              "blt": [(98, 10), (98, 10), (115, 9)]}              # above at the last T: misses on its own
    return pd.DataFrame([dict(part="T", mechanism=m, env="realizable", T=T, eps=4.0, n_seeds=64,
                              lam=32 * M.BETA + 99.0, sigma=1.0, regret_mean=r, regret_lo=r - w, regret_hi=r + w)
                         for m, pts in regret.items() for T, (r, w) in zip((1024, 2048, 4096), pts)])


def test_verdicts_follow_the_claims():
    v = M.verdicts(_summary())
    assert list(v["cell"]) == [f"{m}, realizable" for m in M.MECHANISMS]
    got = dict(zip(v["cell"].str.split(",").str[0], v["verdict"]))
    assert got == {"tree": "holds", "honaker": "misses", "sqrt_toeplitz": "consistent, unresolved",
                   "banded": "not tested", "blt": "misses"}
    r = v.set_index(v["cell"].str.split(",").str[0])
    assert abs(r.at["tree", "slope"] - 0.10) < 1e-9 and abs(r.at["tree", "slope_hi"] - 0.11) < 1e-9
    assert abs(r.at["honaker", "slope_lo"] - 1.15) < 1e-9 and r.at["honaker", "link"] == "#misses"
    assert "seeds" in r.at["sqrt_toeplitz", "reason"] and "spread" in r.at["banded", "reason"]
    assert (v.loc[v["verdict"] != "misses", "link"] == "").all()
    assert (v["claimed"] == 1.0).all() and (v["n_seeds"] == 64).all()
    # twins share one row, judged on both one's points: BLT's point above the bound makes the pair miss
    twin = M.verdicts(_summary(), {("T", "realizable", "sqrt_toeplitz", "blt")})
    assert len(twin) == len(v) - 1
    assert dict(zip(twin["cell"], twin["verdict"]))["sqrt_toeplitz = blt, realizable"] == "misses"


def test_same_evidence_is_a_per_seed_correlation():
    rng = np.random.default_rng(0)
    base = rng.normal(10, 1, size=(2, 64))
    rows = [dict(part="T", env="realizable", T=T, eps=4.0, seed=s, mechanism=m, regret=x)
            for i, T in enumerate((1024, 2048)) for s in range(64)
            for m, x in (("tree", base[i, s]), ("sqrt_toeplitz", base[i, s] + rng.normal(0, 0.01)),
                         ("blt", base[i, s] + rng.normal(0, 0.01)), ("honaker", rng.normal(10, 1)))]
    twins = M.same_evidence(pd.DataFrame(rows))
    # each twin is paired with the first mechanism it repeats (specs.same_evidence): no chains
    assert twins == {("T", "realizable", "tree", "sqrt_toeplitz"), ("T", "realizable", "tree", "blt")}
    # the twins of a mechanism are one row, named by all of them
    s = _summary()
    v = M.verdicts(s, twins)
    assert list(v["cell"]) == ["tree = sqrt_toeplitz = blt, realizable", "honaker, realizable", "banded, realizable"]
    assert v["verdict"][0] == "misses"                       # BLT's point above the bound


def test_bounds_are_the_theory_curves():
    """The bounds recovered from λ are the module's theory curves (constants 1): realizable
    βD² + D²(λ - 32β), noisy 2D sqrt(T L (L + sqrt(E||b||²))) with the realizable twin's E||b||²."""
    s = pd.DataFrame([dict(part="T", mechanism="tree", env=env, T=2048, eps=4.0, lam=lam, sigma=1.0, regret_mean=1.0)
                      for env, lam in (("realizable", 356.172947), ("noisy", 748.302965))])
    b = M.bounds(s, D=1.0).set_index("env")
    assert abs(b.at["realizable", "bound"] - (M.BETA + 356.172947 - 32 * M.BETA)) < 1e-6
    eb2 = (356.172947 - 32 * M.BETA) ** 3 / (M.BETA * 2048)
    assert abs(b.at["noisy", "bound"] - 2 * math.sqrt(2048 * 2.0 * (2.0 + math.sqrt(eb2)))) < 1e-6
