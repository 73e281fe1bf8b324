"""Tiny hand-made tasks of every submission format, written into a temp dir (and their checks).

Other test modules import :func:`make_tiny_task`; the tests here check that the builder itself
produces tasks the toolkit accepts, so a broken helper fails loudly instead of silently weakening
the tests that use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import yaml

from automd_analysis.submissions import validate_submission
from automd_analysis.tasks import (
    Task,
    TaskManifest,
    get_task,
    load_labels,
    pin_manifest,
    sha256_file,
)
from automd_demo.task_files import render_validator

#: (kind, metric, needs PredictedLabel)
FORMATS = {
    "survival": ("survival", "ctd_adj_antolini", False),
    "auroc": ("classification", "auroc", False),
    "binary": ("classification", "min_se_ppv", True),
    "sequential": ("sequential", "utility_2019", True),
}


@dataclass
class TinyTask:
    task: Task
    manifests: Path
    data: Path
    sample: Path  # a valid submission
    validator: Path  # the task's standalone validate.py
    labels: pd.DataFrame
    grid: np.ndarray | None


def make_tiny_task(base: Path, fmt: str, n: int = 12, task_id: str | None = None) -> TinyTask:
    """Write a pinned tiny task of format ``fmt`` (see :data:`FORMATS`) under ``base``.

    Survival: durations 1..n, alternating events, grid [0, 1.5, 4, 7.25]. Classification:
    alternating labels. Sequential: patients with 3-5 hours each, the last patient septic.
    """
    kind, metric, needs_label = FORMATS[fmt]
    task_id = task_id or f"tiny_{fmt}"
    data = base / "data"
    manifests = base / "manifests"
    (data / "labels" / task_id).mkdir(parents=True, exist_ok=True)
    (data / "tasks" / task_id).mkdir(parents=True, exist_ok=True)
    manifests.mkdir(parents=True, exist_ok=True)
    files = {"labels": {"path": f"labels/{task_id}/test_labels.csv", "role": "hidden"}}
    ids = [f"id{i:03d}" for i in range(n)]
    grid = None
    if kind == "survival":
        labels = pd.DataFrame(
            {
                "patient_id": ids,
                "duration": np.arange(1, n + 1, dtype=float),
                "event": np.arange(n) % 2,
                "age": np.linspace(30, 80, n),
                "sex": ["female", "male"] * (n // 2) + ["female"] * (n % 2),
            }
        )
        grid = np.array([0.0, 1.5, 4.0, 7.25])
        (data / "tasks" / task_id / "time_grid.csv").write_text(
            "time\n" + "".join(f"{float(t)!r}\n" for t in grid)
        )
        files["time_grid"] = {"path": f"tasks/{task_id}/time_grid.csv", "role": "public"}
        sample = pd.DataFrame({"patient_id": ids})
        for k, t in enumerate(grid):
            sample[repr(float(t))] = 1.0 - 0.2 * k
        submission = {"id_columns": ["patient_id"], "probability_column": None}
        submission["time_grid"] = "time_grid"
        label_spec = {
            "file": "labels",
            "id_columns": ["patient_id"],
            "duration": "duration",
            "event": "event",
        }
        sizes = {"train": 0, "test": n}
    elif kind == "classification":
        labels = pd.DataFrame(
            {
                "patient_id": ids,
                "y": np.arange(n) % 2,
                "age": np.linspace(30, 80, n),
                "sex": ["female", "male"] * (n // 2) + ["female"] * (n % 2),
            }
        )
        sample = pd.DataFrame({"patient_id": ids, "PredictedProbability": 0.5})
        submission = {"id_columns": ["patient_id"], "probability_column": "PredictedProbability"}
        if needs_label:
            sample["PredictedLabel"] = 0
            submission["label_column"] = "PredictedLabel"
        label_spec = {"file": "labels", "id_columns": ["patient_id"], "label": "y"}
        sizes = {"train": 0, "test": n}
    else:
        rows = []
        n_patients = max(2, n // 4)
        for p in range(n_patients):
            hours = 3 + p % 3
            septic = p == n_patients - 1
            for h in range(1, hours + 1):
                rows.append((f"p{p:03d}", h, int(septic and h >= 2)))
        labels = pd.DataFrame(rows, columns=["patient_id", "ICULOS", "SepsisLabel"])
        sample = labels[["patient_id", "ICULOS"]].copy()
        sample["PredictedProbability"] = 0.1
        sample["PredictedLabel"] = 0
        submission = {
            "id_columns": ["patient_id", "ICULOS"],
            "probability_column": "PredictedProbability",
            "label_column": "PredictedLabel",
        }
        label_spec = {
            "file": "labels",
            "id_columns": ["patient_id", "ICULOS"],
            "label": "SepsisLabel",
        }
        sizes = {"train": 0, "test": n_patients, "test_rows": len(labels)}
    labels.to_csv(data / "labels" / task_id / "test_labels.csv", index=False, lineterminator="\n")
    id_cols = submission["id_columns"]
    labels[id_cols].to_csv(
        data / "tasks" / task_id / "test_features.csv", index=False, lineterminator="\n"
    )
    sample_path = data / "tasks" / task_id / "sample_submission.csv"
    sample.to_csv(sample_path, index=False, lineterminator="\n")
    for spec in files.values():
        spec["sha256"] = sha256_file(data / spec["path"])
    subgroups = {}
    if kind != "sequential":
        subgroups = {
            "age": {"column": "age", "rule": "tertiles"},
            "sex": {"column": "sex", "rule": "categorical"},
        }
    manifest = {
        "id": task_id,
        "title": f"tiny {fmt} task",
        "origin": "fixture",
        "kind": kind,
        "outcome": "Outcome",
        "validation": "internal",
        "shift": "none",
        "shared_test_set": task_id,
        "metric": metric,
        "null_score": 0.5 if metric in ("ctd_adj_antolini", "auroc") else 0.0,
        "sizes": sizes,
        "submission": submission,
        "labels": label_spec,
        "subgroups": subgroups,
        "files": files,
        "source": {"name": "hand-made", "citation": "tests", "access": "synthetic"},
    }
    (manifests / f"{task_id}.yaml").write_text(
        yaml.safe_dump(manifest, sort_keys=False, default_flow_style=None)
    )
    # the standalone checker an agent would get, configured for this task
    files_for_validator = {
        **files,
        "test_features": {"path": f"tasks/{task_id}/test_features.csv", "role": "public"},
    }
    parsed = TaskManifest.model_validate({**manifest, "files": files_for_validator})
    tables = SimpleNamespace(time_grid=grid, labels=labels)
    (data / "tasks" / task_id / "validate.py").write_text(render_validator(parsed, tables))
    return TinyTask(
        get_task(task_id, data=data, manifests=manifests),
        manifests,
        data,
        sample_path,
        data / "tasks" / task_id / "validate.py",
        labels,
        grid,
    )


def repin(tiny: TinyTask) -> Task:
    """Pin the tiny task's current files (after a test rewrote one) and return a fresh Task."""
    pin_manifest(tiny.manifests / f"{tiny.task.id}.yaml", tiny.data, overwrite=True)
    return get_task(tiny.task.id, data=tiny.data, manifests=tiny.manifests)


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_tiny_task_sample_is_valid_and_aligned(tmp_path, fmt):
    tiny = make_tiny_task(tmp_path, fmt)
    result = validate_submission(tiny.task, tiny.sample)
    assert result.valid, result.to_dict()
    labels = load_labels(tiny.task)
    n = len(tiny.labels)
    assert len(labels.ids) == n
    if fmt == "survival":
        assert result.predictions.surv.shape == (n, 4)
        np.testing.assert_array_equal(result.predictions.surv[0], [1.0 - 0.2 * k for k in range(4)])
        np.testing.assert_array_equal(labels.time_grid, tiny.grid)
    else:
        assert result.predictions.probability.shape == (n,)
    if fmt in ("binary", "sequential"):
        assert result.predictions.label.dtype == np.int8


def test_tiny_task_manifest_pins_its_files(tmp_path):
    tiny = make_tiny_task(tmp_path, "survival")
    for key in tiny.task.manifest.files:
        assert tiny.task.verified_path(key).is_file()
