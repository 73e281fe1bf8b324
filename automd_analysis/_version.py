"""Single source of the package version (also part of every score cache key)."""

__version__ = "0.2.0"
