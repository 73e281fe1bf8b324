"""Per-run bootstrap replicates: each replicate is the metric record of the resampled test set,
resamples are shared by all runs on a task (paired), sequential tasks resample whole patients."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from automd_analysis.metrics import UndefinedMetricWarning, survival_time_grid
from automd_analysis.scoring.metrics_for import metric_record
from automd_analysis.scoring.replicates import (
    REPLICATE_COLUMNS,
    RunReplicates,
    replicates_frame,
    resample_seed,
    run_replicates,
    task_resample_indices,
)
from automd_analysis.submissions import AlignedPredictions
from automd_analysis.tasks import TaskLabels


def _record(kind, metric, m0, labels, preds):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return metric_record(kind, metric, m0, labels, preds)


def classification(n=120, seed=0, with_label=False):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(np.int8)
    p = np.clip(0.3 + 0.3 * (y - 0.3) + rng.normal(0, 0.2, n), 0, 1).round(2)  # ties
    ids = pd.DataFrame({"id": [f"e{i}" for i in range(n)]})
    label = (p > 0.4).astype(np.int8) if with_label else None
    return TaskLabels(ids=ids, label=y), AlignedPredictions(probability=p, label=label)


def survival(n=150, seed=1):
    rng = np.random.default_rng(seed)
    risk = rng.normal(size=n)
    t_event = rng.exponential(50 * np.exp(-0.8 * risk))
    t_cens = rng.uniform(0, 120, n)
    t = np.round(np.minimum(t_event, t_cens))
    e = (t_event <= t_cens).astype(np.int8)
    grid = survival_time_grid(t, e, n_levels=20)
    surv = np.round(np.exp(-np.outer(np.exp(0.6 * risk), grid) / 50), 3)
    ids = pd.DataFrame({"id": [str(i) for i in range(n)]})
    labels = TaskLabels(ids=ids, duration=t, event=e, time_grid=grid)
    return labels, AlignedPredictions(surv=surv, time_grid=grid)


def sequential(n_patients=40, seed=2):
    rng = np.random.default_rng(seed)
    pid, hour, y, prob = [], [], [], []
    for k in range(n_patients):
        length = int(rng.integers(5, 30))
        onset = int(rng.integers(0, length)) if rng.random() < 0.3 else length + 1
        for h in range(length):
            pid.append(f"p{k:03d}")
            hour.append(str(h))
            y.append(int(h >= onset))
            prob.append(float(np.clip(0.2 + 0.5 * (h >= onset - 4) + rng.normal(0, 0.15), 0, 1)))
    ids = pd.DataFrame({"patient": pid, "hour": hour})
    prob = np.array(prob)
    labels = TaskLabels(ids=ids, label=np.array(y, dtype=np.int8))
    return labels, AlignedPredictions(probability=prob, label=(prob > 0.5).astype(np.int8))


def _take(labels, preds, rows, ids=None):
    """The labels and predictions of the resampled rows (``ids`` replaces the id columns)."""
    ids = labels.ids.iloc[rows].reset_index(drop=True) if ids is None else ids
    new_labels = TaskLabels(
        ids=ids,
        duration=None if labels.duration is None else labels.duration[rows],
        event=None if labels.event is None else labels.event[rows],
        label=None if labels.label is None else labels.label[rows],
        time_grid=labels.time_grid,
    )
    new_preds = AlignedPredictions(
        probability=None if preds.probability is None else preds.probability[rows],
        label=None if preds.label is None else preds.label[rows],
        surv=None if preds.surv is None else preds.surv[rows],
        time_grid=preds.time_grid,
    )
    return new_labels, new_preds


def _close(a, b):
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-12


@pytest.mark.parametrize(
    ("case", "kind", "metric", "m0"),
    [
        (lambda: classification(), "classification", "auroc", 0.5),
        (lambda: classification(with_label=True), "classification", "min_se_ppv", 0.0),
        (lambda: survival(), "survival", "ctd_adj_antolini", 0.5),
    ],
)
def test_replicate_equals_metric_record_of_resampled_rows(case, kind, metric, m0):
    labels, preds = case()
    res = run_replicates(kind, metric, m0, labels, preds, task_id="t1", n_boot=25, seed=3)
    n = len(labels.ids)
    idx = task_resample_indices("t1", n, 25, 3)
    assert res.n_units == n and res.n_boot == 25
    for b in range(25):
        rec = _record(kind, metric, m0, *_take(labels, preds, idx[b]))
        assert _close(res.score[b], rec["score"])
        assert _close(res.ece[b], rec["ece"])


def test_sequential_resamples_whole_patients():
    labels, preds = sequential()
    res = run_replicates(
        "sequential", "utility_2019", 0.0, labels, preds, task_id="seq", n_boot=20, seed=0
    )
    pid = labels.ids["patient"].to_numpy()
    patients = list(dict.fromkeys(pid))
    assert res.n_units == len(patients)
    idx = task_resample_indices("seq", len(patients), 20, 0)
    for b in range(20):
        rows, copy_ids, hours = [], [], []
        for j, k in enumerate(idx[b]):
            mine = np.flatnonzero(pid == patients[k])
            rows.append(mine)
            copy_ids += [f"copy{j}"] * len(mine)
            hours += labels.ids["hour"].iloc[mine].tolist()
        ids = pd.DataFrame({"patient": copy_ids, "hour": hours})
        rec = _record(
            "sequential", "utility_2019", 0.0, *_take(labels, preds, np.concatenate(rows), ids)
        )
        assert _close(res.score[b], rec["score"])
        assert _close(res.ece[b], rec["ece"])


def test_runs_on_one_task_share_resamples_and_tasks_differ():
    labels, preds = classification(n=80)
    other = AlignedPredictions(probability=np.clip(preds.probability[::-1].copy(), 0, 1))
    a = run_replicates("classification", "auroc", 0.5, labels, preds, task_id="t", n_boot=50)
    a2 = run_replicates("classification", "auroc", 0.5, labels, preds, task_id="t", n_boot=50)
    b = run_replicates("classification", "auroc", 0.5, labels, other, task_id="t", n_boot=50)
    c = run_replicates("classification", "auroc", 0.5, labels, preds, task_id="u", n_boot=50)
    np.testing.assert_array_equal(a.score, a2.score)  # deterministic
    assert not np.array_equal(a.score, c.score)  # another task: other resamples
    # same resamples: a replicate b of both runs sees the same rows, so the per-replicate
    # difference equals the difference of the metric records on those rows
    idx = task_resample_indices("t", 80, 50, 0)
    for k in (0, 17, 49):
        ra = _record("classification", "auroc", 0.5, *_take(labels, preds, idx[k]))
        rb = _record("classification", "auroc", 0.5, *_take(labels, other, idx[k]))
        assert _close(a.score[k] - b.score[k], ra["score"] - rb["score"])


def test_intervals_are_percentiles_of_the_replicates():
    labels, preds = classification(n=200)
    res = run_replicates(
        "classification", "auroc", 0.5, labels, preds, task_id="t", n_boot=300, alpha=0.1
    )
    assert res.score_ci_low == pytest.approx(np.quantile(res.score, 0.05), abs=1e-15)
    assert res.score_ci_high == pytest.approx(np.quantile(res.score, 0.95), abs=1e-15)
    assert res.ece_ci_low == pytest.approx(np.quantile(res.ece, 0.05), abs=1e-15)
    full = _record("classification", "auroc", 0.5, labels, preds)
    assert res.score_ci_low < full["score"] < res.score_ci_high


def test_undefined_replicates_are_reported():
    y = np.array([1, 0, 0, 0, 0, 0, 0, 0], dtype=np.int8)  # one positive: often absent
    labels = TaskLabels(ids=pd.DataFrame({"id": list("abcdefgh")}), label=y)
    preds = AlignedPredictions(probability=np.linspace(0.1, 0.8, 8))
    res = run_replicates("classification", "auroc", 0.5, labels, preds, task_id="t", n_boot=40)
    n_nan = int(np.isnan(res.score).sum())
    assert n_nan > 0
    assert any(f"{n_nan} of 40" in m for m in res.warnings)


def test_dict_round_trip_through_json():
    labels, preds = classification(n=30)
    res = run_replicates("classification", "auroc", 0.5, labels, preds, task_id="t", n_boot=10)
    res = RunReplicates(**{**res.__dict__, "score": np.r_[res.score[:-1], np.nan]})
    back = RunReplicates.from_dict(json.loads(json.dumps(res.to_dict())))
    np.testing.assert_array_equal(back.score, res.score)
    np.testing.assert_array_equal(back.ece, res.ece)
    assert back.ci_fields() == res.ci_fields()
    assert (back.n_boot, back.seed, back.alpha, back.n_units) == (10, 0, 0.05, 30)


def test_replicates_frame_layout():
    labels, preds = classification(n=30)
    res = run_replicates("classification", "auroc", 0.5, labels, preds, task_id="t", n_boot=7)
    frame = replicates_frame("main/a/t/rep0", res)
    assert tuple(frame.columns) == REPLICATE_COLUMNS
    assert frame["replicate"].tolist() == list(range(7))
    np.testing.assert_array_equal(frame["score"], res.score)


def test_resample_seed_depends_on_task_and_seed():
    assert resample_seed("a", 0) != resample_seed("a", 1)
    assert resample_seed("a", 0) != resample_seed("b", 0)
    assert resample_seed("a", 0) == resample_seed("a", 0)
    with pytest.raises(ValueError, match="seed"):
        resample_seed("a", -1)


@pytest.mark.parametrize(
    ("kind", "metric", "match"),
    [("survival", "auroc", "ctd_adj_antolini"), ("classification", "utility_2019", "unknown"),
     ("images", "auroc", "kind")],
)  # fmt: skip
def test_bad_kind_or_metric(kind, metric, match):
    labels, preds = classification(n=10)
    with pytest.raises(ValueError, match=match):
        run_replicates(kind, metric, 0.5, labels, preds, task_id="t", n_boot=5)


def test_misaligned_predictions():
    labels, _ = classification(n=10)
    with pytest.raises(ValueError, match="align"):
        run_replicates(
            "classification",
            "auroc",
            0.5,
            labels,
            AlignedPredictions(probability=np.full(9, 0.5)),
            task_id="t",
            n_boot=5,
        )
