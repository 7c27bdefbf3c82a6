"""A run that fails before it finishes a chunk leaves nothing behind that would block the next run, and a study's
declared ranges agree with the engine's (issue: check before work)."""
from __future__ import annotations

import numpy as np
import pytest

from jaxdp.cli import main
from jaxdp.studies.framework import Study, run_study


def _study(fail: bool, T: int = 4) -> Study:
    def run(points, seeds):
        if fail:
            raise RuntimeError("the engine refused this point")
        return [{"regret": np.zeros(len(seeds))} for _ in points]

    return Study(name="fails-early", points=[{"T": T}], seeds=2, run=run, config={"T": T})


def test_a_run_that_fails_before_its_first_chunk_leaves_no_manifest(tmp_path):
    out = tmp_path / "new" / "dir"
    with pytest.raises(RuntimeError, match="refused"):
        run_study(_study(True), out, progress=False)
    assert not out.exists()
    existing = tmp_path / "existing"
    existing.mkdir()
    with pytest.raises(RuntimeError):
        run_study(_study(True), existing, progress=False)
    assert existing.exists() and not any(existing.iterdir())
    # the same directory then takes another configuration, and a finished run keeps its manifest
    res = run_study(_study(False, T=8), existing, progress=False, plot=False)
    assert res.complete and (existing / "manifest.json").exists()


def test_a_horizon_the_engine_cannot_count_is_refused_before_work(tmp_path, capsys):
    out = tmp_path / "hb"
    assert main(["study", "run", "hedge-baseline", "--quick", "--set", "T=2147483647", "--out", str(out),
                 "--no-progress"]) == 2
    assert "T" in capsys.readouterr().err and not out.exists()
