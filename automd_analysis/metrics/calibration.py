"""Calibration of binary probabilities: equal-width-bin ECE, reliability-diagram bins, Brier score."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automd_analysis.metrics._validation import (
    as_binary,
    as_probabilities,
    check_same_length,
)

__all__ = ["CalibrationBins", "brier", "calibration_bins", "ece"]


@dataclass(frozen=True)
class CalibrationBins:
    """Per-bin summary of binary predictions, one entry per bin (empty bins included).

    Attributes
    ----------
    bin : numpy.ndarray
        Bin number, 1 .. n_bins (bin 1 holds the lowest probabilities).
    lo, hi : numpy.ndarray
        Bin edges (``np.linspace(0, 1, n_bins + 1)``); a bin holds lo <= p < hi, the last one also p = 1.
    n : numpy.ndarray
        Observations in the bin.
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
        keep = self.n > 0
        weights = self.n[keep] / self.n.sum()
        return float(np.sum(weights * np.abs(self.mean_pred[keep] - self.observed[keep])))

    def as_dict(self) -> dict[str, np.ndarray]:
        """Columns as a dict of arrays (e.g. for ``pandas.DataFrame``)."""
        return {
            "bin": self.bin,
            "lo": self.lo,
            "hi": self.hi,
            "n": self.n,
            "mean_pred": self.mean_pred,
            "observed": self.observed,
        }


def check_n_bins(n_bins) -> int:
    if isinstance(n_bins, bool) or int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer, got {n_bins!r}.")
    return int(n_bins)


def calibration_bins(y_true, y_prob, n_bins: int = 10) -> CalibrationBins:
    """Equal-width reliability-diagram bins of binary predictions (Auto-MD-bench App. F).

    Edges are ``np.linspace(0, 1, n_bins + 1)``; observation i falls in the bin with
    lo <= p_i < hi (``searchsorted(edges, p, side="right") - 1``), and p = 1.0 falls in the last bin,
    which is closed. A probability equal to an interior edge goes to the upper bin. This is the
    ``numpy.histogram`` / netcal ``ECE`` convention (metrics_reference §6.3), not torchmetrics', which
    keeps p = 1.0 in an extra hidden bin.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary outcomes (0/1 or bool).
    y_prob : array-like of shape (n,)
        Predicted probabilities of outcome 1, finite and in [0, 1] (scored as submitted, no
        recalibration).
    n_bins : int, default 10

    Returns
    -------
    CalibrationBins
        ``bin, lo, hi, n, mean_pred, observed`` per bin; ``.ece`` gives :func:`ece`.

    Raises
    ------
    ValueError
        Empty or different-length inputs, labels other than 0/1, probabilities NaN/inf or outside
        [0, 1], ``n_bins`` not a positive integer.
    """
    n_bins = check_n_bins(n_bins)
    y = as_binary("y_true", y_true)
    p = as_probabilities("y_prob", y_prob)
    check_same_length(y_true=y, y_prob=p)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    idx = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1)
    n = np.bincount(idx, minlength=n_bins)
    sum_p = np.bincount(idx, weights=p, minlength=n_bins)
    sum_y = np.bincount(idx, weights=y, minlength=n_bins)
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


def ece(y_true, y_prob, n_bins: int = 10) -> float:
    """Expected calibration error with equal-width bins (Auto-MD-bench App. F, "Expected Calibration Error").

    .. math:: \\mathrm{ECE} = \\sum_b \\frac{n_b}{N} \\bigl|\\bar p_b - \\bar y_b\\bigr|

    over ``n_bins`` equal-width bins [lo, hi) of [0, 1], the last bin closed so that p = 1.0 is in it;
    empty bins contribute 0. For sequential tasks the observations are patient-hours. See
    :func:`calibration_bins` for the binning convention.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary outcomes (0/1 or bool).
    y_prob : array-like of shape (n,)
        Predicted probabilities in [0, 1], scored as submitted.
    n_bins : int, default 10

    Returns
    -------
    float
        ECE in [0, 1]; 0 when every bin's mean prediction equals its event frequency.

    Raises
    ------
    ValueError
        As :func:`calibration_bins`.
    """
    return calibration_bins(y_true, y_prob, n_bins).ece


def brier(y_true, y_prob) -> float:
    """Brier score of binary probabilities (Auto-MD-bench App. F.1, "Evaluation").

    .. math:: \\mathrm{Brier} = \\frac{1}{N} \\sum_{i=1}^{N} (p_i - y_i)^2

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary outcomes (0/1 or bool).
    y_prob : array-like of shape (n,)
        Predicted probabilities in [0, 1].

    Returns
    -------
    float
        Brier score in [0, 1]; equal to ``sklearn.metrics.brier_score_loss``.

    Raises
    ------
    ValueError
        Empty or different-length inputs, labels other than 0/1, probabilities NaN/inf or outside
        [0, 1].
    """
    y = as_binary("y_true", y_true)
    p = as_probabilities("y_prob", y_prob)
    check_same_length(y_true=y, y_prob=p)
    return float(np.mean((p - y) ** 2))
