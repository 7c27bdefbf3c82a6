"""The package version (one place: the package root and study manifests read it here)."""
__version__ = "0.1.0"
