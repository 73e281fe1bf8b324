"""One code path per quantity in the scorer (issue 30): every metric kernel is called once per
selected submission, its bootstrap replicates in the same call, and every published copy of a
quantity (``scores.ece``, ``calibration_measures.ece_10``, the survival reliability groups, the
replicates) is read from that one call."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from automd_analysis import metrics, tasks
from automd_analysis.archive import open_archive
from automd_analysis.metrics import calibration, concordance, discrimination, survival_calibration
from automd_analysis.scoring import worker
from automd_analysis.scoring.metrics_for import SubmissionEvaluation
from automd_analysis.scoring.replicates import task_resample_weights

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "small"
N_BOOT = 30
#: The kernels counted: one pass of each is one call.
KERNELS = {
    concordance.concordance_td.__code__: "concordance_td",
    discrimination.auroc.__code__: "auroc",
    calibration.ece.__code__: "ece",
    survival_calibration._parts.__code__: "survival_ece",
}


def _selected(task_id: str):
    """A valid selected submission of ``task_id`` in the fixture, with its task and labels."""
    task = tasks.get_task(task_id, data=FIXTURE / "data", manifests=FIXTURE / "manifests")
    labels = tasks.load_labels(task)
    for run in open_archive(FIXTURE / "archive").runs():
        if run.task == task_id and run.experiment == "main" and run.submission_path is not None:
            entry = worker.score_file(task, run.submission_path, labels)
            if entry["valid"]:
                return task, labels, run.submission_path
    raise AssertionError(f"no valid selected submission of {task_id}")


def _calls(fn) -> tuple[object, Counter]:
    calls: Counter = Counter()

    def count(frame, event, arg):
        if event == "call" and frame.f_code in KERNELS:
            calls[KERNELS[frame.f_code]] += 1

    sys.setprofile(count)
    try:
        value = fn()
    finally:
        sys.setprofile(None)
    return value, calls


@pytest.mark.parametrize(
    ("task_id", "kernel"), [("fx_surv", "concordance_td"), ("fx_cls", "auroc")]
)
def test_each_kernel_is_called_once_per_selected_submission(task_id, kernel):
    task, labels, path = _selected(task_id)
    entry, calls = _calls(
        lambda: worker.score_file(task, path, labels, details=True, bootstrap=(N_BOOT, 0))
    )
    groups = [r for r in entry["details"]["subgroups"] if r["eligible"]]
    reps = entry["details"]["subgroup_replicates"]
    assert groups and len(reps) == len(groups)
    # the primary metric with its replicates, then each eligible subgroup with its replicates
    assert calls[kernel] == 1 + len(groups)
    # the scored ECE with its replicates, and the 15-bin ECE of calibration_measures
    ece = "survival_ece" if task_id == "fx_surv" else "ece"
    assert calls[ece] == 2


def test_every_copy_of_the_ece_is_the_one_call_to_the_last_bit():
    task, labels, path = _selected("fx_surv")
    entry = worker.score_file(task, path, labels, details=True, bootstrap=(N_BOOT, 0))
    preds = worker.submissions.validate_submission(task, path, labels).predictions
    grid = labels.time_grid if preds.time_grid is None else preds.time_grid
    args = (labels.duration, labels.event, preds.surv, grid)
    single = metrics.survival_ece(*args)
    weights = task_resample_weights(task.id, len(labels.duration), N_BOOT, 0)
    assert entry["metrics"]["ece"] == single.ece
    assert entry["details"]["calibration_measures"]["ece_10"] == single.ece
    kept = [r["observed"] for r in entry["details"]["calibration_bins"]]
    np.testing.assert_array_equal(kept, single.groups["km"])
    replicates = metrics.survival_ece(*args, weights=weights)
    np.testing.assert_array_equal(entry["details"]["bootstrap"]["ece"], replicates)


def test_the_auroc_of_an_auroc_task_is_its_primary_metric():
    task, labels, path = _selected("fx_cls")
    preds = worker.submissions.validate_submission(task, path, labels).predictions
    ev = SubmissionEvaluation("classification", labels, preds, metric="auroc")
    value, calls = _calls(lambda: (ev.primary.observed, ev.auroc()))
    assert value[0] == value[1] == metrics.auroc(labels.label, preds.probability)
    assert calls["auroc"] == 1


def test_an_evaluation_of_another_submission_is_refused():
    task, labels, path = _selected("fx_cls")
    preds = worker.submissions.validate_submission(task, path, labels).predictions
    ev = SubmissionEvaluation("classification", labels, preds, metric="auroc")
    with pytest.raises(ValueError, match="not classification/min_se_ppv"):
        worker.metric_record("classification", "min_se_ppv", 0.0, labels, preds, evaluation=ev)
    with pytest.raises(ValueError, match="without the task's primary metric"):
        SubmissionEvaluation("classification", labels, preds).primary  # noqa: B018
