"""Old import paths (jaxdp 1.0 moved them; CHANGELOG.md lists every move) keep working for one release:
each import warns with a DeprecationWarning naming the new path and gives the new modules' own objects."""
import importlib
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
    parent = old.rpartition(".")[0]
    if parent != "jaxdp":
        with warnings.catch_warnings():     # the parent's own warning is another test's
            warnings.simplefilter("ignore")
            importlib.import_module(parent)
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
