"""The command line's usage error and its ``--set key=value`` parser, shared by every command."""
from __future__ import annotations

import os
import pathlib
import tempfile
from typing import Optional, Sequence


class CLIError(Exception):
    """A command-line usage error (a malformed ``--set``, a missing subcommand, an unusable ``--out``).

    :func:`main` prints its first line as ``jaxdp: error: ...`` on stderr and returns status 2, like the
    ``ValueError``/``TypeError``/``OSError`` the commands raise for bad input.
    """
    pass


def _kv(items: Optional[Sequence[str]]) -> dict:
    out = {}
    for it in items or []:
        if "=" not in it:
            raise CLIError(f"--set expects key=value, got {it!r}")
        k, v = it.split("=", 1)
        out[k.strip()] = v.strip()
    return out


def check_out(path, *, option: str = "--out", kind: str = "dir") -> pathlib.Path:
    """Refuse an output path that cannot be written, before any work: a directory (``kind="dir"``, created if
    missing) or a file (``kind="file"``) whose nearest existing folder must be writable.

    Args:
        path: the output path.
        option: the option's name, quoted in the error.
        kind: ``"dir"`` or ``"file"``.

    Returns:
        ``path`` as a ``pathlib.Path``.

    Raises:
        CLIError: naming ``option``, the path and why it cannot be written.
    """
    out = pathlib.Path(path)
    if kind == "dir" and out.exists() and not out.is_dir():
        raise CLIError(f"{option} {str(out)!r} is an existing file, not a directory: name a directory "
                       f"(it is created if missing)")
    if kind == "file" and out.is_dir():
        raise CLIError(f"{option} must be a file path, got the directory {str(out)!r}")
    target = out if (kind == "dir" and out.exists()) else None
    for parent in (out.parents if target is None else ()):
        if parent.exists():
            if not parent.is_dir():
                raise CLIError(f"{option} {str(out)!r} is inside {str(parent)!r}, which is a file, not a directory")
            target = parent
            break
    if target is not None:
        try:   # a real probe: permission bits do not bind root, and a read-only mount ignores them
            fd, probe = tempfile.mkstemp(prefix=".jaxdp-probe-", dir=target)
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise CLIError(f"{option} {str(out)!r} cannot be written: {str(target)!r}: {e.strerror}") from None
    if kind == "file" and out.exists() and not os.access(out, os.W_OK):
        raise CLIError(f"{option} {str(out)!r} cannot be written: the file is read-only")
    return out
