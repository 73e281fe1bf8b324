"""Calibration of binary probabilities: equal-width-bin ECE, reliability-diagram bins, Brier score.

With integer weights (multiplicities) every per-bin count and sum is weighted, which gives the
measure of the repeated rows (up to the order of floating-point sums). The ECE also takes a weight
matrix - one vector per bootstrap replicate - and, with ``cluster``, weights per cluster (the
patients of an hourly task, each patient's hours carrying the patient's weight): the rows are
binned once, each (bin, cluster) pair summed once, and every vector only re-weighs those sums.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automd_analysis.metrics._docstrings import BINARY_INPUTS, fill_doc
from automd_analysis.metrics._results import ArrayColumns
from automd_analysis.metrics._validation import check_binary_inputs
from automd_analysis.metrics._weights import (
    as_weight_vector,
    is_matrix,
    key_sums,
    lane_blocks,
    lane_dot,
    n_vectors,
    unit_weights,
)

__all__ = ["CalibrationBins", "brier", "calibration_bins", "ece"]


@dataclass(frozen=True)
class CalibrationBins(ArrayColumns):
    """Per-bin summary of binary predictions, one entry per bin (empty bins included).

    Attributes
    ----------
    bin : numpy.ndarray
        Bin number, 1 .. n_bins (bin 1 holds the lowest probabilities).
    lo, hi : numpy.ndarray
        Bin edges (``np.linspace(0, 1, n_bins + 1)``); a bin holds lo <= p < hi, the last one also p = 1.
    n : numpy.ndarray
        Observations in the bin (weighted: the sum of their weights).
    mean_pred : numpy.ndarray
        Mean predicted probability p̄_b (``nan`` for an empty bin).
    observed : numpy.ndarray
        Observed event frequency ȳ_b (``nan`` for an empty bin).
    """

    bin: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    n: np.ndarray
    mean_pred: np.ndarray
    observed: np.ndarray

    @property
    def ece(self) -> float:
        """Σ_b n_b / N |p̄_b - ȳ_b| over the non-empty bins."""
        return _weighted_gap(self.n, self.mean_pred, self.observed)


def _weighted_gap(n: np.ndarray, mean_pred: np.ndarray, observed: np.ndarray) -> float:
    """Σ_b n_b / N |p̄_b - ȳ_b| over the bins with n_b > 0 (the ECE of per-bin summaries)."""
    keep = n > 0
    weights = n[keep] / n.sum()
    return float(np.sum(weights * np.abs(mean_pred[keep] - observed[keep])))


def check_n_bins(n_bins) -> int:
    """Validate a number of calibration bins: a positive integer (``True`` is not a number here).

    Parameters
    ----------
    n_bins : int-like
        Requested number of bins; ``10.0`` is accepted as 10, ``10.5`` is not.

    Returns
    -------
    int
        ``n_bins`` as a Python ``int`` (>= 1).

    Raises
    ------
    ValueError
        ``n_bins`` is a bool, not integral, or < 1.

    See Also
    --------
    calibration_bins, automd_analysis.metrics.calibration_bins_equal_mass : the binnings it guards.

    References
    ----------
    .. [1] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. F (10 bins).

    Examples
    --------
    >>> check_n_bins(10.0)
    10
    >>> check_n_bins(0)
    Traceback (most recent call last):
    ...
    ValueError: n_bins must be a positive integer, got 0.
    """
    if isinstance(n_bins, bool) or int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}.")
    return int(n_bins)


@fill_doc(binary_inputs=BINARY_INPUTS)
def calibration_bins(y_true, y_prob, n_bins: int = 10, *, weights=None) -> CalibrationBins:
    """Equal-width reliability-diagram bins of binary predictions (Auto-MD-bench App. F).

    Edges are ``np.linspace(0, 1, n_bins + 1)``; observation i falls in the bin with
    lo <= p_i < hi (``searchsorted(edges, p, side="right") - 1``), and p = 1.0 falls in the last bin,
    which is closed. A probability equal to an interior edge goes to the upper bin. This is the
    ``numpy.histogram`` / netcal ``ECE`` convention, not torchmetrics', which keeps p = 1.0 in an
    extra hidden bin (docs/decisions.md, "Metrics: binning and survival details";
    docs/reference_values.md, "Binary ECE"). Per bin b with n_b observations:

    .. math:: \\bar p_b = \\frac{1}{n_b} \\sum_{i \\in b} p_i, \\qquad
              \\bar y_b = \\frac{1}{n_b} \\sum_{i \\in b} y_i

    Parameters
    ----------
    {binary_inputs}
    n_bins : int, default 10
    weights : array-like of int, shape (n,), optional
        Multiplicity of each observation (counts and means are weighted).

    Returns
    -------
    CalibrationBins
        ``bin, lo, hi, n, mean_pred, observed`` per bin; ``.ece`` gives :func:`ece`.

    Raises
    ------
    ValueError
        Empty or different-length inputs, labels other than 0/1, probabilities NaN/inf or outside
        [0, 1], ``n_bins`` not a positive integer, bad weights.

    See Also
    --------
    ece : the weighted mean gap of these bins.
    automd_analysis.metrics.calibration_bins_equal_mass : equal-mass (quantile) bins.

    References
    ----------
    .. [1] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. F.
    .. [2] Naeini MP et al. (2015), AAAI 2015:2901-2907 (in full at :func:`ece`).

    Examples
    --------
    Two bins: [0, 0.5) holds 0.1 and 0.4, [0.5, 1] holds 0.5 (an interior edge goes up) and 1.0.

    >>> bins = calibration_bins([0, 1, 0, 1], [0.1, 0.4, 0.5, 1.0], n_bins=2)
    >>> bins.n.tolist(), bins.mean_pred.tolist(), bins.observed.tolist()
    ([2, 2], [0.25, 0.75], [0.5, 0.5])
    """
    n_bins = check_n_bins(n_bins)
    y, p, n = check_binary_inputs(y_true, y_prob)
    w = as_weight_vector(weights, n)
    idx, edges = equal_width_bin_index(p, n_bins)
    return bins_from_index(y, p, idx, edges, w)


def equal_width_bin_index(p: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Bin index (0-based) of each probability and the edges ``np.linspace(0, 1, n_bins + 1)``.

    lo <= p < hi, and p = 1.0 in the last (closed) bin (:func:`calibration_bins`). Inputs are not
    validated: ``p`` must be finite probabilities.

    Parameters
    ----------
    p : numpy.ndarray of shape (n,)
        Probabilities in [0, 1].
    n_bins : int
        Number of equal-width bins.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The bin of each probability (0 ... n_bins - 1) and the n_bins + 1 edges.

    See Also
    --------
    calibration_bins : the bins these indices define.

    References
    ----------
    .. [1] Naeini MP, Cooper GF, Hauskrecht M (2015). Obtaining well calibrated probabilities
       using Bayesian binning. AAAI 2015:2901-2907.

    Examples
    --------
    >>> idx, edges = equal_width_bin_index(np.array([0.0, 0.5, 1.0]), 2)
    >>> idx.tolist(), edges.tolist()
    ([0, 1, 1], [0.0, 0.5, 1.0])
    """
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    return np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1), edges


def bins_from_index(
    y: np.ndarray, p: np.ndarray, idx: np.ndarray, edges: np.ndarray, w: np.ndarray | None = None
) -> CalibrationBins:
    """:class:`CalibrationBins` of outcomes ``y`` and probabilities ``p`` given each one's bin.

    Per bin: count, mean prediction and event rate (NaN for an empty bin), weighted by ``w`` when
    given. Shared by the equal-width (:func:`calibration_bins`) and equal-mass binnings. Inputs are
    not validated.

    Parameters
    ----------
    y : numpy.ndarray of shape (n,)
        Binary outcomes.
    p : numpy.ndarray of shape (n,)
        Probabilities.
    idx : numpy.ndarray of int, shape (n,)
        The bin of each observation (0-based).
    edges : numpy.ndarray of shape (n_bins + 1,)
        Bin edges.
    w : numpy.ndarray of shape (n,), optional
        Integer weights (multiplicities).

    Returns
    -------
    CalibrationBins

    See Also
    --------
    calibration_bins, equal_width_bin_index

    References
    ----------
    .. [1] Naeini MP et al. (2015), AAAI 2015:2901-2907 (in full at :func:`ece`).

    Examples
    --------
    >>> bins = bins_from_index(np.array([0, 1]), np.array([0.2, 0.6]), np.array([0, 1]),
    ...                        np.array([0.0, 0.5, 1.0]))
    >>> bins.n.tolist(), bins.observed.tolist()
    ([1, 1], [0.0, 1.0])
    """
    n_bins = len(edges) - 1
    w = np.ones(len(idx)) if w is None else w
    n = np.bincount(idx, weights=w, minlength=n_bins).astype(np.int64)
    sum_p = np.bincount(idx, weights=w * p, minlength=n_bins)
    sum_y = np.bincount(idx, weights=w * y, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_pred = np.where(n > 0, sum_p / n, np.nan)
        observed = np.where(n > 0, sum_y / n, np.nan)
    return CalibrationBins(
        bin=np.arange(1, n_bins + 1),
        lo=edges[:-1],
        hi=edges[1:],
        n=n,
        mean_pred=mean_pred,
        observed=observed,
    )


@fill_doc(binary_inputs=BINARY_INPUTS)
def ece(y_true, y_prob, n_bins: int = 10, *, weights=None, cluster=None):
    """Expected calibration error with equal-width bins (Auto-MD-bench App. F, "Expected Calibration Error").

    .. math:: \\mathrm{ECE} = \\sum_b \\frac{n_b}{N} \\bigl|\\bar p_b - \\bar y_b\\bigr|

    over ``n_bins`` equal-width bins [lo, hi) of [0, 1], the last bin closed so that p = 1.0 is in it;
    empty bins contribute 0. For sequential tasks the observations are patient-hours. See
    :func:`calibration_bins` for the binning convention. With weights, n_b, p̄_b and ȳ_b are
    weighted (the ECE of the repeated rows, up to the order of floating-point sums: < 1e-12).

    Parameters
    ----------
    {binary_inputs}
    n_bins : int, default 10
    weights : array-like of int, shape (u,) or (m, u), optional
        Multiplicity of each unit - an observation, or with ``cluster`` a cluster (u clusters, in
        order of first appearance; every row of a cluster gets its weight) - or m such vectors
        (e.g. :func:`~automd_analysis.metrics.bootstrap_weights`) for m values in one call.
    cluster : array-like of shape (n,), optional
        Cluster label of each row (the patient of a patient-hour): ``weights`` are then per cluster.

    Returns
    -------
    float, or numpy.ndarray of shape (m,) for a weight matrix
        ECE in [0, 1]; 0 when every bin's mean prediction equals its event frequency.

    Raises
    ------
    ValueError
        As :func:`calibration_bins`; ``cluster`` of another length; bad weights.

    See Also
    --------
    calibration_bins : the bins behind the value (reliability diagrams).
    automd_analysis.metrics.ece_equal_mass : the same gap over equal-mass bins.
    automd_analysis.metrics.survival_ece : the survival-task ECE against Kaplan-Meier.
    automd_analysis.metrics.ici : a bin-free summary of the smoothed calibration curve.

    References
    ----------
    .. [1] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. F.
    .. [2] Naeini MP, Cooper GF, Hauskrecht M (2015). Obtaining well calibrated probabilities
       using Bayesian binning. AAAI 2015:2901-2907.
    .. [3] Guo C, Pleiss G, Sun Y, Weinberger KQ (2017). On calibration of modern neural
       networks. ICML 2017, PMLR 70:1321-1330.

    Examples
    --------
    Bin [0, 0.5) predicts 0.25 on average and sees 1 event in 2; bin [0.5, 1] predicts 0.75 and
    sees 1 in 2: ECE = 1/2 |0.25 - 0.5| + 1/2 |0.75 - 0.5| = 0.25.

    >>> ece([0, 1, 0, 1], [0.1, 0.4, 0.5, 1.0], n_bins=2)
    0.25

    With the default 10 bins (a value checked against netcal in docs/reference_values.md):

    >>> round(ece([1, 0, 1, 1, 0, 0], [1.0, 1.0, 0.95, 0.9, 0.2, 0.1]), 6)
    0.191667

    Per-patient weights of an hourly task (patient "a" twice, "b" left out):

    >>> y, p = [0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4]
    >>> round(ece(y, p, 2, weights=[2, 0], cluster=["a", "a", "b", "b"]), 6)
    0.25
    """
    n_bins = check_n_bins(n_bins)
    y, p, n = check_binary_inputs(y_true, y_prob)
    idx, _ = equal_width_bin_index(p, n_bins)
    values = np.column_stack([np.ones(n), p, y])
    codes, n_units, w = unit_weights(weights, cluster, n)
    entry_bin, entry_unit = np.asarray(idx, dtype=np.int64), None  # one entry per row
    if codes is not None:
        # one entry per (bin, cluster), sorted by bin then cluster: the rows of a cluster in a bin
        # are summed once, each vector only re-weighs these sums
        keys, entry_of_row = np.unique(idx * n_units + codes, return_inverse=True)
        entry_bin, entry_unit = keys // n_units, keys % n_units
        values = np.column_stack(
            [np.bincount(entry_of_row.ravel(), weights=v, minlength=len(keys)) for v in values.T]
        )
    out = np.empty(n_vectors(w), dtype=np.float64)
    for k0, lanes in lane_blocks(w, n_units, entry_unit):
        sums = key_sums(lanes, entry_bin, values, n_bins)
        for k in range(lanes.shape[1]):
            cnt, sum_p, sum_y = sums[:, 0, k], sums[:, 1, k], sums[:, 2, k]
            with np.errstate(invalid="ignore", divide="ignore"):
                out[k0 + k] = _weighted_gap(cnt, sum_p / cnt, sum_y / cnt)
    return out if is_matrix(w) else float(out[0])


@fill_doc(binary_inputs=BINARY_INPUTS)
def brier(y_true, y_prob, *, weights=None, cluster=None):
    """Brier score of binary probabilities (Auto-MD-bench App. F.1, "Evaluation").

    .. math:: \\mathrm{Brier} = \\frac{\\sum_i w_i (p_i - y_i)^2}{\\sum_i w_i}

    (w_i = 1 without weights: the mean squared error of the probabilities).

    Parameters
    ----------
    {binary_inputs}
    weights, cluster
        Multiplicities per observation or per cluster, as for :func:`ece`.

    Returns
    -------
    float, or numpy.ndarray of shape (m,) for a weight matrix
        Brier score in [0, 1]; equal to ``sklearn.metrics.brier_score_loss`` (with
        ``sample_weight``).

    Raises
    ------
    ValueError
        Empty or different-length inputs, labels other than 0/1, probabilities NaN/inf or outside
        [0, 1]; bad weights.

    See Also
    --------
    automd_analysis.metrics.brier_decomposition : reliability, resolution and uncertainty.
    automd_analysis.metrics.survival_brier_score : the IPCW Brier score of survival curves.

    References
    ----------
    .. [1] Brier GW (1950). Verification of forecasts expressed in terms of probability. Monthly
       Weather Review 78:1-3.
    .. [2] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. F.1.

    Examples
    --------
    >>> round(brier([0, 1, 1], [0.2, 0.6, 1.0]), 6)  # (0.04 + 0.16 + 0) / 3
    0.066667
    >>> round(brier([0, 1, 1], [0.2, 0.6, 1.0], weights=[2, 1, 0]), 6)  # (2 x 0.04 + 0.16) / 3
    0.08
    """
    y, p, n = check_binary_inputs(y_true, y_prob)
    codes, n_units, w = unit_weights(weights, cluster, n)
    squared = (p - y) ** 2
    if w is None:
        return float(np.mean(squared))
    out = np.empty(n_vectors(w), dtype=np.float64)
    for k0, lanes in lane_blocks(w, n_units, codes):
        out[k0 : k0 + lanes.shape[1]] = lane_dot(lanes, squared) / lanes.sum(axis=0)
    return out if is_matrix(w) else float(out[0])
