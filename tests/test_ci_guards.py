"""What CI cannot skip: the conftest hooks, run on throw-away test files in a subprocess.

- a ``reference`` test that skips (a missing reference package, an ``importorskip``) fails when
  ``CI`` is set, also when its whole module is skipped at import;
- ``make fuzz`` (``HYPOTHESIS_PROFILE=explore``) runs ten times the examples of every property
  test, also of those that set their own ``max_examples``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

INI = """[pytest]
addopts = -p no:cacheprovider -p no:randomly
markers =
    reference: compares against a reference implementation
"""

BODY = """
import pytest
from hypothesis import given, settings, strategies as st

CALLS = {"own": 0, "default": 0}


@pytest.mark.reference
def test_reference_that_skips():
    pytest.importorskip("automd_no_such_reference_module")


def test_plain_skip():
    pytest.skip("not a reference test: may skip")


@settings(max_examples=7)
@given(st.integers())
def test_own_examples(x):
    CALLS["own"] += 1


@given(st.integers())
def test_default_examples(x):
    CALLS["default"] += 1


def test_zz_counts():
    print("COUNTS", CALLS["own"], CALLS["default"])
"""


def _run(tmp_path: Path, files: dict[str, str], **env) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text((TESTS / "conftest.py").read_text())
    (tmp_path / "pytest.ini").write_text(INI)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "HYPOTHESIS_PROFILE")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:xdist", str(tmp_path)],
        cwd=tmp_path, env={**clean, **env}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def _counts(out: str) -> tuple[int, int]:
    line = next(x for x in out.splitlines() if "COUNTS" in x)
    own, default = line.split("COUNTS")[1].split()
    return int(own), int(default)


@pytest.mark.slow
def test_a_skipped_reference_test_fails_in_ci_and_only_there(tmp_path):
    ci = _run(tmp_path, {"test_probe.py": BODY}, CI="true")
    assert ci.returncode == 1, ci.stdout
    assert "FAILED test_probe.py::test_reference_that_skips" in ci.stdout
    assert "reference test skipped in CI" in ci.stdout
    assert "1 failed, 3 passed, 1 skipped" in ci.stdout  # the plain skip stays a skip
    local = _run(tmp_path, {"test_probe.py": BODY})
    assert local.returncode == 0 and "3 passed, 2 skipped" in local.stdout, local.stdout


@pytest.mark.slow
def test_a_module_skipped_at_import_with_reference_tests_fails_in_ci(tmp_path):
    module = (
        'import pytest\npytest.importorskip("automd_no_such_reference_module")\n\n\n'
        "@pytest.mark.reference\ndef test_a():\n    pass\n"
    )
    ci = _run(tmp_path, {"test_module_skip.py": module}, CI="true")
    assert ci.returncode != 0 and "module with reference tests skipped in CI" in ci.stdout
    local = _run(tmp_path, {"test_module_skip.py": module})
    assert local.returncode == 5 and "1 skipped" in local.stdout  # nothing collected: a skip


@pytest.mark.slow
def test_explore_profile_runs_ten_times_the_examples(tmp_path):
    ci = _run(tmp_path, {"test_probe.py": BODY})
    explore = _run(tmp_path, {"test_probe.py": BODY}, HYPOTHESIS_PROFILE="explore")
    own_ci, default_ci = _counts(ci.stdout)
    own_explore, default_explore = _counts(explore.stdout)
    assert own_ci <= 7 and default_ci <= 100
    assert own_explore == 70 and default_explore == 1000
