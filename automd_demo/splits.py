"""Deterministic split rules, survival time grids and null survival curves for the demo tasks.

Paper App. A: "an 80/20 patient split with random seed 42" unless stated otherwise. The split is
scikit-learn's :func:`~sklearn.model_selection.train_test_split` with ``test_size=0.2`` and
``random_state=42`` (the test set is ``ceil(0.2 n)``: 8,873 -> 7,098 / 1,775 and 2,982 ->
2,385 / 597, exactly the sizes of paper Table 8).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split


def split_ids(
    ids: pd.Series,
    *,
    test_size: float | int = 0.2,
    seed: int = 42,
    stratify: pd.Series | pd.DataFrame | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Split patient ids into (train, test), each returned sorted.

    Parameters
    ----------
    ids : Series of str
        Unique patient ids, in a fixed (sorted) order: the split depends on it.
    test_size : float or int
        Fraction (test = ``ceil(test_size * n)``) or absolute number of test patients.
    seed : int
        ``random_state`` of :func:`sklearn.model_selection.train_test_split`.
    stratify : Series or DataFrame, optional
        Stratification labels aligned with ``ids``; a DataFrame is combined column-wise into one
        label per row (e.g. hospital x ever-septic).

    Returns
    -------
    train, test : ndarray of str
    """
    ids = pd.Series(ids).reset_index(drop=True)
    if ids.duplicated().any():
        raise ValueError("ids must be unique")
    labels = None
    if stratify is not None:
        if isinstance(stratify, pd.DataFrame):
            labels = stratify.astype(str).agg("|".join, axis=1).to_numpy()
        else:
            labels = pd.Series(stratify).astype(str).to_numpy()
        if len(labels) != len(ids):
            raise ValueError("stratify must be aligned with ids")
    train, test = train_test_split(
        ids.to_numpy(), test_size=test_size, random_state=seed, stratify=labels
    )
    return np.sort(train), np.sort(test)


def time_grid(train_durations, train_events, n_levels: int = 100) -> np.ndarray:
    """Survival time grid of paper App. A.1.

    The unique values of ``np.quantile(event_times, np.linspace(0, 1, n_levels))`` (default
    linear interpolation) over the training *event* times, with time 0 added, sorted.

    Uses :func:`automd_analysis.metrics.survival_time_grid` when the metrics package provides it;
    a test keeps the two identical.
    """
    try:
        from automd_analysis.metrics import survival_time_grid
    except ImportError:
        return _time_grid_local(train_durations, train_events, n_levels)
    return np.asarray(survival_time_grid(train_durations, train_events, n_levels), np.float64)


def _time_grid_local(train_durations, train_events, n_levels: int = 100) -> np.ndarray:
    durations = np.asarray(train_durations, dtype=np.float64)
    events = np.asarray(train_events)
    times = durations[events == 1]
    if len(times) == 0:
        raise ValueError("the training data has no events: no time grid can be built")
    q = np.quantile(times, np.linspace(0.0, 1.0, n_levels))
    return np.unique(np.concatenate([[0.0], q]))


def kaplan_meier_at(durations, events, times) -> np.ndarray:
    """Kaplan-Meier survival of a sample, read right-continuously at ``times``.

    S(t) = prod over event times u <= t of (1 - d_u / n_u), with n_u the number at risk just
    before u (ties: deaths before censorings). Equals lifelines' ``KaplanMeierFitter``
    ``survival_function_at_times``.
    """
    durations = np.asarray(durations, dtype=np.float64)
    events = np.asarray(events).astype(bool)
    uniq, inverse = np.unique(durations, return_inverse=True)
    deaths = np.bincount(inverse, weights=events, minlength=len(uniq))
    total = np.bincount(inverse, minlength=len(uniq))
    at_risk = len(durations) - np.concatenate([[0], np.cumsum(total)[:-1]])
    surv = np.cumprod(1.0 - deaths / at_risk)
    idx = np.searchsorted(uniq, np.asarray(times, dtype=np.float64), side="right") - 1
    return np.where(idx >= 0, surv[np.clip(idx, 0, None)], 1.0)
