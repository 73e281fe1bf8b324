"""PhysioNet/CinC 2019 (early sepsis prediction) normalised utility, fully vectorised and exact.

Official definition (``evaluate_sepsis_score.py`` of physionetchallenges/evaluation-2019, parameters
dt_early = -12, dt_optimal = -6, dt_late = 3, max_u_tp = 1, min_u_fn = -2, u_fp = -0.05, u_tn = 0).
Within a patient, rows are hours t = 0, 1, ... (the row position, as in the official scorer, which does
not read ICULOS). A patient is septic when any label is 1; the ``SepsisLabel`` of the challenge data is
already shifted 6 h early, so onset is t_sepsis = (first row labelled 1) + 6. With Δ = t - t_sepsis the
utility of one patient-hour is

=================  ====================================  ============================
row                predicted 1                           predicted 0
=================  ====================================  ============================
septic, Δ <= -6    max((Δ + 12) / 6, -0.05)              0
septic, -6 < Δ <= 3  (3 - Δ) / 9                         -2 (Δ + 6) / 9
septic, Δ > 3      0                                     0
not septic         -0.05                                 0
=================  ====================================  ============================

Every entry is an integer multiple of 1/180 (lcm of 6, 9 and 20), so each row utility is computed as an
integer number of 1/180 units; cohort sums are then exact and the normalised score
(U_obs - U_inaction) / (U_best - U_inaction) is one correctly rounded division. (The official float
implementation can differ from this exact value in the last bits.) The rows are scanned once by a
compiled (numba) kernel, with no Python-level loop; validation is vectorised numpy.

Weights are per *patient* (the resampling unit of an hourly task; single hours are never resampled,
since a patient's hours only make sense together): with w_k copies of patient k, each copy counted
as a patient of its own, the cohort sums are Σ_k w_k U_k of the per-patient sums, still exact
integers, so the weighted utility is the same correctly rounded division as on the repeated cohort.
A weight matrix (one vector per bootstrap replicate) costs one matrix product after the single pass
over the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automd_analysis.metrics._numba import cached_njit
from automd_analysis.metrics._validation import (
    as_binary,
    as_finite_1d,
    check_same_length,
    finish,
)
from automd_analysis.metrics._weights import (
    as_weight_vector,
    as_weights,
    is_matrix,
    lane_blocks,
    lane_dot,
    n_vectors,
)

__all__ = ["UTILITY_PARAMETERS", "SepsisUtilityParts", "sepsis_utility", "sepsis_utility_parts"]

#: Why the normalised utility is undefined (one weight vector or many).
_NO_SEPTIC = "no septic patient, so U_best = U_inaction"

#: Official PhysioNet/CinC 2019 utility parameters (the only ones supported).
UTILITY_PARAMETERS = {
    "dt_early": -12,
    "dt_optimal": -6,
    "dt_late": 3,
    "max_u_tp": 1.0,
    "min_u_fn": -2.0,
    "u_fp": -0.05,
    "u_tn": 0.0,
}

UTILITY_UNIT = 180  # utilities are integer multiples of 1/180
_ONSET_SHIFT = 6  # t_sepsis = first label-1 row - dt_optimal


@dataclass(frozen=True)
class SepsisUtilityParts:
    """The pieces of the PhysioNet 2019 normalised utility, for diagnostics.

    Attributes
    ----------
    normalized : float
        (observed - inaction) / (best - inaction); ``nan`` when the cohort has no septic patient.
    observed, best, inaction : float
        Cohort sums U_obs (the submitted labels), U_best (label 1 exactly on rows with
        -12 <= Δ <= 3 of septic patients) and U_inaction (all labels 0); weighted sums with
        weights.
    n_rows, n_patients, n_septic : int
        Patient-hours, patients and septic patients (of the repeated cohort with weights).
    patient_ids : numpy.ndarray
        One id per distinct patient, in order of first appearance.
    patient_observed, patient_best, patient_inaction : numpy.ndarray
        Per-patient utility sums (aligned with ``patient_ids``; one copy each).
    onset_row : numpy.ndarray
        Per-patient t_sepsis (row index within the patient); -1 for non-septic patients.
    """

    normalized: float
    observed: float
    best: float
    inaction: float
    n_rows: int
    n_patients: int
    n_septic: int
    patient_ids: np.ndarray
    patient_observed: np.ndarray
    patient_best: np.ndarray
    patient_inaction: np.ndarray
    onset_row: np.ndarray


@cached_njit(nogil=True)
def _patient_utilities(starts, ends, labels, predicted):
    """Per-patient U_obs, U_best, U_inaction (units of 1/180) and onset row, in one pass over the rows.

    With Δ = t - t_sepsis: TP = max(30 (Δ + 12), -9) for Δ <= -6, 20 (3 - Δ) for -6 < Δ <= 3, else 0;
    FN = -40 (Δ + 6) for -6 < Δ <= 3, else 0; FP = -9; TN = 0 (the module docstring table x 180).
    The best prediction on a septic row is the larger of TP and FN (1 exactly when -12 <= Δ <= 3).
    """
    n_pat = starts.shape[0]
    obs = np.zeros(n_pat, dtype=np.int64)
    best = np.zeros(n_pat, dtype=np.int64)
    inaction = np.zeros(n_pat, dtype=np.int64)
    onset = np.full(n_pat, -1, dtype=np.int64)
    for k in range(n_pat):
        s0 = starts[k]
        s1 = ends[k]
        first = -1
        for r in range(s0, s1):
            if labels[r] == 1:
                first = r - s0
                break
        if first < 0:  # never septic: every alarm is a false positive
            fp = 0
            for r in range(s0, s1):
                fp += predicted[r]
            obs[k] = -9 * fp
            continue
        t_sepsis = first + _ONSET_SHIFT
        onset[k] = t_sepsis
        o = 0
        b = 0
        z = 0
        for r in range(s0, s1):
            delta = r - s0 - t_sepsis
            if delta <= -6:
                tp = max(30 * (delta + 12), -9)
                fn = 0
            elif delta <= 3:
                tp = 20 * (3 - delta)
                fn = -40 * (delta + 6)
            else:
                tp = 0
                fn = 0
            o += tp if predicted[r] == 1 else fn
            b += max(tp, fn)
            z += fn
        obs[k] = o
        best[k] = b
        inaction[k] = z
    return obs, best, inaction, onset


def _segments(patient_ids) -> tuple[np.ndarray, np.ndarray]:
    """Start row of each patient's run; validate that every patient's rows are contiguous."""
    ids = np.asarray(patient_ids)
    if ids.ndim != 1:
        raise ValueError(f"patient_ids must be one-dimensional, got an array of shape {ids.shape}.")
    if ids.dtype.kind == "f" and np.isnan(ids).any():
        i = int(np.flatnonzero(np.isnan(ids))[0])
        raise ValueError(f"patient_ids must not contain NaN; patient_ids[{i}] is nan.")
    starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    seg_ids = ids[starts]
    try:
        _, first_seg = np.unique(seg_ids, return_index=True)
    except TypeError as exc:
        raise ValueError(
            "patient_ids must be mutually comparable (all numbers or all strings)."
        ) from exc
    if len(first_seg) < len(seg_ids):
        repeated = np.ones(len(seg_ids), dtype=bool)
        repeated[first_seg] = False
        k = int(np.flatnonzero(repeated)[0])
        row = int(starts[k])
        first_row = int(starts[np.flatnonzero(seg_ids[:k] == seg_ids[k])[0]])
        pid = seg_ids[k].item() if isinstance(seg_ids[k], np.generic) else seg_ids[k]
        raise ValueError(
            f"Rows of one patient must be contiguous; patient_ids[{row}] = {pid!r} starts a second "
            f"run of that patient (its first run starts at row {first_row}). Sort the rows by patient and "
            "hour."
        )
    return starts, seg_ids


def _check_hours(hours, starts: np.ndarray, n_rows: int) -> None:
    h = as_finite_1d("hours", hours)
    if len(h) != n_rows:
        raise ValueError(
            f"Inputs must have the same length: labels has {n_rows}, hours has {len(h)}."
        )
    not_increasing = np.r_[False, h[1:] <= h[:-1]]
    not_increasing[starts] = False  # a new patient may restart the clock
    if not_increasing.any():
        i = int(np.flatnonzero(not_increasing)[0])
        raise ValueError(
            f"hours must be strictly increasing within each patient; hours[{i}] = {h[i].item()!r} does not "
            f"follow hours[{i - 1}] = {h[i - 1].item()!r} of the same patient. Sort the rows by patient and "
            "hour."
        )


def sepsis_utility_parts(
    patient_ids, labels, predicted_labels, hours=None, *, weights=None
) -> SepsisUtilityParts:
    """PhysioNet/CinC 2019 utility with its unnormalised parts (see :func:`sepsis_utility`).

    .. math:: U_{obs} = \\sum_{p} \\sum_{t} u_p(t, \\hat y_{p,t}), \\qquad
              U = \\frac{U_{obs} - U_{inaction}}{U_{best} - U_{inaction}}

    with the per-hour utility u of the table in the module docstring; U_best and U_inaction are the
    same sums for the best labels and for all-zero labels.

    Parameters
    ----------
    patient_ids, labels, predicted_labels, hours
        As :func:`sepsis_utility`.
    weights : array-like of int, shape (P,), optional
        Multiplicity of each of the P patients (in order of first appearance).

    Returns
    -------
    SepsisUtilityParts
        The normalised utility, the cohort sums U_obs, U_best and U_inaction (in utility units),
        counts and per-patient sums. With no septic patient ``normalized`` is ``nan`` and
        :class:`UndefinedMetricWarning` is emitted.

    Raises
    ------
    ValueError
        As :func:`sepsis_utility`.

    See Also
    --------
    sepsis_utility : only the normalised value (also for a matrix of weight vectors).

    References
    ----------
    .. [1] Reyna MA, Josef CS, Jeter R, Shashikumar SP, Westover MB, Nemati S, Clifford GD,
       Sharma A (2020). Early prediction of sepsis from clinical data: the PhysioNet/Computing in
       Cardiology Challenge 2019. Critical Care Medicine 48(2):210-217.

    Examples
    --------
    One septic patient of six hours: the label turns 1 at row 4, so onset is t_sepsis = 10 and
    the rows are Δ = -10, ..., -5. The alarms at rows 2-4 earn (Δ + 12) / 6 = 2/3, 5/6, 1 and
    the one at row 5 earns (3 - Δ) / 9 = 8/9, so U_obs = 61/18:

    >>> parts = sepsis_utility_parts([1] * 6, [0, 0, 0, 0, 1, 1], [0, 0, 1, 1, 1, 1])
    >>> round(parts.observed, 6), round(parts.best, 6), round(parts.inaction, 6)
    (3.388889, 4.222222, -0.222222)
    >>> parts.onset_row.tolist(), round(parts.normalized, 6)
    ([10], 0.8125)
    """
    units = _patient_units(patient_ids, labels, predicted_labels, hours)
    return _parts(units, as_weight_vector(weights, len(units[0]), unit="patient"))


def _parts(units: tuple, w: np.ndarray | None) -> SepsisUtilityParts:
    starts, seg_ids, per_obs, per_best, per_inaction, onset_row, n_rows = units
    septic = onset_row >= 0
    if w is None:
        u_obs, u_best, u_inaction = (int(v.sum()) for v in (per_obs, per_best, per_inaction))
        n_septic, n_patients = int(septic.sum()), len(starts)
    else:
        w64 = w.astype(np.int64)
        u_obs, u_best, u_inaction = (int(v @ w64) for v in (per_obs, per_best, per_inaction))
        n_septic, n_patients = int(w64[septic].sum()), int(w64.sum())
        n_rows = int(np.diff(np.r_[starts, n_rows]) @ w64)
    normalized = finish(
        np.array([(u_obs - u_inaction) / (u_best - u_inaction) if n_septic else np.nan]),
        False,
        "PhysioNet 2019 utility",
        _NO_SEPTIC,
    )
    return SepsisUtilityParts(
        normalized=normalized,
        observed=u_obs / UTILITY_UNIT,
        best=u_best / UTILITY_UNIT,
        inaction=u_inaction / UTILITY_UNIT,
        n_rows=n_rows,
        n_patients=n_patients,
        n_septic=n_septic,
        patient_ids=seg_ids,
        patient_observed=per_obs / UTILITY_UNIT,
        patient_best=per_best / UTILITY_UNIT,
        patient_inaction=per_inaction / UTILITY_UNIT,
        onset_row=onset_row,
    )


def _patient_units(patient_ids, labels, predicted_labels, hours):
    """Validated inputs -> (patient start rows, patient ids, per-patient U_obs, U_best, U_inaction
    in integer units of 1/180, onset rows, number of rows)."""
    y = as_binary("labels", labels)
    pred = as_binary("predicted_labels", predicted_labels)
    ids = np.asarray(patient_ids)
    n_rows = check_same_length(patient_ids=ids, labels=y, predicted_labels=pred)
    starts, seg_ids = _segments(ids)
    if hours is not None:
        _check_hours(hours, starts, n_rows)
    ends = np.r_[starts[1:], n_rows].astype(np.int64)
    per_obs, per_best, per_inaction, onset_row = _patient_utilities(
        starts.astype(np.int64), ends, y, pred
    )
    return starts, seg_ids, per_obs, per_best, per_inaction, onset_row, n_rows


def sepsis_utility(patient_ids, labels, predicted_labels, hours=None, *, weights=None):
    """PhysioNet/CinC 2019 normalised utility score (the official challenge score).

    Primary metric of the sequential sepsis tasks (Auto-MD-bench Sec. 3.3, m0 = 0). Per patient-hour
    utilities follow the official table (module docstring) with onset t_sepsis = first label-1 row + 6;
    utilities are summed over *all* patient-hours of the cohort and normalised as

    .. math:: U = \\frac{U_{obs} - U_{inaction}}{U_{best} - U_{inaction}}

    where U_inaction predicts 0 everywhere and U_best predicts 1 exactly on the rows with
    max(0, t_sepsis - 12) <= t <= t_sepsis + 3 of septic patients. U = 1 for the best predictions, 0 for
    all-zero predictions; it is unbounded below (eq. (1) clips it to 0 in the normalised score).
    Computed in exact integer arithmetic (units of 1/180 utility) in O(n) vectorised numpy.

    Parameters
    ----------
    patient_ids : array-like of shape (n,)
        Patient of each row (numbers or strings). Each patient's rows must be contiguous and in time
        order; rows are hours 0, 1, ... within the patient.
    labels : array-like of shape (n,)
        ``SepsisLabel`` (0/1 or bool).
    predicted_labels : array-like of shape (n,)
        Submitted ``PredictedLabel`` (0/1 or bool).
    hours : array-like of shape (n,), optional
        Hour of each row (e.g. ICULOS). Only used to check that rows are in strictly increasing hour
        order within each patient; the row position defines t, as in the official scorer.
    weights : array-like of int, shape (P,) or (m, P), optional
        Multiplicity of each of the P patients, in order of first appearance (each copy counts as a
        patient of its own; every hour of a patient carries its weight), or m such vectors - e.g.
        :func:`~automd_analysis.metrics.bootstrap_weights` over the patients - for m values at once.

    Returns
    -------
    float, or numpy.ndarray of shape (m,) for a weight matrix
        The normalised utility; ``nan`` with :class:`UndefinedMetricWarning` when no patient is septic
        (U_best = U_inaction, the official scorer divides 0 by 0).

    Raises
    ------
    ValueError
        Empty or different-length inputs; labels or predictions other than 0/1; NaN patient ids; a
        patient whose rows are not contiguous or (with ``hours``) not in strictly increasing hour order
        -- the message names the first offending row; bad weights.

    See Also
    --------
    sepsis_utility_parts : the same computation, returning U_obs, U_best, U_inaction and per-patient
        sums.
    automd_analysis.metrics.bootstrap_weights : weights of bootstrap resamples of the patients.
    automd_analysis.metrics.normalized_score : eq. (1), which clips U to [0, 1] (m0 = 0).

    References
    ----------
    .. [1] Reyna MA, Josef CS, Jeter R, Shashikumar SP, Westover MB, Nemati S, Clifford GD,
       Sharma A (2020). Early prediction of sepsis from clinical data: the PhysioNet/Computing in
       Cardiology Challenge 2019. Critical Care Medicine 48(2):210-217.
    .. [2] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, Sec. 3.3.

    Examples
    --------
    Vector S19 of docs/reference_values.md: patient A (30 hours, labelled 1 from row 20, alarms from
    row 16) and patient B (20 hours, never septic, three false alarms at the end):
    U = (7.1833 + 10) / (7.5 + 10).

    >>> ids = ["A"] * 30 + ["B"] * 20
    >>> labels = [0] * 20 + [1] * 10 + [0] * 20
    >>> alarms = [0] * 16 + [1] * 14 + [0] * 17 + [1] * 3
    >>> round(sepsis_utility(ids, labels, alarms), 6)
    0.981905

    Patient B counted twice (two patients with the same hours):

    >>> round(sepsis_utility(ids, labels, alarms, weights=[1, 2]), 6)
    0.973333
    """
    units = _patient_units(patient_ids, labels, predicted_labels, hours)
    starts, _, per_obs, per_best, per_inaction, _, _ = units
    w = as_weights(weights, len(starts), unit="patient")
    if not is_matrix(w):
        return _parts(units, w).normalized
    gain = (per_obs - per_inaction).astype(np.float64)  # U_obs - U_inaction per patient
    span = (per_best - per_inaction).astype(np.float64)  # U_best - U_inaction (> 0 iff septic)
    out = np.empty(n_vectors(w), dtype=np.float64)
    for k0, lanes in lane_blocks(w, len(starts)):
        num, den = lane_dot(lanes, gain), lane_dot(lanes, span)  # exact integers
        with np.errstate(invalid="ignore", divide="ignore"):
            out[k0 : k0 + lanes.shape[1]] = np.where(
                den > 0, num / np.where(den > 0, den, 1), np.nan
            )
    return finish(out, True, "PhysioNet 2019 utility", _NO_SEPTIC)
