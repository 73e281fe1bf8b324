"""Annotations: codebook validation, evidence checks, and the docs/archive.md copy of the codebook."""

from __future__ import annotations

import copy
import json
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest
from test_archive_reader import kit

from automd_analysis.archive import CODEBOOK, PAIR_CHANGES, open_archive

DOCS = Path(__file__).resolve().parent.parent / "docs" / "archive.md"

GOOD = {
    "schema_version": 1,
    "annotator": "test",
    "run": {
        "model_families": {"value": ["gbdt", "linear"], "evidence": ["code/train.py:2"]},
        "ensembling": {"value": ["single_model"], "evidence": ["code/train.py:1-3"]},
        "probability_calibration": {"value": "no", "evidence": []},
        "censoring_handling": {
            "value": "censored_as_death",
            "affected_weight": 0.5,
            "evidence": ["code/train.py"],
        },
    },
    "pairs": [
        {
            "earlier": "v1",
            "later": "v2",
            "changes": ["ensembling", "hyperparameter_tuning"],
            "affects_predictions": True,
            "evidence": ["journal.md:1"],
        }
    ],
}


@pytest.fixture
def arch(tmp_path: Path) -> Path:
    root = tmp_path / "arch"
    kit.write_archive_yaml(root, experiments={"main": "main experiment"})
    run_dir = kit.write_run(root, "main", "alpha", "t1", 0)
    kit.write_version(run_dir, "v1", kit.T0 + timedelta(minutes=5), 1, b"x\n")
    kit.write_version(run_dir, "v2", kit.T0 + timedelta(minutes=6), 2, b"x\n")
    (run_dir / "code").mkdir()
    (run_dir / "code" / "train.py").write_text("a = 1\nb = 2\nc = 3")  # 3 lines, no final newline
    (run_dir / "journal.md").write_text("step 1\n")
    (tmp_path / "outside.py").write_text("x\n" * 50)
    return root


def _write(arch: Path, doc) -> Path:
    path = arch / "main" / "alpha" / "t1" / "rep0" / "annotations.json"
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


def _problem(arch: Path):
    archive = open_archive(arch)
    (run,) = archive.runs()  # the run itself is always kept
    assert run.annotations is None
    (problem,) = archive.problems
    assert problem.details["effect"] == "annotations skipped"
    assert problem.details["run_id"] == "main/alpha/t1/rep0"
    assert problem.fix
    return problem


def test_valid_annotations_parse(arch):
    _write(arch, GOOD)
    archive = open_archive(arch)
    (run,) = archive.runs()
    assert archive.problems == []
    ann = run.annotations
    assert ann.annotator == "test"
    assert ann.answers["model_families"].value == ("gbdt", "linear")
    assert ann.answers["probability_calibration"].value == "no"
    assert ann.answers["censoring_handling"].affected_weight == 0.5
    assert list(ann.answers) == sorted(ann.answers)
    (pair,) = ann.pairs
    assert (pair.earlier, pair.later, pair.affects_predictions) == ("v1", "v2", True)
    assert pair.changes == ("ensembling", "hyperparameter_tuning")


def _mutate(path: str, value):
    doc = copy.deepcopy(GOOD)
    target = doc
    keys = path.split(".")
    for k in keys[:-1]:
        target = target[int(k)] if k.isdigit() else target[k]
    last = keys[-1]
    if value is _DELETE:
        del target[last]
    elif last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return doc


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "code", "location"),
    [
        (
            "run.favourite_colour",
            {"value": "no", "evidence": []},
            "archive.annotation_unknown_field",
            "run.favourite_colour",
        ),
        (
            "run.probability_calibration.value",
            "maybe",
            "archive.annotation_bad_value",
            "run.probability_calibration.value",
        ),
        (
            "run.probability_calibration.value",
            ["no"],
            "archive.annotation_bad_value",
            "run.probability_calibration.value",
        ),
        (
            "run.model_families.value",
            "gbdt",
            "archive.annotation_bad_value",
            "run.model_families.value",
        ),
        (
            "run.model_families.value",
            ["gbdt", "gbdt"],
            "archive.annotation_bad_value",
            "run.model_families.value",
        ),
        (
            "run.model_families.value",
            ["xgboost"],
            "archive.annotation_bad_value",
            "run.model_families.value",
        ),
        (
            "run.censoring_handling.affected_weight",
            1.5,
            "archive.annotation_bad_value",
            "run.censoring_handling.affected_weight",
        ),
        (
            "run.ensembling.affected_weight",
            0.5,
            "archive.annotation_invalid",
            "run.ensembling.affected_weight",
        ),
        (
            "run.ensembling.confidence",
            "high",
            "archive.annotation_invalid",
            "run.ensembling.confidence",
        ),
        ("run.ensembling.value", _DELETE, "archive.annotation_invalid", "run.ensembling.value"),
        (
            "run.ensembling.evidence",
            "code/train.py:1",
            "archive.annotation_invalid",
            "run.ensembling.evidence",
        ),
        (
            "run.ensembling.evidence",
            ["code/train.py:0"],
            "archive.annotation_invalid",
            "run.ensembling.evidence",
        ),
        (
            "run.ensembling.evidence",
            ["code/train.py:4"],
            "archive.evidence_line",
            "run.ensembling.evidence",
        ),
        (
            "run.ensembling.evidence",
            ["code/train.py:2-9"],
            "archive.evidence_line",
            "run.ensembling.evidence",
        ),
        (
            "run.ensembling.evidence",
            ["code/train.py:3-2"],
            "archive.evidence_line",
            "run.ensembling.evidence",
        ),
        (
            "run.ensembling.evidence",
            ["code/missing.py:1"],
            "archive.evidence_missing",
            "run.ensembling.evidence",
        ),
        (
            "run.ensembling.evidence",
            ["code:1"],
            "archive.evidence_missing",
            "run.ensembling.evidence",
        ),
        (
            "run.ensembling.evidence",
            ["../../../../outside.py:1"],
            "archive.evidence_unsafe",
            "run.ensembling.evidence",
        ),
        (
            "run.ensembling.evidence",
            ["/etc/passwd:1"],
            "archive.evidence_unsafe",
            "run.ensembling.evidence",
        ),
        ("pairs.0.earlier", "v9", "archive.annotation_bad_value", "pairs[0].earlier"),
        ("pairs.0.later", "v1", "archive.annotation_bad_value", "pairs[0]"),
        ("pairs.0.changes", ["refactor"], "archive.annotation_bad_value", "pairs[0].changes"),
        (
            "pairs.0.affects_predictions",
            "yes",
            "archive.annotation_invalid",
            "pairs.0.affects_predictions",
        ),
        ("pairs.0.evidence", ["journal.md:2"], "archive.evidence_line", "pairs[0].evidence"),
        ("schema_version", 2, "archive.annotation_invalid", "schema_version"),
        ("extra", 1, "archive.annotation_invalid", "extra"),
    ],
)
def test_bad_annotations(arch, path, value, code, location):
    _write(arch, _mutate(path, value))
    problem = _problem(arch)
    assert (problem.code, problem.location) == (code, location), str(problem)
    assert "annotations.json" in str(problem.path)


def test_evidence_symlink_escaping_the_run(arch, tmp_path):
    run_dir = arch / "main" / "alpha" / "t1" / "rep0"
    os.symlink(tmp_path / "outside.py", run_dir / "code" / "link.py")
    _write(arch, _mutate("run.ensembling.evidence", ["code/link.py:1"]))
    assert _problem(arch).code == "archive.evidence_unsafe"


def test_annotations_not_json(arch):
    _write(arch, "{not json")
    assert _problem(arch).code == "archive.annotation_invalid"
    _write(arch, "[1, 2]")
    assert _problem(arch).code == "archive.annotation_invalid"
    _write(arch, '{"schema_version": 1, "run": {}, "pairs": [], "x": Infinity}')
    assert _problem(arch).code == "archive.annotation_invalid"


def test_partial_annotations_are_fine(arch):
    _write(arch, {"schema_version": 1, "run": {"subgroup_checks": {"value": "yes"}}})
    (run,) = open_archive(arch).runs()
    assert run.annotations.answers["subgroup_checks"].evidence == ()
    assert run.annotations.pairs == ()


def test_fixture_annotations_cover_the_calibration_groups():
    runs = open_archive(kit.OUT / "archive").runs()
    answers = [r.annotations.answers for r in runs if r.annotations]
    ranks = [a for a in answers if a["averaged_ranks_as_probabilities"].value == "yes"]
    no_recal = [
        a
        for a in answers
        if a["class_imbalance_handling"].value not in ("none", "na")
        and a["recalibration_after_imbalance"].value == "no"
    ]
    recal = [a for a in answers if a["recalibration_after_imbalance"].value == "yes"]
    censoring = [a for a in answers if a["censoring_handling"].value == "censored_as_survivor"]
    assert ranks and no_recal and recal and censoring


def _doc_codebook() -> tuple[dict[str, tuple[bool, tuple[str, ...]]], tuple[str, ...]]:
    text = DOCS.read_text()
    section = text.split("### Codebook", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"^\| `(\w+)` \| (.+?) \| (.+?) \|$", line)
        if not m or m.group(1) == "field":
            continue
        cell = re.sub(r"\(.*?\)", "", m.group(2))
        values = tuple(re.findall(r"`(\w+)`", cell))
        rows[m.group(1)] = (cell.startswith("list of"), values)
    changes = re.search(r"Pair `changes` use: (.+?)\.\n", section, re.S).group(1)
    return rows, tuple(re.findall(r"`(\w+)`", changes))


def test_docs_codebook_matches_code():
    rows, changes = _doc_codebook()
    assert set(rows) == set(CODEBOOK)
    for name, spec in CODEBOOK.items():
        assert rows[name] == (spec.multi, spec.values), name
    assert changes == PAIR_CHANGES
