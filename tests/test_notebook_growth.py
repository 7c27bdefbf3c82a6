"""The GROWTH notebook runs top to bottom at small size."""
import pathlib

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NB = pathlib.Path(__file__).resolve().parent.parent / "notebooks" / "growth.ipynb"


def test_growth_notebook_executes(monkeypatch):
    monkeypatch.setenv("JAXDP_NB_SMALL", "1")
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    nb = nbformat.read(NB, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(NB.parent)}}).execute()
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "slope=" in outputs and "ERM excess" in outputs
