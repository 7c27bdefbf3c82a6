"""The ``bandits`` study at a tiny size: it runs, resumes from its chunks, writes its tables and plots, and its
tables give one verdict of the rubric per fitted curve."""
import pathlib

import numpy as np

from jaxdp import registry
from jaxdp.studies import bandits as B
from jaxdp.studies.claims import VERDICTS
from jaxdp.studies.framework import resolve_config, run_study

TINY = {"seeds": "3", "learners": "ucb1,dp_se", "instances": "linspace", "T": "64,128", "eps_sweep": "0.5,2",
        "eps_T": "128", "K_sweep": "2,3", "K_T": "96"}


def _study():
    e = registry.get_study("bandits")
    return e.fn(resolve_config("bandits", e.extra["defaults"], e.extra["quick"], True, TINY))


def test_bandits_study_runs_and_resumes(tmp_path):
    st = _study()
    assert {p["sweep"] for p in st.points} == {"T", "eps", "K"}
    part = run_study(st, tmp_path, progress=False, plot=False, max_chunks=2)
    assert not part.complete
    before = {p.name: p.read_bytes() for p in (tmp_path / "chunks").iterdir()}
    res = run_study(_study(), tmp_path, progress=False, plot=True)
    assert res.complete and res.chunks_skipped == 2
    for name, data in before.items():      # finished chunks are kept byte for byte
        assert (tmp_path / "chunks" / name).read_bytes() == data
    df = res.df
    assert len(df) == len(st.points) * 3 and np.all(np.isfinite(df["regret"]))
    slopes, summ = res.tables["slopes"], res.tables["summary"]
    assert set(slopes["sweep"]) == {"T", "eps", "K"}
    lin = summ[(summ["sweep"] == "T") & (summ["instance"] == "linspace") & (summ["learner"] == "ucb1")]
    assert np.all(lin["theory"] > 0) and np.all(lin["regret_mean"] <= lin["theory"])
    assert any(pathlib.Path(p).name == "regret_vs_eps.png" for p in res.plots)
    # the run's own tables are what the verdicts read: one row per fitted curve, each a verdict of the rubric
    v = B.verdicts(slopes, B.flagged(summ, float(st.config["gap"])))
    assert len(v) == len(slopes) and set(v["verdict"]) <= set(VERDICTS)
    lin = v[v["cell"] == "UCB1, linspace"]
    assert list(lin["experiment"]) == ["regret / bound over T"] and list(lin["verdict"]) == ["holds"]
