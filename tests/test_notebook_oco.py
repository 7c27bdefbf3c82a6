"""Execute notebooks/oco.ipynb at small size (JAXDP_NB_SMALL=1)."""
import os
import pathlib

import nbformat
from nbclient import NotebookClient


def test_oco_notebook_runs():
    path = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "oco.ipynb"
    nb = nbformat.read(path, as_version=4)
    os.environ["JAXDP_NB_SMALL"] = "1"
    try:
        NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    finally:
        os.environ.pop("JAXDP_NB_SMALL", None)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not any(o.get("output_type") == "error" for o in outputs)
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "fitted slopes" in text and "regret:" in text
