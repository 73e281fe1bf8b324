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
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from automd_analysis import metrics
from automd_analysis.docstrings import fill_doc
from automd_analysis.metrics import (
    Replicated,
    observed_first,
    recorded,
    recording,
    stacked_result,
)
from automd_analysis.metrics.registry import KINDS

__all__ = [
    "DEFAULT_ECE_BINS",
    "METRIC_FIELDS",
    "SCORING_SETTINGS",
    "SubmissionEvaluation",
    "WarningLog",
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

#: The ``predictions`` input of the functions that score one submission.
VALID_PREDICTIONS = """
predictions : AlignedPredictions
    From a *valid* :func:`~automd_analysis.submissions.validate_submission` result.
"""

#: The ``ece_bins`` input of the functions that score a submission.
ECE_BINS = """
ece_bins : int, default 10
    Equal-width bins of the ECE of binary and hourly tasks (``automd score --ece-bins``).
"""

#: The Raises entry of the functions that read a submission's predictions against its labels.
RAISES_NOT_ALIGNED = """
ValueError
    Unknown kind, or predictions not aligned to the labels.
"""

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


class WarningLog:
    """Run metric calls, collecting :class:`~automd_analysis.metrics.UndefinedMetricWarning`
    messages instead of printing them (:attr:`messages`)."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def __call__(self, fn: Callable, *args, **kwargs):
        value, caught = recorded(fn, *args, **kwargs)
        self.messages += [str(w) for w in caught]
        return value

    def observed(self, result: Replicated):
        """The observed value of ``result``, its messages collected."""
        self.messages += result.observed_warnings
        return result.observed


def _check_aligned(n_expected: int, **arrays: np.ndarray | None) -> None:
    for name, arr in arrays.items():
        if arr is not None and len(arr) != n_expected:
            raise ValueError(
                f"predictions {name!r} have {len(arr)} rows but the labels have {n_expected}; "
                "validate_submission must align predictions to the labels"
            )


#: Label-only arrays of a sequential task per TaskLabels object: id -> (weak reference, value).
_SEQUENTIAL: dict[int, tuple[weakref.ref, tuple]] = {}


def _sequential_units(labels) -> tuple[np.ndarray, np.ndarray, int, int]:
    """(patient id per row, hour per row, patients, septic patients) of a sequential task's
    labels, computed once per labels object (every file of the task needs them) and forgotten
    with it."""
    hit = _SEQUENTIAL.get(id(labels))
    if hit is not None and hit[0]() is labels:
        return hit[1]
    pid = labels.ids.iloc[:, 0].to_numpy()
    hours = labels.ids.iloc[:, 1].astype(np.int64).to_numpy()
    septic = pid[np.asarray(labels.label) == 1]
    value = (pid, hours, len(pd.unique(pid)), len(pd.unique(septic)))
    forget = weakref.ref(labels, lambda _ref, key=id(labels): _SEQUENTIAL.pop(key, None))
    _SEQUENTIAL[id(labels)] = (forget, value)
    return value


@fill_doc(raises_not_aligned=RAISES_NOT_ALIGNED)
def metric_inputs(kind: str, labels, predictions) -> metrics.MetricInputs:
    """The arrays every metric of ``kind`` receives (:class:`~automd_analysis.metrics.MetricInputs`).

    Survival: durations, events, the curves and their grid (the submission's, else the task's);
    classification: outcome and probability, plus the submitted labels when present; sequential:
    patient ids (first id column), hours (second), outcome, probability and labels, with the
    patients as resampling units.

    Raises
    ------
    {raises_not_aligned}
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
    pid, hours, n_patients, _ = _sequential_units(labels)
    return metrics.MetricInputs(kind, (pid, hours, y, p, label), n_units=n_patients)


def primary_metric(kind: str, metric: str) -> metrics.Metric:
    """The declaration of the task's primary metric; ValueError if it does not score ``kind``."""
    found = metrics.BUILTIN_METRICS.get(metric)
    if found is None or kind not in found.kinds:
        if kind == "survival":
            raise ValueError(f"survival tasks are scored with ctd_adj_antolini, not {metric!r}")
        raise ValueError(f"unknown metric {metric!r} for kind {kind!r}")
    return found


@fill_doc(valid_predictions=VALID_PREDICTIONS)
class SubmissionEvaluation:
    """The metric kernels of one validated submission, each called once.

    Every quantity of a submission that the store publishes in several places is computed here
    once and read by every table: the primary metric m and the ECE (``scores``, the replicates,
    ``calibration_measures.ece_10``, the survival reliability groups), the AUROC of an AUROC task
    (its ``raw`` and ``auroc``). With resample ``weights``, the primary metric and the ECE are
    evaluated on the observed data and on every resample in the same kernel call
    (``_kernel``: the kernel is called here, with the weight matrix whose first row is all ones,
    :func:`~automd_analysis.metrics.observed_first`;
    :func:`~automd_analysis.metrics.survival_ece_replicated`).

    One exception, kept so that published digits do not move: the ECE of an hourly (sequential)
    task is published over patient-hours, while its replicates resample patients (the kernel's
    clustered form), which sums the same rows in another order; its observed value and its
    replicates are two calls of the kernel.

    Parameters
    ----------
    kind : {"survival", "classification", "sequential"}
    labels : TaskLabels
    {valid_predictions}
    metric : str, optional
        The task's primary metric (:func:`primary_metric`); needed for :attr:`primary`.
    weights : numpy.ndarray of shape (B, n_units), optional
        The task's resample weights (:func:`~automd_analysis.scoring.replicates.task_resample_weights`);
        ``None``: observed values only.
    ece_bins : int, default 10
        Equal-width bins of the scored ECE of binary and hourly tasks.

    Raises
    ------
    ValueError
        Unknown kind or metric, or predictions not aligned to the labels.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from automd_analysis.submissions import AlignedPredictions
    >>> from automd_analysis.tasks import TaskLabels
    >>> labels = TaskLabels(ids=pd.DataFrame({"id": list("abcd")}), label=np.array([1, 0, 1, 0]))
    >>> ev = SubmissionEvaluation("classification", labels,
    ...     AlignedPredictions(probability=np.array([0.8, 0.4, 0.4, 0.1])), metric="auroc",
    ...     weights=np.array([[1, 1, 0, 2], [0, 1, 2, 1]]))
    >>> ev.primary.observed, ev.primary.replicates.tolist(), ev.auroc()
    (0.875, [1.0, 0.75], 0.875)
    """

    def __init__(
        self,
        kind: str,
        labels,
        predictions,
        *,
        metric: str | None = None,
        weights: np.ndarray | None = None,
        ece_bins: int = DEFAULT_ECE_BINS,
    ) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown task kind {kind!r}")
        self.kind, self.labels, self.predictions = kind, labels, predictions
        self.declared = None if metric is None else primary_metric(kind, metric)
        self.inputs = metric_inputs(kind, labels, predictions)
        self.weights, self.ece_bins = weights, int(ece_bins)
        self._memo: dict[object, Any] = {}

    def _once(self, key, compute: Callable):
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def _kernel(self, kernel: Callable, *args, replicated: bool = True, **kwargs) -> Replicated:
        """``kernel(*args, **kwargs)`` on the observed data and, when ``replicated`` and there are
        weights, on every resample in the same call (weights :func:`observed_first`)."""
        if not replicated or self.weights is None:
            with recording() as undefined:
                value = kernel(*args, weights=None, **kwargs)
            return Replicated(value, None, tuple(str(w) for w in undefined))
        with recording() as undefined:
            values = kernel(*args, weights=observed_first(self.weights), **kwargs)
        return stacked_result(values, undefined)

    @property
    def primary(self) -> Replicated:
        """The primary metric m (raw), with its replicates when there are weights."""
        if self.declared is None:
            raise ValueError("this evaluation was made without the task's primary metric")
        args, kwargs = self.declared.arguments(self.inputs)
        return self._once("primary", lambda: self._kernel(self.declared.function, *args, **kwargs))

    @property
    def scored_ece(self) -> Replicated:
        """The ECE of the store (``ece_bins`` equal-width bins; survival: the Kaplan-Meier ECE
        with its details), with its replicates when there are weights."""
        return self._once("ece", self._scored_ece)

    def _scored_ece(self) -> Replicated:
        if self.kind == "survival":
            return metrics.survival_ece_replicated(*self.inputs.args, weights=self.weights)
        y, p = self.labels.label, self.predictions.probability
        if self.kind == "classification":
            return self._kernel(metrics.ece, y, p, self.ece_bins)
        observed = self._kernel(metrics.ece, y, p, self.ece_bins, replicated=False)
        if self.weights is None:
            return observed
        patients = self.inputs.args[0]
        replicates = self._kernel(metrics.ece, y, p, self.ece_bins, cluster=patients)
        return Replicated(observed.observed, replicates.replicates, observed.observed_warnings,
                          replicates.replicate_warnings)  # fmt: skip

    def ece(self, n_bins: int) -> Replicated:
        """The observed ECE with ``n_bins`` bins (survival: Kaplan-Meier groups), its messages:
        the scored ECE's when ``n_bins`` is the scored setting, else one call."""
        scored = 10 if self.kind == "survival" else self.ece_bins
        if int(n_bins) == scored:
            result = self.scored_ece
            return Replicated(result.observed, None, result.observed_warnings)
        return self._once(("ece", int(n_bins)), lambda: self._other_ece(int(n_bins)))

    def _other_ece(self, n_bins: int) -> Replicated:
        if self.kind == "survival":
            return metrics.survival_ece_replicated(*self.inputs.args, n_groups=n_bins)
        y, p = self.labels.label, self.predictions.probability
        return self._kernel(metrics.ece, y, p, n_bins, replicated=False)

    def auroc(self, log: WarningLog | None = None) -> float:
        """The AUROC of the probability (the primary metric's value on an AUROC task)."""
        if self.declared is not None and self.declared.name == "auroc":
            result = self.primary
        else:
            y, p = self.labels.label, self.predictions.probability
            result = self._once(
                "auroc", lambda: self._kernel(metrics.auroc, y, p, replicated=False)
            )
        return (log or WarningLog()).observed(result)


@fill_doc(valid_predictions=VALID_PREDICTIONS, ece_bins=ECE_BINS)
def metric_record(
    kind: str,
    metric: str,
    null_score: float,
    labels,
    predictions,
    *,
    ece_bins: int = DEFAULT_ECE_BINS,
    evaluation: SubmissionEvaluation | None = None,
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
    {valid_predictions}
    {ece_bins}
    evaluation : SubmissionEvaluation, optional
        The submission's kernels, shared with its replicates and calibration rows (made here
        without resamples when not given).

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
    w = WarningLog()
    nan = float("nan")
    if evaluation is None:
        evaluation = SubmissionEvaluation(
            kind, labels, predictions, metric=metric, ece_bins=ece_bins
        )
    elif (evaluation.kind, getattr(evaluation.declared, "name", None)) != (kind, metric):
        raise ValueError(f"the evaluation is of a {evaluation.kind} submission scored with "
                         f"{getattr(evaluation.declared, 'name', None)!r}, not {kind}/{metric}")  # fmt: skip
    raw = w.observed(evaluation.primary)
    ece = w.observed(evaluation.scored_ece)
    if kind == "survival":
        t, e = labels.duration, labels.event
        record = {"raw": raw, "auroc": nan, "ece": ece.ece, "brier": nan}
        record |= {"n": len(t), "n_rows": len(t), "n_events": int(np.sum(e))}
    else:
        y, p = labels.label, predictions.probability
        record = {
            "raw": raw,
            "auroc": evaluation.auroc(w),
            "ece": ece,
            "brier": w(metrics.brier, y, p),
        }
        if kind == "sequential":
            _, _, n_patients, n_septic = _sequential_units(labels)
            record |= {"n": n_patients, "n_rows": len(y), "n_events": n_septic}
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
    kind: str,
    labels,
    predictions,
    *,
    ece_bins: int = DEFAULT_ECE_BINS,
    evaluation: SubmissionEvaluation | None = None,
) -> list[dict]:
    """Reliability-diagram rows of one valid submission (``calibration_bins.parquet``).

    Binary and sequential tasks: the ``ece_bins`` (10) equal-width bins of
    :func:`~automd_analysis.metrics.calibration_bins` (``kind = "binary"``, ``bin`` 0-based, empty
    bins included with ``kept = False``, ``weight = n_b / N``). Survival tasks: the Kaplan-Meier
    groups of :func:`~automd_analysis.metrics.survival_ece` at each quantile time (``kind =
    "survival"``, ``bin`` 0-based with 0 = lowest predicted survival, ``observed`` = the group's
    KM survival, ``kept = False`` for groups under 5 patients, ``weight = n_b / sum of kept n_b``).

    The survival groups are those of the submission's scored ECE (``evaluation``, made here when
    not given).

    Returns
    -------
    list of dict
        Keys ``kind, quantile, time, bin, lo, hi, n, mean_pred, observed, kept, weight``.
    """
    rows = []
    nan = float("nan")
    if kind == "survival":
        if evaluation is None:
            evaluation = SubmissionEvaluation(kind, labels, predictions)
        g = evaluation.scored_ece.observed.groups
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
