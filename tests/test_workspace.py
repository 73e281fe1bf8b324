"""One workspace resolves every folder by one rule set (automd_analysis.archive.workspace)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from automd_analysis.archive.workspace import open_workspace, resolve_path
from automd_analysis.errors import ArchiveError
from automd_analysis.tasks import REPO_ROOT, data_root, manifest_dir


def _archive(path: Path, name: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / "archive.yaml").write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "name": name,
                "description": "",
                "experiments": {"main": "main"},
                "provenance": {},
            }
        )  # fmt: skip
    )
    return path


@pytest.fixture
def no_env(monkeypatch):
    monkeypatch.delenv("AUTOMD_DATA", raising=False)
    monkeypatch.delenv("AUTOMD_MANIFESTS", raising=False)


def test_every_default_is_taken_from_the_one_root(tmp_path, no_env):
    _archive(tmp_path / "runs" / "dir-name", "archive-name")
    ws = open_workspace("runs/dir-name", root=tmp_path)
    assert ws.archive == tmp_path / "runs" / "dir-name"
    assert ws.archive_name == "archive-name"
    assert ws.scores == tmp_path / "scores" / "archive-name"  # the name in archive.yaml
    assert ws.embeddings == ws.scores / "embeddings"
    assert (ws.data, ws.manifests) == (tmp_path / "data", tmp_path / "data_manifests")
    assert ws.out == tmp_path / "reports"
    assert ws.annotations is None
    assert ws.hand_run_dir("01_x") == tmp_path / "build" / "notebooks" / "01_x"
    assert ws.resolve("a/b") == tmp_path / "a" / "b" and ws.resolve(None) is None


def test_given_paths_win_and_relative_ones_follow_the_root(tmp_path, no_env):
    ws = open_workspace(
        "arch",
        scores="s",
        data="d",
        manifests=tmp_path / "m",
        annotations="~/ann",
        out="o",
        root=tmp_path,
    )
    assert ws.archive_name is None  # the store is given: archive.yaml is not read
    assert (ws.scores, ws.data, ws.manifests) == (tmp_path / "s", tmp_path / "d", tmp_path / "m")
    assert ws.annotations == Path("~/ann").expanduser() and ws.out == tmp_path / "o"


def test_environment_variables_name_data_and_manifests(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTOMD_DATA", str(tmp_path / "env-data"))
    monkeypatch.setenv("AUTOMD_MANIFESTS", "relative-manifests")
    ws = open_workspace(root=tmp_path)
    assert ws.data == tmp_path / "env-data"
    assert ws.manifests == tmp_path / "relative-manifests"  # relative: from the root
    assert open_workspace(data="x", root=tmp_path).data == tmp_path / "x"  # given wins
    assert data_root() == tmp_path / "env-data" and manifest_dir(root=tmp_path) == Path(
        "relative-manifests"
    )


def test_the_default_root_is_the_repository(no_env):
    ws = open_workspace(archive_name="demo", archive="runs_archive/demo")
    assert ws.root == REPO_ROOT and ws.scores == REPO_ROOT / "scores" / "demo"
    assert (ws.data, ws.manifests) == (data_root(), manifest_dir())
    assert resolve_path("x") == REPO_ROOT / "x"


def test_a_missing_archive_is_an_error_only_when_its_name_is_needed(tmp_path):
    with pytest.raises(ArchiveError) as info:
        open_workspace(tmp_path / "nope")
    assert info.value.code == "archive.missing"
    assert open_workspace(tmp_path / "nope", scores=tmp_path).scores == tmp_path


def test_the_command_line_and_the_pipeline_use_the_same_defaults(tmp_path, monkeypatch, no_env):
    """`automd regenerate` run from any directory finds the store where a notebook looks."""
    from automd_analysis.cli import app
    from automd_analysis.report import pipeline

    archive = _archive(tmp_path / "arch", "wsname")
    seen = {}

    def fake_regenerate(config, log=print):
        seen["p"] = pipeline.resolve(config, log)
        raise SystemExit(0)

    monkeypatch.setattr(pipeline, "regenerate", fake_regenerate)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["regenerate", "arch", "--no-score"])
    assert result.exit_code == 0, result.output
    p = seen["p"]
    assert p.archive == archive.resolve()  # typed paths are relative to the working directory
    assert p.scores_dir == REPO_ROOT / "scores" / "wsname"  # defaults: the project root
    assert p.out == REPO_ROOT / "reports"
    assert p.embedding_cache == p.scores_dir / "embeddings"
