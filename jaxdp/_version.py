"""The package version (one place: the package root and study manifests read it here; importing it imports
nothing else, so the command line can install its Ctrl-C handling first)."""
__version__ = "0.1.0"
