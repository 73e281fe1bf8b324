"""Smoothed calibration curves of binary probabilities: ICI, E50, E90, Emax and curve data with
pointwise intervals.

The observed risk at predicted risk p is estimated by loess of the outcome on the prediction (local
quadratic, tricube weights, span 0.75, no robustness iterations: the smoother of Austin and
Steyerberg 2019, described in :mod:`automd_analysis.metrics._loess`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automd_analysis.metrics._docstrings import BINARY_INPUTS, fill_doc
from automd_analysis.metrics._loess import loess_fit
from automd_analysis.metrics._results import ArrayColumns, ScalarFields
from automd_analysis.metrics._validation import (
    as_finite_1d,
    check_binary_inputs,
)
from automd_analysis.metrics._weights import as_weight_vector

__all__ = [
    "DEFAULT_CURVE_POINTS",
    "ICIResult",
    "SmoothedCalibrationCurve",
    "ici",
    "ici_from_observed",
    "smoothed_calibration_curve",
]

#: Default evaluation points of :func:`smoothed_calibration_curve` (shared by every run, so curves
#: of several runs can be averaged point by point).
DEFAULT_CURVE_POINTS = np.linspace(0.0, 1.0, 101)


def _check_span(span) -> float:
    span = float(span)
    if not 0.0 < span <= 1.0:
        raise ValueError(f"span must be in (0, 1], got {span!r}.")
    return span


@dataclass(frozen=True)
class ICIResult(ScalarFields):
    """Summaries of |smoothed observed risk - predicted risk| over the observations.

    Attributes
    ----------
    ici : float
        Mean (integrated calibration index).
    e50, e90 : float
        Median and 90th percentile (``numpy.quantile``, linear interpolation, as R's default type 7).
    emax : float
        Maximum.
    n : int
        Observations.
    exact : bool
        ``True`` when the smoother was solved at every distinct prediction; ``False`` when it was
        solved at vertices and interpolated (more than ``max_direct`` distinct predictions).
    """

    ici: float
    e50: float
    e90: float
    emax: float
    n: int
    exact: bool

    def __float__(self) -> float:
        return float(self.ici)


def ici_from_observed(observed: np.ndarray, predicted: np.ndarray, *, exact: bool) -> ICIResult:
    """ICI, E50, E90 and Emax of d_i = |observed_i - predicted_i| (arrays already computed).

    .. math:: \\mathrm{ICI} = \\frac{1}{n} \\sum_i d_i, \\quad E50 = \\operatorname{median}(d),
              \\quad E90 = Q_{0.9}(d), \\quad E_{max} = \\max_i d_i

    with Q_{0.9} the ``numpy.quantile`` linear-interpolation quantile.

    Parameters
    ----------
    observed : array-like of shape (n,)
        Smoothed observed risk at each observation's prediction.
    predicted : array-like of shape (n,)
        The predictions themselves.
    exact : bool
        Recorded in the result: whether ``observed`` came from an exact (not interpolated) fit.

    Returns
    -------
    ICIResult
        ``ici``, ``e50``, ``e90``, ``emax``, ``n`` and ``exact``.

    See Also
    --------
    ici : computes ``observed`` with the loess smoother.

    References
    ----------
    .. [1] Austin PC, Steyerberg EW (2019). The Integrated Calibration Index (ICI) and related
       metrics for quantifying the calibration of logistic regression models. Statistics in
       Medicine 38:4051-4065.

    Examples
    --------
    >>> r = ici_from_observed([0.1, 0.5, 0.2], [0.2, 0.4, 0.2], exact=True)
    >>> round(r.ici, 4), round(r.emax, 4)
    (0.0667, 0.1)
    """
    diff = np.abs(np.asarray(observed, dtype=np.float64) - np.asarray(predicted, dtype=np.float64))
    e50, e90 = np.quantile(diff, [0.5, 0.9])
    return ICIResult(
        ici=float(np.mean(diff)),
        e50=float(e50),
        e90=float(e90),
        emax=float(np.max(diff)),
        n=int(diff.size),
        exact=bool(exact),
    )


@fill_doc(binary_inputs=BINARY_INPUTS)
def ici(y_true, y_prob, *, span: float = 0.75, max_direct: int = 2000, weights=None) -> ICIResult:
    """Integrated calibration index (ICI), E50, E90 and Emax of binary probabilities.

    With ô(p) the loess-smoothed observed risk at predicted risk p (outcome regressed on the
    prediction; local quadratic, tricube weights, span 0.75, no robustness iterations):

    .. math::

        \\mathrm{ICI} = \\frac1N \\sum_{i=1}^N \\bigl|\\hat o(p_i) - p_i\\bigr|,

    E50 and E90 the median and 90th percentile and Emax the maximum of the same absolute differences
    (Austin and Steyerberg 2019). The smoothed values are not clipped to [0, 1]. With integer
    weights the observations are repeated (the loess windows count copies; memory grows with the
    total weight), so the result is exactly that of the repeated rows.

    Smoother details: the window holds floor(span N) nearest predictions; the local degree falls back
    to 1 or 0 where the window has fewer than 3 or 2 distinct predictions (so constant predictions
    give ô = ȳ and ICI = |ȳ - p|, and a single class gives ô = that class everywhere). With at most
    ``max_direct`` distinct predictions the smoother is solved at each of them; above that at about
    130 vertices and read from a cubic spline through them (the tests bound the difference from the
    direct fit: ICI within 1e-5, E50/E90 within 1e-4, Emax within 1e-3). statsmodels ``lowess(frac=0.75, it=0)``
    is local *linear* and differs from this smoother by up to a few hundredths in the tails.

    Parameters
    ----------
    {binary_inputs}
    span : float, default 0.75
        Fraction of observations in each local window, in (0, 1].
    max_direct : int, default 2000
    weights : array-like of int, shape (n,), optional
        Multiplicity of each observation.

    Returns
    -------
    ICIResult
        ``ici``, ``e50``, ``e90``, ``emax`` (all in [0, 1] up to the smoother's overshoot), ``n``,
        ``exact``.

    Raises
    ------
    ValueError
        Malformed inputs, ``span`` outside (0, 1], bad weights.

    See Also
    --------
    smoothed_calibration_curve : the curve behind the ICI, with pointwise intervals.
    automd_analysis.metrics.ece : the binned analogue.

    References
    ----------
    .. [1] Austin PC, Steyerberg EW (2019). The Integrated Calibration Index (ICI) and related metrics
       for quantifying the calibration of logistic regression models. Statistics in Medicine
       38:4051-4065.
    .. [2] Cleveland WS, Grosse E, Shyu WM (1992). Local regression models. In: Chambers JM, Hastie
       TJ (eds), Statistical Models in S. Wadsworth.

    Examples
    --------
    >>> from automd_analysis.metrics import ici
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 0]
    >>> p = [0.1, 0.2, 0.3, 0.35, 0.4, 0.5, 0.55, 0.7, 0.8, 0.9]
    >>> res = ici(y, p)
    >>> round(res.ici, 4), round(res.e50, 4), round(res.e90, 4), round(res.emax, 4)
    (0.2167, 0.1648, 0.4165, 0.7814)
    """
    span = _check_span(span)
    y, p, n = check_binary_inputs(y_true, y_prob)
    w = as_weight_vector(weights, n)
    if w is not None:
        y, p = np.repeat(y, w), np.repeat(p, w)
    fit = loess_fit(p, y, span=span, max_direct=max_direct)
    xs = fit.sorted_x
    return ici_from_observed(fit.predict(xs), xs, exact=fit.exact)


@dataclass(frozen=True)
class SmoothedCalibrationCurve(ArrayColumns):
    """A loess calibration curve on given points, with pointwise intervals.

    Attributes
    ----------
    x : numpy.ndarray
        Predicted risk at which the curve is read.
    observed : numpy.ndarray
        Smoothed observed risk ô(x); ``nan`` outside [min p, max p] (no extrapolation).
    se : numpy.ndarray
        Pointwise standard error (see :func:`smoothed_calibration_curve`).
    lo, hi : numpy.ndarray
        Pointwise interval ô ± z SE.
    level : float
    """

    x: np.ndarray
    observed: np.ndarray
    se: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    level: float


@fill_doc(binary_inputs=BINARY_INPUTS)
def smoothed_calibration_curve(
    y_true, y_prob, points=None, *, span: float = 0.75, level: float = 0.95
) -> SmoothedCalibrationCurve:
    """Loess calibration curve (observed vs predicted risk) with pointwise intervals, for plotting.

    The curve is the smoother of :func:`ici`, solved exactly at every point of ``points`` that lies
    within [min p, max p] (``nan`` outside). The fit at x is linear in the outcomes,
    ô(x) = Σ_i l_i(x) y_i, so with a binomial variance at the fitted value

    .. math:: \\mathrm{SE}(x) = \\sqrt{\\tilde o(1 - \\tilde o) \\sum_i l_i(x)^2},
        \\qquad \\tilde o = \\min(\\max(\\hat o(x), 0), 1)

    and the interval is ô(x) ± z_{(1+level)/2} SE(x). The variance treats the outcomes in the window
    as independent with a common risk; for sequential tasks (several rows per patient) the interval
    is too narrow and only descriptive.

    Parameters
    ----------
    {binary_inputs}
    points : array-like of shape (k,), optional
        Where to read the curve; default :data:`DEFAULT_CURVE_POINTS` (0, 0.01, ..., 1).
    span : float, default 0.75
    level : float, default 0.95

    Returns
    -------
    SmoothedCalibrationCurve

    Raises
    ------
    ValueError
        Malformed inputs, non-finite ``points``, ``span`` outside (0, 1], ``level`` outside (0, 1).

    See Also
    --------
    ici : summaries of the same curve over the observations.
    automd_analysis.metrics.calibration_bins : the binned reliability diagram.

    References
    ----------
    .. [1] Austin PC, Steyerberg EW (2014). Graphical assessment of internal and external calibration
       of logistic regression models by using loess smoothers. Statistics in Medicine 33:517-535.
    .. [2] Cleveland WS, Grosse E, Shyu WM (1992). Local regression models. In: Statistical Models
       in S. Wadsworth.

    Examples
    --------
    >>> from automd_analysis.metrics import smoothed_calibration_curve
    >>> y = [0, 0, 1, 0, 1, 1, 0, 1, 1, 0]
    >>> p = [0.1, 0.2, 0.3, 0.35, 0.4, 0.5, 0.55, 0.7, 0.8, 0.9]
    >>> curve = smoothed_calibration_curve(y, p, points=[0.0, 0.3, 0.5])
    >>> [round(float(v), 4) for v in curve.observed]
    [nan, 0.4796, 0.5557]
    >>> [round(float(v), 4) for v in curve.se]
    [nan, 0.3027, 0.3184]
    """
    span = _check_span(span)
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}.")
    y, p, _ = check_binary_inputs(y_true, y_prob)
    return smoothed_curve_unchecked(p, y, points, span, level)


def smoothed_curve_unchecked(p, y, points, span: float, level: float) -> SmoothedCalibrationCurve:
    """:func:`smoothed_calibration_curve` on validated arrays (``y`` binary or any real outcome).

    .. math:: \\hat o(x) = \\sum_i l_i(x) y_i, \\qquad
              \\mathrm{SE}(x) = \\sqrt{\\tilde o (1 - \\tilde o) \\sum_i l_i(x)^2}

    with l_i(x) the loess weights at x and õ = ô(x) clipped to [0, 1]. A real-valued ``y`` (e.g.
    Kaplan-Meier pseudo-observations of an event) gives the smoothed mean of ``y``.

    Parameters
    ----------
    p : numpy.ndarray of shape (n,)
        Predictions, finite (not checked).
    y : numpy.ndarray of shape (n,)
        Outcomes (not checked).
    points : array-like of shape (k,) or None
        Where to read the curve (``None``: :data:`DEFAULT_CURVE_POINTS`).
    span : float
        Loess span in (0, 1] (not checked).
    level : float
        Interval level in (0, 1) (not checked).

    Returns
    -------
    SmoothedCalibrationCurve
        As :func:`smoothed_calibration_curve`.

    See Also
    --------
    smoothed_calibration_curve : validates binary outcomes and probabilities first.
    automd_analysis.metrics.smoothed_survival_calibration_curve : calls this with pseudo-values.

    References
    ----------
    .. [1] Austin PC, Steyerberg EW (2014). Graphical assessment of internal and external
       calibration of logistic regression models by using loess smoothers. Statistics in Medicine
       33:517-535.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([0, 0, 1, 0, 1, 1, 0, 1, 1, 0], dtype=float)
    >>> p = np.array([0.1, 0.2, 0.3, 0.35, 0.4, 0.5, 0.55, 0.7, 0.8, 0.9])
    >>> curve = smoothed_curve_unchecked(p, y, [0.3, 0.5], 0.75, 0.95)
    >>> [round(float(v), 4) for v in curve.observed]  # as smoothed_calibration_curve
    [0.4796, 0.5557]
    """
    x = DEFAULT_CURVE_POINTS.copy() if points is None else as_finite_1d("points", points)
    inside = (x >= p.min()) & (x <= p.max())
    from scipy.special import ndtri

    fit = loess_fit(p, y, span=span, want_var=True, extra_points=x[inside], only_extra_points=True)
    observed = np.full(x.shape, np.nan)
    se = np.full(x.shape, np.nan)
    pos = np.searchsorted(fit.vertices, x[inside])
    observed[inside] = fit.values[pos]
    clipped = np.clip(observed[inside], 0.0, 1.0)
    se[inside] = np.sqrt(clipped * (1.0 - clipped) * fit.sum_l2[pos])
    z = float(ndtri(0.5 + level / 2.0))
    return SmoothedCalibrationCurve(
        x=x, observed=observed, se=se, lo=observed - z * se, hi=observed + z * se, level=level
    )
