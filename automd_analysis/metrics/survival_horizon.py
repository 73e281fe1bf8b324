"""Calibration of survival curves at one horizon: grouped Kaplan-Meier, calibration slope, smoothed
ICI from pseudo-observations.

At a horizon h every submitted curve gives a predicted event probability r_i = 1 - S_i(h) (curves are
read as right-continuous steps on the grid, like the concordance). Three views of its calibration:

- :func:`survival_calibration_at` - calibration-in-the-large (Kaplan-Meier vs mean prediction),
  observed vs predicted in equal-size risk groups, and the calibration slope: the coefficient of
  log(-log S_i(h)) in a Cox model of the follow-up truncated at h;
- :func:`survival_ici_at` - ICI/E50/E90/Emax from a loess calibration curve fitted to the
  jackknife pseudo-observations of the Kaplan-Meier event probability at h;
- :func:`km_pseudo_observations` - those pseudo-observations, in O(n log n).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from automd_analysis.metrics._docstrings import FOLLOW_UP_TIMES, SURVIVAL_INPUTS, fill_doc
from automd_analysis.metrics._loess import loess_fit
from automd_analysis.metrics._validation import (
    as_binary,
    as_durations,
    check_same_length,
    check_survival_inputs,
    warn_at_bounds,
    warn_undefined,
)
from automd_analysis.metrics.calibration_smooth import (
    ICIResult,
    SmoothedCalibrationCurve,
    ici_from_observed,
    smoothed_curve_unchecked,
)
from automd_analysis.metrics.survival import grid_index_post, kaplan_meier_unchecked

__all__ = [
    "SurvivalCalibrationAt",
    "cox_calibration_slope",
    "km_pseudo_observations",
    "smoothed_survival_calibration_curve",
    "survival_calibration_at",
    "survival_ici_at",
]

_MAX_ITER = 100
_TOL = 1e-10

_TWELVE_PATIENTS = """
Twelve patients (four survival curves, three times each) on the grid 0, 2, 4:

>>> import numpy as np
>>> grid = np.array([0.0, 2.0, 4.0])
>>> surv = np.array([[1, .8, .5], [1, .7, .4], [1, .9, .6], [1, .6, .3]] * 3)
>>> t = [1, 3, 5, 2, 6, 4, 1.5, 3.5, 5.5, 2.5, 6.5, 4.5]
>>> e = [1, 0, 1, 1, 0, 1, 0, 1, 1, 1, 0, 0]
"""


def _validated(durations, events, surv, time_grid, horizon):
    t, e, s, grid = check_survival_inputs(durations, events, surv, time_grid)
    h = float(horizon)
    if not math.isfinite(h) or h < 0.0:
        raise ValueError(f"horizon must be a finite time >= 0, got {horizon!r}.")
    return t, e, s, grid, h


def _horizon_problem(t: np.ndarray, grid: np.ndarray, h: float) -> str | None:
    if h > grid[-1]:
        return f"the horizon {h!r} lies beyond the last grid time {grid[-1]!r} (no prediction)"
    if h > t.max():
        return f"the horizon {h!r} lies beyond the longest follow-up {t.max()!r}"
    return None


@fill_doc(follow_up_times=FOLLOW_UP_TIMES)
def km_pseudo_observations(durations, events, horizon) -> np.ndarray:
    """Jackknife pseudo-observations of the Kaplan-Meier event probability F(h) = 1 - S(h).

    .. math:: \\theta_i = n \\hat F(h) - (n - 1) \\hat F_{-i}(h)

    where F̂_{-i} is the Kaplan-Meier estimate without patient i (Andersen and Perme 2010). Computed
    in O(n log n): removing patient i lowers the number at risk by one at every distinct time <= T_i
    and, for an event, the number of events at T_i by one, so every leave-one-out product is a
    prefix/suffix product of per-time factors (zero factors are counted separately, so no division by
    zero occurs).

    Parameters
    ----------
    {follow_up_times}
    events : array-like of shape (n,)
        1 = event, 0 = censored.
    horizon : float
        Time h >= 0.

    Returns
    -------
    numpy.ndarray of shape (n,)
        theta_i. Without censoring before h, theta_i is the indicator 1{T_i <= h} (up to rounding);
        with censoring the values can fall outside [0, 1].

    Raises
    ------
    ValueError
        Malformed durations/events, a negative or non-finite horizon, fewer than two patients.

    See Also
    --------
    survival_ici_at : smooths these against the predicted risk.
    automd_analysis.metrics.kaplan_meier : the estimator.

    References
    ----------
    .. [1] Andersen PK, Perme MP (2010). Pseudo-observations in survival analysis. Statistical
       Methods in Medical Research 19:71-99.

    Examples
    --------
    >>> import numpy as np
    >>> from automd_analysis.metrics import km_pseudo_observations
    >>> theta = km_pseudo_observations([1, 2, 3, 4, 5], [1, 0, 1, 1, 0], 3.5)
    >>> np.round(theta, 4).tolist()
    [1.0, 0.3333, 1.3333, -0.1667, -0.1667]
    """
    t = as_durations("durations", durations)
    e = as_binary("events", events)
    n = check_same_length(durations=t, events=e)
    if n < 2:
        raise ValueError("pseudo-observations need at least two patients.")
    h = float(horizon)
    if not math.isfinite(h) or h < 0.0:
        raise ValueError(f"horizon must be a finite time >= 0, got {horizon!r}.")
    return _pseudo_unchecked(t, e, h)


def _prefix_product(factors: np.ndarray):
    """(number of zero factors, sum of logs of the others) before each index 0..m."""
    zero = factors <= 0.0
    logs = np.where(zero, 0.0, np.log(np.where(zero, 1.0, factors)))
    z = np.concatenate(([0], np.cumsum(zero)))
    lg = np.concatenate(([0.0], np.cumsum(logs)))
    return z, lg


def _range_product(z, lg, start, stop):
    """Product of factors[start:stop] (vectorised over start/stop arrays)."""
    out = np.exp(lg[stop] - lg[start])
    return np.where(z[stop] - z[start] > 0, 0.0, out)


def _pseudo_unchecked(t: np.ndarray, e: np.ndarray, h: float) -> np.ndarray:
    n = len(t)
    uniq, inverse = np.unique(t, return_inverse=True)
    inverse = inverse.reshape(-1)
    removed = np.bincount(inverse, minlength=len(uniq))
    d = np.bincount(inverse, weights=e, minlength=len(uniq))
    r = n - np.concatenate(([0], np.cumsum(removed)[:-1])).astype(np.float64)
    k_h = int(np.searchsorted(uniq, h, side="right"))  # distinct times <= h are [0, k_h)
    b = 1.0 - d / r  # full-sample factors
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(r > 1, 1.0 - d / (r - 1.0), 1.0)  # factors with one fewer at risk
    za, la = _prefix_product(a)
    zb, lb = _prefix_product(b)
    km_h = float(_range_product(zb, lb, np.array([0]), np.array([k_h]))[0])
    ki = inverse
    later = ki >= k_h  # T_i > h: every factor up to h loses one at risk
    km_loo = np.empty(n)
    if later.any():
        km_loo[later] = float(_range_product(za, la, np.array([0]), np.array([k_h]))[0])
    early = ~later
    if early.any():
        k = ki[early]
        before = _range_product(za, la, np.zeros_like(k), k)
        rk = r[k]
        dk = d[k] - e[early]
        with np.errstate(divide="ignore", invalid="ignore"):
            own = np.where(rk > 1, 1.0 - dk / (rk - 1.0), 1.0)
        after = _range_product(zb, lb, k + 1, np.full_like(k, k_h))
        km_loo[early] = before * own * after
    f_h = 1.0 - km_h
    return n * f_h - (n - 1) * (1.0 - km_loo)


@dataclass(frozen=True)
class SurvivalCalibrationAt:
    """Calibration of predicted survival at one horizon.

    Attributes
    ----------
    horizon : float
        The requested time h.
    grid_time : float
        The grid time whose value the step curves hold at h.
    observed_risk : float
        1 - KM(h) over all patients.
    predicted_risk : float
        Mean of 1 - S_i(h).
    citl_difference : float
        observed_risk - predicted_risk (calibration-in-the-large; > 0: risk under-predicted).
    oe_ratio : float
        observed_risk / predicted_risk (``nan`` when predicted_risk is 0).
    ece : float
        sum over kept groups of n_b/sum n_b |mean S_b(h) - KM_b(h)|.
    slope, slope_se, slope_lo, slope_hi : float
        Calibration slope (see :func:`cox_calibration_slope`) with its Wald interval.
    level : float
    n, n_events : int
        Patients, and events at or before h.
    groups : dict of numpy.ndarray
        ``group`` (1 = lowest predicted survival), ``n``, ``mean_pred`` (survival), ``km``,
        ``kept`` (n >= min_group).
    """

    horizon: float
    grid_time: float
    observed_risk: float
    predicted_risk: float
    citl_difference: float
    oe_ratio: float
    ece: float
    slope: float
    slope_se: float
    slope_lo: float
    slope_hi: float
    level: float
    n: int
    n_events: int
    groups: dict[str, np.ndarray] = field(repr=False)

    def as_dict(self) -> dict:
        """Scalar fields as a dict of Python scalars (``groups`` left out)."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "groups"}


def _read_at(s: np.ndarray, grid: np.ndarray, h: float) -> tuple[np.ndarray, float]:
    g = int(grid_index_post(grid, np.array([h]))[0])
    return s[:, g], float(grid[g])


def _cox_existence(time: np.ndarray, event: np.ndarray, x: np.ndarray) -> bool:
    """Finite Cox MLE for one covariate: some event below its risk set's max and some above its min."""
    order = np.argsort(time, kind="stable")
    ts, es, xs = time[order], event[order], x[order]
    # risk set of sorted position j: all positions with time >= ts[j] (from the tie group start)
    start = np.searchsorted(ts, ts, side="left")
    rmax = np.maximum.accumulate(xs[::-1])[::-1][start]
    rmin = np.minimum.accumulate(xs[::-1])[::-1][start]
    ev = es == 1
    return bool(np.any(xs[ev] < rmax[ev]) and np.any(xs[ev] > rmin[ev]))


def _cox_breslow(time: np.ndarray, event: np.ndarray, x: np.ndarray) -> tuple[float, float]:
    """(beta, information) of a one-covariate Cox model with Breslow ties; Newton with halving."""
    order = np.argsort(time, kind="stable")
    ts, es, xs = time[order], event[order].astype(bool), x[order]
    start = np.searchsorted(ts, ts, side="left")[es]  # risk-set start of every event
    xe = xs[es]

    def parts(beta):
        eta = beta * xs
        shift = eta.max()
        w = np.exp(eta - shift)
        s0 = np.cumsum(w[::-1])[::-1][start]
        s1 = np.cumsum((w * xs)[::-1])[::-1][start]
        s2 = np.cumsum((w * xs * xs)[::-1])[::-1][start]
        loglik = float(np.sum(beta * xe - (np.log(s0) + shift)))
        m1 = s1 / s0
        score = float(np.sum(xe - m1))
        info = float(np.sum(s2 / s0 - m1 * m1))
        return loglik, score, info

    beta = 0.0
    loglik, score, info = parts(beta)
    for _ in range(_MAX_ITER):
        step = score / info
        t = 1.0
        for _ in range(60):
            trial = beta + t * step
            new = parts(trial)
            if new[0] >= loglik - 1e-12 * abs(loglik):
                break
            t *= 0.5
        done = abs(trial - beta) <= _TOL * (1.0 + abs(beta))
        beta, (loglik, score, info) = trial, new
        if done:
            break
    return beta, info


def cox_calibration_slope(durations, events, predicted_survival, horizon, *, level: float = 0.95):
    """Calibration slope of survival predictions at a horizon (Cox recalibration).

    With x_i = log(-log S_i(h)) (the complementary log-log of the predicted event probability) and
    the follow-up truncated at h (T*_i = min(T_i, h), events after h censored at h), fit the Cox model
    lambda_i(t) = lambda_0(t) exp(b x_i) by partial likelihood with Breslow ties. For a model whose
    curves are of proportional-hazards form and calibrated, b = 1; b < 1 means the predicted
    survival probabilities are too extreme (Van Houwelingen 2000; Royston and Altman 2013).

    Parameters
    ----------
    durations, events : array-like of shape (n,)
        Follow-up and event indicator.
    predicted_survival : array-like of shape (n,)
        S_i(h) in [0, 1].
    horizon : float
    level : float, default 0.95

    Returns
    -------
    tuple of float
        ``(slope, se, lo, hi)``; all ``nan`` with :class:`UndefinedMetricWarning` when an S_i(h) is
        exactly 0 or 1 (infinite x), when no event occurs by h, or when the partial likelihood has
        no finite maximum (constant predictions, or events always at the extreme of their risk set).

    Raises
    ------
    ValueError
        Malformed inputs.

    See Also
    --------
    survival_calibration_at : uses this for its ``slope``.
    calibration_intercept_slope : the binary analogue.

    References
    ----------
    .. [1] Van Houwelingen HC (2000). Validation, calibration, revision and combination of
       prognostic survival models. Statistics in Medicine 19:3401-3415.
    .. [2] Royston P, Altman DG (2013). External validation of a Cox prognostic model: principles and
       methods. BMC Medical Research Methodology 13:33.

    Examples
    --------
    >>> from automd_analysis.metrics import cox_calibration_slope
    >>> slope, se, lo, hi = cox_calibration_slope(
    ...     [1, 2, 3, 4, 5, 6], [1, 1, 0, 1, 1, 0], [0.2, 0.6, 0.3, 0.5, 0.8, 0.9], 10)
    >>> round(slope, 4), round(se, 4)
    (1.9135, 1.2623)
    """
    t = as_durations("durations", durations)
    e = as_binary("events", events)
    s = np.asarray(predicted_survival, dtype=np.float64)
    check_same_length(durations=t, events=e, predicted_survival=s)
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}.")
    return _cox_slope_unchecked(t, e, s, float(horizon), level)


def _cox_slope_unchecked(t, e, s, h, level):
    nan = float("nan")
    undefined = (nan, nan, nan, nan)
    what = "survival calibration slope"
    if warn_at_bounds(
        s,
        what,
        "{n} predicted survival value(s) at the horizon are exactly 0 or 1 (first: patient {i}, "
        "{value!r}), whose log(-log S) is infinite; values are never clipped",
    ):
        return undefined
    ts = np.minimum(t, h)
    es = ((e == 1) & (t <= h)).astype(np.int8)
    if not es.any():
        warn_undefined(what, "no event occurs at or before the horizon")
        return undefined
    x = np.log(-np.log(s))
    if not _cox_existence(ts, es, x):
        warn_undefined(
            what,
            "the Cox partial likelihood has no finite maximum (constant predictions, or every event "
            "has the highest or every event the lowest predicted risk of its risk set)",
        )
        return undefined
    beta, info = _cox_breslow(ts, es, x)
    se = math.sqrt(1.0 / info) if info > 0 else nan
    from scipy.special import ndtri

    z = float(ndtri(0.5 + level / 2.0))
    return float(beta), float(se), float(beta - z * se), float(beta + z * se)


@fill_doc(survival_inputs=SURVIVAL_INPUTS, twelve_patients=_TWELVE_PATIENTS)
def survival_calibration_at(
    durations,
    events,
    surv,
    time_grid,
    horizon,
    *,
    n_groups: int = 10,
    min_group: int = 5,
    level: float = 0.95,
) -> SurvivalCalibrationAt:
    """Calibration of survival curves at one horizon: in the large, in groups, and its slope.

    With S_i(h) read from each curve as a right-continuous step on the grid:

    - calibration-in-the-large: observed risk 1 - KM(h) over all patients vs the mean predicted risk
      (1/N) sum (1 - S_i(h)); their difference and O/E ratio;
    - groups: patients sorted by S_i(h) (stable) and split into ``n_groups`` equal-size groups
      (``numpy.array_split``, group 1 = lowest survival), each compared with its own Kaplan-Meier at h;
      ``ece`` = sum_b n_b / sum_kept n |mean S_b(h) - KM_b(h)| over groups with >= ``min_group``
      patients (the survival ECE of App. F at a single time);
    - the calibration slope of :func:`cox_calibration_slope`.

    Parameters
    ----------
    {survival_inputs}
    horizon : float
        h >= 0.
    n_groups : int, default 10
    min_group : int, default 5
    level : float, default 0.95

    Returns
    -------
    SurvivalCalibrationAt
        Every number ``nan`` with :class:`UndefinedMetricWarning` when the horizon lies beyond the
        last grid time or the longest follow-up; ``ece`` ``nan`` (warning) when every group is below
        ``min_group``; the slope ``nan`` as in :func:`cox_calibration_slope`.

    Raises
    ------
    ValueError
        Malformed inputs (as :func:`~automd_analysis.metrics.survival_ece`), a negative or non-finite
        horizon, ``n_groups``/``min_group`` not positive integers, ``level`` outside (0, 1).

    See Also
    --------
    survival_ici_at : smoothed calibration at the horizon.
    d_calibration : calibration of the whole curve.
    automd_analysis.metrics.survival_ece : the paper's ECE at three times.

    References
    ----------
    .. [1] Royston P, Altman DG (2013). External validation of a Cox prognostic model: principles and
       methods. BMC Medical Research Methodology 13:33.
    .. [2] Crowson CS, Atkinson EJ, Therneau TM (2016). Assessing calibration of prognostic risk
       scores. Statistical Methods in Medical Research 25:1692-1706.

    Examples
    --------
    {twelve_patients}
    >>> from automd_analysis.metrics import survival_calibration_at
    >>> res = survival_calibration_at(t, e, surv, grid, 4.0, n_groups=2, min_group=1)
    >>> round(res.observed_risk, 4), round(res.predicted_risk, 4), res.n_events
    (0.4762, 0.55, 5)
    >>> round(res.ece, 4), round(res.slope, 4)
    (0.2056, 2.3515)
    """
    t, e, s, grid, h = _validated(durations, events, surv, time_grid, horizon)
    for name, value in (("n_groups", n_groups), ("min_group", min_group)):
        if isinstance(value, bool) or int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}.")
    n = len(t)
    nan = float("nan")
    n_events = int(np.sum((e == 1) & (t <= h)))
    problem = _horizon_problem(t, grid, h)
    if problem is not None:
        warn_undefined("survival calibration at a horizon", problem)
        empty = {k: np.array([]) for k in ("group", "n", "mean_pred", "km", "kept")}
        return SurvivalCalibrationAt(
            h, nan, nan, nan, nan, nan, nan, nan, nan, nan, nan, level, n, n_events, empty
        )
    pred, grid_time = _read_at(s, grid, h)
    observed = 1.0 - kaplan_meier_unchecked(t, e).at(h)
    predicted = float(np.mean(1.0 - pred))
    order = np.argsort(pred, kind="stable")
    rows: dict[str, list] = {k: [] for k in ("group", "n", "mean_pred", "km", "kept")}
    total, weighted = 0, 0.0
    for b, idx in enumerate(np.array_split(order, int(n_groups))):
        kept = len(idx) >= min_group
        mean_pred = float(np.mean(pred[idx])) if len(idx) else nan
        km = kaplan_meier_unchecked(t[idx], e[idx]).at(h) if len(idx) else nan
        if kept:
            total += len(idx)
            weighted += len(idx) * abs(mean_pred - km)
        for key, value in (
            ("group", b + 1),
            ("n", len(idx)),
            ("mean_pred", mean_pred),
            ("km", km),
            ("kept", kept),
        ):
            rows[key].append(value)
    if total:
        ece = weighted / total
    else:
        ece = warn_undefined(
            "survival ECE at a horizon",
            f"every group has fewer than min_group={min_group} patients",
        )
    slope, se, lo, hi = _cox_slope_unchecked(t, e, pred, h, level)
    return SurvivalCalibrationAt(
        horizon=h,
        grid_time=grid_time,
        observed_risk=float(observed),
        predicted_risk=predicted,
        citl_difference=float(observed - predicted),
        oe_ratio=float(observed / predicted) if predicted > 0 else nan,
        ece=float(ece),
        slope=slope,
        slope_se=se,
        slope_lo=lo,
        slope_hi=hi,
        level=level,
        n=n,
        n_events=n_events,
        groups={k: np.asarray(v) for k, v in rows.items()},
    )


@fill_doc(twelve_patients=_TWELVE_PATIENTS)
def survival_ici_at(
    durations, events, surv, time_grid, horizon, *, span: float = 0.75, max_direct: int = 2000
) -> ICIResult:
    """Smoothed calibration of survival predictions at a horizon: ICI, E50, E90, Emax.

    The predicted risk is r_i = 1 - S_i(h). The observed risk is estimated without binning from the
    jackknife pseudo-observations theta_i of the Kaplan-Meier event probability at h
    (:func:`km_pseudo_observations`), smoothed against r_i with the loess of
    :func:`~automd_analysis.metrics.ici` (local quadratic, span 0.75):

    .. math:: \\mathrm{ICI}(h) = \\frac1N \\sum_i \\bigl|\\hat o(r_i) - r_i\\bigr|,
        \\qquad \\hat o = \\mathrm{loess}(\\theta \\sim r)

    E50, E90 and Emax as for binary outcomes. Pseudo-observations make the censored outcome usable
    in an ordinary regression (Andersen and Perme 2010); they assume censoring independent of the
    prediction. Austin, Harrell and van Klaveren (2020) define the same ICI with a hazard-regression
    smoother instead; both estimate the observed risk at each predicted risk.

    Parameters
    ----------
    durations, events : array-like of shape (n,)
        Test follow-up and event indicator.
    surv : array-like of shape (n, G)
        Predicted survival curves on ``time_grid``.
    time_grid : array-like of shape (G,)
    horizon : float
    span : float, default 0.75
    max_direct : int, default 2000

    Returns
    -------
    ICIResult
        All ``nan`` with :class:`UndefinedMetricWarning` when the horizon lies beyond the last grid
        time or the longest follow-up, or there are fewer than two patients. Without any event by h
        every pseudo-observation is 0 and ICI is the mean predicted risk.

    Raises
    ------
    ValueError
        Malformed inputs, negative horizon, ``span`` outside (0, 1].

    See Also
    --------
    survival_calibration_at : grouped and slope views at the same horizon.
    ici : binary outcomes.

    References
    ----------
    .. [1] Austin PC, Harrell FE Jr, van Klaveren D (2020). Graphical calibration curves and the
       integrated calibration index (ICI) for survival models. Statistics in Medicine 39:2714-2742.
    .. [2] Andersen PK, Perme MP (2010). Pseudo-observations in survival analysis. Statistical
       Methods in Medical Research 19:71-99.

    Examples
    --------
    {twelve_patients}
    >>> from automd_analysis.metrics import survival_ici_at
    >>> round(survival_ici_at(t, e, surv, grid, 4.0).ici, 4)
    0.2051
    """
    span = float(span)
    if not 0.0 < span <= 1.0:
        raise ValueError(f"span must be in (0, 1], got {span!r}.")
    t, e, s, grid, h = _validated(durations, events, surv, time_grid, horizon)
    nan = float("nan")
    problem = _horizon_problem(t, grid, h)
    if problem is None and len(t) < 2:
        problem = "pseudo-observations need at least two patients"
    if problem is not None:
        warn_undefined("survival ICI at a horizon", problem)
        return ICIResult(nan, nan, nan, nan, len(t), False)
    pred, _ = _read_at(s, grid, h)
    risk = 1.0 - pred
    theta = _pseudo_unchecked(t, e, h)
    fit = loess_fit(risk, theta, span=span, max_direct=max_direct)
    xs = fit.sorted_x
    return ici_from_observed(fit.predict(xs), xs, exact=fit.exact)


@fill_doc(twelve_patients=_TWELVE_PATIENTS)
def smoothed_survival_calibration_curve(
    durations,
    events,
    surv,
    time_grid,
    horizon,
    points=None,
    *,
    span: float = 0.75,
    level: float = 0.95,
) -> SmoothedCalibrationCurve:
    """Observed vs predicted event probability at a horizon, smoothed, with pointwise intervals.

    The curve behind :func:`survival_ici_at`: the loess of the Kaplan-Meier pseudo-observations
    theta_i on the predicted risk r_i = 1 - S_i(h), read at ``points`` (default 0, 0.01, ..., 1;
    ``nan`` outside [min r, max r]). The pointwise standard error uses the binomial variance at the
    fitted value, as :func:`~automd_analysis.metrics.smoothed_calibration_curve` does; it ignores the
    extra variance of the pseudo-observations from censoring, so the interval is descriptive.

    Parameters
    ----------
    durations, events : array-like of shape (n,)
    surv : array-like of shape (n, G)
    time_grid : array-like of shape (G,)
    horizon : float
    points : array-like, optional
    span : float, default 0.75
    level : float, default 0.95

    Returns
    -------
    SmoothedCalibrationCurve
        ``x`` = predicted risk, ``observed`` = smoothed observed risk. All ``nan`` (with
        :class:`UndefinedMetricWarning`) when the horizon lies beyond the grid or the follow-up.

    Raises
    ------
    ValueError
        Malformed inputs, negative horizon, ``span``/``level`` out of range.

    See Also
    --------
    survival_ici_at : summaries of this curve.
    automd_analysis.metrics.smoothed_calibration_curve : binary outcomes.

    References
    ----------
    .. [1] Andersen PK, Perme MP (2010). Pseudo-observations in survival analysis. Statistical
       Methods in Medical Research 19:71-99.
    .. [2] Austin PC, Harrell FE Jr, van Klaveren D (2020). Graphical calibration curves and the
       integrated calibration index (ICI) for survival models. Statistics in Medicine 39:2714-2742.

    Examples
    --------
    {twelve_patients}
    >>> from automd_analysis.metrics import smoothed_survival_calibration_curve
    >>> curve = smoothed_survival_calibration_curve(t, e, surv, grid, 4.0, points=[0.1, 0.5, 0.6])
    >>> np.round(curve.observed, 4).tolist()
    [nan, 0.2663, 0.843]
    """
    span = float(span)
    if not 0.0 < span <= 1.0:
        raise ValueError(f"span must be in (0, 1], got {span!r}.")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}.")
    t, e, s, grid, h = _validated(durations, events, surv, time_grid, horizon)
    problem = _horizon_problem(t, grid, h)
    if problem is None and len(t) < 2:
        problem = "pseudo-observations need at least two patients"
    if problem is not None:
        warn_undefined("survival calibration curve at a horizon", problem)
        x = np.linspace(0.0, 1.0, 101) if points is None else np.asarray(points, dtype=float)
        nan = np.full(x.shape, np.nan)
        return SmoothedCalibrationCurve(x=x, observed=nan, se=nan, lo=nan, hi=nan, level=level)
    pred, _ = _read_at(s, grid, h)
    theta = _pseudo_unchecked(t, e, h)
    return smoothed_curve_unchecked(1.0 - pred, theta, points, span, level)
