"""Every notebook runs top to bottom at small size (``JAXDP_NB_SMALL=1``) and shows its results,
figures included: each plot cell leaves an inline PNG, in a fresh run and in the stored notebook
(which the docs render)."""
import pytest

from _helpers import ROOT

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NB_DIR = ROOT / "notebooks"

# notebook -> strings its printed output must contain
# notebook -> number of figures (inline PNG outputs) it shows
FIGURES = {"quickstart.ipynb": 1, "experts.ipynb": 3, "oco.ipynb": 1, "growth.ipynb": 1, "label_dp.ipynb": 1}
EXPECTED = {
    "quickstart.ipynb": ["slope", "regret="],
    "experts.ipynb": [],
    "oco.ipynb": ["fitted slopes", "regret:"],
    "growth.ipynb": ["slope=", "ERM excess"],
    "label_dp.ipynb": ["slope=", "excess="],
}


def test_every_notebook_is_tested():
    assert sorted(p.name for p in NB_DIR.glob("*.ipynb")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_notebook_executes(name, monkeypatch):
    monkeypatch.setenv("JAXDP_NB_SMALL", "1")
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    nb = nbformat.read(NB_DIR / name, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(NB_DIR)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not any(o.get("output_type") == "error" for o in outputs)
    text = "".join(o.get("text", "") for o in outputs)
    for s in EXPECTED[name]:
        assert s in text, f"{name}: expected {s!r} in the output"
    assert _n_figures(nb) >= FIGURES[name], f"{name}: its figures are not shown inline"


def _n_figures(nb) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code"
               for o in c.get("outputs", []))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_stored_notebook_shows_its_figures(name):
    """The committed notebooks are executed, with their figures stored (the docs show them as they are)."""
    nb = nbformat.read(NB_DIR / name, as_version=4)
    assert _n_figures(nb) >= FIGURES[name], f"{name}: re-execute it so its figures are stored"
    assert not any(o.get("output_type") == "error" for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []))
    assert (NB_DIR / name).stat().st_size < 400_000, f"{name}: keep stored outputs small"
