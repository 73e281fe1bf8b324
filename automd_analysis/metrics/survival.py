"""Survival building blocks: the task time grid, reading curves on it, and the Kaplan-Meier estimator."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automd_analysis.metrics._docstrings import FOLLOW_UP_TIMES, fill_doc
from automd_analysis.metrics._validation import (
    as_binary,
    as_durations,
    check_same_length,
)

__all__ = ["KaplanMeierCurve", "grid_index_post", "kaplan_meier", "survival_time_grid"]


def survival_time_grid(train_durations, train_events, n_levels: int = 100) -> np.ndarray:
    """Time grid on which survival submissions report S(t) (Auto-MD-bench App. A.1, "Survival Time Grids").

    The unique values of ``np.quantile(event_times, np.linspace(0, 1, n_levels))`` (numpy's default
    linear interpolation) over the *training event* times, together with time 0, sorted:

    .. math:: \\mathcal{G} = \\{0\\} \\cup \\bigl\\{Q_E(\\ell / (L - 1)) :
              \\ell = 0, \\dots, L - 1\\bigr\\}

    where Q_E is the empirical quantile function of the training event times and L = ``n_levels``.
    With the default 100 levels the grid has at most 101 points.

    Parameters
    ----------
    train_durations : array-like of shape (n,)
        Training follow-up times (finite, >= 0).
    train_events : array-like of shape (n,)
        Training event indicators (0/1 or bool). Only rows with an event enter the quantiles.
    n_levels : int, default 100
        Number of evenly spaced quantile levels in [0, 1] (>= 2, so that both 0 and 1 are included).

    Returns
    -------
    numpy.ndarray
        Strictly increasing float64 grid starting at 0.

    Raises
    ------
    ValueError
        Malformed inputs, ``n_levels < 2``, or no training event (the grid is then undefined).

    See Also
    --------
    grid_index_post : how a curve on this grid is read at a time.
    automd_analysis.metrics.concordance_td : scores curves reported on this grid.

    References
    ----------
    .. [1] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. A.1.

    Examples
    --------
    Event times 1, 2, 3, 4, 4, 6 (the censored 2 and 5 do not count) at five levels 0, 1/4, ..., 1:

    >>> survival_time_grid([1, 2, 2, 3, 4, 4, 5, 6], [1, 1, 0, 1, 1, 1, 0, 1], n_levels=5).tolist()
    [0.0, 1.0, 2.25, 3.5, 4.0, 6.0]
    """
    durations = as_durations("train_durations", train_durations)
    events = as_binary("train_events", train_events)
    check_same_length(train_durations=durations, train_events=events)
    if int(n_levels) != n_levels or n_levels < 2:
        raise ValueError(f"n_levels must be an integer >= 2, got {n_levels!r}.")
    event_times = durations[events == 1]
    if event_times.size == 0:
        raise ValueError("train_events has no event; the time grid needs at least one event time.")
    levels = np.linspace(0.0, 1.0, int(n_levels))
    return np.unique(np.concatenate(([0.0], np.quantile(event_times, levels))))


def grid_index_post(time_grid: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Grid index whose value a right-continuous step curve holds at each time: last grid time <= t.

    .. math:: k(t) = \\min\\bigl(G - 1, \\max(0, \\max\\{k : g_k \\le t\\})\\bigr)

    computed as ``clip(searchsorted(grid, t, side="right") - 1, 0, G - 1)``, i.e. pycox
    ``idx_at_times`` with ``steps='post'``, the reading rule of C^td (docs/decisions.md, "Metrics:
    binning and survival details"). A time before the first grid point reads index 0 and one after
    the last reads G - 1 (nothing is extrapolated).

    Parameters
    ----------
    time_grid : numpy.ndarray of shape (G,)
        Sorted grid times (not validated here; callers validate).
    times : numpy.ndarray
        Times to look up.

    Returns
    -------
    numpy.ndarray of int
        Indices in [0, G - 1], same shape as ``times``.

    See Also
    --------
    automd_analysis.metrics.concordance_td : reads every curve with this rule.
    KaplanMeierCurve.at : the same step rule on a Kaplan-Meier curve.

    References
    ----------
    .. [1] Kvamme H, Borgan O, Scheel I (2019). Time-to-event prediction with neural networks and
       Cox regression. JMLR 20(129):1-30 (pycox ``EvalSurv(steps='post')``).

    Examples
    --------
    >>> import numpy as np
    >>> grid = np.array([0.0, 1.0, 2.0, 3.0])
    >>> grid_index_post(grid, np.array([-1.0, 0.0, 1.5, 3.0, 7.0])).tolist()
    [0, 0, 1, 3, 3]
    """
    idx = np.searchsorted(time_grid, times, side="right") - 1
    return np.clip(idx, 0, len(time_grid) - 1)


@dataclass(frozen=True)
class KaplanMeierCurve:
    """A Kaplan-Meier survival curve as a right-continuous step function.

    Attributes
    ----------
    times : numpy.ndarray
        0 and every distinct observed duration, sorted (the lifelines ``timeline``).
    survival : numpy.ndarray
        S(t) at each of ``times``.
    n_at_risk : numpy.ndarray
        Patients with duration >= t.
    n_events : numpy.ndarray
        Events at exactly t.
    """

    times: np.ndarray
    survival: np.ndarray
    n_at_risk: np.ndarray
    n_events: np.ndarray

    def at(self, t):
        """S(t) for scalar or array ``t``: value at the last curve time <= t.

        1.0 before the first curve time, the last value carried forward after the last one (the
        lifelines ``predict`` convention).
        """
        t_arr = np.asarray(t, dtype=np.float64)
        idx = np.searchsorted(self.times, t_arr, side="right") - 1
        out = np.where(idx >= 0, self.survival[np.clip(idx, 0, None)], 1.0)
        return float(out) if out.ndim == 0 else out


@fill_doc(follow_up_times=FOLLOW_UP_TIMES)
def kaplan_meier(durations, events) -> KaplanMeierCurve:
    """Kaplan-Meier estimate of the survival function, equal to lifelines ``KaplanMeierFitter``.

    .. math:: \\hat S(t) = \\prod_{t_k \\le t} \\Bigl(1 - \\frac{d_k}{r_k}\\Bigr)

    with d_k events at the distinct time t_k and r_k = #{i : T_i >= t_k} at risk (patients censored at
    t_k are still at risk at t_k). As in lifelines, the product is evaluated as
    ``exp(cumsum(log(r - d) - log(r)))``, so values agree with ``KaplanMeierFitter().fit(T, E)
    .survival_function_`` to the last bit; the curve has a row at time 0 (S = 1 unless events occur at
    0) followed by one row per distinct duration (event or censoring). Used per risk group inside
    :func:`automd_analysis.metrics.survival_ece` (Auto-MD-bench App. F).

    Parameters
    ----------
    {follow_up_times}
    events : array-like of shape (n,)
        1 = event observed, 0 = censored (bool allowed).

    Returns
    -------
    KaplanMeierCurve
        ``times``, ``survival``, ``n_at_risk``, ``n_events``; evaluate with ``.at(t)``. With no event the
        curve is 1 everywhere; once everyone at risk has had the event it is 0.

    Raises
    ------
    ValueError
        Empty input, different lengths, NaN/inf/negative durations, events other than 0/1.

    See Also
    --------
    kaplan_meier_unchecked : the same estimate on arrays already validated.
    automd_analysis.metrics.survival_ece : compares predicted survival with this estimate per group.

    References
    ----------
    .. [1] Kaplan EL, Meier P (1958). Nonparametric estimation from incomplete observations.
       Journal of the American Statistical Association 53:457-481.
    .. [2] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. F.

    Examples
    --------
    >>> km = kaplan_meier([1, 2, 2, 3, 4, 4, 5, 6], [1, 1, 0, 1, 1, 1, 0, 1])
    >>> km.times.tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    >>> [round(float(v), 6) for v in km.survival]  # 7/8, then x 6/7, x 4/5, x 2/4, x 1, x 0
    [1.0, 0.875, 0.75, 0.6, 0.3, 0.3, 0.0]
    >>> [round(float(v), 6) for v in km.at([0.5, 3.0, 10.0])]  # before, at and after the data
    [1.0, 0.6, 0.0]
    """
    t = as_durations("durations", durations)
    e = as_binary("events", events)
    check_same_length(durations=t, events=e)
    return kaplan_meier_unchecked(t, e)


def kaplan_meier_unchecked(t: np.ndarray, e: np.ndarray) -> KaplanMeierCurve:
    """:func:`kaplan_meier` on arrays that are already validated (for inner loops).

    .. math:: \\hat S(t) = \\exp \\sum_{t_k \\le t} \\bigl(\\log(r_k - d_k) - \\log r_k\\bigr)

    Parameters
    ----------
    t : numpy.ndarray of float64, shape (n,)
        Durations, finite and >= 0 (not checked).
    e : numpy.ndarray, shape (n,)
        Event indicators 0/1 (not checked).

    Returns
    -------
    KaplanMeierCurve
        As :func:`kaplan_meier`.

    See Also
    --------
    kaplan_meier : validates its inputs first.

    References
    ----------
    .. [1] Kaplan EL, Meier P (1958). Nonparametric estimation from incomplete observations.
       Journal of the American Statistical Association 53:457-481.

    Examples
    --------
    >>> import numpy as np
    >>> km = kaplan_meier_unchecked(np.array([2.0, 1.0, 3.0]), np.array([1, 0, 1]))
    >>> km.survival.tolist()  # time 0, then 1 (censored), 2 (1 of 2 at risk dies), 3
    [1.0, 1.0, 0.5, 0.0]
    """
    uniq, inverse = np.unique(t, return_inverse=True)
    removed = np.bincount(inverse, minlength=len(uniq))
    observed = np.bincount(inverse, weights=e, minlength=len(uniq)).astype(np.int64)
    at_risk = len(t) - np.concatenate(([0], np.cumsum(removed)[:-1]))
    if uniq[0] > 0.0:  # lifelines adds a row at time 0 (its default birth time) with nobody removed
        uniq = np.concatenate(([0.0], uniq))
        observed = np.concatenate(([0], observed))
        at_risk = np.concatenate(([len(t)], at_risk))
    with np.errstate(divide="ignore"):
        log_factor = np.log((at_risk - observed).astype(np.float64)) - np.log(
            at_risk.astype(np.float64)
        )
    survival = np.exp(np.cumsum(log_factor))
    return KaplanMeierCurve(
        times=uniq, survival=survival, n_at_risk=at_risk.astype(np.int64), n_events=observed
    )
