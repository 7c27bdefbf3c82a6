"""The verdict table of ``growth-rates`` is generated from the kept run (``slopes.csv`` and ``results.csv``) by the
generic rubric (:func:`jaxdp.studies.claims.judge`) and stands current on both pages that carry it: one row per
fitted curve, the curves that are one piece of evidence (the continuous mechanism's two ρ rules at κ ≥ 2, G6 at
κ_low = 1.5 and G1's regression at κ = 3) merged into one, plus G3's exponent ratio and G5's quantile ratios; the
tally counts the rows; every miss links to a section that exists; and :func:`jaxdp.studies.growth_rates.verdicts`
gives each verdict the study can produce on a small synthetic table. Pandas only: no JAX compile."""
import math
import re

import numpy as np
import pandas as pd
import pytest

from _helpers import ROOT, anchor_exists, assert_page_current, miss_links_resolve, the_row, verdict_rows
from jaxdp.sco import grid_floor
from jaxdp.studies import growth_rates as G
from jaxdp.studies.analysis import read_generated
from jaxdp.studies.claims import VERDICTS
from jaxdp.studies.specs import fstring, same_evidence, seed_matrix

WHY = "../results/growth-rates.md#why-"                             # the page's sections explaining a miss


def _verdict(ln: str) -> str:
    cell = ln.split(" | ")[7].strip("* ")
    return next(v for v in sorted(VERDICTS, key=len, reverse=True) if cell.startswith(v))


def _block() -> str:
    return assert_page_current(G, G.BLOCK)[G.BLOCK]


def test_verdict_block_is_generated_from_the_kept_run_on_both_pages():
    body = _block()
    assert G.DOC_PAGE == ROOT / G.DOC_PAGES[0]
    for page in G.DOC_PAGES:
        assert read_generated(ROOT / page, G.BLOCK) == body, f"{page}: stale; rerun growth_rates.publish()"
    assert "resampled jointly" in body and "tolerance of 0.05" in body and "two decades" in body


def test_one_row_per_cell_with_the_same_evidence_merged():
    slopes = pd.read_csv(G.RESULTS / "slopes.csv")
    df = pd.read_csv(G.RESULTS / "results.csv")
    rows = verdict_rows(_block())
    mats = {j: seed_matrix(G._curve(df, r["exp"], r), G.FIG[r["exp"]]["x"], G.FIG[r["exp"]]["y"])
            for j, r in slopes.iterrows()}
    twins = same_evidence([(j, (G.FIG[r["exp"]]["x"], float(r["theory"]), tuple(mats[j][0])), mats[j][1])
                           for j, r in slopes.iterrows()], G.TWIN_CORR, G.TWIN_REL)
    cell = {j: f"{r['exp']} | {fstring(G.FIG[r['exp']]['curve'], r)}" for j, r in slopes.iterrows()}
    # the pieces of evidence measured twice: the two ρ rules of the continuous mechanism at κ ≥ 2, and G6 at
    # κ_low = 1.5, which runs G1's regression points at κ = 3 with the same seed keys
    assert {(cell[i], cell[j]) for j, (i, _) in twins.items()} == {
        *((f"G4 | regression, κ = {k}, continuous (exact), ρ agnostic",
           f"G4 | regression, κ = {k}, continuous (exact), ρ theorem") for k in (2, 3, 4)),
        ("G1 | regression, κ = 3", "G6 | regression, κ = 3, κ_low = 1.5")}
    assert all(c >= G.TWIN_CORR for _, c in twins.values())
    # the two-point instance's rules differ (their claims are −3 and −2): two rows
    assert len([ln for ln in rows if ln.startswith("| G4 | twopoint, κ = 1.5, continuous (exact), ρ ")]) == 2
    n_g1 = int((slopes["exp"] == "G1").sum())
    assert len(rows) == len(slopes) - len(twins) + 1 + n_g1          # + G3's exponent ratio + one G5 row per G1 curve
    for j, r in slopes.iterrows():
        if j in twins:
            assert not any(ln.startswith(f"| {cell[j]} |") for ln in rows), cell[j]
            continue
        row = the_row(rows, f"| {cell[j]}")
        assert row.split(" | ")[6] == str(int(r["n_seeds"])), row
        decades = math.log10(r["x_max"] / r["x_min"])
        if decades < 2 - 1e-9 and r["exp"] != "Geps":                # Geps may fit fewer ε (its floor hook)
            assert f"not tested: the fitted range spans {decades:.2f} decades" in row, row
        if j in {i for i, _ in twins.values()}:
            assert " = " in row.split(" | ")[1] and "one row for both curves" in row, row
    said = re.search(r"(\d+) in all: ([^.]*)\.", _block())
    assert said and int(said.group(1)) == len(rows)
    tally = {v: int(n) for n, v in re.findall(r"(\d+) (holds|consistent, unresolved|misses|not tested)",
                                               said.group(2))}
    assert tally == {v: n for v in VERDICTS if (n := sum(_verdict(ln) == v for ln in rows))}
    assert tally == {"holds": 3, "consistent, unresolved": 3, "misses": 3, "not tested": 42}


def test_every_miss_links_an_existing_anchor():
    body = _block()
    links = miss_links_resolve(G.DOC_PAGE, body)
    assert links and {link.split("#")[1] for link in links} <= {"why-grid-floor", "why-float"}
    for page in G.DOC_PAGES[1:]:                                    # the same block on the algorithm page
        assert all(anchor_exists(link, ROOT / page) for link in miss_links_resolve(ROOT / page, body))


# --------------------------------------------------------------------------- the rubric on a synthetic table

def _synthetic():
    """Per-seed results and a slopes table: G1 curves over 1.48 decades of n, G4 curves over two."""
    rng = np.random.default_rng(0)
    S, n1, n4 = 64, [10_000, 30_000, 100_000, 300_000], [1_000, 10_000, 100_000]
    floor2 = grid_floor("regression", 2.0, 2048)
    # name: (exp, inst, kappa, rho_rule, sampler, M, slope, lo, hi, per-point mean)
    curves = {
        "g1": ("G1", "regression", 2.0, "none", "none", 0, -1.2, -1.25, -1.15, lambda n: n ** -1.2),
        "g1_exact": ("G1", "atom", 2.0, "none", "none", 0, -1.0, -1.0, -1.0, lambda n: 3 * n ** -1.0),
        "agnostic": ("G4", "regression", 2.0, "agnostic", "exact", 0, -2.0, -2.02, -1.98, lambda n: n ** -2.0),
        "theorem": ("G4", "regression", 2.0, "theorem", "exact", 0, -2.0, -2.02, -1.98, lambda n: n ** -2.0),
        "grid": ("G4", "regression", 2.0, "theorem", "grid", 2048, -1.5, -1.55, -1.45,
                 lambda n: floor2 * (1e5 / n) ** 1.5),
        "wide": ("G4", "regression", 3.0, "theorem", "exact", 0, -1.5, -1.6, -1.4, lambda n: n ** -1.5),
        "off": ("G4", "regression", 4.0, "theorem", "exact", 0, -1.31, -1.34, -1.28, lambda n: n ** -1.31),
        "float": ("G4", "twopoint", 1.5, "theorem", "exact", 0, -3.002, -3.003, -3.001,
                  lambda n: 2e-15 * (1e5 / n) ** 3),
        "other": ("G4", "regression", 3.0, "theorem", "grid", 2048, -1.2, -1.25, -1.15, lambda n: 1e-6 * (1e5 / n)),
    }
    rows, fits, draws = [], [], {}
    for name, (exp, inst, k, rule, smp, M, s, lo, hi, mean) in curves.items():
        ns = n1 if exp == "G1" else n4
        # Theorem 1's ρ draws what the agnostic ρ draws, seed by seed (one piece of evidence)
        u = draws[name] = draws["agnostic"] if name == "theorem" else rng.exponential(size=S)
        y = "excess" if exp == "G1" else "erm_excess"
        w = rng.exponential(size=(len(ns), S)) if exp == "G1" else np.ones((len(ns), S))   # G5's spread over n
        rows += [dict(exp=exp, inst=inst, kappa=k, d=1, n_samples=n, eps=0.5, delta=0.0, kappa_low=1.5,
                      rho_rule=rule, sampler=smp, M=M, seed=i, **{y: mean(n) * u[i] * w[a, i]})
                 for a, n in enumerate(ns) for i in range(S)]
        fits.append(dict(exp=exp, inst=inst, kappa=k, d=1.0, eps=0.5, delta=0.0, kappa_low=1.5, rho_rule=rule,
                         sampler=smp, M=M, slope=s, slope_lo=lo, slope_hi=hi, x_min=ns[0], x_max=ns[-1], n_seeds=S,
                         theory=G.theory_exponent(dict(exp=exp, kappa=k, delta=0.0, rho_rule=rule))))
    return pd.DataFrame(rows), pd.DataFrame(fits)


def test_verdicts_follow_the_rubric():
    df, slopes = _synthetic()
    v = G.verdicts(df, slopes)
    by = dict(zip(v["cell"], zip(v["verdict"], v["reason"], v["link"])))
    assert list(v["experiment"]) == ["G1", "G1"] + ["G4"] * 6 + ["G5", "G5"]
    assert by["regression, κ = 2"][:2] == ("not tested", "the fitted range spans 1.48 decades; a rate needs 2")
    assert by["atom, κ = 2"][0] == "not tested" and "no spread" in by["atom, κ = 2"][1]
    # the two ρ rules, the same draws seed by seed: one row; the grid curve with the same claim stays its own
    merged = "regression, κ = 2, continuous (exact), ρ agnostic = ρ theorem"
    assert by[merged][0] == "holds" and "one row for both curves" in by[merged][1]
    assert "regression, κ = 2, continuous (exact), ρ theorem" not in by and len(v) == len(slopes) - 1 + 2
    grid = by["regression, κ = 2, grid M = 2048, ρ theorem"]
    assert grid[0] == "misses" and "grid resolution floor" in grid[1] and grid[2] == WHY + "grid-floor"
    # wider than the tolerance: unresolved, with the seeds that would resolve it (64 · (0.1/0.05)² = 256)
    wide = by["regression, κ = 3, continuous (exact), ρ theorem"]
    assert wide[0] == "consistent, unresolved" and "about 260 seeds would resolve it" in wide[1]
    # no wider than the tolerance but off-centre: unresolved (the generic rubric: it reaches beyond the tolerance)
    off = by["regression, κ = 4, continuous (exact), ρ theorem"]
    assert off[0] == "consistent, unresolved" and "reaches beyond its tolerance ±0.05" in off[1]
    fl = by["twopoint, κ = 1.5, continuous (exact), ρ theorem"]
    assert fl[0] == "misses" and "float64 resolution" in fl[1] and fl[2] == WHY + "float"
    other = by["regression, κ = 3, grid M = 2048, ρ theorem"]
    assert other[0] == "misses" and other[1] == "the interval excludes the claim"
    assert other[2] == G.CLAIMS["G4"].link == WHY + "other"                # no note explains it: the claim's link
    # G5: the quantile ratio of each G1 curve, over the same 1.48 decades
    g5 = v[v["experiment"] == "G5"]
    assert (g5["verdict"] == "not tested").all() and g5["reason"].str.contains("1.48 decades").all()
    assert (v["n_seeds"] == 64).all() and set(v["verdict"]) == set(VERDICTS)
    assert (v.loc[v["verdict"] == "misses", "link"] != "").all()
    # a curve whose draws differ is never merged: with the agnostic rule's draws replaced, two rows
    df2 = df.copy()
    sel = (df2["rho_rule"] == "agnostic")
    df2.loc[sel, "erm_excess"] = df2.loc[sel, "erm_excess"].to_numpy()[::-1]
    assert len(G.verdicts(df2, slopes)) == len(v) + 1



def test_curve_notes_as_data():
    from jaxdp.studies.claims import Verdict
    from jaxdp.studies.specs import curve_notes

    notes = [{"exp": "A", "x": "n", "y": "v", "values": {"twice": "2 * mean"}, "when": "twice > cap",
              "reason": "r1", "link": "#one"},
             {"exp": "A", "x": "n", "y": "v", "when": "mean < 1", "reason": "r2", "link": "#two"},
             {"exp": "B", "x": "n", "y": "v", "values": {"floor": "cap"}, "keep": "mean >= floor", "min_keep": 2,
              "show": {"k": "len(kept)", "xs": "', '.join(str(x) for x in kept)"}, "untested": "u", "note": "k",
              "link": "#floor"}]
    fits = []
    hook, miss = curve_notes(notes, lambda name, **v: f"{name}: {v.get('xs', format(v['mean'], 'g'))}", "#other",
                             cap=5.0, refit=lambda x, y, rows: fits.append((x, y, sorted(rows[x]))) or "refit")
    rows = pd.DataFrame(dict(n=[1, 1, 10, 10], v=[100.0, 100.0, 2.0, 4.0]))  # the last point's mean is 3
    assert miss({"exp": "A"}, rows) == ("r1: 3", "#one")                 # 2 · 3 > 5: the first note
    assert miss({"exp": "A"}, rows.assign(v=rows["v"] / 10)) == ("r2: 0.3", "#two")
    assert miss({"exp": "A"}, rows.assign(v=rows["v"] / 2)) == ("", "#other")   # mean 1.5: neither note
    assert miss({"exp": "C"}, rows) == ("", "#other")                      # no note of its experiment
    assert hook({"exp": "A"}, rows) == ({"exp": "A"}, None, "", "")        # no kept note: as fitted
    # B keeps the points whose mean is at least 5: all three, then two (refitted), then one (not tested)
    three = pd.DataFrame(dict(n=[1, 2, 3], v=[9.0, 8.0, 7.0]))
    assert hook({"exp": "B"}, three) == ({"exp": "B"}, None, "", "")
    assert hook({"exp": "B"}, three.assign(v=[9.0, 8.0, 1.0])) == ("refit", None, "k: 1, 2", "")
    assert fits == [("n", "v", [1, 2])]
    assert hook({"exp": "B"}, three.assign(v=[9.0, 1.0, 1.0])) == ({"exp": "B"}, Verdict("not tested", "u: 1"),
                                                                     "", "#floor")
    with pytest.raises(ValueError, match="refit must be given"):
        curve_notes(notes, str)


def test_derived_tables_as_data():
    from jaxdp.studies.specs import derived_tables

    res = pd.DataFrame(dict(exp=["G1", "G1", "G4", "G4"], a=[1.0, 3.0, 5.0, 9.0], ok=[1.0, 0.0, 1.0, 1.0]))
    decl = {"mean_ok": {"from": "r", "needs": ["ok"], "by": ["exp"], "mean": "ok"},
            "absent": {"from": "r", "needs": ["nope"], "by": ["exp"], "mean": "ok"},
            "empty": {"from": "r", "rows": "exp == 'G9'"},
            "g4": {"from": "r", "rows": "exp == 'G4'", "columns": ["a"], "assign": {"b": "a / 2", "c": "b + a"}}}
    out = derived_tables(decl, {"r": res})
    assert list(out) == ["mean_ok", "g4"]                             # no table without its columns or rows
    assert out["mean_ok"].to_dict("list") == {"exp": ["G1", "G4"], "ok": [0.5, 1.0]}
    assert out["g4"].to_dict("list") == {"a": [5.0, 9.0], "b": [2.5, 4.5], "c": [7.5, 13.5]}


def test_boot_claims_as_data():
    """A slope ratio and a quantile-over-mean slope from per-seed rows: on exact power laws sharing each seed's draw
    every bootstrap replicate is the law's own ratio (2) and flat quantile ratio (0), whatever seeds it resamples."""
    from jaxdp.studies.claims import Claim
    from jaxdp.studies.specs import boot_claims

    u = np.random.default_rng(5).exponential(size=32)                 # one draw per seed, shared by every curve
    xs = [1.0, 10.0, 100.0, 1000.0]
    df = pd.DataFrame([dict(e=e, g=g, x=x, seed=s, y=(x ** -(2.0 if e == "pure" else 1.0)) * u[s] * (1 + g))
                       for e in ("pure", "approx") for g in (1, 0) for x in xs for s in range(32)])
    claims = {"ratio": Claim("ratio 2", kind="rate", value=2.0, tolerance=0.1), "flat": Claim("flat")}
    decls = [{"claim": "ratio", "experiment": "R", "rows": "g == 0", "num": "e == 'pure'", "den": "e == 'approx'",
              "x": "x", "y": "y", "n_boot": 50, "cell": "pure / approx"},
             {"claim": "ratio", "experiment": "R", "rows": "g == 0", "num": "e == 'pure'", "den": "e == 'none'",
              "x": "x", "y": "y", "n_boot": 50, "cell": "no second curve: no row"},
             {"claim": "flat", "experiment": "Q", "rows": "e == 'approx'", "by": ["g"], "quantile": 0.9, "x": "x",
              "y": "y", "n_boot": 50, "cell": "q90/mean, g = {g}"}]
    rows = boot_claims(df, decls, claims, np.random.default_rng(0))
    assert [(r["experiment"], r["cell"], r["n_seeds"]) for r in rows] == [
        ("R", "pure / approx", 32), ("Q", "q90/mean, g = 0", 32), ("Q", "q90/mean, g = 1", 32)]
    np.testing.assert_allclose([rows[0][k] for k in ("slope", "slope_lo", "slope_hi")], 2.0, rtol=1e-9)
    assert rows[0]["verdict"] == "not tested" and "no spread" in rows[0]["reason"]   # judged: [2, 2] is exact
    for r in rows[1:]:
        np.testing.assert_allclose([r[k] for k in ("slope", "slope_lo", "slope_hi")], 0.0, atol=1e-9)
