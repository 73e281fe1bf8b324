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

from automd_analysis.metrics._docstrings import BINARY_INPUTS, fill_doc
from automd_analysis.metrics._numba import cached_njit, prange
from automd_analysis.metrics._results import ScalarFields
from automd_analysis.metrics._validation import (
    check_binary_inputs,
    warn_at_bounds,
    warn_undefined,
)
from automd_analysis.metrics._weights import as_weight_vector

__all__ = [
    "CalibrationInterceptSlope",
    "SpiegelhalterResult",
    "calibration_intercept_slope",
    "spiegelhalter_z",
]

_MAX_ITER = 100
_TOL = 1e-10


@dataclass(frozen=True)
class CalibrationInterceptSlope(ScalarFields):
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
    if arr.dtype.kind in "iu" and n and int(arr.max()) - int(arr.min()) < 4 * n:
        codes = arr.astype(np.int64) - int(arr.min())  # dense integer labels: no sort needed
        present = np.bincount(codes) > 0
        remap = np.cumsum(present) - 1
        return remap[codes], int(present.sum())
    _, inverse = np.unique(arr, return_inverse=True)
    inverse = inverse.reshape(-1)
    return inverse, int(inverse.max()) + 1


def _logit_or_none(p: np.ndarray, measure: str) -> np.ndarray | None:
    if warn_at_bounds(
        p,
        measure,
        "{n} prediction(s) are exactly 0 or 1 (first: y_prob[{i}] = {value!r}), whose logit is "
        "infinite; predictions are never clipped",
    ):
        return None
    return np.log(p) - np.log1p(-p)


_N_CHUNKS = 64  # fixed chunking of the likelihood passes: the sum order never depends on threads
_PARALLEL_MIN_ROWS = 200_000


@cached_njit(nogil=True)
def _pass_chunk(y, lp, f, c, b, lo, hi, out):
    """Log-likelihood, score and information of logit P(y=1) = c + b lp over rows lo:hi, each row
    counted ``f[i]`` times (its weight).

    ``out`` receives (loglik, g_c, g_b, h_cc, h_cb, h_bb), computed stably for any eta.
    """
    ll = gc = gb = hcc = hcb = hbb = 0.0
    for i in range(lo, hi):
        eta = c + b * lp[i]
        ex = math.exp(-abs(eta))
        if eta >= 0.0:
            mu = 1.0 / (1.0 + ex)
            log1pexp = eta + math.log1p(ex)
        else:
            mu = ex / (1.0 + ex)
            log1pexp = math.log1p(ex)
        fi = f[i]
        r = fi * (y[i] - mu)
        w = fi * (mu * (1.0 - mu))
        x = lp[i]
        ll += fi * (y[i] * eta - log1pexp)
        gc += r
        gb += r * x
        hcc += w
        hcb += w * x
        hbb += w * x * x
    out[0] = ll
    out[1] = gc
    out[2] = gb
    out[3] = hcc
    out[4] = hcb
    out[5] = hbb


@cached_njit(nogil=True, parallel=True)
def _pass_parallel(y, lp, f, c, b, parts):
    n = y.shape[0]
    step = (n + _N_CHUNKS - 1) // _N_CHUNKS
    for k in prange(_N_CHUNKS):
        _pass_chunk(y, lp, f, c, b, min(k * step, n), min((k + 1) * step, n), parts[k])


@cached_njit(nogil=True)
def _pass_serial(y, lp, f, c, b, parts):
    n = y.shape[0]
    step = (n + _N_CHUNKS - 1) // _N_CHUNKS
    for k in range(_N_CHUNKS):
        _pass_chunk(y, lp, f, c, b, min(k * step, n), min((k + 1) * step, n), parts[k])


def _likelihood_pass(y: np.ndarray, lp: np.ndarray, f: np.ndarray, c: float, b: float):
    """(loglik, g_c, g_b, h_cc, h_cb, h_bb) at (c, b) with row weights ``f``; chunk sums added in
    a fixed order."""
    parts = np.zeros((_N_CHUNKS, 6))
    kernel = _pass_parallel if len(y) >= _PARALLEL_MIN_ROWS else _pass_serial
    kernel(y, lp, f, float(c), float(b), parts)
    total = np.zeros(6)
    for k in range(_N_CHUNKS):
        total += parts[k]
    return total


def _newton(
    y: np.ndarray, lp: np.ndarray, f: np.ndarray, beta: np.ndarray, free_slope: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Maximise the log-likelihood over (c, b) (or over c with b fixed) by Newton-Raphson with step
    halving; the caller has checked that a finite maximum exists. Returns the estimate and the
    likelihood pass (information) at the last evaluated point; a final step below the tolerance is
    taken without a new pass, so the information is from a point within 1e-10 (relative)."""
    state = _likelihood_pass(y, lp, f, beta[0], beta[1])
    for _ in range(_MAX_ITER):
        ll, gc, gb, hcc, hcb, hbb = state
        if free_slope:
            det = hcc * hbb - hcb * hcb
            step = np.array([hbb * gc - hcb * gb, hcc * gb - hcb * gc]) / det
        else:
            step = np.array([gc / hcc, 0.0])
        if np.all(np.abs(step) <= _TOL * (1.0 + np.abs(beta))):
            return beta + step, state
        t = 1.0
        for _ in range(60):
            trial = beta + t * step
            new = _likelihood_pass(y, lp, f, trial[0], trial[1])
            if new[0] >= ll - 1e-12 * abs(ll):
                break
            t *= 0.5
        beta, state = trial, new
    return beta, state


_WARM_MIN_ROWS = 200_000
_WARM_STRIDE = 16


def _warm_start(
    yf: np.ndarray, lp: np.ndarray, f: np.ndarray, y: np.ndarray, free_slope: bool
) -> np.ndarray:
    """Starting point of the full-data Newton iterations.

    Large inputs: the estimate on every 16th row (deterministic; a few cheap passes bring the full
    fit within its quadratic-convergence region). Otherwise (c, b) = (0, 1), or for the offset model
    c = logit(mean y) - logit(mean p).
    """
    if len(yf) >= _WARM_MIN_ROWS:
        rows = slice(None, None, _WARM_STRIDE)
        ys, ls, fs, yi = yf[rows], lp[rows], f[rows], y[rows]
        both = 0 < int(yi.sum()) < len(yi)
        if both and (not free_slope or _overlap(yi, ls)):
            return _newton(ys, ls, fs, _warm_start(ys, ls, fs, yi, free_slope), free_slope)[0]
    if free_slope:
        return np.array([0.0, 1.0])
    ybar = float(np.average(yf, weights=f))
    pbar = float(np.average(1.0 / (1.0 + np.exp(-lp)), weights=f))
    start = math.log(ybar / (1.0 - ybar)) - math.log(pbar / (1.0 - pbar))
    return np.array([start if math.isfinite(start) else 0.0, 1.0])


def _overlap(y: np.ndarray, lp: np.ndarray) -> bool:
    """True when the classes overlap on lp, i.e. the slope's MLE is finite (1-D logistic regression
    with an intercept has a finite MLE iff max lp of one class exceeds min lp of the other, both
    ways)."""
    l0, l1 = lp[y == 0], lp[y == 1]
    return bool(l0.max() > l1.min() and l1.max() > l0.min())


@fill_doc(binary_inputs=BINARY_INPUTS)
def calibration_intercept_slope(
    y_true, y_prob, *, groups=None, level: float = 0.95, weights=None
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
    estimate +- z_{(1+level)/2} SE. With integer weights every row's likelihood, score and
    information contributions count ``weights[i]`` times: the fit of the repeated rows (copies of a
    row stay in its cluster; N and G count copies and clusters with a positive weight).

    Parameters
    ----------
    {binary_inputs}
    groups : array-like of shape (n,), optional
        Cluster label of every row (sequential tasks: the patient id); selects the cluster-robust
        covariance.
    level : float, default 0.95
    weights : array-like of int, shape (n,), optional
        Multiplicity of each row.

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
        [0, 1], ``groups`` of the wrong length or with missing values, ``level`` outside (0, 1), bad
        weights.

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
    from scipy.special import ndtri

    level = _check_level(level)
    y, p, n = check_binary_inputs(y_true, y_prob)
    w = as_weight_vector(weights, n)
    if groups is not None:
        cluster, n_clusters = _cluster_index(groups, n)
        se_method = "cluster"
    else:
        cluster, n_clusters, se_method = None, n, "model"
    if w is not None:  # the repeated rows: rows of weight 0 are not there at all
        keep = w > 0
        y, p, f = y[keep], p[keep], w[keep].astype(np.float64)
        n = int(w.sum())
        if cluster is None:
            n_clusters = n
        else:
            cluster, n_clusters = _cluster_index(cluster[keep], len(y))
    else:
        f = np.ones(n)
    nan = float("nan")
    empty = CalibrationInterceptSlope(
        nan, nan, nan, nan, nan, nan, nan, nan, level, se_method, n, n_clusters
    )
    measure = "calibration intercept/slope"
    n_pos = int(y @ f)
    if n_pos == 0 or n_pos == n:
        warn_undefined(measure, "only one class is present")
        return empty
    lp = _logit_or_none(p, measure)
    if lp is None:
        return empty
    yf = y.astype(np.float64)
    zq = float(ndtri(0.5 + level / 2.0))

    start_a = _warm_start(yf, lp, f, y, free_slope=False)
    beta_a, state = _newton(yf, lp, f, start_a, free_slope=False)
    a, info_a = float(beta_a[0]), float(state[3])
    if cluster is None:
        se_a = math.sqrt(1.0 / info_a)
    else:
        s = _cluster_scores(yf, lp, f, a, 1.0, cluster, n_clusters)[:, :1]
        se_a = _cluster_se(np.array([[info_a]]), s, n, n_clusters, 1)[0]

    if _overlap(y, lp):
        start = _warm_start(yf, lp, f, y, free_slope=True)
        (c, b), (_, _, _, hcc, hcb, hbb) = _newton(yf, lp, f, start, free_slope=True)
        info = np.array([[hcc, hcb], [hcb, hbb]])
        if cluster is None:
            se_b = math.sqrt(np.linalg.inv(info)[1, 1])
        else:
            scores = _cluster_scores(yf, lp, f, c, b, cluster, n_clusters)
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


@cached_njit(nogil=True)
def _cluster_scores(y, lp, f, c, b, cluster, n_clusters):
    """Score contributions (sum of r, sum of r * lp) per cluster at (c, b), r = f (y - mu)."""
    out = np.zeros((n_clusters, 2))
    for i in range(y.shape[0]):
        eta = c + b * lp[i]
        ex = math.exp(-abs(eta))
        mu = 1.0 / (1.0 + ex) if eta >= 0.0 else ex / (1.0 + ex)
        r = f[i] * (y[i] - mu)
        out[cluster[i], 0] += r
        out[cluster[i], 1] += r * lp[i]
    return out


def _cluster_se(info: np.ndarray, scores: np.ndarray, n: int, g: int, k: int) -> np.ndarray:
    """Square roots of the diagonal of the CR1 sandwich (statsmodels' default correction)."""
    if g < 2 or n <= k:
        return np.full(info.shape[0], np.nan)
    bread = np.linalg.inv(info)
    meat = scores.T @ scores
    correction = g / (g - 1) * (n - 1) / (n - k)
    cov = correction * bread @ meat @ bread
    return np.sqrt(np.diag(cov))


@fill_doc(binary_inputs=BINARY_INPUTS)
def spiegelhalter_z(y_true, y_prob, *, groups=None) -> SpiegelhalterResult:
    """Spiegelhalter's z test of calibration of binary probabilities.

    .. math::

        z = \\frac{\\sum_i (y_i - p_i)(1 - 2p_i)}{\\sqrt{\\sum_i (1 - 2p_i)^2\\, p_i (1 - p_i)}}

    which is standard normal under the null hypothesis that every p_i is the true probability
    (Spiegelhalter 1986; the numerator is N times the Brier score minus its expectation). The
    p-value is two-sided, 2 Phi(-|z|). A prediction of exactly 0 or 1 adds nothing to the variance;
    its miss, if any, still adds to the numerator.

    With ``groups`` (sequential tasks: the patient of every hour) the rows of one group are not
    independent, and the variance is the cluster-robust one of the score sums
    S_g = Σ_{i∈g} (y_i - p_i)(1 - 2p_i), as for the calibration slope and intercept
    (:func:`calibration_intercept_slope`):

    .. math:: z = \\frac{\\sum_g S_g}{\\sqrt{\\tfrac{G}{G-1} \\sum_g S_g^2}}

    (needs at least two groups).

    Parameters
    ----------
    {binary_inputs}
    groups : array-like of shape (n,), optional
        Cluster label of every row.

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
    >>> res = spiegelhalter_z([0, 1, 1, 0], [0.2, 0.7, 0.9, 0.4], groups=["a", "a", "b", "b"])
    >>> round(res.z, 4)  # sums -0.24 (a) and -0.16 (b): z = -0.40 / sqrt(2 x 0.0832)
    -0.9806
    """
    from scipy.special import log_ndtr

    y, p, _ = check_binary_inputs(y_true, y_prob)
    c = 1.0 - 2.0 * p
    num = float(np.sum((y - p) * c))
    if groups is None:
        var = float(np.sum(c * c * p * (1.0 - p)))
    else:
        cluster, n_clusters = _cluster_index(groups, len(y))
        sums = np.bincount(cluster, (y - p) * c, minlength=n_clusters)
        var = n_clusters / (n_clusters - 1) * float(sums @ sums) if n_clusters > 1 else 0.0
    if not var > 0.0:
        nan = warn_undefined(
            "Spiegelhalter's z",
            "its variance is 0: every prediction is 0, 0.5 or 1",
        )
        return SpiegelhalterResult(nan, nan)
    z = num / math.sqrt(var)
    p_value = float(min(1.0, 2.0 * math.exp(float(log_ndtr(-abs(z))))))
    return SpiegelhalterResult(float(z), p_value)
