"""The scoring seam: one flat record of calibration measures per submission, per task kind."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from automd_analysis import metrics
from automd_analysis.scoring.calibration_measures import (
    CALIBRATION_MEASURE_COLUMNS,
    CURVE_COLUMNS,
    NET_BENEFIT_THRESHOLDS,
    calibration_curve_rows,
    calibration_measures,
    net_benefit_column,
    survival_horizon,
)
from automd_analysis.submissions import AlignedPredictions
from automd_analysis.tasks import TaskLabels


def _binary(n=600, seed=0, patients=None):
    rng = np.random.default_rng(seed)
    p = rng.beta(2, 6, n)
    y = (rng.random(n) < np.clip(1.3 * p, 0, 1)).astype(np.int8)
    if patients is None:
        ids = pd.DataFrame({"id": [str(i) for i in range(n)]})
    else:
        pid = np.repeat([f"p{k:03d}" for k in range(patients)], n // patients)
        ids = pd.DataFrame({"patient": pid, "hour": [str(h % (n // patients)) for h in range(n)]})
    return TaskLabels(ids=ids, label=y), AlignedPredictions(probability=p)


def _survival(n=500, seed=1, events=True):
    rng = np.random.default_rng(seed)
    rate = 0.1 * np.exp(rng.normal(0, 0.8, n))
    t = np.minimum(rng.exponential(1 / rate), rng.exponential(30, n))
    e = (rng.random(n) < 0.8).astype(np.int8) if events else np.zeros(n, np.int8)
    grid = np.linspace(0, 40, 101)
    surv = np.exp(-np.outer(1.2 * rate, grid))
    labels = TaskLabels(ids=pd.DataFrame({"id": [str(i) for i in range(n)]}), duration=t, event=e)
    return labels, AlignedPredictions(surv=surv, time_grid=grid)


def _is_scalar(value):
    return isinstance(value, float | int | str) and not isinstance(value, bool)


@pytest.mark.parametrize("kind", ["classification", "sequential", "survival"])
def test_record_has_every_column_as_a_python_scalar(kind):
    if kind == "survival":
        labels, preds = _survival()
    else:
        labels, preds = _binary(patients=60 if kind == "sequential" else None)
    row = calibration_measures(kind, labels, preds)
    assert tuple(row) == CALIBRATION_MEASURE_COLUMNS
    assert all(_is_scalar(v) for v in row.values())
    json.dumps(row)  # cacheable as JSON (nan is allowed by json.dumps)


def test_classification_record_equals_the_metric_functions():
    labels, preds = _binary()
    y, p = labels.label, preds.probability
    row = calibration_measures("classification", labels, preds)
    assert row["ece_10"] == metrics.ece(y, p, 10)
    assert row["ece_15"] == metrics.ece(y, p, 15)
    assert row["ece_equal_mass_10"] == metrics.ece_equal_mass(y, p, 10)
    cis = metrics.calibration_intercept_slope(y, p)
    assert (row["cal_intercept"], row["cal_slope"]) == (cis.intercept, cis.slope)
    assert row["cal_se_method"] == "model" and row["n_clusters"] == len(y)
    assert row["ici"] == metrics.ici(y, p).ici
    assert row["spiegelhalter_z"] == metrics.spiegelhalter_z(y, p).z
    assert row["brier"] == pytest.approx(np.mean((p - y) ** 2), abs=1e-15)
    dc = metrics.net_benefit(y, p, NET_BENEFIT_THRESHOLDS)
    for t, nb in zip(NET_BENEFIT_THRESHOLDS, dc.net_benefit, strict=True):
        assert row[net_benefit_column(t)] == nb
    assert row["citl_difference"] == pytest.approx(y.mean() - p.mean())
    assert math.isnan(row["dcal_statistic"]) and math.isnan(row["horizon"])
    assert row["measure_warnings"] == ""


def test_sequential_record_clusters_by_patient():
    labels, preds = _binary(n=1200, seed=2, patients=100)
    row = calibration_measures("sequential", labels, preds)
    pid = labels.ids["patient"].to_numpy()
    ref = metrics.calibration_intercept_slope(labels.label, preds.probability, groups=pid)
    assert row["cal_se_method"] == "cluster" and row["n_clusters"] == 100
    assert row["cal_slope_se"] == pytest.approx(ref.slope_se, rel=1e-12)
    assert row["cal_intercept_lo"] == pytest.approx(ref.intercept_lo, rel=1e-12)


def test_survival_record_equals_the_metric_functions():
    labels, preds = _survival()
    t, e, s, grid = labels.duration, labels.event, preds.surv, preds.time_grid
    row = calibration_measures("survival", labels, preds)
    assert row["ece_10"] == metrics.survival_ece(t, e, s, grid).ece
    assert row["ece_15"] == metrics.survival_ece(t, e, s, grid, n_groups=15).ece
    assert math.isnan(row["ece_equal_mass_10"]) and math.isnan(row["cal_intercept"])
    h = row["horizon"]
    median = np.quantile(t[e == 1], 0.5)
    assert h in grid and abs(h - median) <= np.min(np.abs(grid - median)) + 1e-12
    at = metrics.survival_calibration_at(t, e, s, grid, h)
    assert row["cal_slope"] == at.slope and row["horizon_ece"] == at.ece
    assert row["ici"] == metrics.survival_ici_at(t, e, s, grid, h).ici
    dcal = metrics.d_calibration(t, e, s, grid)
    assert row["dcal_statistic"] == dcal.statistic and row["dcal_divergence"] == dcal.divergence
    assert math.isnan(row["spiegelhalter_z"]) and math.isnan(row["net_benefit_p05"])


def test_undefined_measures_are_nan_with_messages_not_errors():
    labels, preds = _binary(n=50)
    extreme = preds.probability.copy()
    extreme[3] = 1.0
    row = calibration_measures("classification", labels, AlignedPredictions(probability=extreme))
    assert math.isnan(row["cal_slope"]) and math.isnan(row["cal_intercept"])
    assert "exactly 0 or 1" in row["measure_warnings"]
    assert math.isfinite(row["ece_10"])
    labels, preds = _survival(n=80, events=False)
    row = calibration_measures("survival", labels, preds)
    assert math.isnan(row["horizon"]) and math.isnan(row["ece_10"])
    assert math.isfinite(row["dcal_statistic"])  # defined with censored patients only
    assert "no event" in row["measure_warnings"]


def test_misaligned_predictions_and_unknown_kind_raise():
    labels, preds = _binary(n=20)
    with pytest.raises(ValueError, match="must align"):
        calibration_measures(
            "classification", labels, AlignedPredictions(probability=preds.probability[:5])
        )
    with pytest.raises(ValueError, match="kind"):
        calibration_measures("regression", labels, preds)


def test_curve_rows():
    labels, preds = _binary(n=400)
    rows = calibration_curve_rows("classification", labels, preds)
    assert len(rows) == 101 and all(tuple(r) == CURVE_COLUMNS for r in rows)
    curve = metrics.smoothed_calibration_curve(labels.label, preds.probability)
    assert [r["observed"] for r in rows] == pytest.approx(list(curve.observed), nan_ok=True)
    labels, preds = _survival()
    rows = calibration_curve_rows("survival", labels, preds, points=[0.1, 0.3])
    h = survival_horizon(labels.duration, labels.event, preds.time_grid)
    assert [r["horizon"] for r in rows] == [h, h] and rows[0]["kind"] == "survival"
    labels, preds = _survival(n=30, events=False)
    assert calibration_curve_rows("survival", labels, preds) == []


def test_deterministic_records():
    labels, preds = _binary(n=3000, seed=5, patients=300)
    a = calibration_measures("sequential", labels, preds)
    b = calibration_measures("sequential", labels, preds)
    assert json.dumps(a) == json.dumps(b)


@pytest.mark.parametrize("kind", ["classification", "survival"])
def test_ece_10_is_the_score_store_ece(kind):
    # the record's ece_10 is the paper's ECE the scorer already stores (scores.parquet `ece`)
    from automd_analysis.scoring.metrics_for import metric_record

    if kind == "survival":
        labels, preds = _survival(n=700, seed=7)
        metric = "ctd_adj_antolini"
    else:
        labels, preds = _binary(n=700, seed=7)
        metric = "auroc"
    record = metric_record(kind, metric, 0.5, labels, preds)
    assert calibration_measures(kind, labels, preds)["ece_10"] == record["ece"]
