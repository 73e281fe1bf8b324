"""Binned calibration beyond the paper's ECE: equal-mass bins and the Murphy decomposition of Brier.

:func:`automd_analysis.metrics.ece` (equal-width bins, any ``n_bins``) is unchanged; this module adds
the equal-mass (quantile) binning and the decomposition of the Brier score into reliability,
resolution and uncertainty, with the two within-bin terms that make it exact for binned
probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automd_analysis.metrics._docstrings import BINARY_INPUTS, fill_doc
from automd_analysis.metrics._results import ScalarFields
from automd_analysis.metrics._validation import check_binary_inputs
from automd_analysis.metrics.calibration import (
    CalibrationBins,
    bins_from_index,
    check_n_bins,
    equal_width_bin_index,
)

__all__ = [
    "BRIER_STRATEGIES",
    "BrierDecomposition",
    "brier_decomposition",
    "calibration_bins_equal_mass",
    "ece_equal_mass",
]

#: Binning strategies of :func:`brier_decomposition`.
BRIER_STRATEGIES = ("uniform", "quantile")


def _validated(y_true, y_prob) -> tuple[np.ndarray, np.ndarray]:
    y, p, _ = check_binary_inputs(y_true, y_prob)
    return y, p


def _equal_mass_index(p: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    edges = np.percentile(p, np.linspace(0.0, 100.0, n_bins + 1))
    idx = np.searchsorted(edges[1:-1], p, side="left")
    return idx, edges


@fill_doc(binary_inputs=BINARY_INPUTS)
def calibration_bins_equal_mass(y_true, y_prob, n_bins: int = 10) -> CalibrationBins:
    """Equal-mass (quantile) reliability bins of binary predictions.

    Edges are the sample percentiles ``np.percentile(p, linspace(0, 100, n_bins + 1))`` (linear
    interpolation) and observation i falls in bin ``searchsorted(edges[1:-1], p_i, side="left")``:
    bins are (lo, hi], the first one closed, so a prediction equal to an interior edge goes to the
    *lower* bin. This is the binning of ``sklearn.calibration.calibration_curve(strategy="quantile")``.
    A prediction's bin depends only on its value, so tied predictions are never split and bins are
    equal-mass only up to ties (heavily tied predictions can leave bins empty).

    Parameters
    ----------
    {binary_inputs}
    n_bins : int, default 10
        Number of quantile groups of the predictions.

    Returns
    -------
    CalibrationBins
        ``bin, lo, hi, n, mean_pred, observed`` per bin (``lo``/``hi`` are the quantile edges);
        ``.ece`` gives :func:`ece_equal_mass`.

    Raises
    ------
    ValueError
        Empty or different-length inputs, labels other than 0/1, probabilities NaN/inf or outside
        [0, 1], ``n_bins`` not a positive integer.

    See Also
    --------
    ece_equal_mass : the ECE over these bins.
    automd_analysis.metrics.calibration_bins : equal-width bins of the paper's ECE.

    References
    ----------
    .. [1] Nixon J, Dusenberry M, Zhang L, Jerfel G, Tran D (2019). Measuring calibration in deep
       learning. CVPR Workshops.

    Examples
    --------
    >>> from automd_analysis.metrics import calibration_bins_equal_mass
    >>> bins = calibration_bins_equal_mass([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.9], n_bins=2)
    >>> bins.n.tolist(), bins.mean_pred.tolist(), bins.observed.tolist()
    ([2, 2], [0.15000000000000002, 0.6], [0.0, 1.0])
    """
    n_bins = check_n_bins(n_bins)
    y, p = _validated(y_true, y_prob)
    idx, edges = _equal_mass_index(p, n_bins)
    return bins_from_index(y, p, idx, edges)


@fill_doc(binary_inputs=BINARY_INPUTS)
def ece_equal_mass(y_true, y_prob, n_bins: int = 10) -> float:
    """Expected calibration error over equal-mass (quantile) bins.

    .. math:: \\mathrm{ECE}_{\\text{mass}} = \\sum_b \\frac{n_b}{N} \\bigl|\\bar p_b - \\bar y_b\\bigr|

    with the bins of :func:`calibration_bins_equal_mass` (empty bins contribute 0). Equal-width
    ECE (the paper's) puts most observations into one or two bins when predictions are concentrated
    (rare outcomes); equal-mass bins spread them evenly.

    Parameters
    ----------
    {binary_inputs}
    n_bins : int, default 10
        Number of bins, as :func:`calibration_bins_equal_mass`.

    Returns
    -------
    float
        ECE in [0, 1].

    Raises
    ------
    ValueError
        As :func:`calibration_bins_equal_mass`.

    See Also
    --------
    automd_analysis.metrics.ece : equal-width bins (the paper's ECE).
    ici : a bin-free summary of the smoothed calibration curve.

    References
    ----------
    .. [1] Naeini MP, Cooper GF, Hauskrecht M (2015). Obtaining well calibrated probabilities using
       Bayesian binning. AAAI 2015:2901-2907.

    Examples
    --------
    >>> from automd_analysis.metrics import ece_equal_mass
    >>> round(ece_equal_mass([0, 0, 1, 1], [0.1, 0.2, 0.3, 0.9], n_bins=2), 6)
    0.275
    """
    return calibration_bins_equal_mass(y_true, y_prob, n_bins).ece


@dataclass(frozen=True)
class BrierDecomposition(ScalarFields):
    """Murphy decomposition of the Brier score over bins.

    ``brier = reliability - resolution + uncertainty + within_bin_variance - within_bin_covariance``
    holds exactly (up to rounding).

    Attributes
    ----------
    brier : float
        (1/N) sum (p_i - y_i)^2.
    reliability : float
        (1/N) sum_b n_b (p̄_b - ȳ_b)^2 (lower is better).
    resolution : float
        (1/N) sum_b n_b (ȳ_b - ȳ)^2 (higher is better).
    uncertainty : float
        ȳ (1 - ȳ).
    within_bin_variance : float
        (1/N) sum_b sum_{i in b} (p_i - p̄_b)^2.
    within_bin_covariance : float
        (2/N) sum_b sum_{i in b} (p_i - p̄_b)(y_i - ȳ_b).
    n_bins : int
    strategy : str
    """

    brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within_bin_variance: float
    within_bin_covariance: float
    n_bins: int
    strategy: str


@fill_doc(binary_inputs=BINARY_INPUTS)
def brier_decomposition(
    y_true, y_prob, n_bins: int = 10, *, strategy: str = "uniform"
) -> BrierDecomposition:
    """Decompose the Brier score into reliability, resolution and uncertainty (Murphy 1973).

    With bins b (``strategy="uniform"``: the equal-width bins of
    :func:`~automd_analysis.metrics.calibration_bins`; ``"quantile"``: those of
    :func:`calibration_bins_equal_mass`), bin sizes n_b, mean predictions p̄_b, event rates ȳ_b and the
    overall rate ȳ:

    .. math::

        \\mathrm{BS} = \\underbrace{\\tfrac1N \\sum_b n_b (\\bar p_b - \\bar y_b)^2}_{\\text{REL}}
        - \\underbrace{\\tfrac1N \\sum_b n_b (\\bar y_b - \\bar y)^2}_{\\text{RES}}
        + \\underbrace{\\bar y (1 - \\bar y)}_{\\text{UNC}}
        + \\mathrm{WBV} - \\mathrm{WBC}

    where WBV = (1/N) Σ_b Σ_{i∈b} (p_i − p̄_b)² and WBC = (2/N) Σ_b Σ_{i∈b} (p_i − p̄_b)(y_i − ȳ_b)
    (Stephenson, Coelho and Jolliffe 2008). Murphy's three-term identity holds exactly when the
    predictions are constant within each bin (WBV = WBC = 0); with binned continuous predictions the
    two extra terms are usually small and reported so that the identity is exact.

    Parameters
    ----------
    {binary_inputs}
    n_bins : int, default 10
    strategy : {"uniform", "quantile"}, default "uniform"

    Returns
    -------
    BrierDecomposition

    Raises
    ------
    ValueError
        Malformed inputs (as :func:`~automd_analysis.metrics.brier`), ``n_bins`` not a positive
        integer, unknown ``strategy``.

    See Also
    --------
    automd_analysis.metrics.brier : the Brier score itself.
    automd_analysis.metrics.calibration_bins : the equal-width bins.

    References
    ----------
    .. [1] Murphy AH (1973). A new vector partition of the probability score. Journal of Applied
       Meteorology 12:595-600.
    .. [2] Stephenson DB, Coelho CAS, Jolliffe IT (2008). Two extra components in the Brier score
       decomposition. Weather and Forecasting 23:752-757.

    Examples
    --------
    >>> from automd_analysis.metrics import brier_decomposition
    >>> d = brier_decomposition([0, 0, 1, 1], [0.1, 0.1, 0.7, 0.7], n_bins=10)
    >>> round(d.reliability, 4), round(d.resolution, 4), round(d.uncertainty, 4), round(d.brier, 4)
    (0.05, 0.25, 0.25, 0.05)
    """
    n_bins = check_n_bins(n_bins)
    if strategy not in BRIER_STRATEGIES:
        raise ValueError(f"strategy must be one of {BRIER_STRATEGIES}, got {strategy!r}.")
    y, p = _validated(y_true, y_prob)
    yf = y.astype(np.float64)
    index = equal_width_bin_index if strategy == "uniform" else _equal_mass_index
    idx, _ = index(p, n_bins)
    n = np.bincount(idx, minlength=n_bins)
    keep = n > 0
    sum_p = np.bincount(idx, weights=p, minlength=n_bins)
    sum_y = np.bincount(idx, weights=yf, minlength=n_bins)
    mean_p = np.zeros(n_bins)
    mean_y = np.zeros(n_bins)
    mean_p[keep] = sum_p[keep] / n[keep]
    mean_y[keep] = sum_y[keep] / n[keep]
    total = len(p)
    ybar = float(yf.mean())
    dp = p - mean_p[idx]
    dy = yf - mean_y[idx]
    return BrierDecomposition(
        brier=float(np.mean((p - yf) ** 2)),
        reliability=float(np.sum(n * (mean_p - mean_y) ** 2) / total),
        resolution=float(np.sum(n * (mean_y - ybar) ** 2) / total),
        uncertainty=ybar * (1.0 - ybar),
        within_bin_variance=float(np.sum(dp * dp) / total),
        within_bin_covariance=float(2.0 * np.sum(dp * dy) / total),
        n_bins=n_bins,
        strategy=strategy,
    )
