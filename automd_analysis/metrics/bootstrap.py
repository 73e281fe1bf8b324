"""Bootstrap confidence intervals: the generic resampler and the interval methods.

Two ways to get replicates:

- Every metric of the toolkit takes ``weights=``; called with the multiplicity matrix of the
  resamples (:func:`~automd_analysis.metrics.bootstrap_weights`) it returns every replicate at
  once, exactly (replicate b equals the metric on the resampled rows, including the ties that
  duplicated rows create) and fast, because the data are sorted once for all of them.
- :func:`bootstrap_ci` resamples rows (or whole clusters) and calls any ``statistic`` on the
  resampled arrays. Generic and simple, one Python call per replicate.

Replicates go to :func:`percentile_interval` or :func:`bca_interval`. Both ways draw the same
resample positions for the same ``(seed, n)`` (:func:`bootstrap_indices`), so replicates of
different metrics, or of different submissions on the same test set, are paired replicate by
replicate.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from automd_analysis.metrics._resample import (
    as_indices,
    bootstrap_indices,
    bootstrap_weights,
    check_alpha,
    check_n_boot,
    cluster_codes,
    explicit_blocks,
    index_blocks,
    rows_of_clusters,
)

__all__ = [
    "BOOTSTRAP_METHODS",
    "BootstrapResult",
    "bca_interval",
    "bias_corrected_interval",
    "bootstrap_ci",
    "bootstrap_indices",
    "bootstrap_weights",
    "check_alpha",
    "percentile_interval",
]

#: Interval methods of :func:`bootstrap_ci`.
BOOTSTRAP_METHODS = ("percentile", "bca")


@dataclass(frozen=True)
class BootstrapResult:
    """A bootstrap confidence interval and the replicates behind it.

    Attributes
    ----------
    estimate : float
        The statistic on the original sample.
    low, high : float
        Interval bounds (``nan`` when fewer than two replicates are finite, or BCa is degenerate).
    replicates : numpy.ndarray
        The statistic on each resample (``nan`` where it was undefined).
    method : str
        ``"percentile"`` or ``"bca"``.
    alpha : float
        1 - confidence level (0.05 for a 95 % interval).
    n_undefined : int
        Replicates that were not finite (left out of the interval).
    """

    estimate: float
    low: float
    high: float
    replicates: np.ndarray = field(repr=False)
    method: str = "percentile"
    alpha: float = 0.05
    n_undefined: int = 0

    @property
    def standard_error(self) -> float:
        """Sample standard deviation (``ddof=1``) of the finite replicates."""
        finite = self.replicates[np.isfinite(self.replicates)]
        return float(np.std(finite, ddof=1)) if finite.size > 1 else math.nan


def _finite(replicates) -> np.ndarray:
    arr = np.asarray(replicates, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"replicates must be one-dimensional, got shape {arr.shape}.")
    return arr[np.isfinite(arr)]


def percentile_interval(replicates, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile bootstrap interval: the alpha/2 and 1 - alpha/2 quantiles of the replicates.

    .. math:: [\\hat\\theta^*_{(\\alpha/2)},\\ \\hat\\theta^*_{(1 - \\alpha/2)}]

    with ``numpy.quantile``'s default (linear) interpolation, over the finite replicates
    (``scipy.stats.bootstrap(method="percentile")`` uses the same rule).

    Parameters
    ----------
    replicates : array-like of float, shape (B,)
    alpha : float, default 0.05

    Returns
    -------
    (low, high) : tuple of float
        ``(nan, nan)`` with fewer than two finite replicates.

    See Also
    --------
    bca_interval : bias-corrected and accelerated interval.
    bootstrap_ci : resample and interval in one call.

    References
    ----------
    Efron, B., Tibshirani, R. (1993). An Introduction to the Bootstrap, ch. 13. Chapman & Hall.

    Examples
    --------
    >>> percentile_interval([1.0, 2.0, 3.0, 4.0, 5.0], alpha=0.5)
    (2.0, 4.0)
    """
    alpha = check_alpha(alpha)
    finite = _finite(replicates)
    if finite.size < 2:
        return math.nan, math.nan
    low, high = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def bias_corrected_interval(
    estimate: float, replicates, alpha: float = 0.05, *, lower: float | None = None
) -> tuple[float, float, float]:
    """Bootstrap bias-corrected estimate of a sum of absolute gaps (a binned ECE) and the interval
    that brackets its bias: ``(corrected, low, high)``.

    With θ̂ the plug-in estimate, θ*_b the finite replicates, their mean θ̄* and percentile
    quantiles q̂, the bootstrap bias estimate b̂ = θ̄* - θ̂ is removed once from the estimate; the
    interval runs from "the bias is as large as it can be" to "there is no bias", each widened by
    the longer tail h of the replicates:

    .. math:: \\hat\\theta_{bc} = \\hat\\theta - \\hat b,\\qquad
              \\bigl[\\min(\\hat\\theta, \\hat\\theta - \\kappa \\hat b) - h,\\;
              \\max(\\hat\\theta, \\hat\\theta_{bc}) + h\\bigr],\\quad
              h = \\max(\\hat q_{1-\\alpha/2} - \\bar\\theta^*,\\; \\bar\\theta^* - \\hat q_{\\alpha/2}),
              \\quad \\kappa = \\frac{1}{\\sqrt 2 - 1}

    Why: the plug-in's bias is upwards (the absolute value of a noisy gap is on average larger than
    the gap) and the bootstrap estimates it only partly: for a bin whose true gap is 0 the bias is
    E|Z| σ while the bootstrap's is (E|Z + Z'| - E|Z|) σ = (√2 - 1) E|Z| σ, so the true bias is at
    most κ = 2.41 times b̂; for a bin with a large gap both vanish. So the quantity lies between
    θ̂ - κ b̂ (every gap 0) and θ̂ (no bias), and the sampling error adds h on each side. The
    interval holds θ̂_bc. With ``lower`` (0 for an ECE), the estimate and both ends are raised
    to it: a quantity that cannot be negative never gets a negative estimate or interval end.

    Parameters
    ----------
    estimate : float
        The plug-in estimate θ̂.
    replicates : array-like of float, shape (B,)
    alpha : float, default 0.05
    lower : float, optional
        The quantity's lower bound.

    Returns
    -------
    (corrected, low, high) : tuple of float
        NaN with fewer than two finite replicates or a non-finite estimate.

    See Also
    --------
    percentile_interval : the plug-in estimate's interval.

    References
    ----------
    Efron, B., Tibshirani, R. (1993). An Introduction to the Bootstrap, sec. 10.6 and 13.4.
    Chapman & Hall.
    Kumar, A., Liang, P., Ma, T. (2019). Verified uncertainty calibration. NeurIPS 32 (the plug-in
    binned calibration error is biased upwards).

    Examples
    --------
    Replicates with mean 0.33, 0.03 above the estimate 0.30, quartiles 0.315 and 0.345: the
    corrected value is 0.27; the interval runs from 0.30 - 2.414 x 0.03 - 0.015 to 0.30 + 0.015:

    >>> [round(v, 4) for v in bias_corrected_interval(0.30, [0.30, 0.32, 0.34, 0.36], 0.5)]
    [0.27, 0.2126, 0.315]
    >>> bias_corrected_interval(0.01, [0.02, 0.04, 0.05, 0.05], 0.5, lower=0.0)[:2]
    (0.0, 0.0)
    """
    alpha = check_alpha(alpha)
    finite = _finite(replicates)
    point = float(estimate)
    if finite.size < 2 or not math.isfinite(point):
        return math.nan, math.nan, math.nan
    low, high = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    mean = float(finite.mean())
    bias = mean - point
    corrected = point - bias
    half = max(float(high) - mean, mean - float(low))
    out = (
        corrected,
        min(point, point - _WORST_BIAS * bias) - half,
        max(point, corrected) + half,
    )
    if lower is not None:
        out = tuple(max(float(lower), v) for v in out)
    return float(out[0]), float(out[1]), float(out[2])


#: At most this many times the bootstrap's bias estimate is the true bias of a binned ECE: a bin
#: whose true gap is 0 (1 / (sqrt(2) - 1); docs/statistics.md section 9).
_WORST_BIAS = 1.0 / (math.sqrt(2.0) - 1.0)


def bca_interval(
    replicates, estimate: float, jackknife, alpha: float = 0.05
) -> tuple[float, float]:
    """Bias-corrected and accelerated (BCa) bootstrap interval.

    With p0 = (#{θ*_b < θ̂} + #{θ*_b <= θ̂}) / (2B), z0 = Φ⁻¹(p0), the jackknife values θ_(i)
    (statistic without unit i), U_i = (n - 1)(θ̄_(.) - θ_(i)) and a = Σ U_i³ / (6 (Σ U_i²)^{3/2}),

    .. math:: \\alpha_{1,2} = \\Phi\\Bigl(z_0 + \\frac{z_0 + z_{\\alpha/2,\\,1-\\alpha/2}}
              {1 - a (z_0 + z_{\\alpha/2,\\,1-\\alpha/2})}\\Bigr)

    and the interval is the α1 and α2 quantiles of the replicates (linear interpolation). These are
    the conventions of ``scipy.stats.bootstrap(method="BCa")``.

    Parameters
    ----------
    replicates : array-like of float, shape (B,)
        Non-finite values are left out.
    estimate : float
        θ̂, the statistic on the original sample.
    jackknife : array-like of float, shape (n,)
        Leave-one-unit-out values of the statistic (units = rows, or clusters).
    alpha : float, default 0.05

    Returns
    -------
    (low, high) : tuple of float
        ``(nan, nan)`` when fewer than two replicates are finite, when every replicate lies on one
        side of θ̂ (z0 infinite), or when the jackknife values are all equal (a undefined).

    See Also
    --------
    percentile_interval : the plain percentile interval.

    References
    ----------
    Efron, B. (1987). Better bootstrap confidence intervals. Journal of the American Statistical
    Association 82(397), 171-185.

    Examples
    --------
    >>> import numpy as np
    >>> reps = np.arange(1.0, 100.0)
    >>> jack = np.array([49.0, 50.0, 51.0])  # symmetric: acceleration 0; median: no bias
    >>> [round(v, 9) for v in bca_interval(reps, 50.0, jack, alpha=0.1)]
    [5.9, 94.1]
    >>> percentile_interval(reps, alpha=0.1)
    (5.9, 94.1)
    """
    from scipy.special import ndtr, ndtri

    alpha = check_alpha(alpha)
    finite = _finite(replicates)
    jack = np.asarray(jackknife, dtype=np.float64)
    if finite.size < 2 or jack.ndim != 1 or jack.size < 2 or not np.isfinite(jack).all():
        return math.nan, math.nan
    p0 = (np.count_nonzero(finite < estimate) + np.count_nonzero(finite <= estimate)) / (
        2 * finite.size
    )
    z0 = float(ndtri(p0))
    n = jack.size
    u = (n - 1) * (jack.mean() - jack)
    den = float(np.sum(u**2) / n**2)
    if not math.isfinite(z0) or den == 0.0:
        return math.nan, math.nan
    a = (float(np.sum(u**3) / n**3) / 6.0) / den**1.5
    levels = []
    for z_alpha in (float(ndtri(alpha / 2)), -float(ndtri(alpha / 2))):
        num = z0 + z_alpha
        levels.append(float(ndtr(z0 + num / (1 - a * num))))
    low, high = np.quantile(finite, levels)
    return float(low), float(high)


def _check_arrays(arrays) -> int:
    if not arrays:
        raise ValueError("bootstrap_ci needs at least one data array.")
    lengths = []
    for i, arr in enumerate(arrays):
        if np.ndim(arr) < 1:
            raise ValueError(f"data array {i} must have at least one dimension (rows).")
        lengths.append(len(arr))
    if len(set(lengths)) > 1:
        raise ValueError(f"data arrays must have the same number of rows, got {lengths}.")
    if lengths[0] == 0:
        raise ValueError("data arrays are empty; at least one row is required.")
    return lengths[0]


def bootstrap_ci(
    statistic: Callable[..., float],
    *arrays,
    n_boot: int = 1000,
    alpha: float = 0.05,
    seed=0,
    cluster=None,
    method: str = "percentile",
    indices=None,
) -> BootstrapResult:
    """Bootstrap confidence interval of any statistic of one or more row-aligned arrays.

    Replicate b calls ``statistic(*(a[rows_b] for a in arrays))``: ``rows_b = indices[b]`` (rows
    drawn with replacement), or with ``cluster`` the rows of the clusters ``indices[b]`` (clusters
    numbered in order of first appearance) concatenated, each cluster's rows in their original
    order, so whole clusters (e.g. the hours of one patient) are resampled, never single rows. The
    interval is

    - ``"percentile"``: the α/2 and 1 - α/2 quantiles of the replicates
      (:func:`percentile_interval`);
    - ``"bca"``: Efron's bias-corrected and accelerated interval (:func:`bca_interval`), whose
      acceleration comes from a jackknife over the units (one statistic call per row or cluster).

    Parameters
    ----------
    statistic : callable
        ``statistic(*arrays) -> float``. A cluster label that the statistic itself reads (e.g. a
        patient id) is duplicated as is in a resample; the toolkit's metrics take ``weights=`` of
        :func:`bootstrap_weights` instead (the utility then counts each copy of a patient as its
        own patient).
    *arrays : array-like
        Data, all with the same number of rows (first axis).
    n_boot : int, default 1000
        Number of replicates (ignored when ``indices`` is given).
    alpha : float, default 0.05
        1 - confidence level.
    seed : int or sequence of int, default 0
        Seed of :func:`bootstrap_indices` (ignored when ``indices`` is given).
    cluster : array-like of shape (n,), optional
        Cluster label of each row.
    method : {"percentile", "bca"}, default "percentile"
    indices : array-like of int, shape (n_boot, m), optional
        Explicit resample positions of the units (rows, or clusters).

    Returns
    -------
    BootstrapResult
        ``estimate``, ``low``, ``high``, ``replicates``, ``method``, ``alpha``, ``n_undefined``.

    Raises
    ------
    ValueError
        No array, arrays of different lengths, bad ``n_boot``, ``alpha``, ``method``, ``cluster``
        or ``indices``.

    See Also
    --------
    bootstrap_weights : resample multiplicities; every metric takes them as ``weights=`` and
        returns all replicates at once, exactly.
    scipy.stats.bootstrap : the same intervals for statistics of independent rows.

    References
    ----------
    Efron, B., Tibshirani, R. (1993). An Introduction to the Bootstrap. Chapman & Hall.
    Davison, A. C., Hinkley, D. V. (1997). Bootstrap Methods and their Application, sec. 3.8
    (resampling clusters). Cambridge University Press.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([2.0, 4.0, 4.0, 5.0, 7.0, 9.0])
    >>> res = bootstrap_ci(np.mean, x, n_boot=200, seed=3)
    >>> res.estimate
    5.166666666666667
    >>> bool(res.low < res.estimate < res.high)
    True
    >>> len(res.replicates)
    200
    """
    if method not in BOOTSTRAP_METHODS:
        raise ValueError(f"method must be one of {BOOTSTRAP_METHODS}, got {method!r}.")
    alpha = check_alpha(alpha)
    n = _check_arrays(arrays)
    data = [np.asarray(a) for a in arrays]
    if cluster is None:
        n_units = n
        rows_of = None
    else:
        codes, n_units = cluster_codes(cluster)
        if len(codes) != n:
            raise ValueError(
                f"cluster must have one label per row: {len(codes)} labels for {n} rows."
            )
        members, offsets = rows_of_clusters(codes, n_units)
        rows_of = (members, offsets)
    if indices is None:
        n_boot = check_n_boot(n_boot)
        blocks = index_blocks(n_units, n_boot, seed)
    else:
        idx = as_indices(indices, n_units)
        n_boot = idx.shape[0]
        blocks = explicit_blocks(idx)

    def rows_for(units: np.ndarray) -> np.ndarray:
        if rows_of is None:
            return units
        members, offsets = rows_of
        return np.concatenate([members[offsets[u] : offsets[u + 1]] for u in units])

    estimate = float(statistic(*data))
    replicates = np.empty(n_boot, dtype=np.float64)
    for b0, block in blocks:
        for k, units in enumerate(block):
            rows = rows_for(units.astype(np.int64))
            replicates[b0 + k] = float(statistic(*(a[rows] for a in data)))
    if method == "percentile":
        low, high = percentile_interval(replicates, alpha)
    else:
        jack = np.empty(n_units, dtype=np.float64)
        all_units = np.arange(n_units)
        for u in range(n_units):
            rows = rows_for(np.delete(all_units, u))
            jack[u] = float(statistic(*(a[rows] for a in data))) if len(rows) else math.nan
        low, high = bca_interval(replicates, estimate, jack, alpha)
    return BootstrapResult(
        estimate=estimate,
        low=low,
        high=high,
        replicates=replicates,
        method=method,
        alpha=alpha,
        n_undefined=int(np.count_nonzero(~np.isfinite(replicates))),
    )
