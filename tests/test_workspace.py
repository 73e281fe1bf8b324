"""One workspace resolves every folder by one rule set (automd_analysis.archive.workspace)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from automd_analysis.archive import workspace
from automd_analysis.archive.workspace import open_workspace, resolve_path, store_key
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
    key = store_key(tmp_path / "runs" / "dir-name")
    assert ws.scores == tmp_path / "scores" / f"archive-name-{key}"  # archive.yaml's name + key
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
    key = store_key(REPO_ROOT / "runs_archive" / "demo")
    assert ws.root == REPO_ROOT and ws.scores == REPO_ROOT / "scores" / f"demo-{key}"
    assert (ws.data, ws.manifests) == (data_root(), manifest_dir())
    assert resolve_path("x") == REPO_ROOT / "x"


def test_a_missing_archive_is_an_error_only_when_its_name_is_needed(tmp_path):
    with pytest.raises(ArchiveError) as info:
        open_workspace(tmp_path / "nope")
    assert info.value.code == "archive.missing"
    assert open_workspace(tmp_path / "nope", scores=tmp_path).scores == tmp_path


def test_the_command_line_and_the_pipeline_use_the_same_defaults(tmp_path, monkeypatch, no_env):
    """`automd regenerate` run from any directory finds the store where a notebook looks."""
    from automd_analysis.app import pipeline
    from automd_analysis.cli import app

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
    assert p.scores_dir == REPO_ROOT / "scores" / f"wsname-{store_key(archive)}"  # project root
    assert p.out == REPO_ROOT / "reports"
    assert p.embedding_cache == p.scores_dir / "embeddings"


# --- the default store is keyed by the archive's identity (issue 33) ------------------------------


def _score(archive: Path) -> str:
    from automd_analysis.cli import app

    result = CliRunner().invoke(app, ["score", str(archive), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def repo_root(tmp_path, monkeypatch, no_env):
    """The project root of every default: a temporary folder (nothing lands in the checkout)."""
    monkeypatch.setattr(workspace, "REPO_ROOT", tmp_path)
    (tmp_path / "data").mkdir()
    return tmp_path


def test_two_archives_of_one_name_never_share_a_store(repo_root):
    a = _archive(repo_root / "study1" / "archive", "archive")
    b = _archive(repo_root / "study2" / "archive", "archive")
    out_a, out_b = _score(a), _score(b)
    store_a = repo_root / "scores" / f"archive-{store_key(a)}"
    store_b = repo_root / "scores" / f"archive-{store_key(b)}"
    assert store_a != store_b and f"-> {store_a}" in out_a and f"-> {store_b}" in out_b
    assert (store_a / "store.json").exists() and (store_b / "store.json").exists()
    assert not (repo_root / "scores" / "archive").exists()
    assert f"-> {store_a}" in _score(repo_root / "study1" / ".." / "study1" / "archive")  # stable


def test_an_old_layout_store_is_reported_and_its_caches_taken(repo_root):
    arch = _archive(repo_root / "runs" / "demo", "demo")
    old = repo_root / "scores" / "demo"
    entry = old / "cache" / "ab" / ("ab" + "0" * 62 + ".json")
    entry.parent.mkdir(parents=True)
    entry.write_text("{}")
    (old / "store.json").write_text("{}")
    (old / "masking.parquet").write_bytes(b"PAR1")
    assert open_workspace(arch).legacy_scores == old
    out = _score(arch)
    new = repo_root / "scores" / f"demo-{store_key(arch)}"
    assert (new / "cache" / "ab" / entry.name).read_text() == "{}"
    assert "note: " in out and "took 1 score-cache entries" in out
    assert "masking.parquet" in out and f"--scores/--out {old}" in out
    assert (old / "masking.parquet").exists() and (old / "store.json").exists()  # left alone
    assert open_workspace(arch).legacy_scores is None  # the archive's own store exists now
    assert "note:" not in _score(arch)
