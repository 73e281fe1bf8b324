"""The paper's aggregation rules, applied to every column of a run x draw matrix at once.

Every aggregate of the paper's tables is built from per-run values with a handful of rules
(paper App. E, F and I). They live here, and only here; each function takes arrays of shape
``(n_runs, 1 + B)`` - one row per run slot, column 0 the observed data, columns 1..B the draws of
the resampler (:class:`~automd_analysis.stats.resample.Draws`) - and returns the aggregate for
every column, so one call gives the point estimate (column 0) and its bootstrap distribution
(columns 1..B, :func:`automd_analysis.stats.intervals.estimate`):

- **invalid = 0** (:func:`penalized`): the penalised score counts an invalid run, or a valid run
  without a finite score, as 0 (App. E);
- **valid runs only** (:func:`valid_only`): ECE and the non-penalised score skip invalid runs;
- **per repetition, over tasks** (:func:`per_repetition`): the penalised score of an agent is the
  mean over its repetitions k of the mean over the tasks of repetition k (Table 2, Table 7);
- **within task, then tasks equally** (:func:`per_cell`, :func:`mean_over`): ECE and the
  non-penalised score average the valid runs of each task first and then weight every task with a
  value equally (Tables 2, 3, 7, 13; App. F);
- **mean +- SD** (:func:`mean_sd`): the finite values of a plain list (no draws), with the sample
  SD (``ddof=1``);
- **per task** (:func:`per_task_summary`): mean, SD and count of a value over the valid runs of
  every (task, agent) (Tables 12 and 13).

Means skip non-finite values (:func:`nanmean`), so a task without a valid run drops out of the
average instead of counting as 0 - except under the penalised rule, which has already replaced it
by 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from automd_analysis.precision import comparable, sample_sd

__all__ = [
    "DISPLAYED_DECIMALS",
    "displayed",
    "mean_over",
    "mean_sd",
    "nanmean",
    "over_repetitions",
    "penalized",
    "per_cell",
    "per_repetition",
    "per_task_summary",
    "row_groups",
    "valid_only",
]


#: Decimals the report shows a score or calibration value with: values equal at this precision
#: share a rank and a "best" mark and never count as a rank flip.
DISPLAYED_DECIMALS = 3


def displayed(values):
    """Values as the report compares them for ranks, ties and flips: 12 significant digits
    (:func:`~automd_analysis.precision.comparable`), then rounded to :data:`DISPLAYED_DECIMALS`.

    Examples
    --------
    >>> displayed(pd.Series([0.0514, 0.0506, 0.0504])).tolist()
    [0.051, 0.051, 0.05]
    """
    return np.round(comparable(values), DISPLAYED_DECIMALS)


def nanmean(values: np.ndarray, axis: int) -> np.ndarray:
    """Mean of the finite values along ``axis``; NaN (no warning) where none is finite.

    .. math:: \\bar x = \\frac{\\sum_i x_i [x_i \\text{ finite}]}{\\sum_i [x_i \\text{ finite}]}

    Parameters
    ----------
    values : array_like
    axis : int

    Returns
    -------
    numpy.ndarray

    See Also
    --------
    numpy.nanmean : the same, with a warning for all-NaN slices.

    References
    ----------
    .. [1] Auto-MD-bench, App. E/F: a task without a valid run is left out of an average.

    Examples
    --------
    >>> nanmean(np.array([[1.0, np.nan], [np.nan, np.nan]]), axis=1).tolist()
    [1.0, nan]
    """
    arr = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(arr)
    count = finite.sum(axis=axis)
    total = np.where(finite, arr, 0.0).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.where(count > 0, count, 1), np.nan)


def mean_sd(values: Iterable[float]) -> tuple[float, float]:
    """Mean and sample standard deviation of the finite values.

    ``mean = sum(x) / n`` and ``sd = sqrt(sum((x - mean)^2) / (n - 1))`` (``ddof=1``), the
    "mean +- SD" of every table in the paper.

    Parameters
    ----------
    values : iterable of float
        NaN values are dropped first (a task with no valid run contributes nothing).

    Returns
    -------
    (mean, sd) : tuple of float
        ``(nan, nan)`` when no finite value remains; ``sd`` is ``nan`` for a single value.

    See Also
    --------
    per_task_summary : the same per (task, agent) over the valid runs.

    References
    ----------
    .. [1] Auto-MD-bench, App. E (every table's "mean +- SD" over repetitions or runs).

    Examples
    --------
    >>> mean_sd([0.5, 0.7, float("nan")])
    (0.6, 0.14142135623730948)
    """
    arr = np.asarray(list(values), dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return math.nan, math.nan
    return float(arr.mean()), sample_sd(arr)


def penalized(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """The penalised value of every run: ``s' = s`` for a valid run with a finite ``s``, else 0.

    .. math:: s'_r = s_r \\, [r \\text{ valid and } s_r \\text{ finite}]

    Parameters
    ----------
    values, valid : numpy.ndarray
        Same shape (e.g. a run x replicate matrix and its validity).

    Returns
    -------
    numpy.ndarray

    See Also
    --------
    valid_only : the other convention.

    References
    ----------
    .. [1] Auto-MD-bench, App. E ("invalid submissions receive a score of 0").

    Examples
    --------
    >>> penalized(np.array([0.6, 0.4, np.nan]), np.array([True, False, True])).tolist()
    [0.6, 0.0, 0.0]
    """
    return np.where(valid & np.isfinite(values), values, 0.0)


def valid_only(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """``values`` where the run is valid and the value finite, NaN elsewhere (skipped by means).

    Parameters
    ----------
    values, valid : numpy.ndarray
        Same shape.

    Returns
    -------
    numpy.ndarray

    See Also
    --------
    penalized : invalid runs as 0 instead.

    References
    ----------
    .. [1] Auto-MD-bench, App. E (non-penalised score) and App. F (ECE over valid runs).

    Examples
    --------
    >>> valid_only(np.array([0.6, 0.4]), np.array([True, False])).tolist()
    [0.6, nan]
    """
    return np.where(valid & np.isfinite(values), values, np.nan)


def row_groups(frame: pd.DataFrame, columns: Sequence[str]) -> dict[tuple, np.ndarray]:
    """Positions of the rows of ``frame`` with equal ``columns`` values, keys sorted.

    Parameters
    ----------
    frame : DataFrame
        With a default (0..n-1) index, e.g. ``Draws.units``.
    columns : sequence of str

    Returns
    -------
    dict
        Key tuple -> ascending row positions.

    See Also
    --------
    per_cell : their means.

    References
    ----------
    .. [1] Auto-MD-bench, App. E: cells are (agent, task) pairs.

    Examples
    --------
    >>> frame = pd.DataFrame({"agent": ["b", "a", "b"]})
    >>> {k: v.tolist() for k, v in row_groups(frame, ["agent"]).items()}
    {('a',): [1], ('b',): [0, 2]}
    """
    groups = frame.groupby(list(columns), sort=True).groups
    return {
        key if isinstance(key, tuple) else (key,): np.asarray(rows, dtype=np.int64)
        for key, rows in groups.items()
    }


def mean_over(values: np.ndarray, rows) -> np.ndarray:
    """Finite mean of ``values[rows]`` for every column: one aggregate per replicate.

    .. math:: m_b = \\operatorname{nanmean}_{i \\in rows} v_{i,b}

    Parameters
    ----------
    values : numpy.ndarray of shape (n, 1 + B)
    rows : array of row positions or boolean mask

    Returns
    -------
    numpy.ndarray of shape (1 + B,)

    See Also
    --------
    per_cell : one mean per group of rows.

    References
    ----------
    .. [1] Auto-MD-bench, App. F: tasks weighted equally.

    Examples
    --------
    >>> mean_over(np.array([[1.0, 2.0], [3.0, np.nan]]), [0, 1]).tolist()
    [2.0, 2.0]
    """
    return nanmean(values[rows].T, axis=1)


def per_cell(values: np.ndarray, groups: Sequence[np.ndarray]) -> np.ndarray:
    """:func:`mean_over` of every group of rows: ``out[j] = mean_over(values, groups[j])``.

    Parameters
    ----------
    values : numpy.ndarray of shape (n, 1 + B)
    groups : sequence of row-position arrays

    Returns
    -------
    numpy.ndarray of shape (len(groups), 1 + B); NaN for an empty group.

    See Also
    --------
    row_groups : the groups.

    References
    ----------
    .. [1] Auto-MD-bench, App. E/F: valid runs averaged within each task first.

    Examples
    --------
    >>> per_cell(np.array([[1.0], [3.0], [np.nan]]), [np.array([0, 1]), np.array([2])]).tolist()
    [[2.0], [nan]]
    """
    out = np.full((len(groups), values.shape[1]), np.nan)
    for j, rows in enumerate(groups):
        if len(rows):
            out[j] = mean_over(values, rows)
    return out


def per_repetition(reps: np.ndarray, values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per repetition k (ascending): the mean of ``values`` over the ``rows`` of repetition k.

    With ``values`` the :func:`penalized` scores and ``rows`` an agent's runs, row k is
    ``P_k = mean_t s'_{t,k}``; the penalised score is their mean (:func:`over_repetitions`) and
    its SD their sample SD (paper Table 2).

    Parameters
    ----------
    reps : numpy.ndarray of shape (n,)
        Repetition index of every run.
    values : numpy.ndarray of shape (n, 1 + B)
    rows : row positions of the group

    Returns
    -------
    numpy.ndarray of shape (K, 1 + B), K = the group's distinct repetitions.

    See Also
    --------
    penalized, over_repetitions

    References
    ----------
    .. [1] Auto-MD-bench, App. E: scores averaged over tasks within each repetition, then mean and
       SD over repetitions.

    Examples
    --------
    >>> reps = np.array([0, 0, 1, 1])
    >>> values = np.array([[0.6], [0.4], [0.8], [0.0]])
    >>> per_repetition(reps, values, np.arange(4)).ravel().tolist()
    [0.5, 0.4]
    """
    rows = np.asarray(rows, dtype=np.int64)
    mine = reps[rows]
    return np.vstack([mean_over(values, rows[mine == k]) for k in np.unique(mine)])


def over_repetitions(per_rep: np.ndarray) -> np.ndarray:
    """Mean of the :func:`per_repetition` rows, for every column: ``(1/K) sum_k P_k``.

    Parameters
    ----------
    per_rep : numpy.ndarray of shape (K, 1 + B)

    Returns
    -------
    numpy.ndarray of shape (1 + B,)

    See Also
    --------
    per_repetition

    References
    ----------
    .. [1] Auto-MD-bench, App. E.

    Examples
    --------
    >>> over_repetitions(np.array([[0.5, 0.2], [0.4, 0.4]])).round(12).tolist()
    [0.45, 0.3]
    """
    return np.ascontiguousarray(per_rep.T).mean(axis=1)


def per_task_summary(runs: pd.DataFrame, column: str, order: Mapping[str, int]) -> pd.DataFrame:
    """Mean, sample SD and count of ``column`` over the *valid* runs of every (task, agent).

    .. math:: \\bar x_{t,a} = \\frac{1}{n} \\sum_{r \\text{ valid}} x_r, \\quad
              s_{t,a} = \\sqrt{\\tfrac{1}{n-1} \\sum (x_r - \\bar x_{t,a})^2}

    over the n valid runs with a finite value.

    Parameters
    ----------
    runs : DataFrame
        Rows of :func:`~automd_analysis.analysis.store.selected_runs` (needs ``task``, ``agent``,
        ``valid`` and ``column``).
    column : str
        ``"score"`` (Table 12), ``"ece"`` (Table 13), ...
    order : mapping agent -> position
        Display order of the agents (baseline last).

    Returns
    -------
    DataFrame
        ``task, agent, mean, sd, n_valid``: ``mean``/``sd`` NaN when ``n_valid`` is 0, ``sd`` NaN
        when it is 1. Every (task, agent) with at least one run appears; sorted by task, then
        ``order``.

    See Also
    --------
    mean_sd : the mean and SD.

    References
    ----------
    .. [1] Auto-MD-bench, Tables 12 and 13.

    Examples
    --------
    >>> runs = pd.DataFrame({"task": "t", "agent": "a", "valid": [True, True, False],
    ...     "ece": [0.1, 0.3, 0.9]})
    >>> per_task_summary(runs, "ece", {"a": 0}).round(4).values.tolist()
    [['t', 'a', 0.2, 0.1414, 2]]
    """
    rows = []
    for (task, agent), group in runs.groupby(["task", "agent"], sort=True):
        values = group.loc[group["valid"], column].to_numpy(dtype=float)
        finite = values[np.isfinite(values)]
        mean = float(finite.mean()) if finite.size else math.nan
        sd = sample_sd(finite) if finite.size else math.nan
        rows.append((task, agent, mean, sd, int(finite.size)))
    out = pd.DataFrame(rows, columns=["task", "agent", "mean", "sd", "n_valid"])
    out["n_valid"] = out["n_valid"].astype("int64")
    out["_order"] = out["agent"].map(order)
    out = out.sort_values(["task", "_order"], kind="mergesort").drop(columns="_order")
    return out.reset_index(drop=True)
