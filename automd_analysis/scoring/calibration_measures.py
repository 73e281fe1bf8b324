"""Validated predictions + hidden labels -> every calibration measure of one submission, as flat
columns (the seam through which the score store keeps them per selected submission).

:func:`calibration_measures` returns one dict with exactly the keys of
:data:`CALIBRATION_MEASURE_COLUMNS` (Python scalars; ``nan`` where a measure does not apply to the
task kind or is undefined, the reasons in ``measure_warnings``). :func:`calibration_curve_rows` gives
the smoothed calibration curve with pointwise intervals (:data:`CURVE_COLUMNS`) for plotting.

What each column holds, per task kind (docs/calibration.md has the definitions):

=========================================  ===============================  ==========================
column                                     classification / sequential      survival
=========================================  ===============================  ==========================
``ece_10``, ``ece_15``                     equal-width ECE, 10 / 15 bins    KM-ECE (App. F), 10 / 15
                                                                            groups
``ece_equal_mass_10``                      equal-mass ECE, 10 bins          nan (KM groups are already
                                                                            equal-size)
``cal_intercept*``                         logistic, logit offset           nan
``cal_slope*``                             logistic recalibration slope     Cox slope at the horizon
``citl_difference``                        mean y - mean p                  1 - KM(h) - mean(1 - S(h))
``ici``, ``e50``, ``e90``, ``emax``        loess of y on p                  loess of KM pseudo-values
                                                                            on 1 - S(h)
``spiegelhalter_z``, ``spiegelhalter_p``   yes (sequential: patients as     nan
                                          clusters)
``brier*``                                 Brier and its decomposition      nan
``prevalence``, ``net_benefit_p*``         event rate, decision curve       nan
``dcal_*``                                 nan                              D-calibration, 10 bins
``horizon*``                               nan                              at the grid time nearest
                                                                            the median test event time
=========================================  ===============================  ==========================

Sequential tasks use patient-hours as observations and patients as clusters for the intercept and
slope intervals (cluster-robust SEs); classification and survival intervals are model-based.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from automd_analysis import metrics
from automd_analysis.docstrings import AUSTIN_STEYERBERG_2014, VAN_CALSTER_2019, fill_doc
from automd_analysis.metrics.calibration_smooth import DEFAULT_CURVE_POINTS
from automd_analysis.schema import (
    CALIBRATION_MEASURE_COLUMNS,
    CURVE_COLUMNS,
    NET_BENEFIT_THRESHOLDS,
    net_benefit_column,
)
from automd_analysis.scoring.metrics_for import (
    RAISES_NOT_ALIGNED,
    VALID_PREDICTIONS,
    SubmissionEvaluation,
    WarningLog,
)

__all__ = [
    "CALIBRATION_MEASURE_COLUMNS",
    "CURVE_COLUMNS",
    "NET_BENEFIT_THRESHOLDS",
    "calibration_curve_rows",
    "calibration_measures",
    "net_benefit_column",
    "survival_horizon",
]

#: Quantile of the test event times whose nearest grid time is the survival horizon.
HORIZON_QUANTILE = 0.5
_STRING_COLUMNS = frozenset({"cal_se_method", "measure_warnings"})
_INT_COLUMNS = frozenset({"n_clusters"})


def _empty() -> dict:
    out: dict = {}
    for c in CALIBRATION_MEASURE_COLUMNS:
        if c in _STRING_COLUMNS:
            out[c] = ""
        elif c in _INT_COLUMNS:
            out[c] = 0
        else:
            out[c] = math.nan
    return out


def survival_horizon(durations, events, time_grid) -> float:
    """The survival horizon of the record: the grid time nearest the median test event time.

    h = grid[argmin |grid - Q_0.5(event times)|] (``numpy.quantile``, linear; the earlier grid time
    on an exact tie, as the paper's survival ECE picks its times); ``nan`` without an event.

    See Also
    --------
    automd_analysis.metrics.survival_calibration_at : the measures read at h.

    References
    ----------
    .. [1] Auto-MD-bench, App. F (grid points nearest event-time percentiles).

    Examples
    --------
    >>> survival_horizon([1.0, 2.0, 3.0, 9.0], [1, 1, 1, 0], [0.0, 1.5, 2.5, 5.0])
    1.5
    """
    t = np.asarray(durations, dtype=np.float64)
    e = np.asarray(events)
    grid = np.asarray(time_grid, dtype=np.float64)
    event_times = t[e == 1]
    if event_times.size == 0:
        return math.nan
    target = float(np.quantile(event_times, HORIZON_QUANTILE))
    return float(grid[int(np.argmin(np.abs(grid - target)))])


def _binary(out: dict, w: WarningLog, evaluation: SubmissionEvaluation, groups) -> None:
    y, p = evaluation.labels.label, evaluation.predictions.probability
    out["ece_10"] = w.observed(evaluation.ece(10))
    out["ece_15"] = w.observed(evaluation.ece(15))
    out["ece_equal_mass_10"] = w(metrics.ece_equal_mass, y, p, 10)
    cis = w(metrics.calibration_intercept_slope, y, p, groups=groups)
    for src, dst in (
        ("intercept", "cal_intercept"),
        ("intercept_se", "cal_intercept_se"),
        ("intercept_lo", "cal_intercept_lo"),
        ("intercept_hi", "cal_intercept_hi"),
        ("slope", "cal_slope"),
        ("slope_se", "cal_slope_se"),
        ("slope_lo", "cal_slope_lo"),
        ("slope_hi", "cal_slope_hi"),
    ):
        out[dst] = getattr(cis, src)
    out["cal_se_method"] = cis.se_method
    out["n_clusters"] = cis.n_clusters
    out["citl_difference"] = float(np.mean(y) - np.mean(p))
    res = w(metrics.ici, y, p)
    out.update({k: getattr(res, k) for k in ("ici", "e50", "e90", "emax")})
    sp = w(metrics.spiegelhalter_z, y, p, groups=groups)
    out["spiegelhalter_z"], out["spiegelhalter_p"] = sp.z, sp.p_value
    dec = w(metrics.brier_decomposition, y, p, 10)
    out["brier"] = dec.brier
    out["brier_reliability"] = dec.reliability
    out["brier_resolution"] = dec.resolution
    out["brier_uncertainty"] = dec.uncertainty
    dc = w(metrics.net_benefit, y, p, NET_BENEFIT_THRESHOLDS)
    out["prevalence"] = dc.prevalence
    for t, nb in zip(NET_BENEFIT_THRESHOLDS, dc.net_benefit, strict=True):
        out[net_benefit_column(t)] = nb


def _survival(out: dict, w: WarningLog, evaluation: SubmissionEvaluation) -> None:
    t, e, surv, grid = evaluation.inputs.args
    out["ece_10"] = w.observed(evaluation.ece(10)).ece
    out["ece_15"] = w.observed(evaluation.ece(15)).ece
    dcal = w(metrics.d_calibration, t, e, surv, grid, 10)
    out["dcal_statistic"], out["dcal_p"] = dcal.statistic, dcal.p_value
    out["dcal_divergence"] = dcal.divergence
    out["cal_se_method"] = "model"
    h = survival_horizon(t, e, grid)
    out["horizon_quantile"] = HORIZON_QUANTILE
    if math.isnan(h):
        w.messages.append(
            "survival calibration at a horizon is undefined (the test set has no event, so there "
            "is no median event time); returning nan."
        )
        return
    out["horizon"] = h
    at = w(metrics.survival_calibration_at, t, e, surv, grid, h)
    out["horizon_observed_risk"] = at.observed_risk
    out["horizon_predicted_risk"] = at.predicted_risk
    out["horizon_ece"] = at.ece
    out["citl_difference"] = at.citl_difference
    for src, dst in (
        ("slope", "cal_slope"),
        ("slope_se", "cal_slope_se"),
        ("slope_lo", "cal_slope_lo"),
        ("slope_hi", "cal_slope_hi"),
    ):
        out[dst] = getattr(at, src)
    out["n_clusters"] = len(t)
    res = w(metrics.survival_ici_at, t, e, surv, grid, h)
    out.update({k: getattr(res, k) for k in ("ici", "e50", "e90", "emax")})


def _patients(labels) -> np.ndarray:
    codes, _ = pd.factorize(labels.ids.iloc[:, 0], sort=True)
    return codes.astype(np.int64)


@fill_doc(
    van_calster_2019=VAN_CALSTER_2019,
    valid_predictions=VALID_PREDICTIONS,
    raises_not_aligned=RAISES_NOT_ALIGNED,
)
def calibration_measures(
    kind: str, labels, predictions, evaluation: SubmissionEvaluation | None = None
) -> dict:
    """Every calibration measure of one validated, label-aligned submission.

    Parameters
    ----------
    kind : {"survival", "classification", "sequential"}
    labels : TaskLabels
        Hidden outcomes; sequential tasks: the first id column is the patient (the cluster).
    {valid_predictions}
    evaluation : SubmissionEvaluation, optional
        The submission's kernels: ``ece_10`` (``ece_15``) is its ECE with 10 (15) bins, the
        store's ECE itself when that has 10 bins (made here when not given).

    Returns
    -------
    dict
        Exactly the keys :data:`CALIBRATION_MEASURE_COLUMNS`: floats (``nan`` where the measure does
        not apply to ``kind`` or is undefined), ``cal_se_method`` (``"model"``, ``"cluster"`` or
        ``""``), ``n_clusters`` (int) and ``measure_warnings`` (the undefined-measure messages,
        sorted, joined by ``" | "``).

    Raises
    ------
    {raises_not_aligned}

    See Also
    --------
    calibration_curve_rows : the smoothed curve of the same submission.
    automd_analysis.scoring.metrics_for.metric_record : the paper's metrics of the submission.

    References
    ----------
    {van_calster_2019}

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from automd_analysis.submissions import AlignedPredictions
    >>> from automd_analysis.tasks import TaskLabels
    >>> labels = TaskLabels(ids=pd.DataFrame({"id": list("abcdef")}),
    ...                     label=np.array([0, 1, 0, 1, 1, 0]))
    >>> preds = AlignedPredictions(probability=np.array([0.2, 0.6, 0.4, 0.7, 0.5, 0.3]))
    >>> row = calibration_measures("classification", labels, preds)
    >>> list(row) == list(CALIBRATION_MEASURE_COLUMNS)
    True
    >>> round(row["ece_10"], 4), row["cal_se_method"], bool(np.isnan(row["dcal_p"]))
    (0.35, 'model', True)
    """
    w = WarningLog()
    out = _empty()
    if kind not in ("survival", "classification", "sequential"):
        raise ValueError(f"unknown task kind {kind!r}")
    if evaluation is None:
        evaluation = SubmissionEvaluation(kind, labels, predictions)
    if kind == "survival":
        _survival(out, w, evaluation)
    else:
        _binary(out, w, evaluation, _patients(labels) if kind == "sequential" else None)
    for c in CALIBRATION_MEASURE_COLUMNS:
        if c in _STRING_COLUMNS:
            out[c] = str(out[c])
        elif c in _INT_COLUMNS:
            out[c] = int(out[c])
        else:
            out[c] = float(out[c])
    out["measure_warnings"] = " | ".join(sorted(set(w.messages)))
    return out


@fill_doc(austin_steyerberg_2014=AUSTIN_STEYERBERG_2014)
def calibration_curve_rows(kind: str, labels, predictions, points=None) -> list[dict]:
    """The smoothed calibration curve of one valid submission with pointwise intervals.

    Binary and sequential tasks: :func:`~automd_analysis.metrics.smoothed_calibration_curve` of the
    outcome on the probability (``kind = "binary"``, ``horizon`` nan). Survival tasks:
    :func:`~automd_analysis.metrics.smoothed_survival_calibration_curve` at
    :func:`survival_horizon` (``kind = "survival"``; no rows without a test event). ``x`` is the
    predicted event probability; points outside the range of the predictions have ``nan`` values.

    Returns
    -------
    list of dict
        Keys :data:`CURVE_COLUMNS`, one row per point (default 0, 0.01, ..., 1).

    See Also
    --------
    automd_analysis.analysis.calibration_measures.smoothed_curves : pools the runs' curves.

    References
    ----------
    {austin_steyerberg_2014}

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from types import SimpleNamespace
    >>> labels = SimpleNamespace(label=np.array([0, 1, 0, 1, 1, 0]))
    >>> preds = SimpleNamespace(probability=np.array([0.2, 0.6, 0.4, 0.7, 0.5, 0.3]))
    >>> rows = calibration_curve_rows("classification", labels, preds, points=[0.1, 0.5])
    >>> [(r["x"], round(r["observed"], 4)) for r in rows]
    [(0.1, nan), (0.5, 1.0)]
    """
    w = WarningLog()
    pts = DEFAULT_CURVE_POINTS if points is None else np.asarray(points, dtype=np.float64)
    if kind == "survival":
        t, e = labels.duration, labels.event
        grid = predictions.time_grid if predictions.time_grid is not None else labels.time_grid
        h = survival_horizon(t, e, grid)
        if math.isnan(h):
            return []
        curve = w(metrics.smoothed_survival_calibration_curve, t, e, predictions.surv, grid, h, pts)
        name = "survival"
    elif kind in ("classification", "sequential"):
        curve = w(metrics.smoothed_calibration_curve, labels.label, predictions.probability, pts)
        h, name = math.nan, "binary"
    else:
        raise ValueError(f"unknown task kind {kind!r}")
    return [
        {
            "kind": name,
            "horizon": float(h),
            "x": float(curve.x[i]),
            "observed": float(curve.observed[i]),
            "se": float(curve.se[i]),
            "lo": float(curve.lo[i]),
            "hi": float(curve.hi[i]),
        }
        for i in range(len(curve.x))
    ]
