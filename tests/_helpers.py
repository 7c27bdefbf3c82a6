"""Helpers shared by several test modules: the repository root, loading a benchmark script, the checks every study's
verdict table gets (its data rows, its misses' links, its page generated from the kept run), and the small
Bernoulli experts problem (with a Hedge-like ``params`` pytree) that hand-written test learners are run on."""
import importlib.util
import pathlib
import re
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jaxdp.experts import BernoulliParams, bernoulli_experts, experts_problem
from jaxdp.studies.analysis import stale_blocks


ROOT = pathlib.Path(__file__).resolve().parents[1]
"""The repository root (this file is ``tests/_helpers.py``); test modules in subfolders of ``tests/`` find
``benchmarks/``, ``docs/``, ``results/`` and the rest from it."""


def load_benchmark(name: str):
    """``benchmarks/<name>.py`` imported as the module ``name`` (the benchmark scripts are not a package)."""
    path = ROOT / "benchmarks" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


WHY_LINK = re.compile(r"\(\[why\]\(([^)]*)\)\)")
"""A verdict's link to its explanation, `` ([why](target))``, as :func:`jaxdp.studies.analysis.verdict_table` writes
it; group 1 is the target (``#anchor`` or ``../dir/page.md#anchor``)."""

VERDICT_HEADER = "| experiment |"
"""How the header line of a verdict table starts."""


def verdict_rows(block: str) -> list:
    """The data lines of the verdict table in the generated ``block`` (text, as ``read_generated`` returns it).

    Asserts that the block holds exactly one verdict table (one header line starting with :data:`VERDICT_HEADER`);
    returns every line that starts with ``"| "`` but the header (the ``|---|`` separator does not).
    """
    lines = block.splitlines()
    assert sum(ln.startswith(VERDICT_HEADER) for ln in lines) == 1, "not one verdict table in the block"
    return [ln for ln in lines if ln.startswith("| ") and not ln.startswith(VERDICT_HEADER)]


def the_row(rows: list, prefix: str) -> str:
    """The one line of ``rows`` (e.g. :func:`verdict_rows`) that starts with ``prefix``; asserts there is exactly one."""
    match = [ln for ln in rows if ln.startswith(prefix)]
    assert len(match) == 1, f"{len(match)} rows start with {prefix!r}"
    return match[0]


def one_row_each(rows: list, fits, prefix) -> list:
    """Pair each fitted cell with its verdict row: asserts that ``rows`` (e.g. :func:`verdict_rows`) has as many lines
    as the DataFrame ``fits`` and exactly one starting with ``prefix(fit)`` for each of its rows (namedtuples).

    Returns:
        ``[(fit, row), ...]`` in the order of ``fits``.
    """
    assert len(rows) == len(fits), f"{len(rows)} rows for {len(fits)} fitted cells"
    return [(r, the_row(rows, prefix(r))) for r in fits.itertuples(index=False)]


def anchor_exists(link: str, page) -> bool:
    """Whether ``link`` names an anchor that exists: ``#anchor`` on ``page`` itself, or ``../dir/other.md#anchor``
    relative to ``page``'s folder; the target must be a file of the repository and contain ``{#anchor}``, and the
    anchor must not be empty."""
    page = pathlib.Path(page).resolve()
    target, _, anchor = link.partition("#")
    path = page if not target else (page.parent / target).resolve()
    return (bool(anchor) and path.is_relative_to(ROOT) and path.is_file()
            and ("{#" + anchor + "}") in path.read_text(encoding="utf-8"))


def miss_links_resolve(page, block: str, *, only_misses: bool = False) -> list:
    """Assert that the verdict table of ``block`` (a generated block of the docs ``page``) links every miss to a
    section that exists, and return the misses' links.

    Every ``[why](...)`` link anywhere in the block must name an existing anchor (:func:`anchor_exists`), and every
    row whose verdict is ``**misses**`` must carry exactly one. With ``only_misses``, no other row may carry one.

    Returns:
        The link targets of the miss rows, one per miss, in the table's order (empty when nothing misses).
    """
    for link in WHY_LINK.findall(block):
        assert anchor_exists(link, page), f"{link} (from {page}) names no anchor that exists"
    links = []
    for ln in verdict_rows(block):
        found = WHY_LINK.findall(ln)
        if "**misses**" in ln:
            assert len(found) == 1, f"a miss needs exactly one [why] link: {ln}"
            links.append(found[0])
        else:
            assert not (only_misses and found), f"only misses carry a [why] link: {ln}"
    return links


def assert_page_current(module, *required: str) -> dict:
    """Assert that a study's docs page is generated from the kept run, and return its blocks.

    ``module`` is a study module (``jaxdp.studies.<name>``) with ``BLOCKS``, ``DOC_PAGE`` and ``page_blocks()``:
    the blocks that ``page_blocks()`` builds from the kept results must be exactly ``BLOCKS``, and every one must
    stand on the page as built (``stale_blocks`` is ``[]``). Each name of ``required`` must be one of ``BLOCKS``.

    Returns:
        ``{block name: body}`` as ``page_blocks()`` built it.
    """
    for name in required:
        assert name in module.BLOCKS, name
    blocks = module.page_blocks()
    assert set(blocks) == set(module.BLOCKS)
    assert stale_blocks(module.DOC_PAGE, blocks) == [], f"rerun {module.__name__}.publish()"
    return blocks


D = 4
ADV = bernoulli_experts(D)
AP = BernoulliParams(gap=jnp.float32(0.1))
PROB = experts_problem()


class P(NamedTuple):
    eta: jax.Array


PARAMS = [P(eta=jnp.float32(0.3)), P(eta=jnp.float32(0.1))]


def chi2_p(counts, probs, min_expected: float = 20.0) -> float:
    """Goodness-of-fit p-value of ``counts`` against ``probs``; cells with small expectation are pooled."""
    from scipy import stats

    counts, probs = np.asarray(counts, float), np.asarray(probs, float)
    n = counts.sum()
    big = probs * n >= min_expected
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(probs[big] * n, probs[~big].sum() * n)
    keep = exp > 0
    return stats.chisquare(obs[keep], exp[keep] * obs[keep].sum() / exp[keep].sum()).pvalue
