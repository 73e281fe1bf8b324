"""Validated predictions + hidden labels -> the metric record of one file, per task kind.

Pure functions: they take arrays already aligned to the hidden-label row order
(:class:`~automd_analysis.submissions.AlignedPredictions`, :class:`~automd_analysis.tasks.TaskLabels`)
and return plain dicts of Python scalars, ready to be cached as JSON. The metrics themselves are
:mod:`automd_analysis.metrics`: the primary metric is the manifest's declaration in
:data:`~automd_analysis.metrics.BUILTIN_METRICS`, called on the kind's arrays
(:func:`metric_inputs`), as every user metric is (paper section 3.3, App. E and F;
docs/decisions.md items 10-13):

=============================  ===============================  =====================  ========
kind / metric                  raw (primary)                    AUROC                  Brier
=============================  ===============================  =====================  ========
survival / ctd_adj_antolini    C^td, ``adj_antolini``           -                      -
classification / auroc         AUROC of PredictedProbability    same                   yes
classification / min_se_ppv    min(Se, PPV) of PredictedLabel   of the probability     yes
sequential / utility_2019      PhysioNet 2019 utility           over patient-hours     yes
=============================  ===============================  =====================  ========

ECE is the 10-equal-width-bin ECE of the probability for binary and sequential tasks (sequential:
over patient-hours) and the Kaplan-Meier ECE at the 25th/50th/75th event-time percentiles for
survival (App. F). The normalised score is eq. (1), clipped to [0, 1].
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from automd_analysis import metrics
from automd_analysis.metrics import UndefinedMetricWarning
from automd_analysis.metrics.registry import KINDS

__all__ = [
    "DEFAULT_ECE_BINS",
    "METRIC_FIELDS",
    "SCORING_SETTINGS",
    "calibration_rows",
    "metric_inputs",
    "metric_record",
    "primary_metric",
]

#: Keys of the record :func:`metric_record` returns.
METRIC_FIELDS = ("raw", "score", "auroc", "ece", "brier", "n", "n_rows", "n_events", "warnings")

#: Equal-width bins of the ECE of binary and hourly tasks unless ``automd score --ece-bins`` says
#: otherwise (paper App. F: 10).
DEFAULT_ECE_BINS = 10
_N_BINS = DEFAULT_ECE_BINS
#: Scoring settings that change stored numbers; recorded in ``store.json`` (``settings``) so that a
#: notebook asked for another value can say so instead of silently showing the stored one. The
#: defaults: ``ece_n_bins`` is what ``--ece-bins`` sets.
SCORING_SETTINGS: dict[str, object] = {
    "ece_n_bins": _N_BINS,
    "survival_ece_quantiles": [0.25, 0.5, 0.75],
    "survival_ece_groups": 10,
    "survival_ece_min_group": 5,
}


def _f(x: Any) -> float:
    return float("nan") if x is None else float(x)


class _Warnings:
    """Run metric calls, collecting :class:`UndefinedMetricWarning` messages instead of printing."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def __call__(self, fn: Callable, *args, **kwargs):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UndefinedMetricWarning)
            value = fn(*args, **kwargs)
        for w in caught:
            if issubclass(w.category, UndefinedMetricWarning):
                self.messages.append(str(w.message))
            else:  # pragma: no cover - re-emit anything else unchanged
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return value


def _check_aligned(n_expected: int, **arrays: np.ndarray | None) -> None:
    for name, arr in arrays.items():
        if arr is not None and len(arr) != n_expected:
            raise ValueError(
                f"predictions {name!r} have {len(arr)} rows but the labels have {n_expected}; "
                "validate_submission must align predictions to the labels"
            )


def metric_inputs(kind: str, labels, predictions) -> metrics.MetricInputs:
    """The arrays every metric of ``kind`` receives (:class:`~automd_analysis.metrics.MetricInputs`).

    Survival: durations, events, the curves and their grid (the submission's, else the task's);
    classification: outcome and probability, plus the submitted labels when present; sequential:
    patient ids (first id column), hours (second), outcome, probability and labels, with the
    patients as resampling units.

    Raises
    ------
    ValueError
        Unknown kind, or predictions not aligned to the labels.
    """
    if kind == "survival":
        t, e = labels.duration, labels.event
        grid = predictions.time_grid if predictions.time_grid is not None else labels.time_grid
        _check_aligned(len(t), surv=predictions.surv)
        return metrics.MetricInputs(kind, (t, e, predictions.surv, grid), n_units=len(t))
    if kind not in ("classification", "sequential"):
        raise ValueError(f"unknown task kind {kind!r}")
    y, p, label = labels.label, predictions.probability, predictions.label
    _check_aligned(len(y), probability=p, label=label)
    if kind == "classification":
        return metrics.MetricInputs(kind, (y, p), label=label, n_units=len(y))
    pid = labels.ids.iloc[:, 0].to_numpy()
    hours = labels.ids.iloc[:, 1].astype(np.int64).to_numpy()
    return metrics.MetricInputs(kind, (pid, hours, y, p, label), n_units=len(pd.unique(pid)))


def primary_metric(kind: str, metric: str) -> metrics.Metric:
    """The declaration of the task's primary metric; ValueError if it does not score ``kind``."""
    found = metrics.BUILTIN_METRICS.get(metric)
    if found is None or kind not in found.kinds:
        if kind == "survival":
            raise ValueError(f"survival tasks are scored with ctd_adj_antolini, not {metric!r}")
        raise ValueError(f"unknown metric {metric!r} for kind {kind!r}")
    return found


def metric_record(
    kind: str,
    metric: str,
    null_score: float,
    labels,
    predictions,
    *,
    ece_bins: int = DEFAULT_ECE_BINS,
) -> dict:
    """Score one validated submission.

    Parameters
    ----------
    kind : {"survival", "classification", "sequential"}
    metric : {"ctd_adj_antolini", "auroc", "min_se_ppv", "utility_2019"}
        The task's primary metric m.
    null_score : float
        m0 of eq. (1).
    labels : TaskLabels
        Hidden outcomes (row order = the order ``predictions`` are aligned to).
    predictions : AlignedPredictions
        From a *valid* :func:`~automd_analysis.submissions.validate_submission` result.
    ece_bins : int, default 10
        Equal-width bins of the ECE of binary and hourly tasks (``automd score --ece-bins``).

    Returns
    -------
    dict
        ``raw`` (m), ``score`` (eq. (1) of m, clipped to [0, 1]), ``auroc``, ``ece``, ``brier``
        (NaN where they do not apply), ``n`` (units: patients / encounters / stays; sequential:
        patients), ``n_rows`` (sequential: patient-hours), ``n_events`` (events, positives, or
        septic patients) and ``warnings`` (messages of undefined metrics, which are NaN).

    Raises
    ------
    ValueError
        Unknown kind/metric, or predictions not aligned to the labels.
    """
    w = _Warnings()
    nan = float("nan")
    if kind not in KINDS:
        raise ValueError(f"unknown task kind {kind!r}")
    declared = primary_metric(kind, metric)
    inputs = metric_inputs(kind, labels, predictions)
    raw = w(declared.evaluate, inputs)
    if kind == "survival":
        t, e = labels.duration, labels.event
        ece = w(metrics.survival_ece, *inputs.args).ece
        record = {"raw": raw, "auroc": nan, "ece": ece, "brier": nan}
        record |= {"n": len(t), "n_rows": len(t), "n_events": int(np.sum(e))}
    else:
        y, p = labels.label, predictions.probability
        record = {
            "raw": raw,
            "auroc": w(metrics.auroc, y, p),
            "ece": w(metrics.ece, y, p, n_bins=ece_bins),
            "brier": w(metrics.brier, y, p),
        }
        if kind == "sequential":
            pid = inputs.args[0]
            patients = np.unique(pid)
            septic = np.unique(pid[np.asarray(y) == 1])
            record |= {"n": len(patients), "n_rows": len(y), "n_events": len(septic)}
        else:
            record |= {"n": len(y), "n_rows": len(y), "n_events": int(np.sum(y))}
    raw = _f(record["raw"])
    record["raw"] = raw
    record["score"] = nan if math.isnan(raw) else metrics.normalized_score(raw, null_score)
    for k in ("auroc", "ece", "brier"):
        record[k] = _f(record[k])
    record["warnings"] = sorted(set(w.messages))
    return record


def calibration_rows(
    kind: str, labels, predictions, *, ece_bins: int = DEFAULT_ECE_BINS
) -> list[dict]:
    """Reliability-diagram rows of one valid submission (``calibration_bins.parquet``).

    Binary and sequential tasks: the ``ece_bins`` (10) equal-width bins of
    :func:`~automd_analysis.metrics.calibration_bins` (``kind = "binary"``, ``bin`` 0-based, empty
    bins included with ``kept = False``, ``weight = n_b / N``). Survival tasks: the Kaplan-Meier
    groups of :func:`~automd_analysis.metrics.survival_ece` at each quantile time (``kind =
    "survival"``, ``bin`` 0-based with 0 = lowest predicted survival, ``observed`` = the group's
    KM survival, ``kept = False`` for groups under 5 patients, ``weight = n_b / sum of kept n_b``).

    Returns
    -------
    list of dict
        Keys ``kind, quantile, time, bin, lo, hi, n, mean_pred, observed, kept, weight``.
    """
    rows = []
    nan = float("nan")
    w = _Warnings()
    if kind == "survival":
        grid = predictions.time_grid if predictions.time_grid is not None else labels.time_grid
        res = w(metrics.survival_ece, labels.duration, labels.event, predictions.surv, grid)
        g = res.groups
        for i in range(len(g["group"])):
            rows.append(
                {
                    "kind": "survival",
                    "quantile": float(g["quantile"][i]),
                    "time": float(g["time"][i]),
                    "bin": int(g["group"][i]) - 1,
                    "lo": nan,
                    "hi": nan,
                    "n": int(g["n"][i]),
                    "mean_pred": float(g["mean_pred"][i]),
                    "observed": float(g["km"][i]),
                    "kept": bool(g["kept"][i]),
                    "weight": float(g["weight"][i]),
                }
            )
        return rows
    bins = metrics.calibration_bins(labels.label, predictions.probability, n_bins=ece_bins)
    total = int(np.sum(bins.n))
    for i in range(len(bins.bin)):
        n_b = int(bins.n[i])
        rows.append(
            {
                "kind": "binary",
                "quantile": nan,
                "time": nan,
                "bin": int(bins.bin[i]) - 1,
                "lo": float(bins.lo[i]),
                "hi": float(bins.hi[i]),
                "n": n_b,
                "mean_pred": float(bins.mean_pred[i]),
                "observed": float(bins.observed[i]),
                "kept": n_b > 0,
                "weight": n_b / total if total else nan,
            }
        )
    return rows
