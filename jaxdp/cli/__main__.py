"""``python -m jaxdp.cli ...``: the ``jaxdp`` command line, as ``python -m jaxdp`` (see :mod:`jaxdp.cli`)."""
from jaxdp.cli import script_main

if __name__ == "__main__":  # pragma: no cover
    script_main()
