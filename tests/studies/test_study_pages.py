"""The generated tables of the kept studies' docs pages are exactly what their kept results give, with no cell
left out, and the slopes of curves whose points share seed keys resample seed indices jointly. Pandas only: no
JAX compile."""
import importlib

import pandas as pd
import pytest

from _helpers import ROOT
from jaxdp.studies.analysis import _pow2, fmt_ci_of, markdown_table, publish_blocks, read_generated, stale_blocks


def _table_rows(block: str, header_start: str) -> list:
    """The data lines of the table of a block whose header starts with ``header_start``."""
    out, on = [], False
    for ln in block.splitlines():
        if ln.startswith(header_start):
            on = True
            continue
        if on and ln.startswith("|---"):
            continue
        if on and ln.startswith("| "):
            out.append(ln)
        elif on:
            break
    return out


def test_helpers(tmp_path):
    def fmt_ci(mean, lo, hi):
        return fmt_ci_of({"x_mean": mean, "x_lo": lo, "x_hi": hi}, "x")

    assert fmt_ci(-0.5, -0.6, -0.4) == "−0.500 [−0.600, −0.400]" and fmt_ci(1.0, 1.0, 1.0) == "1.000"
    assert fmt_ci(float("nan"), 0, 1) == "—"
    assert fmt_ci_of({"x": 0.25, "x_lo": 0.2, "x_hi": 0.3}, "x", digits=2) == "0.25 [0.20, 0.30]"
    assert markdown_table(["a", "b"], [[1, 2]]) == "| a | b |\n|---|---|\n| 1 | 2 |"
    with pytest.raises(ValueError, match="cells"):
        markdown_table(["a"], [[1, 2]])
    p = tmp_path / "p.md"
    p.write_text("<!-- BEGIN GENERATED: x -->\n<!-- END GENERATED: x -->\n")
    assert stale_blocks(p, {"x": "t", "y": "u"}) == ["x", "y"]
    assert publish_blocks(p, {"x": "t"}) == ["x"] and stale_blocks(p, {"x": "t"}) == []


# --------------------------------------------------------------------------- every page against its kept results

PAGES = {
    "lazy_batching": "lazy-batching",
    "lazy_figure1c": "lazy-figure1c",
    "lazy_figure1c_large": "lazy-figure1c-large",
    "hedge_baseline": "hedge-baseline",
    "mf_ftrl": "mf-ftrl",
    "bandits": "bandits",
    "lazy_figure1ab": "lazy-figure1ab",
    "realizable_findings": "realizable-findings",
    "real_experts": "real-experts",
}


@pytest.mark.parametrize("module", sorted(PAGES))
def test_generated_blocks_are_current(module):
    mod = importlib.import_module(f"jaxdp.studies.{module}")
    d = ROOT / "results" / PAGES[module]
    if not (d / "results.csv").exists():
        pytest.skip(f"no kept results in {d}")
    blocks = mod.page_blocks(d)
    assert set(blocks) == set(mod.BLOCKS)
    assert stale_blocks(mod.DOC_PAGE, blocks) == [], \
        f"{mod.DOC_PAGE.name}: stale generated blocks; rerun jaxdp.studies.{module}.publish()"


def test_lazy_batching_page_holds_every_cell():
    from jaxdp.studies import lazy_batching as m

    df = pd.read_csv(ROOT / "results" / "lazy-batching" / "results.csv")
    regret = read_generated(m.DOC_PAGE, m.BLOCKS[0])
    rows = _table_rows(regret, "| learner | T |")
    cells = df[["learner", "T"]].drop_duplicates()
    assert len(rows) == len(cells)
    for r in cells.itertuples(index=False):
        assert any(ln.startswith(f"| {r.learner} | {m._pow2(r.T)} |") for ln in rows), r
    slopes = read_generated(m.DOC_PAGE, m.BLOCKS[1])
    assert "resampled jointly" in slopes
    srows = _table_rows(slopes, "| learner | slope")
    assert sorted(ln.split(" | ")[0][2:] for ln in srows) == sorted(df["learner"].unique())


def test_lazy_figure1c_page_holds_every_cell():
    from jaxdp.studies import lazy_figure1c as m
    from jaxdp.studies.analysis import equal_expected_regret

    df = pd.read_csv(ROOT / "results" / "lazy-figure1c" / "results.csv")
    rows = _table_rows(read_generated(m.DOC_PAGE, m.BLOCKS[0]), "| learner | adversary |")
    cells = df[["learner", "adversary", "alpha"]].drop_duplicates()
    assert len(rows) == len(cells) == 36
    for r in cells.itertuples(index=False):
        assert any(ln.startswith(f"| {r.learner} | {r.adversary} | {r.alpha:g} |") for ln in rows), r
    # the prior template at alpha = 0.25 has Hedge's eta: its expected regret is Hedge's, and the page says so
    twins = equal_expected_regret(df, "sketch", "hedge", ["adversary", "alpha"], 1e-4)
    assert {a for _, a in twins} == {0.25}
    for adv, a in twins:
        assert "Hedge's, seed by seed" in next(ln for ln in rows if ln.startswith(f"| sketch | {adv} | {a:g} |"))
    terms = _table_rows(read_generated(m.DOC_PAGE, m.BLOCKS[1]), "| α | T |")
    assert len(terms) == len(df[(df["learner"] == "l2p_paper") & (df["adversary"] == "alternating")][
        ["alpha", "T"]].drop_duplicates())


def test_lazy_figure1c_large_page_holds_every_cell():
    from jaxdp.studies import lazy_figure1c_large as m

    df = pd.read_csv(ROOT / "results" / "lazy-figure1c-large" / "results.csv")
    local = read_generated(m.DOC_PAGE, m.BLOCKS[0])
    assert "resampled jointly" in local
    rows = _table_rows(local, "| α | T range |")
    Ts = sorted(df["T"].unique())
    assert len(rows) == df["alpha"].nunique() * (len(Ts) - 1)
    for a in df["alpha"].unique():
        for lo, hi in zip(Ts[:-1], Ts[1:]):
            assert any(ln.startswith(f"| {a:g} | {m._pow2(lo)}–{m._pow2(hi)} |") for ln in rows)
    model = _table_rows(read_generated(m.DOC_PAGE, m.BLOCKS[1]), "| α | T |")
    assert len(model) == len(df[["alpha", "T"]].drop_duplicates())


def test_hedge_baseline_page_holds_every_cell():
    from jaxdp.studies import hedge_baseline as m

    df = pd.read_csv(ROOT / "results" / "hedge-baseline" / "results.csv")
    rows = _table_rows(read_generated(m.DOC_PAGE, m.BLOCKS[0]), "| learner | adversary | d |")
    cells = df[["learner", "adversary", "d"]].drop_duplicates()
    assert len(rows) == len(cells)
    for r in cells.itertuples(index=False):
        assert any(ln.startswith(f"| {r.learner} | {r.adversary} | {r.d} |") for ln in rows), r
    # the dartboard's expected regret is Hedge's at every seed: every dartboard row says so
    from jaxdp.studies.analysis import equal_expected_regret
    twins = equal_expected_regret(df, "dartboard", "hedge", ["adversary", "d"], 1e-6)
    assert twins == {(a, d) for a, d in df[["adversary", "d"]].drop_duplicates().itertuples(index=False)}
    assert all("Hedge's E[regret], seed by seed" in ln for ln in rows if ln.startswith("| dartboard |"))


def test_mf_ftrl_page_holds_every_cell():
    from jaxdp.studies import mf_ftrl as m

    d = ROOT / "results" / "mf-ftrl"
    df = pd.read_csv(d / "results.csv")
    ratios = _table_rows(read_generated(m.DOC_PAGE, m.RATIO_BLOCK), "| sweep | instance |")
    points = df[["part", "env", "T", "eps"]].drop_duplicates()
    assert len(ratios) == len(points) == 15           # the eps sweep included
    for p in points.itertuples(index=False):
        sweep = "T" if p.part == "T" else "ε"
        assert any(ln.startswith(f"| {sweep} | {p.env} | {p.T} | {p.eps:g} |") for ln in ratios), p
    slopes = read_generated(m.DOC_PAGE, m.SLOPE_BLOCK)
    assert "resampled jointly" in slopes
    srows = _table_rows(slopes, "| sweep | mechanism |")
    n_T = len(df[df["part"] == "T"][["mechanism", "env"]].drop_duplicates())
    n_eps = df[df["part"] == "eps"]["mechanism"].nunique()
    assert len(srows) == n_T + n_eps


def test_bandits_page_holds_every_cell():
    from jaxdp.studies import bandits as m

    df = pd.read_csv(ROOT / "results" / "bandits" / "results.csv")
    t = _table_rows(read_generated(m.DOC_PAGE, m.BLOCKS[0]), "| learner | instance |")
    curves = df[df["sweep"] == "T"][["learner", "instance"]].drop_duplicates()
    assert len(t) == len(curves)
    for r in curves.itertuples(index=False):
        assert any(ln.startswith(f"| {m.LABELS[r.learner]} | {r.instance} |") for ln in t), r
    # a curve without a slope says why
    assert all(ln.split(" | ")[2] != "—" or "no log-log slope" in ln for ln in t)
    for sweep, block, header in (("eps", m.BLOCKS[1], "| learner | ε"), ("K", m.BLOCKS[2], "| learner | K")):
        rows = _table_rows(read_generated(m.DOC_PAGE, block), header)
        sub = df[df["sweep"] == sweep]
        assert sorted(ln.split(" | ")[0][2:] for ln in rows) == sorted(m.LABELS[x] for x in sub["learner"].unique())
        n_x = sub["eps" if sweep == "eps" else "K"].nunique()
        assert all(len(ln.split(" | ")) == n_x + 4 for ln in rows)
    assert "resampled jointly" in read_generated(m.DOC_PAGE, m.BLOCKS[0])
    assert f"of {len(df[['sweep', 'learner', 'instance', 'K', 'T', 'eps']].drop_duplicates())} points" in \
        read_generated(m.DOC_PAGE, m.BLOCKS[3])


def test_lazy_figure1ab_page_holds_every_cell():
    from jaxdp.studies import lazy_figure1ab as m

    df = pd.read_csv(ROOT / "results" / "lazy-figure1ab" / "results.csv")
    lin = df[df["loss"] == "linear"]
    rows = _table_rows(read_generated(m.DOC_PAGE, m.BLOCKS[0]), "| learner | adversary | panel |")
    cells = lin[["learner", "adversary", "panel", "alpha"]].drop_duplicates()
    assert len(rows) == len(cells)
    for r in cells.itertuples(index=False):
        assert any(ln.startswith(f"| {r.learner} | {r.adversary} | {r.panel} | {r.alpha:g} |") for ln in rows), r
    # the seed keys differ between horizons: the page must not claim a joint bootstrap
    assert "independent draws" in read_generated(m.DOC_PAGE, m.BLOCKS[0])
    ns = df[df["loss"] != "linear"]
    nrows = _table_rows(read_generated(m.DOC_PAGE, m.BLOCKS[1]), "| loss | α | T |")
    assert len(nrows) == len(ns[["loss", "T"]].drop_duplicates())


def test_realizable_findings_page_holds_every_cell():
    from jaxdp.studies import realizable_findings as m

    df = pd.read_csv(ROOT / "results" / "realizable-findings" / "results.csv")
    checks = (("adaptive", m.BLOCKS[0], "| learner | mode | L* | T |", ["learner", "mode", "Lstar", "T"]),
              ("potential", m.BLOCKS[1], "| learner | T | regret", ["learner", "T"]),
              ("binary_tree", m.BLOCKS[2], "| threshold | T |", ["mode", "T"]),
              ("oco", m.BLOCKS[3], "| instance | d |", ["learner", "d"]))
    for exp, block, header, keys in checks:
        rows = _table_rows(read_generated(m.DOC_PAGE, block), header)
        assert len(rows) == len(df[df["exp"] == exp][keys].drop_duplicates()), exp
    adaptive = read_generated(m.DOC_PAGE, m.BLOCKS[0])
    # paper mode: the page says printed and flipped are the same runs exactly when they are, seed by seed, and its
    # paired table counts the seeds that differ at every (L*, T)
    a = df[(df["exp"] == "adaptive") & (df["mode"] == "paper") & (df["learner"] != "sv_known_Lstar")]
    w = a.pivot_table(index=["Lstar", "T", "seed"], columns="learner", values="regret")
    same = bool((w["adaptive_printed"] == w["adaptive_flipped"]).all())
    assert same == ("In paper mode the printed and flipped tests give the same regret at every seed" in adaptive)
    nd = (w["adaptive_printed"] != w["adaptive_flipped"]).groupby(level=[0, 1]).sum()
    for (Ls, T), n in nd.items():
        assert f"| paper | {Ls:g} | {_pow2(T)} | {int(n)} |" in adaptive, (Ls, T, n)
    slopes = read_generated(m.DOC_PAGE, m.BLOCKS[4])
    assert "resampled jointly" in slopes
    n_fits = (df[df["exp"] == "adaptive"][["learner", "mode", "Lstar"]].drop_duplicates().shape[0]
              + df[df["exp"] == "potential"]["learner"].nunique() + df[df["exp"] == "binary_tree"]["mode"].nunique()
              + df[df["exp"] == "oco"]["learner"].nunique())
    assert len(_table_rows(slopes, "| fit | curve |")) == n_fits


def test_real_experts_page_holds_every_cell():
    from jaxdp.studies import real_experts as m

    df = pd.read_csv(ROOT / "results" / "real-experts" / "results.csv")
    tables = read_generated(m.DOC_PAGE, m.BLOCKS[0])
    n_eps = df["eps"].nunique()
    for ds in df["dataset"].unique():
        rows = _table_rows(tables.split(f"### {ds} ")[1], "| learner | ε")
        assert sorted(ln.split(" | ")[0][2:] for ln in rows) == sorted(df[df["dataset"] == ds]["learner"].unique())
        assert all(len(ln.split(" | ")) == n_eps + 1 for ln in rows)
    # learners that never switch play the same initial expert: identical runs, marked on the page
    sw = df.groupby(["dataset", "learner", "eps"])["switches"].max()
    for ds, g in sw[sw == 0].reset_index().groupby("dataset"):
        runs = [df[(df["dataset"] == ds) & (df["learner"] == r.learner) & (df["eps"] == r.eps)].sort_values("seed")[
            "regret"].to_numpy() for r in g.itertuples()]
        assert all((x == runs[0]).all() for x in runs), ds
    marks = sum(ln.count(" †") for ln in tables.splitlines() if ln.startswith("| "))
    frozen = sw[(sw == 0) & (sw.index.get_level_values("learner") != "hedge")]
    assert marks == len(frozen)
    comp = read_generated(m.DOC_PAGE, m.BLOCKS[1])
    tables_rows = [ln for ln in comp.splitlines() if ln.startswith("| ") and not ln.startswith("| dataset |")]
    assert len(tables_rows) == 2 * df["dataset"].nunique()
