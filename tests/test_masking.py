"""Masking test of the real-time rule (paper App. G): masking rule, alarm comparison, CLI."""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.cli import main
from automd_analysis.errors import DataError
from automd_analysis.masking import (
    MaskingError,
    compare_alarms,
    make_masked_test,
    mask_records,
    masking_plan,
    retained_row_counts,
    run_masking_test,
)
from automd_analysis.tasks import get_task

ID = {"patient_column": "patient_id", "hour_column": "hour"}


# ------------------------------------------------------------------ a tiny sequential task on disk


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _features(n_patients: int = 12, seed: int = 0) -> pd.DataFrame:
    """Hourly rows for patients with 1..40 hours; ``x`` is a per-hour measurement."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n_patients):
        n = [1, 3, 4, 5, 40][i % 5] + i
        for h in range(n):
            rows.append({"patient_id": f"p{i:03d}", "hour": h, "x": round(rng.uniform(), 4)})
    return pd.DataFrame(rows)


def _write_task(tmp_path: Path, kind: str = "sequential", features: pd.DataFrame | None = None):
    """Write a minimal manifest + data root for a sequential (or classification) task."""
    data = tmp_path / "data"
    (data / "tasks" / "tiny").mkdir(parents=True)
    (data / "labels" / "tiny").mkdir(parents=True)
    features = _features() if features is None else features
    feat_path = data / "tasks" / "tiny" / "test_features.csv"
    features.to_csv(feat_path, index=False, lineterminator="\n")
    labels = features[["patient_id", "hour"]].assign(SepsisLabel=0)
    lab_path = data / "labels" / "tiny" / "labels.csv"
    labels.to_csv(lab_path, index=False, lineterminator="\n")
    manifests = tmp_path / "manifests"
    manifests.mkdir()
    if kind == "sequential":
        head = (
            "kind: sequential\nmetric: utility_2019\nnull_score: 0.0\n"
            "submission:\n  id_columns: [patient_id, hour]\n"
            "  probability_column: PredictedProbability\n  label_column: PredictedLabel\n"
            "labels:\n  file: labels\n  id_columns: [patient_id, hour]\n  label: SepsisLabel\n"
        )
    else:
        head = (
            "kind: classification\nmetric: auroc\nnull_score: 0.5\n"
            "submission:\n  id_columns: [patient_id]\n"
            "labels:\n  file: labels\n  id_columns: [patient_id]\n  label: SepsisLabel\n"
        )
    (manifests / "tiny.yaml").write_text(
        "id: tiny\ntitle: Tiny hourly task\norigin: fixture\noutcome: sepsis\n"
        "validation: internal\nshift: none\nshared_test_set: tiny\n"
        + head
        + f"sizes: {{train: 0, test: {features['patient_id'].nunique()}, test_rows: {len(features)}}}\n"
        "files:\n"
        f"  test_features: {{path: tasks/tiny/test_features.csv, sha256: {_sha(feat_path)}}}\n"
        f"  labels: {{path: labels/tiny/labels.csv, sha256: {_sha(lab_path)}, role: hidden}}\n"
        "source: {name: test, citation: none, access: synthetic}\n"
    )
    return data, manifests, features


# ------------------------------------------------------------------------------ the masking rule


def test_retained_row_counts_hand_values():
    n = np.array([1, 2, 3, 4, 5, 10, 10, 20, 100])
    u = np.array([0.9, 0.4, 0.9, 0.4, 0.9, 0.4, 0.7, 0.55, 0.45])
    # min(n, max(4, floor(u n))): n < 4 keeps everything, the floor of 4 applies, then floor(u n)
    assert retained_row_counts(n, u).tolist() == [1, 2, 3, 4, 4, 4, 7, 11, 45]


def test_retained_row_counts_rejects_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        retained_row_counts([3, 4], [0.5])
    with pytest.raises(ValueError, match="positive"):
        retained_row_counts([0], [0.5])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        retained_row_counts([5], [1.5])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 300), st.floats(0.40, 0.90)), min_size=1, max_size=30))
def test_retained_row_counts_bounds(pairs):
    n = np.array([p[0] for p in pairs])
    u = np.array([p[1] for p in pairs])
    kept = retained_row_counts(n, u)
    assert (kept <= n).all()
    assert (kept >= np.minimum(n, 4)).all()
    assert (kept[n < 4] == n[n < 4]).all()
    assert (kept >= np.floor(0.40 * n)).all()
    assert (kept <= np.maximum(4, np.floor(0.90 * n))).all()


def test_plan_is_seeded_and_draws_in_bounds():
    features = _features(n_patients=50)
    a = masking_plan(features, "patient_id", "hour", seed=7)
    b = masking_plan(features, "patient_id", "hour", seed=7)
    c = masking_plan(features, "patient_id", "hour", seed=8)
    pd.testing.assert_frame_equal(a, b)
    assert not np.array_equal(a["u"], c["u"])
    assert a["u"].between(0.40, 0.90).all()
    assert a["patient"].tolist() == sorted(a["patient"])
    expected_u = np.random.default_rng(7).uniform(0.40, 0.90, size=50)
    np.testing.assert_array_equal(a["u"].to_numpy(), expected_u)
    assert (a["n_retained"] == retained_row_counts(a["n_rows"].to_numpy(), expected_u)).all()


def test_mask_records_keeps_first_rows_in_time_order_regardless_of_file_order():
    features = _features(n_patients=20)
    shuffled = features.sample(frac=1.0, random_state=3).reset_index(drop=True)
    masked = mask_records(features, "patient_id", "hour", seed=11)
    masked_shuffled = mask_records(shuffled, "patient_id", "hour", seed=11)
    key = ["patient_id", "hour"]
    pd.testing.assert_frame_equal(
        masked.sort_values(key).reset_index(drop=True),
        masked_shuffled.sort_values(key).reset_index(drop=True),
    )
    plan = masking_plan(features, "patient_id", "hour", seed=11).set_index("patient")
    for pid, rows in masked.groupby("patient_id"):
        # hours are 0..n-1 here, so the retained prefix is exactly 0..k-1
        assert sorted(rows["hour"]) == list(range(plan.loc[pid, "n_retained"]))
    # retained rows keep their file order and values
    merged = masked_shuffled.merge(shuffled, on=key, suffixes=("", "_orig"))
    assert (merged["x"] == merged["x_orig"]).all()
    positions = shuffled.reset_index().merge(masked_shuffled, on=key)["index"]
    assert positions.is_monotonic_increasing


def test_mask_records_patients_with_few_rows_keep_all_and_min_four():
    features = _features(n_patients=12)
    masked = mask_records(features, "patient_id", "hour", seed=0)
    n = features.groupby("patient_id").size()
    kept = masked.groupby("patient_id").size().reindex(n.index, fill_value=0)
    assert (kept[n < 4] == n[n < 4]).all()
    assert (kept[n >= 4] >= 4).all()
    assert (kept <= n).all()
    assert (kept[n >= 10] < n[n >= 10]).all()  # u <= 0.9 always removes something at n >= 10


def test_mask_records_errors_are_structured():
    features = _features(n_patients=3)
    with pytest.raises(MaskingError) as err:
        mask_records(features.drop(columns="hour"), "patient_id", "hour", 0)
    assert err.value.code == "masking.columns"
    dup = pd.concat([features, features.iloc[[0]]], ignore_index=True)
    with pytest.raises(MaskingError) as err:
        mask_records(dup, "patient_id", "hour", 0)
    assert err.value.code == "masking.duplicate"
    bad = features.astype({"hour": object})
    bad.loc[2, "hour"] = "noon"
    with pytest.raises(MaskingError) as err:
        mask_records(bad, "patient_id", "hour", 0)
    assert err.value.code == "masking.hour" and "rows 4" in err.value.location


# ------------------------------------------------------------------------------ comparing alarms


def _alarms(spec: dict[str, list[int]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"patient_id": p, "hour": h, "PredictedLabel": a}
            for p, alarms in spec.items()
            for h, a in enumerate(alarms)
        ]
    )


def test_compare_no_change():
    full = _alarms({"a": [0, 0, 1, 1, 1, 1], "b": [0, 0, 0, 0, 0]})
    masked = _alarms({"a": [0, 0, 1, 1], "b": [0, 0, 0, 0]})
    res = compare_alarms(full, masked, **ID)
    assert res.status == "no_change" and not res.violation
    assert (res.n_retained_rows, res.n_patients, res.n_changed_rows) == (8, 2, 0)


def test_compare_hand_counts_violation():
    full = _alarms({"a": [0, 0, 1, 1, 1, 1], "b": [0, 1, 1, 1, 0], "c": [0, 0, 0, 0]})
    # a: hour 3 changed (its last retained row); b: hour 1 changed (not last); c unchanged
    masked = _alarms({"a": [0, 0, 1, 0], "b": [0, 0, 1, 1], "c": [0, 0, 0, 0]})
    res = compare_alarms(full, masked, **ID)
    assert res.n_retained_rows == 12 and res.n_changed_rows == 2
    assert res.changed_fraction_rows == pytest.approx(2 / 12)
    assert res.n_patients == 3 and res.n_changed_last == 1
    assert res.changed_fraction_last == pytest.approx(1 / 3)
    assert res.violation and res.status == "violation"
    assert {(e["patient"], e["hour"]) for e in res.examples} == {("a", 3.0), ("b", 1.0)}
    assert {(e["full"], e["masked"]) for e in res.examples} == {(1, 0)}


def test_compare_threshold_is_strict_and_checks_both_measures():
    # 1000 patients x 2 retained rows; one change on a non-last row: 1/2000 = 0.05 % of rows,
    # 0 % of last rows -> below threshold
    full = _alarms({f"p{i:04d}": [0, 0, 0] for i in range(1000)})
    masked = _alarms({f"p{i:04d}": [0, 0] for i in range(1000)})
    masked.loc[0, "PredictedLabel"] = 1  # p0000, hour 0
    res = compare_alarms(full, masked, **ID)
    assert res.n_changed_rows == 1 and res.n_changed_last == 0
    assert res.status == "below_threshold" and not res.violation
    # exactly 0.1 % of last rows changed (1 of 1000): not strictly above -> still not flagged
    masked = _alarms({f"p{i:04d}": [0, 0] for i in range(1000)})
    masked.loc[1, "PredictedLabel"] = 1  # p0000, hour 1 = its last retained row
    res = compare_alarms(full, masked, **ID)
    assert res.changed_fraction_last == pytest.approx(0.001)
    assert not res.violation
    # two last rows changed: 0.2 % of last rows (0.1 % of rows) -> flagged by the last-row measure
    masked.loc[3, "PredictedLabel"] = 1
    res = compare_alarms(full, masked, **ID)
    assert res.changed_fraction_rows == pytest.approx(0.001)
    assert res.changed_fraction_last == pytest.approx(0.002) and res.violation


def test_compare_matches_hours_numerically_and_ids_as_text():
    full = _alarms({"007": [0, 1, 1]})
    masked = full.iloc[:2].astype({"hour": float})
    res = compare_alarms(full.astype({"hour": str}), masked, **ID)
    assert res.status == "no_change" and res.n_retained_rows == 2


def test_compare_input_errors():
    full = _alarms({"a": [0, 0, 1, 1], "b": [0, 0, 0, 0]})
    masked = _alarms({"a": [0, 0], "b": [0, 0]})
    with pytest.raises(MaskingError) as err:
        compare_alarms(full.drop(columns="PredictedLabel"), masked, **ID)
    assert err.value.code == "masking.columns"
    bad = masked.copy()
    bad.loc[1, "PredictedLabel"] = 2
    with pytest.raises(MaskingError) as err:
        compare_alarms(full, bad, **ID)
    assert err.value.code == "masking.label" and err.value.location == "rows 3"
    extra = pd.concat([masked, _alarms({"z": [1]})], ignore_index=True)
    with pytest.raises(MaskingError) as err:
        compare_alarms(full, extra, **ID)
    assert err.value.code == "masking.rows"
    with pytest.raises(MaskingError) as err:
        compare_alarms(full, masked.iloc[:0], **ID)
    assert err.value.code == "masking.empty"
    retained = masked[["patient_id", "hour"]]
    with pytest.raises(MaskingError) as err:
        compare_alarms(full, masked.iloc[:3], retained=retained, **ID)
    assert err.value.code == "masking.rows" and err.value.details["missing"]
    with pytest.raises(ValueError):
        compare_alarms(full, masked, threshold=1.5, **ID)


def test_compare_reports_reproduction_of_the_archived_submission():
    full = _alarms({"a": [0, 0, 1, 1], "b": [0, 0, 0, 0]})
    masked = _alarms({"a": [0, 0], "b": [0, 0]})
    res = compare_alarms(full, masked, original=full, **ID)
    assert res.reproduces_original is True and res.n_changed_vs_original == 0
    original = full.copy()
    original.loc[7, "PredictedLabel"] = 1
    res = compare_alarms(full, masked, original=original, **ID)
    assert res.reproduces_original is False and res.n_changed_vs_original == 1
    assert res.status == "no_change"  # reproduction is reported separately, never flags
    assert compare_alarms(full, masked, **ID).reproduces_original is None


# ------------------------------------------------------------------------- tasks, files, the CLI


def test_make_masked_test_from_task(tmp_path):
    data, manifests, features = _write_task(tmp_path)
    task = get_task("tiny", data=data, manifests=manifests)
    masked = make_masked_test(task, seed=5)
    expected = mask_records(features.astype(str), "patient_id", "hour", seed=5)
    pd.testing.assert_frame_equal(masked, expected)
    again = make_masked_test("tiny", seed=5, data=data, manifests=manifests)
    pd.testing.assert_frame_equal(masked, again)


def test_make_masked_test_refuses_other_kinds_and_modified_files(tmp_path):
    data, manifests, _ = _write_task(tmp_path, kind="classification")
    with pytest.raises(MaskingError) as err:
        make_masked_test("tiny", 0, data=data, manifests=manifests)
    assert err.value.code == "masking.not_sequential"
    data2, manifests2, _ = _write_task(tmp_path / "two")
    (data2 / "tasks" / "tiny" / "test_features.csv").write_text("patient_id,hour,x\np,0,1\n")
    with pytest.raises(DataError) as err:
        make_masked_test("tiny", 0, data=data2, manifests=manifests2)
    assert err.value.code == "checksum.mismatch"
    with pytest.raises(MaskingError) as err:
        make_masked_test("tiny", 0, file_key="nope", data=data2, manifests=manifests2)
    assert err.value.code == "masking.file_key"


def _predict(features_csv: Path, out_csv: Path, look_ahead: bool) -> None:
    """Stand-in for the harness's rerun: causal alarms, or alarms from the whole record."""
    frame = pd.read_csv(features_csv, dtype={"patient_id": str})
    if look_ahead:
        alarm = frame.groupby("patient_id")["x"].transform("max") > 0.97
    else:
        alarm = frame["x"] > 0.7
    out = frame[["patient_id", "hour"]].assign(
        PredictedProbability=frame["x"], PredictedLabel=alarm.astype(int)
    )
    out.to_csv(out_csv, index=False)


def test_cli_make_and_compare(tmp_path, capsys):
    data, manifests, _ = _write_task(tmp_path)
    out = tmp_path / "masked.csv"
    args = ["--data", str(data), "--manifests", str(manifests)]
    with pytest.raises(SystemExit) as code:
        main(["masking", "make", "tiny", "--seed", "3", "--out", str(out), *args])
    assert code.value.code == 0
    assert "wrote" in capsys.readouterr().out
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    task = get_task("tiny", data=data, manifests=manifests)
    pd.testing.assert_frame_equal(written, make_masked_test(task, 3))
    # byte-identical on a second run
    first = out.read_bytes()
    with pytest.raises(SystemExit):
        main(["masking", "make", "tiny", "--seed", "3", "--out", str(out), *args])
    assert out.read_bytes() == first
    capsys.readouterr()

    feats = task.path("test_features")
    for look_ahead, name in ((False, "causal"), (True, "ahead")):
        _predict(feats, tmp_path / f"{name}_full.csv", look_ahead)
        _predict(out, tmp_path / f"{name}_masked.csv", look_ahead)
    m = ["--manifests", str(manifests)]
    with pytest.raises(SystemExit) as code:
        main(["masking", "compare", "tiny", str(tmp_path / "causal_full.csv"),
              str(tmp_path / "causal_masked.csv"), "--masked-test", str(out), "--json", *m])  # fmt: skip
    assert code.value.code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["status"] == "no_change" and payload["violation"] is False
    assert payload["n_retained_rows"] == len(written)
    with pytest.raises(SystemExit) as code:
        main(["masking", "compare", "tiny", str(tmp_path / "ahead_full.csv"),
              str(tmp_path / "ahead_masked.csv"), *m])  # fmt: skip
    assert code.value.code == 1
    assert capsys.readouterr().out.startswith("violation:")


@pytest.mark.slow
def test_cli_errors_are_messages_not_tracebacks(tmp_path, capsys):
    data, manifests, _ = _write_task(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text("patient_id,hour\np001,0\n")
    command = ["masking", "compare", "tiny", str(bad), str(bad), "--manifests", str(manifests)]
    proc = subprocess.run(
        [sys.executable, "-m", "automd_analysis", *command], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "PredictedLabel" in proc.stderr and str(bad) in proc.stderr

    target = data / "tasks" / "tiny" / "test_features.csv"
    before = target.read_bytes()
    with pytest.raises(SystemExit) as code:
        main(["masking", "make", "tiny", "--seed", "1", "--out", str(target)]
             + ["--data", str(data), "--manifests", str(manifests)])  # fmt: skip
    assert code.value.code == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert target.read_bytes() == before  # the task's own file is untouched


def test_run_masking_test_flags_only_the_look_ahead_run(tmp_path):
    data, manifests, _ = _write_task(tmp_path, features=_features(n_patients=40, seed=1))
    task = get_task("tiny", data=data, manifests=manifests)
    runs = {}
    for name in ("causal", "ahead", "broken"):
        run_dir = tmp_path / "archive" / "main" / name / "tiny" / "rep0"
        run_dir.mkdir(parents=True)
        runs[name] = run_dir
    _predict(task.path("test_features"), runs["causal"] / "submission.csv", look_ahead=False)

    def rerun(run_dir, test_features_csv, out_csv):
        if run_dir.parts[-3] == "broken":
            raise RuntimeError("model file missing")
        _predict(test_features_csv, out_csv, look_ahead=run_dir.parts[-3] == "ahead")

    table = run_masking_test(runs.values(), task, seed=2, workdir=tmp_path / "work", rerun=rerun)
    by = table.set_index(table["run_dir"].map(lambda p: Path(p).parts[-3]))
    assert by.loc["causal", "status"] == "no_change"
    assert by.loc["causal", "reproduces_original"] is True
    assert by.loc["ahead", "status"] == "violation" and by.loc["ahead", "violation"]
    assert by.loc["ahead", "changed_fraction_last"] > 0.001
    assert (
        by.loc["broken", "status"] == "error" and "model file missing" in by.loc["broken", "error"]
    )
    assert math.isnan(by.loc["ahead", "n_original_compared"])
    assert (tmp_path / "work" / "tiny_masked_seed2.csv").is_file()
