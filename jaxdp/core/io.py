"""Loading user data arrays (loss sequences, OCO data) from NumPy objects or files.

Every error names the file (or ``what`` for in-memory arrays), what is wrong and the fix.
"""
from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

__all__ = ["load_array"]

_EXTS = (".npy", ".npz", ".csv", ".txt")


def _read_text_table(path: str, what: str, delimiter: Optional[str], skip_header: int) -> np.ndarray:
    """A numeric table from a CSV/whitespace text file; errors name the file, the row and the fix."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except UnicodeDecodeError:
        raise ValueError(f"{what} file {path!r} is not a text file; save it as .csv, .txt or .npy") from None
    rows, width, first_row = [], None, None
    for i, line in enumerate(lines, start=1):
        if i <= skip_header:
            continue
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        cells = [c.strip() for c in (text.split(delimiter) if delimiter else text.split())]
        try:
            vals = [float(c) for c in cells]
        except ValueError:
            bad = next(c for c in cells if not _is_float(c))
            hint = (f"; if the file has a header row, pass skip_header=1" if first_row is None
                    else "; every cell must be a number")
            raise ValueError(f"{what} file {path!r}, row {i}: {bad!r} is not a number{hint}") from None
        if width is None:
            width, first_row = len(vals), i
        elif len(vals) != width:
            raise ValueError(f"{what} file {path!r}, row {i}: {len(vals)} columns, but row {first_row} has {width}; "
                             f"every row needs the same number of columns")
        rows.append(vals)
    if not rows:
        raise ValueError(f"{what} file {path!r} has no data rows" + (f" after skip_header={skip_header}"
                                                                      if skip_header else ""))
    return np.asarray(rows, dtype=np.float64)


def _is_float(c: str) -> bool:
    try:
        float(c)
        return True
    except ValueError:
        return False


def load_array(source: Any, what: str = "data", *, key: Optional[str] = None, skip_header: int = 0) -> np.ndarray:
    """``source`` as a numeric NumPy array (at least 1 row and 1 column when 2-D).

    ``source`` is an array-like, or a file: ``.npy``; ``.npz`` (exactly one array, or
    name it with ``key=``); ``.csv`` (comma-separated) or ``.txt`` (whitespace), with
    ``skip_header`` leading rows skipped and ``#`` comments ignored.
    Raises ``ValueError``/``TypeError`` naming ``what``, the file, and the fix.
    """
    if isinstance(skip_header, bool) or not isinstance(skip_header, (int, np.integer)) or skip_header < 0:
        raise ValueError(f"skip_header must be an integer >= 0, got {skip_header!r}")
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise ValueError(f"{what} file {path!r} does not exist")
        if not path.endswith(_EXTS):
            raise ValueError(f"{what} file {path!r} must end in .npy, .npz, .csv or .txt")
        if key is not None and not path.endswith(".npz"):
            raise ValueError(f"key={key!r} applies only to .npz files, not {path!r}")
        try:
            if path.endswith(".npy"):
                arr = np.load(path, allow_pickle=False)
            elif path.endswith(".npz"):
                with np.load(path, allow_pickle=False) as z:
                    names = list(z.files)
                    if key is None:
                        if len(names) != 1:
                            raise ValueError(
                                f"{what} file {path!r} holds {len(names)} arrays ({', '.join(names) or 'none'}); "
                                f"pass key= to choose one")
                        key = names[0]
                    elif key not in names:
                        raise ValueError(f"{what} file {path!r} has no array {key!r}; it holds: {', '.join(names)}")
                    arr = z[key]
            else:
                arr = _read_text_table(path, what, "," if path.endswith(".csv") else None, int(skip_header))
        except ValueError:
            raise
        except Exception as e:  # damaged .npy/.npz, pickled objects, permissions
            raise ValueError(f"{what} file {path!r} cannot be read: {type(e).__name__}: {e}") from None
    else:
        arr = source
    where = what if not isinstance(source, (str, os.PathLike)) else f"{what} (from {os.fspath(source)!r})"
    try:
        arr = np.asarray(arr)
    except Exception:
        raise TypeError(f"{where} must be a numeric array, got {type(source).__name__}") from None
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_):
        raise TypeError(f"{where} must be a numeric array, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValueError(f"{where} is empty (shape {arr.shape}, zero-width or zero-length); it needs at least one "
                         f"row and one column")
    return arr
