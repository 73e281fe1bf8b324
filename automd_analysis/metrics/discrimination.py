"""Binary discrimination metrics: AUROC and PhysioNet 2012 Event 1, min(Se, PPV), weighted.

Both are sums of integer counts, so with integer weights (multiplicities) they are computed from
weighted counts in float64, exactly (< 2**53), and the value is the same correctly rounded fraction
as on the repeated rows. A weight matrix is processed in blocks of 64 vectors whose weights form
the columns ("lanes") of one array; the scores are sorted once for all of them.
"""

from __future__ import annotations

import numpy as np

from automd_analysis.metrics._numba import cached_njit
from automd_analysis.metrics._validation import (
    as_binary,
    as_finite_1d,
    check_same_length,
    finish,
)
from automd_analysis.metrics._weights import (
    is_matrix,
    lane_blocks,
    n_vectors,
    split_sums,
    unit_weights,
)

__all__ = ["auroc", "min_se_ppv"]


@cached_njit(nogil=True)
def _auroc_lanes(w, y, group_off):
    """AUROC of each lane: rows in score order, ``group_off`` the CSR offsets of tied scores.

    Per tie group g, P_g and N_g are the lane's weighted positives and negatives; in half-units
    H = Σ_g P_g (2 Σ_{h < g} N_h + N_g), and AUROC = H / (2 Σ P Σ N).
    """
    lanes = w.shape[1]
    half = np.zeros(lanes, dtype=np.float64)
    below = np.zeros(lanes, dtype=np.float64)
    n_pos = np.zeros(lanes, dtype=np.float64)
    pos = np.empty(lanes, dtype=np.float64)
    neg = np.empty(lanes, dtype=np.float64)
    for g in range(group_off.shape[0] - 1):
        split_sums(w, y, group_off[g], group_off[g + 1], pos, neg)
        for k in range(lanes):
            half[k] += pos[k] * (2.0 * below[k] + neg[k])
            below[k] += neg[k]
            n_pos[k] += pos[k]
    out = np.empty(lanes, dtype=np.float64)
    for k in range(lanes):
        if n_pos[k] == 0.0 or below[k] == 0.0:
            out[k] = np.nan
        else:
            out[k] = half[k] / (2.0 * n_pos[k] * below[k])
    return out


@cached_njit(nogil=True)
def _min_se_ppv_lanes(w, y, pred):
    """min(Se, PPV) of each lane from the weighted TP, FN and FP counts (a 0/0 ratio ignored;
    NaN when both are 0/0)."""
    lanes = w.shape[1]
    cells = np.zeros((4, lanes))  # weighted counts of 0 TN, 1 FP, 2 FN, 3 TP
    if lanes == 1:  # one vector (a point value): three running sums in registers
        tp = fn = fp = 0.0
        for i in range(y.shape[0]):
            wi, yi, pi = w[i, 0], np.float64(y[i]), np.float64(pred[i])
            tp += wi * (yi * pi)
            fn += wi * (yi * (1.0 - pi))
            fp += wi * ((1.0 - yi) * pi)
        cells[1, 0], cells[2, 0], cells[3, 0] = fp, fn, tp
    else:
        for i in range(y.shape[0]):
            cell = 2 * y[i] + pred[i]
            for k in range(lanes):
                cells[cell, k] += w[i, k]
    out = np.empty(lanes)
    for k in range(lanes):
        tp, fn, fp = cells[3, k], cells[2, k], cells[1, k]
        se = tp / (tp + fn) if tp + fn > 0 else np.nan
        ppv = tp / (tp + fp) if tp + fp > 0 else np.nan
        out[k] = se if np.isnan(ppv) else (ppv if np.isnan(se) else min(se, ppv))
    return out


def auroc(y_true, y_prob, *, weights=None, cluster=None):
    """Area under the ROC curve, equal to ``sklearn.metrics.roc_auc_score``.

    Computed as the Mann-Whitney probability that a random positive outranks a random negative, with
    tied scores counting one half (which is exactly the trapezoidal ROC area sklearn integrates):

    .. math:: \\mathrm{AUROC} = \\frac{1}{n_1 n_0} \\sum_{i: y_i = 1} \\sum_{j: y_j = 0}
              \\bigl(\\mathbb{1}[p_i > p_j] + \\tfrac12 \\mathbb{1}[p_i = p_j]\\bigr)

    The pair counts are accumulated as integers (in half-units) and divided once, so the result is the
    correctly rounded value of the exact fraction; it can differ from sklearn's floating-point
    trapezoid sum only in the last bit. Primary metric of the classification tasks (Auto-MD-bench
    Sec. 3.3; m0 = 0.5) and the subgroup metric of App. F. O(n log n). With weights the sums run
    over copies: n_1, n_0 and the pair counts are weighted (the AUROC of the repeated rows).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary outcomes, 0/1 or bool.
    y_prob : array-like of shape (n,)
        Predicted probability (or any finite score; only the order matters) of outcome 1.
    weights : array-like of int, shape (u,) or (m, u), optional
        Multiplicity of each unit (0 leaves it out) - an observation, or with ``cluster`` a cluster
        (u clusters in order of first appearance; its rows get its weight) - or m such vectors (e.g.
        :func:`~automd_analysis.metrics.bootstrap_weights`) for m values in one call. Default: once
        each.
    cluster : array-like of shape (n,), optional
        Cluster label of each row (e.g. the patient of a patient-hour): ``weights`` per cluster.

    Returns
    -------
    float, or numpy.ndarray of shape (m,) for a weight matrix
        AUROC in [0, 1]. ``nan`` with :class:`UndefinedMetricWarning` when ``y_true`` holds a single
        class (sklearn raises instead).

    Raises
    ------
    ValueError
        Empty or non-1-D input, different lengths, labels other than 0/1, NaN/inf scores; weights of
        the wrong shape, negative, not whole numbers, or summing to 0.

    See Also
    --------
    automd_analysis.metrics.bootstrap_weights : weights of bootstrap resamples.
    automd_analysis.metrics.concordance_td : the survival-task analogue.
    min_se_ppv : the thresholded metric of the PhysioNet 2012 task.

    References
    ----------
    .. [1] Hanley JA, McNeil BJ (1982). The meaning and use of the area under a receiver operating
       characteristic (ROC) curve. Radiology 143:29-36.
    .. [2] Mann HB, Whitney DR (1947). On a test of whether one of two random variables is
       stochastically larger than the other. Annals of Mathematical Statistics 18:50-60.
    .. [3] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, Sec. 3.3 and App. F.

    Examples
    --------
    Positives score 0.8 and 0.4, negatives 0.4 and 0.1: of the four (positive, negative) pairs three
    are ordered correctly and one is tied, so AUROC = (3 + 1/2) / 4.

    >>> auroc([1, 0, 1, 0], [0.8, 0.4, 0.4, 0.1])
    0.875

    Weights are multiplicities (the second positive counted twice, the first negative left out):

    >>> auroc([1, 0, 1, 0], [0.8, 0.4, 0.4, 0.1], weights=[1, 0, 2, 1])
    1.0
    """
    y = as_binary("y_true", y_true)
    p = as_finite_1d("y_prob", y_prob)
    n = check_same_length(y_true=y, y_prob=p)
    codes, n_units, w = unit_weights(weights, cluster, n)
    order = np.argsort(p, kind="stable")
    p_sorted, y_sorted = p[order], y[order]
    # groups of tied scores, in increasing order
    starts = np.flatnonzero(np.r_[True, p_sorted[1:] != p_sorted[:-1]])
    group_off = np.r_[starts, n].astype(np.int64)
    out = np.empty(n_vectors(w), dtype=np.float64)
    units = order if codes is None else codes[order]
    for k0, lanes in lane_blocks(w, n_units, units):
        out[k0 : k0 + lanes.shape[1]] = _auroc_lanes(lanes, y_sorted, group_off)
    return finish(out, is_matrix(w), "AUROC", "y_true contains only one class")


def min_se_ppv(y_true, y_pred_label, *, weights=None, cluster=None):
    """PhysioNet/CinC 2012 Event 1 score, min(sensitivity, positive predictive value).

    From the submitted binary label (no thresholding, as in the official ``genresults.m``): with
    TP = deaths predicted 1, FN = deaths predicted 0 and FP = survivors predicted 1,

    .. math:: \\mathrm{Se} = \\frac{TP}{TP + FN}, \\quad \\mathrm{PPV} = \\frac{TP}{TP + FP}, \\quad
              \\text{score} = \\min(\\mathrm{Se}, \\mathrm{PPV}).

    Primary metric of the PhysioNet 2012 task (Auto-MD-bench Sec. 3.3, m0 = 0). A 0/0 ratio is
    undefined and ignored, like MATLAB's ``min`` ignores NaN: with no predicted positive the score is
    Se (= 0 if there are deaths); with no death it is PPV (= 0 if anyone is predicted positive).
    With weights, TP, FN and FP are weighted counts (the score of the repeated rows).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        In-hospital death, 0/1 or bool.
    y_pred_label : array-like of shape (n,)
        Submitted binary prediction, 0/1 or bool.
    weights, cluster
        Multiplicities per observation or per cluster, as for :func:`auroc`.

    Returns
    -------
    float, or numpy.ndarray of shape (m,) for a weight matrix
        Score in [0, 1]. ``nan`` with :class:`UndefinedMetricWarning` only when both Se and PPV are 0/0
        (no death and no predicted positive).

    Raises
    ------
    ValueError
        Empty or non-1-D input, different lengths, values other than 0/1; bad weights.

    See Also
    --------
    auroc : the threshold-free discrimination metric of the other classification tasks.

    References
    ----------
    .. [1] Silva I, Moody G, Scott DJ, Celi LA, Mark RG (2012). Predicting in-hospital mortality of
       ICU patients: the PhysioNet/Computing in Cardiology Challenge 2012. Computing in Cardiology
       39:245-248.
    .. [2] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, Sec. 3.3.

    Examples
    --------
    Three deaths, two of them predicted (Se = 2/3); four predicted positives, two of them deaths
    (PPV = 1/2); vector S12 of docs/reference_values.md:

    >>> min_se_ppv([1, 1, 1, 0, 0, 0, 0, 0], [1, 1, 0, 1, 0, 0, 0, 1])
    0.5
    """
    y = as_binary("y_true", y_true)
    pred = as_binary("y_pred_label", y_pred_label)
    n = check_same_length(y_true=y, y_pred_label=pred)
    codes, n_units, w = unit_weights(weights, cluster, n)
    out = np.empty(n_vectors(w), dtype=np.float64)
    for k0, lanes in lane_blocks(w, n_units, codes):
        out[k0 : k0 + lanes.shape[1]] = _min_se_ppv_lanes(lanes, y, pred)
    why = "no deaths and no predicted positives (0/0 for both)"
    return finish(out, is_matrix(w), "min(Se, PPV)", why)
