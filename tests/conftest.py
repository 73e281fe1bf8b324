"""Fixtures shared by several test modules."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Hypothesis: CI (and `make test`) run a derandomised profile, so a run never fails on a case that
# no commit introduced; `make fuzz` runs the unseeded "explore" profile with EXPLORE_FACTOR times
# more examples - also for tests that set their own max_examples (pytest_collection_modifyitems).
EXPLORE_FACTOR = 10
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "explore",
    derandomize=False,
    deadline=None,
    max_examples=100 * EXPLORE_FACTOR,
    suppress_health_check=[HealthCheck.too_slow],
)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
settings.load_profile(PROFILE)


def _explore_more(item) -> None:
    """Raise a property test's own ``max_examples`` by :data:`EXPLORE_FACTOR` (explore profile).

    ``@settings(max_examples=N)`` on a test overrides the profile's value; hypothesis keeps the
    test's settings object on the wrapped function, which is replaced here by a child of it with
    N x EXPLORE_FACTOR examples (every other setting inherited)."""
    test = getattr(item, "obj", None)
    own = getattr(test, "_hypothesis_internal_use_settings", None)
    if own is None or not hasattr(test, "hypothesis"):
        return
    if own.max_examples < settings.get_profile("explore").max_examples:
        test._hypothesis_internal_use_settings = settings(
            own, max_examples=own.max_examples * EXPLORE_FACTOR
        )


def pytest_collection_modifyitems(config, items):
    if PROFILE == "explore":
        for item in items:
            _explore_more(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """In CI a skipped ``reference`` test is a failure: the comparison with pycox, lifelines,
    sklearn & co. must really run (a missing reference package or an ``importorskip`` would
    otherwise pass silently)."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("CI") and item.get_closest_marker("reference"):
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"reference test skipped in CI (CI is set): {reason}"


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


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The same for a test module skipped as a whole (a module-level ``importorskip``) that holds
    ``reference`` tests."""
    outcome = yield
    report = outcome.get_result()
    path = getattr(collector, "path", None)
    if not (report.skipped and os.environ.get("CI") and path is not None and path.suffix == ".py"):
        return
    if "mark.reference" in path.read_text(encoding="utf-8"):
        report.outcome = "failed"
        report.longrepr = (
            f"module with reference tests skipped in CI (CI is set): {report.longrepr}"
        )
