"""``automd annotate`` end to end through the console entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

# every test runs the console entry point in a subprocess
pytestmark = pytest.mark.slow

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SMALL = FIXTURES / "small"
CORPUS = FIXTURES / "annotate_scripts"


def automd(*args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "automd_analysis", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_annotate_an_archive_then_measure_agreement(tmp_path):
    out = tmp_path / "generated"
    res = automd(
        "annotate", str(SMALL / "archive"), "--out", str(out), "--jobs", "2",
        "--manifests", str(SMALL / "manifests"), "--data", str(SMALL / "data"), "--no-progress",
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "annotations.json written" in res.stdout
    files = sorted(out.rglob("annotations.json"))
    assert files and all(".cache" not in f.parts for f in files)
    doc = json.loads(files[0].read_text())
    assert doc["annotator"].startswith("automd annotate ")
    res = automd("annotate", "agreement", str(SMALL / "archive"), "--generated", str(out),
                 "--out", str(tmp_path / "agreement"))  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert "kappa" in res.stdout and "runs compared:" in res.stdout
    table = (tmp_path / "agreement" / "agreement_fields.csv").read_text().splitlines()
    assert table[0] == "field,n_runs,exact,kappa,multi" and len(table) == 12


def test_annotate_code_prints_one_json_object_per_file():
    project = CORPUS / "codex_project_blend_platt"
    files = [project / "train.py", project / "src" / "features.py", project / "src" / "models.py"]
    res = automd("annotate", "code", *map(str, files), "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert set(report) == {f.as_posix() for f in files}
    train = {a["field"]: a for a in report[files[0].as_posix()]}
    assert set(train["probability_calibration"]) == {"field", "value", "line", "evidence"}
    assert train["probability_calibration"]["value"] == "yes"
    assert train["missingness_features"]["value"] == "yes"
    assert train["missingness_features"]["line"] is None  # cited in src/features.py
    assert train["missingness_features"]["evidence"][0].startswith(files[1].as_posix() + ":")
    features = {a["field"]: a["value"] for a in report[files[1].as_posix()]}
    assert "model_families" not in features  # run alone, features.py fits no model
    alone = automd("annotate", "code", str(files[0]), "--json")  # without its helper modules
    answers = {a["field"]: a["value"] for a in json.loads(alone.stdout)[files[0].as_posix()]}
    assert answers["missingness_features"] == "no"


def test_annotate_code_with_a_task_applies_eligibility(tmp_path):
    script = CORPUS / "aide_coxph_lifelines" / "solution.py"
    res = automd("annotate", "code", str(script), "--json", "--task", "fx_surv",
                 "--manifests", str(SMALL / "manifests"))  # fmt: skip
    assert res.returncode == 0, res.stderr
    answers = {a["field"]: a["value"] for a in json.loads(res.stdout)[script.as_posix()]}
    assert answers["censoring_handling"] == "correct"
    assert answers["class_imbalance_handling"] == "na"


@pytest.mark.parametrize(
    ("case", "script", "split"),
    [
        ("codex_xgb_main_systemexit", "train_xgb.py", "train_test_split("),
        ("aide_lgbm_temporal_earlystop", "solution.py", "is_recent = "),
    ],
)
def test_annotate_code_reads_real_code_shapes(case, script, split):
    """Issue 33: ``main()`` behind ``raise SystemExit(main())`` and a temporal hold-out by a date
    mask were read as no validation; the evidence now cites the split."""
    path = CORPUS / case / script
    res = automd("annotate", "code", str(path), "--json")
    assert res.returncode == 0, res.stderr
    answers = {a["field"]: a for a in json.loads(res.stdout)[path.as_posix()]}
    lines = path.read_text().splitlines()
    assert answers["validation_design"]["value"] == ["single_holdout"]
    assert split in lines[answers["validation_design"]["line"] - 1]
    assert answers["model_families"]["value"] == ["gbdt"]


def test_bad_input_exits_2_without_a_traceback(tmp_path):
    res = automd("annotate", "code", str(tmp_path / "missing.py"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert "annotate.file_missing" not in res.stdout
    res = automd("annotate", str(SMALL / "archive"), "--out", str(SMALL / "archive" / "x"))
    assert res.returncode == 2 and "inside the archive" in res.stderr
    assert not (SMALL / "archive" / "x").exists()
    res = automd("annotate", str(tmp_path / "no_archive"), "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
