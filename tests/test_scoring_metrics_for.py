"""Metric records per task kind, against hand-computed values and the published test vectors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import brier_score_loss, roc_auc_score

from automd_analysis.scoring.metrics_for import calibration_rows, metric_record
from automd_analysis.submissions import AlignedPredictions
from automd_analysis.tasks import TaskLabels


def _cls(y, p, label=None, ids=None):
    ids = pd.DataFrame({"id": [str(i) for i in range(len(y))]}) if ids is None else ids
    labels = TaskLabels(ids=ids, label=np.asarray(y, dtype=np.int8))
    preds = AlignedPredictions(
        probability=np.asarray(p, dtype=float),
        label=None if label is None else np.asarray(label, dtype=np.int8),
    )
    return labels, preds


def test_classification_auroc_by_hand():
    labels, preds = _cls([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    rec = metric_record("classification", "auroc", 0.5, labels, preds)
    assert rec["raw"] == pytest.approx(0.75, abs=1e-15)
    assert rec["auroc"] == rec["raw"]
    assert rec["score"] == pytest.approx(0.5, abs=1e-15)  # (0.75 - 0.5) / (1 - 0.5)
    # (0.01 + 0.16 + 0.4225 + 0.04) / 4
    assert rec["brier"] == pytest.approx(0.158125, abs=1e-15)
    # one observation in each of bins 1, 3, 4, 8: mean |p - y|
    assert rec["ece"] == pytest.approx((0.1 + 0.4 + 0.65 + 0.2) / 4, abs=1e-15)
    assert (rec["n"], rec["n_rows"], rec["n_events"]) == (4, 4, 2)
    assert rec["warnings"] == []


def test_min_se_ppv_vector_s12():
    y = [1, 1, 1, 0, 0, 0, 0, 0]
    lab = [1, 1, 0, 1, 0, 0, 0, 1]
    p = [0.9, 0.8, 0.3, 0.7, 0.2, 0.1, 0.25, 0.6]
    labels, preds = _cls(y, p, label=lab)
    rec = metric_record("classification", "min_se_ppv", 0.0, labels, preds)
    assert rec["raw"] == pytest.approx(0.5, abs=1e-15)  # Se = 2/3, PPV = 1/2
    assert rec["score"] == rec["raw"]  # m0 = 0
    assert rec["auroc"] == pytest.approx(roc_auc_score(y, p), abs=1e-12)


def _s19():
    """PhysioNet 2019 end-to-end vector S19 (reference doc): utility 0.981905, AUROC 0.95."""
    pid, hour, y, pred, prob = [], [], [], [], []
    for h in range(30):
        pid.append("A")
        hour.append(h)
        y.append(int(h >= 20))
        pred.append(int(h >= 16))
        prob.append(0.9 if h >= 16 else 0.1)
    for h in range(20):
        pid.append("B")
        hour.append(h)
        y.append(0)
        pred.append(int(h >= 17))
        prob.append(0.7 if h >= 17 else 0.2)
    ids = pd.DataFrame({"patient": pid, "hour": [str(h) for h in hour]})
    return _cls(y, prob, label=pred, ids=ids)


def test_sequential_vector_s19():
    labels, preds = _s19()
    rec = metric_record("sequential", "utility_2019", 0.0, labels, preds)
    assert rec["raw"] == pytest.approx((7.18333333333 + 10) / (7.5 + 10), abs=1e-9)
    assert rec["raw"] == pytest.approx(0.981905, abs=1e-6)
    assert rec["auroc"] == pytest.approx(0.95, abs=1e-12)
    assert (rec["n"], rec["n_rows"], rec["n_events"]) == (2, 50, 1)


def test_negative_utility_clips_to_zero():
    labels, preds = _s19()
    # alarms only for the non-septic patient B: 20 false alarms, septic A missed entirely
    wrong = np.r_[np.zeros(30), np.ones(20)].astype(np.int8)
    rec = metric_record(
        "sequential", "utility_2019", 0.0, labels, AlignedPredictions(preds.probability, wrong)
    )
    assert rec["raw"] == pytest.approx(-20 * 0.05 / (7.5 + 10), abs=1e-12)
    assert rec["score"] == 0.0


def _p1():
    """pycox test vector P1: antolini 2/7, adj_antolini 4/9."""
    grid = np.array([0.0, 1.0, 2.0, 3.0])
    s = np.array(
        [
            [1, 1, 1, 1, 1],
            [0.8, 0.8, 0.6, 0.9, 0.7],
            [0.5, 0.6, 0.5, 0.7, 0.4],
            [0.2, 0.3, 0.5, 0.4, 0.1],
        ]
    )
    labels = TaskLabels(
        ids=pd.DataFrame({"id": list("abcde")}),
        duration=np.array([1, 1, 2, 2.5, 3]),
        event=np.array([1, 1, 0, 1, 1], dtype=np.int8),
        time_grid=grid,
    )
    return labels, AlignedPredictions(surv=s.T.copy(), time_grid=grid)


def test_survival_vector_p1_and_undefined_ece():
    labels, preds = _p1()
    rec = metric_record("survival", "ctd_adj_antolini", 0.5, labels, preds)
    assert rec["raw"] == pytest.approx(4 / 9, abs=1e-15)
    assert rec["score"] == 0.0  # below m0 = 0.5: clipped
    assert math.isnan(rec["auroc"]) and math.isnan(rec["brier"])
    # 5 patients in 10 groups: every group is below 5 patients, so the ECE is undefined
    assert math.isnan(rec["ece"])
    assert rec["warnings"] and "survival ECE" in rec["warnings"][0]
    assert (rec["n"], rec["n_rows"], rec["n_events"]) == (5, 5, 4)


def test_undefined_auroc_is_nan_with_warning_recorded():
    labels, preds = _cls([1, 1, 1], [0.2, 0.5, 0.9])
    rec = metric_record("classification", "auroc", 0.5, labels, preds)
    assert math.isnan(rec["raw"]) and math.isnan(rec["score"]) and math.isnan(rec["auroc"])
    assert any("AUROC" in w for w in rec["warnings"])
    assert rec["brier"] == pytest.approx(np.mean((np.array([0.2, 0.5, 0.9]) - 1) ** 2))


def test_misaligned_predictions_raise():
    labels, _ = _cls([0, 1, 1], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="align"):
        metric_record(
            "classification",
            "auroc",
            0.5,
            labels,
            AlignedPredictions(probability=np.array([0.1, 0.2])),
        )


@pytest.mark.parametrize(
    ("kind", "metric"), [("survival", "auroc"), ("classification", "utility"), ("image", "auroc")]
)
def test_unknown_kind_or_metric(kind, metric):
    labels, preds = _cls([0, 1], [0.1, 0.9])
    with pytest.raises(ValueError):
        metric_record(kind, metric, 0.5, labels, preds)


@settings(max_examples=40, deadline=None)
@given(
    data=st.lists(
        st.tuples(st.integers(0, 1), st.floats(0, 1, allow_nan=False)), min_size=2, max_size=60
    )
)
def test_classification_matches_sklearn_and_bins_are_consistent(data):
    y = np.array([d[0] for d in data])
    p = np.array([d[1] for d in data])
    labels, preds = _cls(y, p)
    rec = metric_record("classification", "auroc", 0.5, labels, preds)
    assert rec["brier"] == pytest.approx(brier_score_loss(y, p), abs=1e-12)
    if 0 < y.sum() < len(y):
        assert rec["raw"] == pytest.approx(roc_auc_score(y, p), abs=1e-12)
        assert rec["score"] == pytest.approx(min(1, max(0, (rec["raw"] - 0.5) / 0.5)), abs=1e-12)
    rows = calibration_rows("classification", labels, preds)
    assert [r["bin"] for r in rows] == list(range(10))
    assert sum(r["n"] for r in rows) == len(y)
    assert sum(r["weight"] for r in rows) == pytest.approx(1.0)
    assert all(r["kept"] == (r["n"] > 0) for r in rows)
    ece = sum(r["weight"] * abs(r["mean_pred"] - r["observed"]) for r in rows if r["kept"])
    assert rec["ece"] == pytest.approx(ece, abs=1e-12)
    for r in rows:
        if r["kept"]:
            inside = (p >= r["lo"]) & ((p < r["hi"]) | ((r["bin"] == 9) & (p <= 1.0)))
            assert inside.sum() == r["n"]
            assert r["mean_pred"] == pytest.approx(p[inside].mean())
            assert r["observed"] == pytest.approx(y[inside].mean())


def test_survival_calibration_rows():
    rng = np.random.default_rng(3)
    n = 60
    t = rng.exponential(10, n).round(1) + 0.1
    e = (rng.random(n) < 0.7).astype(np.int8)
    grid = np.array([0.0, 2.0, 5.0, 8.0, 12.0, 20.0, 40.0])
    risk = rng.normal(size=n)
    s = np.exp(-0.08 * grid[None, :] * np.exp(risk)[:, None])
    labels = TaskLabels(ids=pd.DataFrame({"id": range(n)}), duration=t, event=e, time_grid=grid)
    preds = AlignedPredictions(surv=s, time_grid=grid)
    rows = calibration_rows("survival", labels, preds)
    rec = metric_record("survival", "ctd_adj_antolini", 0.5, labels, preds)
    assert len(rows) == 30  # 3 quantiles x 10 groups
    assert {r["kind"] for r in rows} == {"survival"}
    per_q = {}
    for r in rows:
        assert math.isnan(r["lo"]) and math.isnan(r["hi"])
        per_q.setdefault(r["quantile"], []).append(r)
    assert sorted(per_q) == [0.25, 0.5, 0.75]
    eces = []
    for q, group in per_q.items():
        assert [r["bin"] for r in group] == list(range(10))
        assert sum(r["n"] for r in group) == n
        assert {r["time"] for r in group} <= set(grid)
        assert sum(r["weight"] for r in group if r["kept"]) == pytest.approx(1.0)
        eces.append(
            sum(r["weight"] * abs(r["mean_pred"] - r["observed"]) for r in group if r["kept"])
        )
        t_q = np.quantile(t[e == 1], q)
        assert group[0]["time"] == grid[np.argmin(np.abs(grid - t_q))]
    assert rec["ece"] == pytest.approx(np.mean(eces), abs=1e-12)
