"""Fixtures shared by several test modules."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis: CI (and `make test`) run a derandomised profile, so a run never fails on a case that
# no commit introduced; `make fuzz` runs the unseeded "explore" profile with more examples.
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "explore",
    derandomize=False,
    deadline=None,
    max_examples=1000,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def demo_root(request, tmp_path_factory):
    """The demo tasks built from the real public cohorts, once per machine.

    ``AUTOMD_TEST_DEMO_DATA`` points at an existing data root; otherwise the tasks live in the
    pytest cache (shared by xdist workers; :func:`ensure_demo_data` takes a file lock and only
    re-hashes an existing build).
    """
    from automd_demo.task_files import ensure_demo_data  # here: the fast tests never need it

    env = os.environ.get("AUTOMD_TEST_DEMO_DATA")
    if env:
        root = env
    else:
        try:
            root = request.config.cache.mkdir("automd-demo-data")
        except AttributeError:  # cache plugin disabled
            root = tmp_path_factory.getbasetemp().parent / "automd-demo-data"
    return ensure_demo_data(root)


_SLOW_MODULE = re.compile(r"^pytestmark = \[?pytest\.mark\.slow\b", re.M)


def pytest_ignore_collect(collection_path: Path, config):
    """Under ``-m "not slow ..."`` (``make test-fast``) a module marked slow as a whole is not even
    imported: it would be deselected anyway, and importing it costs each worker seconds."""
    if "not slow" not in (config.getoption("markexpr") or ""):
        return None
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    return True if _SLOW_MODULE.search(collection_path.read_text(encoding="utf-8")) else None
