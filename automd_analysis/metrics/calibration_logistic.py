"""Logistic recalibration of binary probabilities: calibration intercept and slope, Spiegelhalter's z.

Both measures read the predictions on the logit scale or through their Bernoulli variance, so they
complement the binned ECE: the intercept says whether risks are too high or too low on average, the
slope whether they are too extreme (< 1) or too modest (> 1), and Spiegelhalter's z tests the
calibration of the individual probabilities.

Intervals: Wald intervals from the model-based information, or - for sequential (hourly) tasks, where
the rows of one patient are not independent - from the cluster-robust (sandwich) covariance with
patients as clusters (``groups=``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_ndtr, ndtri

from automd_analysis.metrics._validation import (
    as_binary,
    as_probabilities,
    check_same_length,
    warn_undefined,
)

__all__ = [
    "CalibrationInterceptSlope",
    "SpiegelhalterResult",
    "calibration_intercept_slope",
    "spiegelhalter_z",
]

_MAX_ITER = 100
_TOL = 1e-10


@dataclass(frozen=True)
class CalibrationInterceptSlope:
    """Calibration intercept (calibration-in-the-large) and slope with Wald intervals.

    Attributes
    ----------
    intercept, intercept_se, intercept_lo, intercept_hi : float
        a in logit P(y = 1) = a + logit(p) (offset model), its standard error and interval.
    slope, slope_se, slope_lo, slope_hi : float
        b in logit P(y = 1) = c + b logit(p), its standard error and interval.
    level : float
        Confidence level of the intervals.
    se_method : str
        ``"model"`` (inverse Fisher information) or ``"cluster"`` (cluster-robust sandwich).
    n : int
        Observations.
    n_clusters : int
        Clusters (``n`` when ``se_method == "model"``).
    """

    intercept: float
    intercept_se: float
    intercept_lo: float
    intercept_hi: float
    slope: float
    slope_se: float
    slope_lo: float
    slope_hi: float
    level: float
    se_method: str
    n: int
    n_clusters: int

    def as_dict(self) -> dict:
        """Fields as a dict of Python scalars."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class SpiegelhalterResult:
    """Spiegelhalter's z statistic and its two-sided p-value.

    Attributes
    ----------
    z : float
    p_value : float
        2 Phi(-|z|).
    """

    z: float
    p_value: float

    def __float__(self) -> float:
        return float(self.z)


def _check_level(level) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}.")
    return level


def _cluster_index(groups, n: int) -> tuple[np.ndarray, int]:
    arr = np.asarray(groups)
    if arr.ndim != 1 or len(arr) != n:
        raise ValueError(
            f"groups must be one-dimensional with one entry per observation ({n}), "
            f"got shape {arr.shape}."
        )
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        i = int(np.flatnonzero(np.isnan(arr))[0])
        raise ValueError(f"groups must not contain NaN; groups[{i}] is nan.")
    if arr.dtype.kind == "O" and any(v is None for v in arr):
        i = next(i for i, v in enumerate(arr) if v is None)
        raise ValueError(f"groups must not contain None; groups[{i}] is None.")
    _, inverse = np.unique(arr, return_inverse=True)
    inverse = inverse.reshape(-1)
    return inverse, int(inverse.max()) + 1


def _logit_or_none(p: np.ndarray, measure: str) -> np.ndarray | None:
    extreme = (p <= 0.0) | (p >= 1.0)
    if extreme.any():
        i = int(np.flatnonzero(extreme)[0])
        warn_undefined(
            measure,
            f"{int(extreme.sum())} prediction(s) are exactly 0 or 1 (first: y_prob[{i}] = "
            f"{p[i]!r}), whose logit is infinite; predictions are never clipped",
        )
        return None
    return np.log(p) - np.log1p(-p)


def _fit_offset_intercept(y: np.ndarray, lp: np.ndarray) -> float:
    """MLE of a in logit P(y=1) = a + lp (exists when both classes occur): safeguarded Newton."""
    target = float(y.sum())
    a, lo, hi = 0.0, -np.inf, np.inf
    for _ in range(_MAX_ITER):
        mu = expit(a + lp)
        score = target - float(mu.sum())  # decreasing in a
        info = float(np.sum(mu * (1.0 - mu)))
        if score > 0:
            lo = a
        else:
            hi = a
        step = score / info if info > 0 else np.inf
        new = a + step
        if not (lo < new < hi) or not np.isfinite(new):  # bracket and bisect / expand
            if np.isfinite(lo) and np.isfinite(hi):
                new = 0.5 * (lo + hi)
            elif np.isfinite(lo):
                new = lo + max(1.0, abs(lo))
            else:
                new = hi - max(1.0, abs(hi))
        if abs(new - a) <= _TOL * (1.0 + abs(a)):
            return new
        a = new
    return a


def _fit_logistic(y: np.ndarray, lp: np.ndarray) -> np.ndarray:
    """MLE of (c, b) in logit P(y=1) = c + b lp (existence checked by the caller): Newton-Raphson
    with step halving on the log-likelihood, started at (0, 1)."""
    beta = np.array([0.0, 1.0])

    def loglik(b):
        eta = b[0] + b[1] * lp
        # y * eta - log(1 + exp(eta)), stably
        return float(np.sum(y * eta - np.logaddexp(0.0, eta)))

    current = loglik(beta)
    for _ in range(_MAX_ITER):
        mu = expit(beta[0] + beta[1] * lp)
        r = y - mu
        w = mu * (1.0 - mu)
        g = np.array([r.sum(), (r * lp).sum()])
        h00, h01, h11 = w.sum(), (w * lp).sum(), (w * lp * lp).sum()
        det = h00 * h11 - h01 * h01
        step = np.array([h11 * g[0] - h01 * g[1], h00 * g[1] - h01 * g[0]]) / det
        t = 1.0
        for _ in range(60):
            trial = beta + t * step
            value = loglik(trial)
            if value >= current - 1e-12 * abs(current):
                break
            t *= 0.5
        converged = np.all(np.abs(trial - beta) <= _TOL * (1.0 + np.abs(beta)))
        beta, current = trial, value
        if converged:
            break
    return beta


def _overlap(y: np.ndarray, lp: np.ndarray) -> bool:
    """True when the classes overlap on lp, i.e. the slope's MLE is finite (1-D logistic regression
    with an intercept has a finite MLE iff max lp of one class exceeds min lp of the other, both
    ways)."""
    l0, l1 = lp[y == 0], lp[y == 1]
    return bool(l0.max() > l1.min() and l1.max() > l0.min())


def calibration_intercept_slope(
    y_true, y_prob, *, groups=None, level: float = 0.95
) -> CalibrationInterceptSlope:
    """Calibration intercept (calibration-in-the-large) and calibration slope of binary probabilities.

    With the linear predictor :math:`\\ell_i = \\operatorname{logit}(p_i)` (Cox 1958; Van Calster et
    al. 2019):

    .. math::

        \\operatorname{logit} P(y_i = 1) = a + \\ell_i \\quad (\\text{offset: intercept } a),
        \\qquad
        \\operatorname{logit} P(y_i = 1) = c + b\\,\\ell_i \\quad (\\text{slope } b),

    both fitted by maximum likelihood. Perfect calibration gives a = 0 and b = 1; a < 0 means the
    risks are too high on average, b < 1 that they are too extreme. Standard errors are the inverse
    Fisher information (``se_method="model"``) or, with ``groups``, the cluster-robust sandwich

    .. math:: V = \\frac{G}{G-1}\\frac{N-1}{N-K}\\, I^{-1} \\Bigl(\\sum_g s_g s_g^\\top\\Bigr) I^{-1}

    with score contributions s_g summed over the rows of cluster g (K = 1 for the intercept, 2 for
    the slope model) - the default of statsmodels ``GLM.fit(cov_type="cluster")``. Intervals are
    estimate +- z_{(1+level)/2} SE.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary outcomes (0/1 or bool).
    y_prob : array-like of shape (n,)
        Predicted probabilities in [0, 1], scored as submitted (never clipped).
    groups : array-like of shape (n,), optional
        Cluster label of every row (sequential tasks: the patient id); selects the cluster-robust
        covariance.
    level : float, default 0.95

    Returns
    -------
    CalibrationInterceptSlope
        All fields ``nan`` (with :class:`UndefinedMetricWarning`) when a prediction is exactly 0 or 1
        (infinite logit; the measures are undefined rather than silently clipped) or only one class
        occurs. The slope alone is ``nan`` (with a warning) when the classes do not overlap on the
        logit scale - constant predictions or perfect separation - because its MLE is then infinite
        or not identified. With clusters, SEs need at least two clusters.

    Raises
    ------
    ValueError
        Empty or different-length inputs, labels other than 0/1, probabilities NaN/inf or outside
        [0, 1], ``groups`` of the wrong length or with missing values, ``level`` outside (0, 1).

    See Also
    --------
    spiegelhalter_z : test of the individual probabilities.
    ici : smoothed calibration curve summaries.
    automd_analysis.metrics.ece : binned calibration error.

    References
    ----------
    .. [1] Cox DR (1958). Two further applications of a model for binary regression. Biometrika
       45:562-565.
    .. [2] Van Calster B, McLernon DJ, van Smeden M, Wynants L, Steyerberg EW (2019). Calibration: the
       Achilles heel of predictive analytics. BMC Medicine 17:230.
    .. [3] Cameron AC, Miller DL (2015). A practitioner's guide to cluster-robust inference. Journal
       of Human Resources 50:317-372.

    Examples
    --------
    >>> from automd_analysis.metrics import calibration_intercept_slope
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1]
    >>> p = [0.1, 0.3, 0.4, 0.5, 0.6, 0.8, 0.35, 0.7]
    >>> res = calibration_intercept_slope(y, p)
    >>> round(res.intercept, 4), round(res.slope, 4)
    (0.1535, 3.2883)
    >>> res.se_method
    'model'
    """
    level = _check_level(level)
    y = as_binary("y_true", y_true)
    p = as_probabilities("y_prob", y_prob)
    n = check_same_length(y_true=y, y_prob=p)
    if groups is not None:
        cluster, n_clusters = _cluster_index(groups, n)
        se_method = "cluster"
    else:
        cluster, n_clusters, se_method = None, n, "model"
    nan = float("nan")
    empty = CalibrationInterceptSlope(
        nan, nan, nan, nan, nan, nan, nan, nan, level, se_method, n, n_clusters
    )
    measure = "calibration intercept/slope"
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == n:
        warn_undefined(measure, "only one class is present")
        return empty
    lp = _logit_or_none(p, measure)
    if lp is None:
        return empty
    yf = y.astype(np.float64)
    zq = float(ndtri(0.5 + level / 2.0))

    a = _fit_offset_intercept(yf, lp)
    mu = expit(a + lp)
    info_a = float(np.sum(mu * (1.0 - mu)))
    if cluster is None:
        se_a = math.sqrt(1.0 / info_a)
    else:
        s = np.bincount(cluster, weights=yf - mu, minlength=n_clusters)
        se_a = _cluster_se(np.array([[info_a]]), s[:, None], n, n_clusters, 1)[0]

    if _overlap(y, lp):
        c, b = _fit_logistic(yf, lp)
        mu2 = expit(c + b * lp)
        w = mu2 * (1.0 - mu2)
        info = np.array([[w.sum(), (w * lp).sum()], [(w * lp).sum(), (w * lp * lp).sum()]])
        if cluster is None:
            se_b = math.sqrt(np.linalg.inv(info)[1, 1])
        else:
            r = yf - mu2
            scores = np.column_stack(
                (
                    np.bincount(cluster, weights=r, minlength=n_clusters),
                    np.bincount(cluster, weights=r * lp, minlength=n_clusters),
                )
            )
            se_b = _cluster_se(info, scores, n, n_clusters, 2)[1]
        b = float(b)
    else:
        warn_undefined(
            "calibration slope",
            "the two classes do not overlap on the logit scale (constant predictions or perfect "
            "separation), so the slope's maximum-likelihood estimate is infinite or not identified",
        )
        b, se_b = nan, nan
    return CalibrationInterceptSlope(
        intercept=float(a),
        intercept_se=float(se_a),
        intercept_lo=float(a - zq * se_a),
        intercept_hi=float(a + zq * se_a),
        slope=b,
        slope_se=float(se_b),
        slope_lo=float(b - zq * se_b),
        slope_hi=float(b + zq * se_b),
        level=level,
        se_method=se_method,
        n=n,
        n_clusters=n_clusters,
    )


def _cluster_se(info: np.ndarray, scores: np.ndarray, n: int, g: int, k: int) -> np.ndarray:
    """Square roots of the diagonal of the CR1 sandwich (statsmodels' default correction)."""
    if g < 2 or n <= k:
        return np.full(info.shape[0], np.nan)
    bread = np.linalg.inv(info)
    meat = scores.T @ scores
    correction = g / (g - 1) * (n - 1) / (n - k)
    cov = correction * bread @ meat @ bread
    return np.sqrt(np.diag(cov))


def spiegelhalter_z(y_true, y_prob) -> SpiegelhalterResult:
    """Spiegelhalter's z test of calibration of binary probabilities.

    .. math::

        z = \\frac{\\sum_i (y_i - p_i)(1 - 2p_i)}{\\sqrt{\\sum_i (1 - 2p_i)^2\\, p_i (1 - p_i)}}

    which is standard normal under the null hypothesis that every p_i is the true probability
    (Spiegelhalter 1986; the numerator is N times the Brier score minus its expectation). The
    p-value is two-sided, 2 Phi(-|z|). A prediction of exactly 0 or 1 adds nothing to the variance;
    its miss, if any, still adds to the numerator.

    Parameters
    ----------
    y_true : array-like of shape (n,)
        Binary outcomes (0/1 or bool).
    y_prob : array-like of shape (n,)
        Predicted probabilities in [0, 1].

    Returns
    -------
    SpiegelhalterResult
        ``z`` and ``p_value``; both ``nan`` with :class:`UndefinedMetricWarning` when the variance is
        0, i.e. every p_i is 0, 1/2 or 1 (p = 0.5 everywhere, for instance).

    Raises
    ------
    ValueError
        Empty or different-length inputs, labels other than 0/1, probabilities NaN/inf or outside
        [0, 1].

    See Also
    --------
    calibration_intercept_slope : logistic recalibration.
    brier_decomposition : the Brier score's reliability term.

    References
    ----------
    .. [1] Spiegelhalter DJ (1986). Probabilistic prediction in patient management and clinical
       trials. Statistics in Medicine 5:421-433.
    .. [2] Rufibach K (2010). Use of Brier score to assess binary predictions. Journal of Clinical
       Epidemiology 63:938-939.

    Examples
    --------
    >>> from automd_analysis.metrics import spiegelhalter_z
    >>> res = spiegelhalter_z([0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4])
    >>> round(res.z, 4), round(res.p_value, 4)
    (-1.005, 0.3149)
    """
    y = as_binary("y_true", y_true)
    p = as_probabilities("y_prob", y_prob)
    check_same_length(y_true=y, y_prob=p)
    c = 1.0 - 2.0 * p
    num = float(np.sum((y - p) * c))
    var = float(np.sum(c * c * p * (1.0 - p)))
    if not var > 0.0:
        nan = warn_undefined(
            "Spiegelhalter's z",
            "its variance is 0: every prediction is 0, 0.5 or 1",
        )
        return SpiegelhalterResult(nan, nan)
    z = num / math.sqrt(var)
    p_value = float(min(1.0, 2.0 * math.exp(float(log_ndtr(-abs(z))))))
    return SpiegelhalterResult(float(z), p_value)
