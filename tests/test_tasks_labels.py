"""``load_labels``: types, order, caching, and a DataError naming the row for broken task data."""

from __future__ import annotations

import numpy as np
import pytest
from test_tasks_tiny import make_tiny_task, repin

from automd_analysis.errors import DataError
from automd_analysis.submissions import validate_submission
from automd_analysis.tasks import load_labels, read_time_grid


def test_survival_labels_types_and_order(tmp_path):
    tiny = make_tiny_task(tmp_path, "survival")
    labels = load_labels(tiny.task)
    assert list(labels.ids.columns) == ["patient_id"]
    assert list(labels.ids["patient_id"]) == list(tiny.labels["patient_id"])
    assert labels.duration.dtype == np.float64 and labels.event.dtype == np.int8
    np.testing.assert_array_equal(labels.duration, tiny.labels["duration"])
    np.testing.assert_array_equal(labels.event, tiny.labels["event"])
    assert labels.label is None
    assert labels.subgroups["age"].dtype == np.float64
    np.testing.assert_array_equal(labels.subgroups["age"], tiny.labels["age"])
    assert list(labels.subgroups["sex"]) == list(tiny.labels["sex"])
    np.testing.assert_array_equal(labels.time_grid, tiny.grid)
    assert load_labels(tiny.task) is labels  # cached on the task
    grid, texts = read_time_grid(tiny.task)
    assert texts == ["0.0", "1.5", "4.0", "7.25"]


def test_sequential_labels_canonical_hours(tmp_path):
    tiny = make_tiny_task(tmp_path, "sequential")
    path = tiny.task.path("labels")
    path.write_text(path.read_text().replace("p000,2,", "p000,2.0,", 1))
    labels = load_labels(repin(tiny))
    assert list(labels.ids.columns) == ["patient_id", "ICULOS"]
    assert labels.ids["ICULOS"].iloc[1] == "2"
    assert labels.label.dtype == np.int8
    assert labels.subgroups.shape == (len(tiny.labels), 0)


def _broken(tmp_path, fmt, edit, key="labels"):
    tiny = make_tiny_task(tmp_path, fmt)
    path = tiny.task.path(key)
    path.write_text(edit(path.read_text()))
    return repin(tiny)


@pytest.mark.parametrize(
    ("fmt", "edit", "location", "text"),
    [
        ("auroc", lambda t: t.replace("id001,", "id000,", 1), "row 2", "duplicate id"),
        ("auroc", lambda t: t.replace("id001,1,", "id001,2,", 1), "row 2, column y", "0 or 1"),
        ("auroc", lambda t: t.replace("id001,1,", "id001,,", 1), "row 2, column y", "0 or 1"),
        ("survival", lambda t: t.replace("id000,1.0,", "id000,-1.0,", 1), "row 1, column duration", ">= 0"),
        ("survival", lambda t: t.replace("event", "status", 1), "header", "missing"),
        ("sequential", lambda t: t.replace("p000,2,", "p000,1.5,", 1), "row 2, column ICULOS", "not an integer"),
        ("sequential", lambda t: t.replace("p000,2,", "p000,9,", 1), "row 3", "not increasing"),
        (
            "sequential",
            lambda t: t.replace("p000,1,0\n", "", 1) + "p000,1,0\n",
            None,
            "not contiguous",
        ),
    ],
)  # fmt: skip
def test_broken_labels_raise_data_error(tmp_path, fmt, edit, location, text):
    task = _broken(tmp_path, fmt, edit)
    with pytest.raises(DataError) as info:
        load_labels(task)
    err = info.value
    assert err.code == "data.invalid"
    assert text in err.message
    if location is not None:
        assert err.location == location
    assert err.path == task.path("labels")
    # a broken task is a data error for every submission, never an "invalid submission"
    with pytest.raises(DataError):
        validate_submission(task, task.path("labels"))


@pytest.mark.parametrize(
    ("edit", "text"),
    [
        (lambda t: "time\n0.0\n4.0\n1.5\n", "strictly increasing"),
        (lambda t: "time,x\n0.0,1\n", "exactly one column"),
        (lambda t: "time\n", "exactly one column"),
        (lambda t: "time\n0.0\nabc\n", "finite number"),
    ],
)
def test_broken_time_grid(tmp_path, edit, text):
    task = _broken(tmp_path, "survival", edit, key="time_grid")
    with pytest.raises(DataError) as info:
        load_labels(task)
    assert text in info.value.message
    assert info.value.path == task.path("time_grid")


def test_empty_labels_file(tmp_path):
    task = _broken(tmp_path, "auroc", lambda t: "")
    with pytest.raises(DataError) as info:
        load_labels(task)
    assert info.value.code == "data.unreadable"
    task = _broken(tmp_path / "b", "auroc", lambda t: t.splitlines()[0] + "\n")
    with pytest.raises(DataError) as info:
        load_labels(task)
    assert "no rows" in info.value.message
