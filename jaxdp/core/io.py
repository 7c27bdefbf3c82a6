"""Loading user data arrays (loss sequences, OCO data) from NumPy objects or files."""
from __future__ import annotations

import os
from typing import Any

import numpy as np

__all__ = ["load_array"]


def load_array(source: Any, what: str = "data") -> np.ndarray:
    """``source`` as a numeric 2-D NumPy array: an array-like, or a ``.npy``, ``.npz`` (first array),
    ``.csv`` or ``.txt`` file. Raises ``ValueError``/``TypeError`` naming ``what``."""
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise ValueError(f"{what} file {path!r} does not exist")
        if path.endswith(".npy"):
            arr = np.load(path)
        elif path.endswith(".npz"):
            with np.load(path) as z:
                arr = z[z.files[0]]
        elif path.endswith((".csv", ".txt")):
            arr = np.loadtxt(path, delimiter="," if path.endswith(".csv") else None, ndmin=2)
        else:
            raise ValueError(f"{what} file must end in .npy, .npz, .csv or .txt, got {path!r}")
    else:
        arr = source
    arr = np.asarray(arr)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.number):
        raise TypeError(f"{what} must be a numeric array, got dtype {arr.dtype}")
    return arr
