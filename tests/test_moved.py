"""Old import paths (jaxdp 1.0 moved them; CHANGELOG.md lists every move) keep working for one release:
each import warns with a DeprecationWarning naming the new path and gives the new modules' own objects."""
import importlib
import pathlib
import subprocess
import sys
import warnings

import pytest

from jaxdp import _moved

# the public names of the two paper packages before 1.0 (their __all__ lists)
OLD_ALL = {
    "jaxdp.lazy": [
        "LazyMeasure", "L2PParams", "L2PState", "l2p", "l2p_params", "MWMeasureParams", "mw_measure", "l2p_mw",
        "l2p_mw_params", "l2p_mw_regret_bound", "l2p_mw_paper_regret", "alternating_prediction",
        "batch_aligned_prediction", "shrinking_dartboard", "plan_l2p_mw", "L2P_MW_MODES", "l2p_mw_eps0",
        "SketchParams", "SketchState", "private_lazy_sketch", "sketch_params", "TreeFTRLParams", "TreeFTRLState",
        "tree_ftrl_experts", "tree_ftrl_params", "FIGURE1_PANELS", "figure1_exponents"],
    "jaxdp.realizable": [
        "SVExpertsParams", "SVExpertsState", "sparse_vector_experts", "sparse_vector_params", "AdaptiveSVParams",
        "AdaptiveSVState", "adaptive_sparse_vector_experts", "adaptive_sparse_vector_params", "PotentialParams",
        "PotentialState", "potential_experts", "potential_params", "BinaryTreeParams", "BinaryTreeState",
        "binary_tree_experts", "binary_tree_params", "plan_sparse_vector_experts",
        "plan_adaptive_sparse_vector_experts", "plan_potential_experts", "plan_binary_tree_experts",
        "params_from_plan", "binary_tree_static", "thm1_bound", "thm2_bound", "thm6_bound", "lower_bound_thm5"],
    "jaxdp.realizable.planners": [
        "plan_sparse_vector_experts", "plan_adaptive_sparse_vector_experts", "plan_potential_experts",
        "plan_binary_tree_experts", "params_from_plan", "binary_tree_static", "sparse_vector_static",
        "sparse_vector_ledger", "potential_ledger", "potential_settings", "thm1_bound", "thm2_bound", "thm6_bound",
        "lower_bound_thm5"],
}


@pytest.mark.parametrize("old", sorted(_moved.MOVED))
def test_old_path_warns_and_gives_the_new_objects(old):
    # the parent's own warning (jaxdp.lazy for jaxdp.lazy.l2p) is not this test's: import it first, quietly
    # (pytest.warns re-emits a warning it did not match, and the configuration makes it an error)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        importlib.import_module(old.rpartition(".")[0])
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=old.replace(".", r"\.") + " moved"):
        mod = importlib.import_module(old)
    new = [importlib.import_module(n) for n in _moved.MOVED[old]]
    names = OLD_ALL.get(old) or [n for m in new for n in getattr(m, "__all__", [])]
    assert names
    for name in names:
        owner = next(m for m in new if hasattr(m, name))
        assert getattr(mod, name) is getattr(owner, name), (old, name)
    with pytest.raises(AttributeError, match="no attribute"):
        getattr(mod, "no_such_name")


def test_moved_packages_map_every_submodule():
    for old, new in _moved.MOVED_PACKAGES.items():
        assert _moved.new_location(old + ".x.y") == (new + ".x.y",)
    assert _moved.new_location("jaxdp.experts") is None


def test_old_submodule_import_leaves_the_new_package_alone():
    # importing jaxdp.lazy.l2p must not rebind jaxdp.experts.l2p (the function) to a module
    code = ("import warnings; warnings.simplefilter('ignore'); import jaxdp.lazy.l2p, jaxdp.realizable.potential; "
            "import jaxdp.experts as E; assert callable(E.l2p) and not hasattr(E.l2p, '__path__'); "
            "assert callable(E.potential_experts); from jaxdp.lazy.l2p import L2PParams; assert L2PParams is E.L2PParams")
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------ out of the package: benchmarks/ of the checkout


def test_bench_and_dpsniper_moved_to_the_checkouts_benchmarks():
    assert _moved.new_location("jaxdp.bench") == ("benchmarks.harness",)
    assert _moved.new_location("jaxdp.bench.suite") == ("benchmarks.harness.suite",)
    assert _moved.new_location("jaxdp.privacy.audit.dpsniper") == ("benchmarks.harness.dpsniper",)
    assert _moved.new_location("jaxdp.audit.dpsniper") == ("benchmarks.harness.dpsniper",)   # not via privacy.audit
    assert _moved.checkout_root() == pathlib.Path(_moved.__file__).resolve().parents[1]
    for old in [m for m in sys.modules if m == "jaxdp.bench" or m.startswith("jaxdp.bench.")]:
        sys.modules.pop(old)
    with pytest.warns(DeprecationWarning, match=r"jaxdp\.bench moved in jaxdp 1\.0 to benchmarks\.harness;"):
        import jaxdp.bench as old
    with pytest.warns(DeprecationWarning, match=r"jaxdp\.bench\.suite moved in jaxdp 1\.0 to benchmarks\.harness\.suite"):
        import jaxdp.bench.suite as old_suite
    import benchmarks.harness as H
    import benchmarks.harness.suite as S

    assert old_suite.run_suite is S.run_suite and old_suite.CASE_NAMES is S.CASE_NAMES
    assert old.rows_to_markdown is H.rows_to_markdown      # a name the harness's __init__ loads on first use


def test_old_dpsniper_names_of_the_audit_package():
    code = ("import warnings; import jaxdp.privacy.audit as A\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always'); s = A.DPSNIPER_SUITE\n"
            "assert any('jaxdp.privacy.audit.dpsniper moved in jaxdp 1.0 to benchmarks.harness.dpsniper' in str(x.message)"
            " and x.category is DeprecationWarning for x in w), [str(x.message) for x in w]\n"
            "from benchmarks.harness import dpsniper as D; assert s is D.SUITE and A.dpsniper.laplace is D.laplace\n"
            "from jaxdp import registry; assert set(D.suite_names()) <= set(registry.AUDITS)")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_outside_a_checkout_the_old_paths_and_commands_name_benchmarks(monkeypatch, capsys):
    """An installed package has no benchmarks/: the old paths raise ImportError, the commands exit with status 2."""
    from jaxdp.cli import main

    monkeypatch.setattr(_moved, "checkout_root", lambda: None)
    for old in [m for m in sys.modules if m == "jaxdp.bench" or m.startswith("jaxdp.bench.")
                or m in ("jaxdp.privacy.audit.dpsniper", "jaxdp.audit.dpsniper")]:
        monkeypatch.delitem(sys.modules, old)
    for old in ("jaxdp.bench", "jaxdp.bench.common", "jaxdp.privacy.audit.dpsniper"):
        with pytest.raises(ImportError, match=r"moved in jaxdp 1\.0 to benchmarks\.harness.*, out of the package: "
                                              r"the benchmark harness lives in benchmarks/"):
            importlib.import_module(old)
    capsys.readouterr()
    for argv, what in [(["bench", "--quick"], "jaxdp bench"), (["audit", "--suite", "dpsniper"], "jaxdp audit --suite"),
                       (["audit", "dpsniper-laplace", "--quick"], "jaxdp audit dpsniper-laplace")]:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"jaxdp: error: {what}") and "runs from a source checkout" in err and "benchmarks/" in err
    assert main(["audit", "--list"]) == 0 and "laplace_half_scale" in capsys.readouterr().out
