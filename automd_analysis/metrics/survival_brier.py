"""IPCW Brier score and integrated Brier score of survival curves (an extra, not a paper metric).

Convention: pycox ``EvalSurv(surv_df, durations, events, censor_surv='km', steps='post')``:

- the censoring survival G is the Kaplan-Meier of (T, 1 - E) fitted on the *test* set itself (pycox's
  own estimator: ``exp(cumsum(log(1 - d/r)))``, time 0 prepended with G = 1, censorings at a tied time
  remain at risk);
- an event at T <= t is weighted 1/G(T-), the censoring curve at the last censoring-KM time strictly
  before T; a patient with T > t is weighted 1/G(t) (last time <= t); a patient censored at or before t
  gets weight 0;
- predictions and G are read as right-continuous steps (last grid time <= t, index clipped);
- BS(t) = Σ w_i (1{T_i <= t, d_i} S_i(t)² + 1{T_i > t} (1 - S_i(t))²) / Σ w_i (``normalize="weights"``,
  pycox). With ``normalize="n"`` the same sum is divided by n (Graf et al. 1999); scikit-survival
  additionally uses G(T) instead of G(T-) and a censoring KM fitted on training data, so neither option
  reproduces sksurv (docs/decisions.md, "Survival Brier / IBS"; the values of the three conventions
  on one data set are in docs/reference_values.md, vector H).

The integrated score is ∫ BS(t) dt / (t_last - t_first) over the evaluation times, by the trapezoidal
rule (default) or SciPy's Simpson rule (``scipy.integrate.simpson``; pycox called the removed ``simps``
and crashes on SciPy >= 1.14).
"""

from __future__ import annotations

import numpy as np

from automd_analysis.metrics._docstrings import SURVIVAL_INPUTS, fill_doc
from automd_analysis.metrics._validation import (
    as_time_grid,
    check_survival_inputs,
    warn_undefined,
)
from automd_analysis.metrics.survival import grid_index_post

__all__ = ["integrated_brier_score", "survival_brier_score"]

_NORMALIZE = ("weights", "n")
_INTEGRATION = ("trapezoid", "simpson")


#: The examples' data: the eight patients of vector H with exponential survival curves.
_VECTOR_H = """
The eight patients of vector H (docs/reference_values.md) with exponential curves
S_i(t) = exp(-r_i t / 3) on the grid 0, 1, ..., 6:

>>> import numpy as np
>>> durations = [1, 2, 2, 3, 4, 4, 5, 6]
>>> events = [1, 1, 0, 1, 1, 1, 0, 1]
>>> risk = np.array([.9, .8, .8, .5, .6, .6, .2, .1])
>>> grid = np.arange(7.0)
>>> surv = np.exp(-np.outer(risk, grid) / 3)
"""


def _censoring_km(t: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pycox-style Kaplan-Meier of the censoring distribution (events flipped) on the given data."""
    uniq, inverse = np.unique(t, return_inverse=True)
    removed = np.bincount(inverse, minlength=len(uniq))
    censored = np.bincount(inverse, weights=1 - e, minlength=len(uniq))
    at_risk = len(t) - np.concatenate(([0], np.cumsum(removed)[:-1]))
    with np.errstate(divide="ignore"):
        g = np.exp(np.cumsum(np.log(1.0 - censored / at_risk)))
    if uniq[0] > 0.0:
        uniq = np.concatenate(([0.0], uniq))
        g = np.concatenate(([1.0], g))
    return uniq, g


def _validated(durations, events, surv, time_grid, eval_times):
    t, e, s, grid = check_survival_inputs(durations, events, surv, time_grid)
    times = grid if eval_times is None else as_time_grid("eval_times", eval_times)
    return t, e, s, grid, times


def _brier_curve(t, e, s, grid, times, normalize: str) -> np.ndarray:
    cens_times, g = _censoring_km(t, e)
    last = len(cens_times) - 1
    g_before_t = g[
        np.clip(np.clip(np.searchsorted(cens_times, t, side="left"), 0, last) - 1, 0, None)
    ]
    g_at_ts = g[grid_index_post(cens_times, times)]
    surv_col = grid_index_post(grid, times)
    out = np.empty(len(times))
    with np.errstate(divide="ignore", invalid="ignore"):
        w_event = 1.0 / g_before_t
        for k, ts in enumerate(times):
            pred = s[:, surv_col[k]]
            had_event = (t <= ts) & (e == 1)
            at_risk = t > ts
            w = np.where(had_event, w_event, np.where(at_risk, 1.0 / g_at_ts[k], 0.0))
            score = np.where(had_event, pred**2, np.where(at_risk, (1.0 - pred) ** 2, 0.0))
            denom = np.sum(w) if normalize == "weights" else len(t)
            out[k] = np.sum(score * w) / denom if denom > 0 else np.nan
    return out


@fill_doc(survival_inputs=SURVIVAL_INPUTS, vector_h=_VECTOR_H)
def survival_brier_score(
    durations, events, surv, time_grid, eval_times=None, normalize: str = "weights"
) -> np.ndarray:
    """Inverse-probability-of-censoring-weighted Brier score BS(t) of survival curves.

    Extra metric (not in the paper). Matches pycox ``EvalSurv(pd.DataFrame(surv.T, index=time_grid),
    durations, events, censor_surv='km', steps='post').brier_score(eval_times)``:

    .. math:: BS(t) = \\frac{\\sum_i w_i(t) \\bigl[\\mathbb{1}\\{T_i \\le t, d_i = 1\\} S_i(t)^2 +
              \\mathbb{1}\\{T_i > t\\} (1 - S_i(t))^2\\bigr]}{\\sum_i w_i(t)}

    with w_i(t) = 1/Ĝ(T_i-) for events at or before t, 1/Ĝ(t) for patients still at risk and 0 for
    patients censored at or before t; Ĝ is the Kaplan-Meier of the censoring times of this same test
    set (module docstring for the exact convention).

    Parameters
    ----------
    {survival_inputs}
    eval_times : array-like of shape (m,), optional
        Strictly increasing times at which to evaluate; default ``time_grid``. Curves are read at the
        last grid time <= t (clipped to the grid).
    normalize : {"weights", "n"}, default "weights"
        Divide by Σ w_i(t) (pycox) or by n (Graf et al.).

    Returns
    -------
    numpy.ndarray of shape (m,)
        BS at each evaluation time; ``nan`` (with :class:`UndefinedMetricWarning`) at times where every
        weight is 0 (everyone censored at or before t).

    Raises
    ------
    ValueError
        Malformed inputs (as :func:`concordance_td`) or an unknown ``normalize``.

    See Also
    --------
    integrated_brier_score : the time average of this curve.
    automd_analysis.metrics.brier : the Brier score of binary probabilities.
    automd_analysis.metrics.kaplan_meier : the estimator behind the censoring weights.

    References
    ----------
    .. [1] Graf E, Schmoor C, Sauerbrei W, Schumacher M (1999). Assessment and comparison of
       prognostic classification schemes for survival data. Statistics in Medicine 18:2529-2545.
    .. [2] Kvamme H, Borgan O, Scheel I (2019). Time-to-event prediction with neural networks and
       Cox regression. JMLR 20(129):1-30 (pycox ``EvalSurv.brier_score``).

    Examples
    --------
    {vector_h}
    >>> survival_brier_score(durations, events, surv, grid, [2, 3, 4]).round(6).tolist()
    [0.129668, 0.168547, 0.136581]
    >>> by_n = survival_brier_score(durations, events, surv, grid, [2, 3, 4], normalize="n")
    >>> by_n.round(6).tolist()
    [0.126967, 0.165036, 0.133735]
    """
    if normalize not in _NORMALIZE:
        raise ValueError(f"normalize must be one of {_NORMALIZE}, got {normalize!r}.")
    t, e, s, grid, times = _validated(durations, events, surv, time_grid, eval_times)
    out = _brier_curve(t, e, s, grid, times, normalize)
    if np.isnan(out).any():
        warn_undefined(
            "survival Brier score at some times", "every patient is censored before them"
        )
    return out


@fill_doc(vector_h=_VECTOR_H)
def integrated_brier_score(
    durations,
    events,
    surv,
    time_grid,
    eval_times=None,
    normalize: str = "weights",
    integration: str = "trapezoid",
) -> float:
    """Integrated Brier score: the time average of :func:`survival_brier_score`.

    .. math:: IBS = \\frac{1}{t_m - t_1} \\int_{t_1}^{t_m} BS(t)\\, dt

    over the evaluation times t_1 < ... < t_m, integrated with the trapezoidal rule (``np.trapezoid``,
    default) or Simpson's rule (``scipy.integrate.simpson``, what pycox's ``integrated_brier_score``
    intended; SciPy >= 1.11 treats an even number of points differently from the old ``simps``).

    Parameters
    ----------
    durations, events, surv, time_grid, eval_times, normalize
        As :func:`survival_brier_score`; at least two evaluation times are required.
    integration : {"trapezoid", "simpson"}, default "trapezoid"

    Returns
    -------
    float
        IBS in [0, 1]; ``nan`` with :class:`UndefinedMetricWarning` if BS is undefined at some time.

    Raises
    ------
    ValueError
        As :func:`survival_brier_score`, fewer than two evaluation times, or an unknown
        ``integration``.

    See Also
    --------
    survival_brier_score : the curve BS(t) being integrated.

    References
    ----------
    .. [1] Graf E, Schmoor C, Sauerbrei W, Schumacher M (1999). Assessment and comparison of
       prognostic classification schemes for survival data. Statistics in Medicine 18:2529-2545.
    .. [2] Kvamme H, Borgan O, Scheel I (2019). Time-to-event prediction with neural networks and
       Cox regression. JMLR 20(129):1-30 (pycox ``EvalSurv.integrated_brier_score``).

    Examples
    --------
    {vector_h}
    >>> times = [2, 3, 4]
    >>> round(integrated_brier_score(durations, events, surv, grid, times), 6)
    0.150836
    >>> ibs = integrated_brier_score(durations, events, surv, grid, times, integration="simpson")
    >>> round(ibs, 6)
    0.15674
    """
    if integration not in _INTEGRATION:
        raise ValueError(f"integration must be one of {_INTEGRATION}, got {integration!r}.")
    if normalize not in _NORMALIZE:
        raise ValueError(f"normalize must be one of {_NORMALIZE}, got {normalize!r}.")
    t, e, s, grid, times = _validated(durations, events, surv, time_grid, eval_times)
    if len(times) < 2:
        raise ValueError("integrated_brier_score needs at least two evaluation times.")
    bs = _brier_curve(t, e, s, grid, times, normalize)
    if np.isnan(bs).any():
        return warn_undefined("integrated Brier score", "the Brier score is undefined at some time")
    if integration == "trapezoid":
        area = np.trapezoid(bs, times)
    else:
        from scipy.integrate import simpson

        area = simpson(bs, x=times)
    return float(area / (times[-1] - times[0]))
