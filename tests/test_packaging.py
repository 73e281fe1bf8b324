"""Project-level invariants: environment.yml mirrors pyproject.toml; the CLI and version import."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent


def _normalise(spec: str) -> tuple[str, str]:
    req = Requirement(spec)
    return req.name.lower().replace("_", "-"), str(req.specifier)


def test_environment_yml_matches_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["dependencies"] + [
        d for extra in ("demo", "dev", "baselines") for d in project["optional-dependencies"][extra]
    ]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    listed = [d for d in pip_section if not d.startswith("-e")]
    assert len(listed) == len(set(listed)), "environment.yml lists a dependency twice"
    assert sorted(set(map(_normalise, listed))) == sorted(set(map(_normalise, wanted)))


def test_torch_only_pinned_exactly():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    all_deps = project["dependencies"] + [
        d for deps in project["optional-dependencies"].values() for d in deps
    ]
    torch_specs = [
        str(Requirement(d).specifier) for d in all_deps if Requirement(d).name == "torch"
    ]
    assert torch_specs and all(s == "==2.13.0" for s in torch_specs)


@pytest.mark.slow
def test_cli_help_runs():
    out = subprocess.run(
        [sys.executable, "-m", "automd_analysis", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "automd" in out.stdout
