"""Small-cell suppression and identifiers: what a shared report may contain (docs/security.md)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from automd_analysis.report.disclosure import (
    DEFAULT_MIN_CELL,
    DisclosurePolicy,
    disclosure_policy,
)
from automd_analysis.tasks import load_manifests, sha256_file

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "small"


def _reliability() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "task": ["mimic", "mimic", "mimic", "demo", "demo"],
            "agent": ["a"] * 5,
            "bin": [0, 1, 2, 0, 1],
            "n": [3, 10, 40, 2, 50],
            "mean_pred": [0.05, 0.15, 0.25, 0.05, 0.15],
            "observed": [0.0, 0.1, 0.3, 0.5, 0.1],
        }
    )


def test_default_policy_covers_credentialed_and_dua_tasks_only():
    access = {"mimic": "credentialed", "seer": "dua", "demo": "public", "syn": "synthetic"}
    policy = disclosure_policy(None, access, sorted(access))
    assert policy.tasks == frozenset({"mimic", "seer"}) and policy.min_cell == DEFAULT_MIN_CELL
    out = policy.apply(_reliability(), "reliability_bins")
    # restricted task: bins below 11 withheld (3 and 10); the public task untouched (2 kept)
    assert out[["task", "n"]].values.tolist() == [["mimic", 40], ["demo", 2], ["demo", 50]]
    assert "credentialed" in policy.describe() and "mimic, seer" in policy.describe()


def test_explicit_threshold_applies_to_every_task_and_zero_disables():
    everywhere = disclosure_policy(5, {"demo": "public"}, ["demo"])
    assert everywhere.tasks is None
    out = everywhere.apply(_reliability(), "reliability_bins")
    assert out["n"].tolist() == [10, 40, 50]
    assert "every task" in everywhere.describe()
    off = disclosure_policy(0, {"mimic": "credentialed"}, ["mimic"])
    assert off.apply(_reliability(), "reliability_bins").equals(_reliability())
    assert "off" in off.describe()


def test_counts_are_shown_as_below_threshold_not_dropped():
    frame = pd.DataFrame(
        {
            "run_id": ["r1", "r2", "r3"],
            "task": ["mimic", "mimic", "demo"],
            "n_patients": [500, 7, 3],
            "n_changed_last": [0, 12, 1],
            "n_retained_rows": [9000, 80, 20],
            "n_changed_rows": [0, 10, 0],
            "fraction_all_rows": [0.0, 0.125, 0.0],
        }
    )
    out = DisclosurePolicy(11, frozenset({"mimic"})).apply(frame, "masking_runs")
    assert out["n_patients"].tolist() == [500, "<11", 3]
    assert out["n_changed_last"].tolist() == ["<11", 12, 1]  # zero is a small count too
    assert out["n_changed_rows"].tolist() == ["<11", "<11", 0]
    assert out["fraction_all_rows"].tolist() == [0.0, 0.125, 0.0]
    assert frame["n_patients"].tolist() == [500, 7, 3]  # the input is not modified


def test_subgroup_rows_of_small_groups_are_withheld():
    frame = pd.DataFrame(
        {"task": ["mimic"] * 3, "attribute": ["race"] * 3, "group": ["A", "B", "C"],
         "n_mean": [200.0, 10.5, 11.0], "mean": [0.7, 0.9, 0.6]}
    )  # fmt: skip
    out = DisclosurePolicy(11, frozenset({"mimic"})).apply(frame, "subgroup_results")
    assert out["group"].tolist() == ["A", "C"]


def test_agent_level_counts_are_not_patient_counts():
    frame = pd.DataFrame({"task": ["mimic"], "agent": ["a"], "n_runs": [2], "n_valid": [1]})
    out = DisclosurePolicy(11, None).apply(frame, "run_coverage")
    assert out.equals(frame)


# ---------------------------------------------------------------------------------------------
# a rendered report never contains a patient identifier


def _renamed_ids(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    out = frame.copy()
    for col in columns:
        if col in out.columns:
            out[col] = "PX" + out[col].astype(str) + "Q"
    return out


@pytest.fixture(scope="module")
def credentialed_fixture(tmp_path_factory) -> tuple[Path, Path, Path, set[str]]:
    """The fixture with distinctive patient ids (PX<id>Q) and every task marked credentialed."""
    base = tmp_path_factory.mktemp("credentialed")
    data, manifests, archive = base / "data", base / "manifests", base / "archive"
    shutil.copytree(FIXTURE / "data", data)
    shutil.copytree(FIXTURE / "manifests", manifests)
    shutil.copytree(FIXTURE / "archive", archive)
    ids: set[str] = set()
    for path in sorted(manifests.glob("*.yaml")):
        text = path.read_text()
        doc = yaml.safe_load(text)
        patient = list(doc["submission"]["id_columns"])[:1]  # sequential: (patient, hour)
        labels = data / doc["files"][doc["labels"]["file"]]["path"]
        frame = _renamed_ids(pd.read_csv(labels, dtype=str, keep_default_na=False), patient)
        frame.to_csv(labels, index=False, lineterminator="\n")
        ids |= set(frame[patient[0]])
        for sub in archive.glob(f"*/*/{doc['id']}/rep*/**/submission.csv"):
            try:
                text_sub = pd.read_csv(sub, dtype=str, keep_default_na=False)
            except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError):
                continue  # a deliberately corrupt file of the fixture: left as it is
            _renamed_ids(text_sub, patient).to_csv(sub, index=False, lineterminator="\n")
        assert "access: synthetic" in text
        old_sha = doc["files"][doc["labels"]["file"]]["sha256"]
        text = text.replace("access: synthetic", "access: credentialed")
        path.write_text(text.replace(old_sha, sha256_file(labels)))
    return archive, data, manifests, ids


@pytest.mark.slow
def test_rendered_report_holds_no_identifier_and_no_small_cell(credentialed_fixture, tmp_path):
    archive, data, manifests, ids = credentialed_fixture
    assert all(m.source.access == "credentialed" for m in load_manifests(manifests).values())
    out = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "automd_analysis", "regenerate", str(archive), "--out", str(out),
         "--data", str(data), "--manifests", str(manifests), "--scores", str(tmp_path / "scores"),
         "--jobs", "2", "--masking-results", str(FIXTURE / "masking.csv"),
         "--embedding-backend", "hashing"],
        capture_output=True, text=True, cwd=ROOT, timeout=1800,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pattern = re.compile(r"PX[^Q\s\"'<>,]*Q")
    scanned = 0
    for path in sorted(p for p in out.rglob("*") if p.is_file() and p.suffix != ".png"):
        text = path.read_text(encoding="utf-8", errors="replace")
        found = set(pattern.findall(text)) & ids
        assert not found, f"{path.relative_to(out)} contains patient ids {sorted(found)[:5]}"
        scanned += 1
    assert scanned > 50 and ids and all(pattern.fullmatch(i) for i in ids)
    bins = pd.read_csv(out / "tables" / "reliability_bins.csv")
    assert (bins["n"] >= DEFAULT_MIN_CELL).all()
    subgroups = pd.read_csv(out / "tables" / "subgroup_results.csv")
    assert (subgroups["n_mean"] >= DEFAULT_MIN_CELL).all()
    index = (out / "index.html").read_text()
    assert "small-cell suppression" in index and "credentialed" in index
