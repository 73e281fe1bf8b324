"""Contracts around the importers: documented reason codes, the safe YAML loader, prediction
patterns, and run.json schema version 2 (``tokens.source``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.archive import open_archive
from automd_analysis.importers import FATAL, PROBLEM_CODES, RECORDED, SourceDir, SourceError
from automd_analysis.importers.predictions import bind_nodes, parse_pattern, scan_steps
from automd_analysis.importers.safe_yaml import UnsafeYamlError, load_agent_yaml

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "automd_analysis" / "importers"


# --- reason codes ------------------------------------------------------------------------------------


def test_every_code_is_documented_and_every_documented_code_exists():
    doc = (ROOT / "docs" / "importing.md").read_text()
    documented = set(re.findall(r"^\| `((?:import|run)\.[a-z_]+)` \|", doc, flags=re.M))
    assert documented == set(PROBLEM_CODES)
    assert not set(FATAL) & set(RECORDED)


def test_every_code_the_importers_raise_is_catalogued():
    used = set()
    for path in PACKAGE.glob("*.py"):
        text = path.read_text()
        used |= set(re.findall(r'code="((?:import|run)\.[a-z_]+)"', text))
        used |= set(re.findall(r'problem\(\s*"((?:import|run)\.[a-z_]+)"', text))
    assert used, "no code found: the pattern is stale"
    assert used - set(FATAL) <= set(RECORDED)
    assert used <= set(PROBLEM_CODES)


def test_readme_links_the_importing_doc():
    assert "(docs/importing.md)" in (ROOT / "README.md").read_text()


# --- safe YAML -----------------------------------------------------------------------------------------


def test_omegaconf_posix_path_becomes_a_string():
    text = "log_dir: !!python/object/apply:pathlib.PosixPath\n- /\n- home\n- logs\nrel: !!python/object/apply:pathlib.PosixPath\n- data\n- x\ngoal: ???\n"
    assert load_agent_yaml(text) == {"log_dir": "/home/logs", "rel": "data/x", "goal": "???"}


@pytest.mark.parametrize(
    "text",
    [
        "a: !!python/object/apply:os.system ['true']",
        "a: !!python/object/new:builtins.dict {}",
        "a: !!python/name:builtins.eval",
        "a: !!python/module:os",
        "a: !custom 1",
        "a: !<tag:example.com,2026:x> 1",
        "a: &x [1, 2]\nb: *x",
        "a: !!python/object/apply:pathlib.PosixPath {args: [x]}",
    ],
)
def test_every_other_tag_and_aliases_are_refused(text):
    with pytest.raises(UnsafeYamlError):
        load_agent_yaml(text)


@settings(max_examples=60)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=15,
    )
)
def test_plain_yaml_reads_like_safe_load(value):
    text = yaml.safe_dump(value)
    assert load_agent_yaml(text) == yaml.safe_load(text)


# --- prediction patterns -----------------------------------------------------------------------------


def test_pattern_binding_and_scanning(tmp_path):
    for rel in ("snap/0001/s.csv", "snap/0003/s.csv", "snap/03/s.csv", "snap/x/s.csv"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("id,p\n")
    src = SourceDir(tmp_path)
    spec = parse_pattern("snap/{step:04d}/s.csv")
    # '03' is not what {step:04d} writes for 3: only exact renderings count
    assert scan_steps(src, spec) == [(1, "snap/0001/s.csv"), (3, "snap/0003/s.csv")]
    b = bind_nodes(src, spec, [("a", 1), ("b", 2), ("c", 3)])
    assert b.files == {"a": "snap/0001/s.csv", "c": "snap/0003/s.csv"}


def test_map_binding_records_unknown_keys_and_missing_files(tmp_path):
    (tmp_path / "f.csv").write_text("id,p\n")
    mapping = tmp_path / "map.json"
    mapping.write_text(
        json.dumps({"a": "f.csv", "zz": "f.csv", "b": "missing.csv", "final": "f.csv"})
    )
    from automd_analysis.importers.predictions import parse_predictions

    b = bind_nodes(SourceDir(tmp_path), parse_predictions(str(mapping)), [("a", 0), ("b", 1)])
    assert b.files == {"a": "f.csv"} and b.final == "f.csv"
    assert sorted(p.code for p in b.problems) == [
        "import.prediction_missing",
        "import.prediction_unbound_key",
    ]


@settings(max_examples=80)
@given(st.text(alphabet="abc{}/._:0d-", min_size=1, max_size=20))
def test_pattern_parser_never_accepts_an_escape(text):
    try:
        spec = parse_pattern(text)
    except SourceError as exc:
        assert exc.code in ("import.predictions_invalid", "import.unsafe_path")
        return
    rendered = spec.format(node_id="n0", step=7)
    assert not rendered.startswith("/") and ".." not in rendered.split("/")


# --- run.json schema version 2 -----------------------------------------------------------------------


def _archive(tmp_path: Path, run: dict) -> Path:
    root = tmp_path / "arch"
    (root / "main/a/t/rep0").mkdir(parents=True)
    (root / "archive.yaml").write_text("schema_version: 1\nname: x\nexperiments: {main: m}\n")
    base = {
        "schema_version": 2, "experiment": "main", "agent": "a", "task": "t", "rep": 0,
        "llm": "m", "search": "linear", "started_at": "2026-01-01T00:00:00Z",
        "ended_at": "2026-01-01T01:00:00Z", "budget_minutes": 720.0,
        "selection": {"rule": "final_file", "selected_version": None},
    }  # fmt: skip
    base.update(run)
    (root / "main/a/t/rep0/run.json").write_text(json.dumps(base))
    return root


@pytest.mark.parametrize("source", ["agent_log", "user_file", "harness"])
def test_schema_v2_records_the_token_source(tmp_path, source):
    tokens = {"prompt": 3, "completion": 1, "total": 4, "source": source}
    (run,) = open_archive(_archive(tmp_path, {"tokens": tokens})).runs()
    assert run.tokens == {**tokens, "simulated": False}


@pytest.mark.parametrize(
    ("run", "location"),
    [
        (
            {
                "schema_version": 1,
                "tokens": {"prompt": 3, "completion": 1, "total": 4, "source": "agent_log"},
            },
            "<root>",
        ),  # fmt: skip
        (
            {"tokens": {"prompt": 3, "completion": 1, "total": 4, "source": "guess"}},
            "tokens.source",
        ),
        ({"schema_version": 3}, "schema_version"),
    ],
)
def test_schema_version_rules(tmp_path, run, location):
    arch = open_archive(_archive(tmp_path, run))
    assert arch.runs() == []
    (p,) = arch.problems
    assert p.code == "archive.run_invalid" and p.location == location


def test_schema_v1_without_source_is_unchanged(tmp_path):
    tokens = {"prompt": 3, "completion": 1, "total": 4}
    (run,) = open_archive(_archive(tmp_path, {"schema_version": 1, "tokens": tokens})).runs()
    assert run.tokens == {**tokens, "simulated": False}
    (run2,) = open_archive(_archive(tmp_path / "b", {"tokens": None})).runs()
    assert run2.tokens is None
