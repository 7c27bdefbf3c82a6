"""Files: loading user data arrays (loss sequences, OCO data) from NumPy objects or files, and writing a file
atomically (:func:`atomic_write`: every result file of a study, ``compare`` and the bench).

Every error names the file (or ``what`` for in-memory arrays), what is wrong and the fix.
"""
from __future__ import annotations

import math
import os
import pathlib
import socket
from typing import Any, Optional

import numpy as np

from .validation import first_nonfinite

__all__ = ["load_array", "atomic_write"]

_EXTS = (".npy", ".npz", ".csv", ".txt")


def _read_text_table(path: str, what: str, delimiter: Optional[str], skip_header: int) -> np.ndarray:
    """A numeric table from a CSV/whitespace text file; errors name the file, the row, the column and the fix."""
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
            j, bad = next((j, c) for j, c in enumerate(cells, start=1) if not _is_float(c))
            raise ValueError(f"{what} file {path!r}, row {i}, column {j}: "
                             + _cell_hint(bad, delimiter, first_row is None)) from None
        for j, v in enumerate(vals, start=1):
            if not math.isfinite(v):
                raise ValueError(f"{what} file {path!r}, row {i}, column {j}: {cells[j - 1]!r} is not a finite "
                                 f"number; every entry must be finite (fill in the missing or invalid value)")
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


_OTHER_SEPARATORS = (";", "\t", "|", ",", " ")


def _cell_hint(cell: str, delimiter: Optional[str], first_row: bool) -> str:
    """Why a cell is not a number, and the fix: a blank cell, another delimiter, or a header row."""
    if cell == "":
        return ("the cell is empty (a blank cell, or a delimiter at the end of the row); every cell must hold a "
                "number: fill it in or remove the extra delimiter")
    for sep in _OTHER_SEPARATORS:
        if sep == delimiter or (sep == " " and delimiter is None):
            continue
        parts = [p.strip() for p in cell.split(sep)] if sep != " " else cell.split()
        if len(parts) > 1 and all(_is_float(p) for p in parts if p):
            if delimiter == ",":
                return (f"{cell!r} holds several numbers separated by {sep!r}; a .csv file must be comma-separated: "
                        f"replace {sep!r} by ',' (or save whitespace-separated values as .txt)")
            return (f"{cell!r} holds several numbers separated by {sep!r}; a .txt file must be whitespace-separated: "
                    f"save comma-separated values as .csv, or replace {sep!r} by a space")
    if first_row:
        return f"{cell!r} is not a number; if the file has a header row, pass skip_header=1"
    return f"{cell!r} is not a number; every cell must be a number"


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
    ``skip_header`` leading rows skipped and ``#`` comments ignored. Every entry must be finite:
    a NaN or infinite entry is refused with its position.

    Args:
        source: an array-like, or the path (``str`` or ``os.PathLike``) of a ``.npy``, ``.npz``, ``.csv`` or
            ``.txt`` file.
        what: what the array is (``"losses"``, ``"features"``), used to start every error message.
        key: the name of the array to take from an ``.npz`` file holding several; only for ``.npz``.
        skip_header: the number of leading rows of a ``.csv``/``.txt`` file to skip (e.g. 1 for a header line).

    Returns:
        The array as loaded (its dtype kept: numeric or bool), non-empty, every entry finite.

    Raises:
        ValueError: the file is missing, has another extension, cannot be read, holds several arrays and no
            ``key`` was given, or the array is empty or has a NaN/infinite entry (its row and column named).
        TypeError: the data are not numeric.
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
                arr = _load_binary(path, what)
            elif path.endswith(".npz"):
                with _load_binary(path, what) as z:
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
    at = first_nonfinite(arr)
    if at is not None:
        pos = f"row {at[0]}, column {at[1]}" if len(at) == 2 else f"index {at}"
        raise ValueError(f"{where} must be finite, got {arr[at].item()!r} at {pos} (counting from 0); fill in "
                         f"the missing or invalid value")
    return arr


def _load_binary(path: str, what: str):
    """``np.load`` of a ``.npy``/``.npz`` file; a damaged or non-NumPy file gets an error naming it."""
    try:
        return np.load(path, allow_pickle=False)
    except Exception as e:  # noqa: BLE001 - bad magic, truncated data, pickled objects, permissions
        kind = "a .npy" if path.endswith(".npy") else "an .npz"
        raise ValueError(f"{what} file {path!r} cannot be read as {kind} file ({type(e).__name__}: {e}); it is "
                         f"damaged or not saved with numpy.save/numpy.savez: save it again, or as .csv") from None


def atomic_write(path: str | os.PathLike, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` so that no reader ever sees a partial file.

    The bytes go to a temporary file beside ``path`` whose name holds the host and the process id (two
    processes, on one host or on two hosts sharing the folder, never write the same temporary file), are
    flushed to disk with ``fsync``, and replace ``path`` in one ``os.replace``.

    Args:
        path: the file to write.
        data: its contents.
    """
    path = pathlib.Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{socket.gethostname()}-{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data.encode("utf-8") if isinstance(data, str) else data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
