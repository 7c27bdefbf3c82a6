"""The command line's usage error and its ``--set key=value`` parser, shared by every command."""
from __future__ import annotations

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
