"""Write one marked section of benchmarks/SCALING.md or benchmarks/RESULTS.md (shared by bench_scaling.py and
bench_multiprocess.py)."""
from __future__ import annotations

import pathlib

SCALING_MD = pathlib.Path(__file__).resolve().parent / "SCALING.md"
RESULTS_MD = pathlib.Path(__file__).resolve().parent / "RESULTS.md"
_HEAD = "# jaxdp scaling measurements\n\nWritten by `benchmarks/bench_scaling.py` and `benchmarks/bench_multiprocess.py`.\n"


def write_section(name: str, body: str, path: pathlib.Path = SCALING_MD, head: str = _HEAD) -> None:
    """Replace (or append) the section between ``<!-- name -->`` and ``<!-- /name -->`` (a missing file
    starts with ``head``)."""
    path = pathlib.Path(path)
    start, end = f"<!-- {name} -->", f"<!-- /{name} -->"
    text = path.read_text() if path.exists() else head
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        i, j = text.index(start), text.index(end) + len(end)
        text = text[:i] + block + text[j:]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


def table(rows: list[dict], cols: list[str]) -> str:
    def fmt(v):
        if isinstance(v, float):
            return f"{v:.3g}"
        return str(v)

    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    out += ["| " + " | ".join(fmt(r.get(c, "")) for c in cols) + " |" for r in rows]
    return "\n".join(out)
