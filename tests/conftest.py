"""Fixtures shared by several test modules."""

from __future__ import annotations

import os

import pytest

from automd_analysis.demo.task_files import ensure_demo_data


@pytest.fixture(scope="session")
def demo_root(request, tmp_path_factory):
    """The demo tasks built from the real public cohorts, once per machine.

    ``AUTOMD_TEST_DEMO_DATA`` points at an existing data root; otherwise the tasks live in the
    pytest cache (shared by xdist workers; :func:`ensure_demo_data` takes a file lock and only
    re-hashes an existing build).
    """
    env = os.environ.get("AUTOMD_TEST_DEMO_DATA")
    if env:
        root = env
    else:
        try:
            root = request.config.cache.mkdir("automd-demo-data")
        except AttributeError:  # cache plugin disabled
            root = tmp_path_factory.getbasetemp().parent / "automd-demo-data"
    return ensure_demo_data(root)
