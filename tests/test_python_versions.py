"""Python 3.11 to 3.14 are accepted, in every place that says so, and the whole dependency set
installs from wheels on the newest two (no compiler needed).

The resolution test asks pip (``pip install --dry-run --only-binary=:all: --python-version X.Y
--target ...``) for every dependency of ``make install`` (core + the dev, demo and baselines
extras) as it would install them for that Python. It needs the package index: without it the test
is skipped, saying why. One dependency has no wheel at all: pycox's ``feather-format`` is a pure
Python source distribution; it is built into a wheel first and that wheel must be ``py3-none-any``
(no compiled code, so it installs on any Python 3), then offered to the resolver.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
SUPPORTED = ("3.11", "3.12", "3.13", "3.14")
#: The versions above the one the suite runs on whose wheels are checked (issue: the Pythons most
#: users have in 2026).
NEWEST = ("3.13", "3.14")
#: Dependencies published only as source, with why that needs no compiler.
SOURCE_ONLY = {"feather-format": "pure Python wrapper of pyarrow.feather (pycox needs it)"}
#: ``make install``'s extras.
EXTRAS = ("dev", "demo", "baselines")


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def install_requirements() -> list[str]:
    meta = project()
    deps = meta["dependencies"] + [d for e in EXTRAS for d in meta["optional-dependencies"][e]]
    return list(dict.fromkeys(deps))


def test_requires_python_accepts_exactly_3_11_to_3_14():
    spec = SpecifierSet(project()["requires-python"])
    assert [v for v in ("3.10", *SUPPORTED, "3.15") if v in spec] == list(SUPPORTED)


def test_makefile_checks_the_same_range_and_says_it():
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    check = re.search(r"\(3, (\d+)\) <= sys\.version_info\[:2\] <= \(3, (\d+)\)", text)
    assert check, "the Makefile no longer checks the Python version"
    assert (f"3.{check[1]}", f"3.{check[2]}") == (SUPPORTED[0], SUPPORTED[-1])
    assert f"needs Python {SUPPORTED[0]} to {SUPPORTED[-1]}" in text


def test_environment_yml_and_readme_name_the_same_range():
    env = yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python"))
    assert python == f"python>={SUPPORTED[0]},<3.{int(SUPPORTED[-1].split('.')[1]) + 1}"
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"Python {SUPPORTED[0]} to {SUPPORTED[-1]}" in readme
    # and which Python the test suite itself ran on
    assert re.search(r"test suite (?:runs|ran) on Python 3\.\d+", readme), "README: suite's Python"


def pip(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def source_only_wheels(tmp_path_factory) -> Path:
    """Wheels built from the source-only dependencies (skips the module when the package index
    cannot be reached)."""
    out = tmp_path_factory.mktemp("source-only-wheels")
    for name in SOURCE_ONLY:
        built = pip("wheel", "--no-deps", "-w", str(out), name, timeout=600)
        if built.returncode != 0:
            if _unreachable(built.stderr):
                pytest.skip(f"package index unreachable: {built.stderr.strip().splitlines()[-1]}")
            pytest.fail(f"could not build {name}: {built.stderr[-2000:]}")
    wheels = sorted(p.name for p in out.glob("*.whl"))
    assert len(wheels) == len(SOURCE_ONLY), wheels
    assert all(w.endswith("-py3-none-any.whl") for w in wheels), wheels  # pure Python
    return out


def _unreachable(stderr: str) -> bool:
    signs = ("NewConnectionError", "Temporary failure in name resolution", "Network is unreachable",
             "Max retries exceeded", "ConnectTimeout", "ReadTimeout", "ProxyError")  # fmt: skip
    return any(s in stderr for s in signs)


@pytest.mark.slow
@pytest.mark.parametrize("version", NEWEST)
def test_every_dependency_installs_from_wheels_on(version, source_only_wheels, tmp_path):
    assert version in SpecifierSet(project()["requires-python"])
    report = tmp_path / "report.json"
    done = pip(
        "install", "--dry-run", "--ignore-installed", "--only-binary=:all:",
        "--python-version", version, "--target", str(tmp_path / "target"),
        "--find-links", str(source_only_wheels), "--report", str(report), "--quiet",
        *install_requirements(),
    )  # fmt: skip
    if done.returncode != 0 and _unreachable(done.stderr):
        pytest.skip(f"package index unreachable: {done.stderr.strip().splitlines()[-1]}")
    assert done.returncode == 0, done.stderr[-3000:]
    chosen = json.loads(report.read_text())["install"]
    names = {item["metadata"]["name"].lower().replace("_", "-") for item in chosen}
    wanted = {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in install_requirements()}
    assert wanted <= names, wanted - names
    files = [item["download_info"]["url"].rsplit("/", 1)[-1] for item in chosen]
    assert all(f.endswith(".whl") for f in files), [f for f in files if not f.endswith(".whl")]
    tag = f"cp{version.replace('.', '')}"
    torch = next(f for f in files if f.startswith("torch-"))
    assert torch.startswith("torch-2.13.0-") and tag in torch, torch
    assert not [f for f in files if not fits(f, tag)]


def fits(wheel: str, cp_tag: str) -> bool:
    """Whether a wheel's Python and ABI tags install on CPython ``cp_tag`` (``cp313``): built for
    it, for the stable ABI, or for any Python 3 (``py3``)."""
    python, abi = wheel[: -len(".whl")].split("-")[-3:-1]
    return cp_tag in python.split(".") or abi == "abi3" or "py3" in python.split(".")
