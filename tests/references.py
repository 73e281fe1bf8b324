"""Reference implementations for the comparison tests: skipped locally when missing, a failure in
CI (``CI`` set), where every comparison must really run."""

from __future__ import annotations

import importlib
import os

import pytest


def require(*modules: str):
    """Import ``modules`` and return the last; skip (locally) or fail (CI) if one is missing."""
    module = None
    for name in modules:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:  # pragma: no cover - depends on the environment
            if os.environ.get("CI"):
                pytest.fail(f"reference implementation {name!r} is required in CI: {exc}")
            pytest.skip(f"reference implementation {name!r} is not installed")
    return module
