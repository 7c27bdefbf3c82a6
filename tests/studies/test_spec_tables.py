"""StudySpec's generic pieces: a page table declared as [header, cell] pairs, and a study's Study from its spec."""
import pandas as pd

from jaxdp.studies.specs import StudySpec


def test_table_cells_are_f_strings_on_the_rows():
    S = StudySpec("lazy-batching", "jaxdp.studies.lazy_batching")
    S.data["columns"]["t"] = [["x", "{x:.1f}"], ["y [95% CI]", "{ci('y', 2)}"], ["T", "{pow2(T)}"],
                              ["note", "{'big' if x > 1 else '—'}"]]
    df = pd.DataFrame({"x": [0.5, 2.0], "y_mean": [1.0, -2.0], "y_lo": [0.5, -3.0], "y_hi": [1.5, -1.0],
                       "T": [1024, 1000]})
    assert S.table("t", df) == ("| x | y [95% CI] | T | note |\n|---|---|---|---|\n"
                                "| 0.5 | 1.00 [0.50, 1.50] | 2^10 | — |\n"
                                "| 2.0 | −2.00 [−3.00, −1.00] | 1000 | big |")
    # hand-built rows still work, headers filled from the values
    S.data["columns"]["h"] = ["T = {T}"]
    assert S.table("h", [["a"]], T=4) == "| T = 4 |\n|---|\n| a |"


def test_table_column_per_value():
    """A ``per`` column is one column per sorted value of its data column; rows are the other columns' distinct
    cells in order of first appearance, a missing cell is empty; without ``per`` no rows merge."""
    S = StudySpec("lazy-batching", "jaxdp.studies.lazy_batching")
    S.data["columns"]["p"] = [["name", "{k}"], {"per": "eps", "header": "ε = {eps:g}", "cell": "{num(v, 2)}"}]
    df = pd.DataFrame({"k": ["b", "b", "a", "a", "b"], "eps": [3.0, 0.5, 0.5, 3.0, 10.0], "v": [1, 2, 3, 4, 5]})
    assert S.table("p", df) == ("| name | ε = 0.5 | ε = 3 | ε = 10 |\n|---|---|---|---|\n"
                                "| b | 2.00 | 1.00 | 5.00 |\n| a | 3.00 | 4.00 |  |")
    S.data["columns"]["q"] = [["name", "{k}"]]
    assert S.table("q", df).count("| b |") == 3


def test_study_takes_the_declarations_of_its_spec():
    from jaxdp.studies import hedge_baseline as H
    from jaxdp.studies.config import resolve_config

    cfg = resolve_config(H.S.name, H.S.defaults, H.S.quick, True, {})
    st = H.build(cfg)
    assert (st.name, st.group_by, st.description, st.seeds) == (
        "hedge-baseline", tuple(H.S.data["group_by"]), H.S.description, int(cfg["seeds"]))
    assert st.points == H.S.points(cfg) and st.config is cfg
