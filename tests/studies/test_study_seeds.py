"""Seeds and interval widths of the kept ``growth-rates``, ``label-dp-rates`` and ``label-dp-rates-heavy`` runs:
at least 1024 (growth) and 256 (label DP) seeds per point, the manifest states them and the widest 95% half-width,
and every tested cell's half-width is at most 0.05 or its verdict says why. Reads files only."""
import json

import pandas as pd
import pytest

from _helpers import ROOT
from jaxdp.registry import get_study
# Kept runs checked at their target size (``label-dp-rates-heavy``: L3, ε = 0.1, N to 3·10⁵).
MIN_SEEDS = {"growth-rates": 1024, "label-dp-rates": 256, "label-dp-rates-heavy": 256}
# The other kept runs and their seeds per point. Below 256 (the target for every study but the README's default
# study, hedge-baseline) they are still to be rerun; the test fails when a kept run's seeds change, so a rerun
# updates this table (and, with verdict tables, moves into MIN_SEEDS).
OTHER_KEPT = {
    "adaptive-regret": 256, "bandits": 256, "hedge-baseline": 64, "lazy-batching": 1024, "lazy-figure1ab": 256, "lazy-figure1c": 256,
    "lazy-figure1c-large": 256, "lazy-switching": 256, "mf-ftrl": 256, "real-experts": 256, "real-label-dp": 256,
    "realizable-experts": 256, "realizable-findings": 256, "realizable-oco": 256,
    "compare-experts": 64, "compare-oco-ball": 64,   # `jaxdp compare` runs (docs/results/leaderboard*.md), not studies
}
# A verdict's ``n_seeds`` counts the seeds with a finite result at every point of its curve. Runs that refuse
# (growth-rates: a phase the solver could not certify returns NaN; docs/algorithms/growth.md) are dropped, and
# the tables show the count; at most this share of a point's seeds may be lost that way.
MAX_REFUSED = 0.01
TESTED = ("holds", "holds by construction", "misses")


@pytest.mark.parametrize("study,seeds", [("growth-rates", 1024), ("label-dp-rates", 256)])
def test_default_seeds(study, seeds):
    assert get_study(study).extra["defaults"]["seeds"] >= seeds


@pytest.mark.parametrize("name", sorted(MIN_SEEDS))
def test_kept_run_seeds_and_intervals(name):
    d = ROOT / "results" / name
    manifest = json.loads((d / "manifest.json").read_text())
    assert not manifest["config"].get("quick", False)
    assert manifest["seeds"] >= MIN_SEEDS[name], f"{name}: {manifest['seeds']} seeds per point"
    ci = manifest.get("ci")
    assert ci and ci["seeds_per_point"] == manifest["seeds"] and ci["level"] == 0.95, f"{name}: manifest lacks 'ci'"
    run = pd.read_csv(d / "results.csv", usecols=["point", "seed"])
    assert run.groupby("point")["seed"].nunique().min() >= MIN_SEEDS[name], f"{name}: a point has fewer seeds"
    v = pd.read_csv(d / "verdicts.csv")
    short = v[v["n_seeds"] < MIN_SEEDS[name]]
    assert (short["n_seeds"] >= (1 - MAX_REFUSED) * MIN_SEEDS[name]).all(), \
        f"{name}: cells with too few finite seeds: {short[['experiment', 'cell', 'n_seeds']].values.tolist()}"
    t = v[v["verdict"].isin(TESTED)]
    hw = (t["slope_hi"] - t["slope_lo"]) / 2
    assert abs(ci["max_halfwidth"] - round(float(hw.max()), 4)) < 1e-9
    wide = t[(hw > 0.05) & ~t["reason"].fillna("").str.contains("half-width")]
    assert wide.empty, f"{name}: half-width > 0.05 without a reason: {wide[['experiment', 'cell']].values.tolist()}"


def test_every_kept_run_states_its_seeds():
    """Every kept results directory is listed, with the seeds per point its manifest states."""
    kept = {d.name: json.loads((d / "manifest.json").read_text())["seeds"]
            for d in (ROOT / "results").iterdir() if (d / "manifest.json").exists()}
    assert set(kept) == set(MIN_SEEDS) | set(OTHER_KEPT), sorted(set(kept) ^ (set(MIN_SEEDS) | set(OTHER_KEPT)))
    assert {k: kept[k] for k in OTHER_KEPT} == OTHER_KEPT
