"""Binary discrimination metrics: AUROC and PhysioNet 2012 Event 1, min(Se, PPV)."""

from __future__ import annotations

import numpy as np

from automd_analysis.metrics._validation import (
    as_binary,
    as_finite_1d,
    check_same_length,
    warn_undefined,
)

__all__ = ["auroc", "min_se_ppv"]


def auroc(y_true, y_prob) -> float:
    """Area under the ROC curve, equal to ``sklearn.metrics.roc_auc_score``.

    Computed as the Mann-Whitney probability that a random positive outranks a random negative, with
    tied scores counting one half (which is exactly the trapezoidal ROC area sklearn integrates):

    .. math:: \\mathrm{AUROC} = \\frac{1}{n_1 n_0} \\sum_{i: y_i = 1} \\sum_{j: y_j = 0}
              \\bigl(\\mathbb{1}[p_i > p_j] + \\tfrac12 \\mathbb{1}[p_i = p_j]\\bigr)

    The pair counts are accumulated as integers (in half-units) and divided once, so the result is the
    correctly rounded value of the exact fraction; it can differ from sklearn's floating-point
    trapezoid sum only in the last bit. Primary metric of the classification tasks (Auto-MD-bench
    Sec. 3.3; m0 = 0.5) and the subgroup metric of App. F. O(n log n).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary outcomes, 0/1 or bool.
    y_prob : array-like of shape (n,)
        Predicted probability (or any finite score; only the order matters) of outcome 1.

    Returns
    -------
    float
        AUROC in [0, 1]. ``nan`` with :class:`UndefinedMetricWarning` when ``y_true`` holds a single
        class (sklearn raises instead).

    Raises
    ------
    ValueError
        Empty or non-1-D input, different lengths, labels other than 0/1, NaN/inf scores.

    See Also
    --------
    automd_analysis.metrics.auroc_bootstrap : bootstrap interval of the AUROC.
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
    """
    y = as_binary("y_true", y_true)
    p = as_finite_1d("y_prob", y_prob)
    check_same_length(y_true=y, y_prob=p)
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return warn_undefined("AUROC", "y_true contains only one class")
    order = np.argsort(p, kind="stable")
    p_sorted, y_sorted = p[order], y[order]
    # Groups of tied scores: per group, count positives and negatives.
    starts = np.flatnonzero(np.r_[True, p_sorted[1:] != p_sorted[:-1]])
    pos_in_group = np.add.reduceat(y_sorted.astype(np.int64), starts)
    size = np.diff(np.r_[starts, len(p_sorted)])
    neg_in_group = size - pos_in_group
    neg_below = np.cumsum(neg_in_group) - neg_in_group
    # Each positive scores 2 per negative strictly below it and 1 per tied negative (half-units).
    half_units = int(np.sum(pos_in_group * (2 * neg_below + neg_in_group)))
    return half_units / (2 * n_pos * n_neg)


def min_se_ppv(y_true, y_pred_label) -> float:
    """PhysioNet/CinC 2012 Event 1 score, min(sensitivity, positive predictive value).

    From the submitted binary label (no thresholding, as in the official ``genresults.m``): with
    TP = deaths predicted 1, FN = deaths predicted 0 and FP = survivors predicted 1,

    .. math:: \\mathrm{Se} = \\frac{TP}{TP + FN}, \\quad \\mathrm{PPV} = \\frac{TP}{TP + FP}, \\quad
              \\text{score} = \\min(\\mathrm{Se}, \\mathrm{PPV}).

    Primary metric of the PhysioNet 2012 task (Auto-MD-bench Sec. 3.3, m0 = 0). A 0/0 ratio is
    undefined and ignored, like MATLAB's ``min`` ignores NaN: with no predicted positive the score is
    Se (= 0 if there are deaths); with no death it is PPV (= 0 if anyone is predicted positive).

    Parameters
    ----------
    y_true : array-like of shape (n,)
        In-hospital death, 0/1 or bool.
    y_pred_label : array-like of shape (n,)
        Submitted binary prediction, 0/1 or bool.

    Returns
    -------
    float
        Score in [0, 1]. ``nan`` with :class:`UndefinedMetricWarning` only when both Se and PPV are 0/0
        (no death and no predicted positive).

    Raises
    ------
    ValueError
        Empty or non-1-D input, different lengths, values other than 0/1.

    See Also
    --------
    automd_analysis.metrics.min_se_ppv_bootstrap : bootstrap interval of this score.
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
    check_same_length(y_true=y, y_pred_label=pred)
    tp = int(np.sum((y == 1) & (pred == 1)))
    fn = int(np.sum((y == 1) & (pred == 0)))
    fp = int(np.sum((y == 0) & (pred == 1)))
    se = tp / (tp + fn) if tp + fn else None
    ppv = tp / (tp + fp) if tp + fp else None
    defined = [v for v in (se, ppv) if v is not None]
    if not defined:
        return warn_undefined("min(Se, PPV)", "no deaths and no predicted positives (0/0 for both)")
    return float(min(defined))
