"""The results index's overview is generated from the kept manifests and the pages' verdict tables, and the
verdict counter reads every verdict table of a page's generated blocks. Files only: no JAX compile."""
import json

import pytest

from _helpers import ROOT
from jaxdp.studies.analysis import read_generated
from jaxdp.studies.overview import INDEX_PAGE, OVERVIEW_BLOCK, overview_table, verdict_counts


def test_index_overview_is_current_and_lists_every_kept_page():
    block = read_generated(INDEX_PAGE, OVERVIEW_BLOCK)
    assert block == overview_table().strip("\n"), "rerun jaxdp.studies.overview.publish_overview()"
    for d in (ROOT / "results").iterdir():
        if (d / "manifest.json").exists() and (ROOT / "docs" / "results" / f"{d.name}.md").exists():
            seeds = json.loads((d / "manifest.json").read_text())["seeds"]
            assert f"| [`{d.name}`]({d.name}.md) | {seeds} |" in block, d.name


def test_every_kept_page_has_verdicts():
    for d in (ROOT / "results").iterdir():
        page = ROOT / "docs" / "results" / f"{d.name}.md"
        if (d / "manifest.json").exists() and page.exists():
            assert verdict_counts(page)["rows"] > 0, f"{page.name}: no generated verdict table"


def test_counter_reads_generated_verdict_tables_only(tmp_path):
    p = tmp_path / "p.md"
    p.write_text("| a | verdict |\n|---|---|\n| x | **misses** |\n\n"          # outside a block: ignored
                 "<!-- BEGIN GENERATED: t -->\n| a | verdict | b |\n|---|---|---|\n| 1 | holds | z |\n"
                 "| 2 | holds: half-width 0.06 > 0.05 | z |\n| 3 | **misses**: why ([why](#m)) | z |\n"
                 "| 4 | holds by construction: planner | z |\n| 5 | not tested: no rate | z |\n"
                 "| 6 | consistent, unresolved: half-width 0.04 > 0.02 | z |\n\n"
                 "| c | d |\n|---|---|\n| holds | misses |\n<!-- END GENERATED: t -->\n")
    assert verdict_counts(p) == {"rows": 6, "holds": 2, "holds by construction": 1, "consistent, unresolved": 1,
                                 "misses": 1, "not tested": 1}
    p.write_text("<!-- BEGIN GENERATED: t -->\n| a | verdict |\n|---|---|\n| 1 | fine |\n<!-- END GENERATED: t -->\n")
    with pytest.raises(ValueError, match="verdict cell"):
        verdict_counts(p)
