"""Public datasets bundled with scikit-learn and river (no download, ever).

``load_dataset(name)`` returns a :class:`Dataset` with standardized features. Every dataset here
ships inside the installed package (scikit-learn's ``sklearn/datasets/data`` and ``descr`` files;
river's ``river/datasets/*.csv.gz`` / ``*.zip``), so nothing touches the network. Install the
optional extra with ``pip install "jaxdp[data]"``.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib

import numpy as np

__all__ = ["Dataset", "DATASETS", "load_dataset", "available_datasets"]

# name -> (package, loader, task)
DATASETS = {
    "digits": ("sklearn", "load_digits", "classification"),
    "breast_cancer": ("sklearn", "load_breast_cancer", "classification"),
    "wine": ("sklearn", "load_wine", "classification"),
    "iris": ("sklearn", "load_iris", "classification"),
    "diabetes": ("sklearn", "load_diabetes", "regression"),
    "phishing": ("river", "Phishing", "classification"),
    "bananas": ("river", "Bananas", "classification"),
    "trump_approval": ("river", "TrumpApproval", "regression"),
}


@dataclasses.dataclass(frozen=True)
class Dataset:
    """Features ``X`` (n, p) standardized to mean 0 / std 1 per column (constant columns left at 0);
    labels ``y``: int classes ``0..n_classes-1`` (classification) or float (regression, raw units).

    Attributes:
        name: the dataset's name (one of :data:`DATASETS`).
        X: features, shape ``(n, p)``, standardized per column.
        y: labels: int classes ``0..n_classes-1`` or floats (regression, raw units).
        task: ``"classification"`` or ``"regression"``.
        n_classes: the number of classes (classification).
        source: the package the data comes from.
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    task: str
    n_classes: int
    source: str

    @property
    def n(self) -> int:
        return int(self.X.shape[0])


def _need(pkg: str):
    try:
        return importlib.import_module(f"{pkg}.datasets")
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise ImportError(f"dataset loading needs {pkg}: pip install 'jaxdp[data]'") from e


def available_datasets() -> list[str]:
    """The names whose package is importable.

    Returns:
        The names of the datasets whose package is importable.
    """
    out = []
    for name, (pkg, _, _) in DATASETS.items():
        try:
            _need(pkg)
        except ImportError:
            continue
        out.append(name)
    return out


def _standardize(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, np.float64)
    mu, sd = X.mean(axis=0), X.std(axis=0)
    return (X - mu) / np.where(sd > 0, sd, 1.0)


@functools.lru_cache(maxsize=None)
def load_dataset(name: str) -> Dataset:
    """Load one bundled dataset (cached). ``name`` is one of :data:`DATASETS`.

    Args:
        name: one of :data:`DATASETS`.

    Returns:
        The :class:`Dataset`.

    Raises:
        ValueError: if ``name`` is not a known dataset.
    """
    if not isinstance(name, str) or name not in DATASETS:
        raise ValueError(f"name must be one of {sorted(DATASETS)}, got {name!r}")
    pkg, loader, task = DATASETS[name]
    mod = _need(pkg)
    if pkg == "sklearn":
        X, y = getattr(mod, loader)(return_X_y=True)
    else:
        ds = getattr(mod, loader)()
        rows = list(ds)                       # a FileDataset: read from the package's bundled file
        keys = sorted(rows[0][0])
        X = np.array([[float(x[k]) for k in keys] for x, _ in rows])
        y = np.array([yy for _, yy in rows])
    if task == "classification":
        classes, y = np.unique(np.asarray(y), return_inverse=True)
        y = y.astype(np.int32)
        K = int(len(classes))
    else:
        y = np.asarray(y, np.float64)
        K = 0
    return Dataset(name=name, X=_standardize(X), y=y, task=task, n_classes=K, source=f"{pkg}.{loader}")
