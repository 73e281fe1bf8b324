"""Survival building blocks: the task time grid, reading curves on it, and the Kaplan-Meier estimator."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from automd_analysis.metrics._validation import (
    as_binary,
    as_durations,
    check_same_length,
)

__all__ = ["KaplanMeierCurve", "grid_index_post", "kaplan_meier", "survival_time_grid"]


def survival_time_grid(train_durations, train_events, n_levels: int = 100) -> np.ndarray:
    """Time grid on which survival submissions report S(t) (Auto-MD-bench App. A.1, "Survival Time Grids").

    The unique values of ``np.quantile(event_times, np.linspace(0, 1, n_levels))`` (numpy's default
    linear interpolation) over the *training event* times, together with time 0, sorted. With the
    default 100 levels the grid has at most 101 points.

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

    ``clip(searchsorted(grid, t, side="right") - 1, 0, G - 1)``, i.e. pycox ``idx_at_times`` with
    ``steps='post'``, the reading rule of C^td (SPEC §4). A time before the first grid point reads
    index 0 and one after the last reads G - 1 (nothing is extrapolated).

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
    durations : array-like of shape (n,)
        Follow-up times (finite, >= 0).
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
    """
    t = as_durations("durations", durations)
    e = as_binary("events", events)
    check_same_length(durations=t, events=e)
    return kaplan_meier_unchecked(t, e)


def kaplan_meier_unchecked(t: np.ndarray, e: np.ndarray) -> KaplanMeierCurve:
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
