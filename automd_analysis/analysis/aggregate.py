"""The paper's aggregation rules, applied to every column of a run x replicate matrix at once.

Every aggregate of the paper's tables is built from per-run values with a handful of rules
(paper App. E, F and I). They live here, and only here; each function takes arrays of shape
``(n_runs, 1 + B)`` - one row per run, column 0 the observed data, columns 1..B the two-stage
bootstrap draws of :class:`~automd_analysis.analysis.two_stage.RunMatrix` - and returns the
aggregate for every column, so one call gives the point estimate (column 0) and its bootstrap
distribution (columns 1..B, :func:`estimate`):

- **invalid = 0** (:func:`penalized`): the penalised score counts an invalid run, or a valid run
  without a finite score, as 0 (App. E);
- **valid runs only** (:func:`valid_only`): ECE and the non-penalised score skip invalid runs;
- **per repetition, over tasks** (:func:`per_repetition`): the penalised score of an agent is the
  mean over its repetitions k of the mean over the tasks of repetition k (Table 2, Table 7);
- **within task, then tasks equally** (:func:`per_cell`, :func:`mean_over`): ECE and the
  non-penalised score average the valid runs of each task first and then weight every task with a
  value equally (Tables 2, 3, 7, 13; App. F);
- **per task** (:func:`per_task_summary`): mean, SD and count of a value over the valid runs of
  every (task, agent) (Tables 12 and 13).

Means skip non-finite values (:func:`nanmean`), so a task without a valid run drops out of the
average instead of counting as 0 - except under the penalised rule, which has already replaced it
by 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from automd_analysis.precision import comparable, sample_sd

__all__ = [
    "best_marks",
    "bias_corrected",
    "DISPLAYED_DECIMALS",
    "check_alpha",
    "displayed",
    "estimate",
    "mean_over",
    "nanmean",
    "over_repetitions",
    "penalized",
    "per_cell",
    "per_repetition",
    "per_task_summary",
    "percentile_interval",
    "percentile_p_value",
    "row_groups",
    "summarise",
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
        With a default (0..n-1) index, e.g. ``RunMatrix.runs``.
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


def check_alpha(alpha: float) -> float:
    """``alpha`` as a float in (0, 1), else ``ValueError`` (the interval level is 1 - alpha)."""
    value = float(alpha)
    if not 0.0 < value < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    return value


def percentile_interval(distribution: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """The α/2 and 1 - α/2 quantiles of the finite bootstrap values (columns 1..B).

    .. math:: [\\hat q_{\\alpha/2}, \\hat q_{1-\\alpha/2}] \\text{ of } \\{\\theta^*_b\\}_{b=1}^B

    ``(nan, nan)`` with fewer than two finite values (e.g. a store without replicates, B = 0).

    Parameters
    ----------
    distribution : numpy.ndarray of shape (1 + B,)
        Column 0 (the observed value) is not used.
    alpha : float, default 0.05

    Returns
    -------
    (float, float)

    See Also
    --------
    estimate : the point value and the interval.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, ch. 13. Chapman & Hall.

    Examples
    --------
    >>> percentile_interval(np.array([9.0, *range(101)]), alpha=0.1)
    (5.0, 95.0)
    >>> percentile_interval(np.array([0.5]))
    (nan, nan)
    """
    draws = np.asarray(distribution, dtype=np.float64)[1:]
    finite = draws[np.isfinite(draws)]
    if finite.size < 2:
        return math.nan, math.nan
    low, high = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _crossing(draws: np.ndarray, upper: bool) -> float:
    """sup{u : q(u) <= 0} (``upper=False``) or inf{u : q(u) >= 0} (``upper=True``) of the
    linearly interpolated quantile function q of the sorted ``draws`` (numpy's default)."""
    n = draws.size
    if upper:
        if draws[-1] < 0:
            return 1.0
        i = int(np.searchsorted(draws, 0.0, side="left"))  # first draw >= 0
        if i == 0:
            return 0.0
        lo, hi, k = draws[i - 1], draws[i], i - 1
    else:
        if draws[0] > 0:
            return 0.0
        j = int(np.searchsorted(draws, 0.0, side="right")) - 1  # last draw <= 0
        if j == n - 1:
            return 1.0
        lo, hi, k = draws[j], draws[j + 1], j
    return (k + (0.0 - lo) / (hi - lo)) / (n - 1)


def percentile_p_value(distribution: np.ndarray, alpha: float = 0.05) -> float:
    """Two-sided p-value of "θ = 0" by inverting the :func:`percentile_interval`.

    The smallest level at which the percentile interval excludes 0:

    .. math:: p = \\min\\bigl(1,\\; 2\\min(u_-, 1 - u_+)\\bigr),\\quad
              u_- = \\sup\\{u: \\hat q(u) \\le 0\\},\\; u_+ = \\inf\\{u: \\hat q(u) \\ge 0\\}

    with :math:`\\hat q` the linearly interpolated quantile function of the finite draws (columns
    1..B, the one :func:`percentile_interval` uses), so the lower bound exceeds 0 exactly when
    α/2 > u₋ and the upper bound is below 0 exactly when α/2 > 1 - u₊. Hence "the (1 - α) interval
    excludes 0" ⟺ "p < α" for every α; at the given ``alpha`` the equivalence is also enforced
    against the interval as computed (floating-point rounding of u± cannot move p across α).
    p = 0 when every draw lies strictly on one side of 0 (p < 1/B at B draws). NaN with fewer
    than two finite draws.

    Parameters
    ----------
    distribution : numpy.ndarray of shape (1 + B,)
        Column 0 (the observed value) is not used.
    alpha : float, default 0.05
        The level of the reported interval.

    Returns
    -------
    float

    See Also
    --------
    percentile_interval : the interval it inverts.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, sec. 15.4 (achieved
       significance level from confidence intervals). Chapman & Hall.
    .. [2] Hall P, Wilson SR (1991). Two guidelines for bootstrap hypothesis testing. Biometrics
       47(2), 757-762.

    Examples
    --------
    >>> percentile_p_value(np.array([0.0, *range(-9, 91)]))  # 0 at quantile 9/99
    0.18181818181818182
    >>> percentile_p_value(np.array([0.0, 1.0, 2.0, 3.0]))
    0.0
    """
    draws = np.asarray(distribution, dtype=np.float64)[1:]
    finite = np.sort(draws[np.isfinite(draws)])
    if finite.size < 2:
        return math.nan
    p = min(1.0, 2.0 * min(_crossing(finite, upper=False), 1.0 - _crossing(finite, upper=True)))
    low, high = percentile_interval(distribution, alpha)
    excludes = bool(low > 0 or high < 0)
    if excludes and not p < alpha:
        p = float(np.nextafter(alpha, 0.0))
    elif not excludes and p < alpha:
        p = float(alpha)
    return float(p)


def estimate(distribution: np.ndarray, alpha: float = 0.05) -> tuple[float, float, float]:
    """``(point, ci_low, ci_high)``: column 0 and the :func:`percentile_interval` of the others.

    Parameters
    ----------
    distribution : numpy.ndarray of shape (1 + B,)
    alpha : float, default 0.05

    Returns
    -------
    (float, float, float)

    See Also
    --------
    percentile_interval

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8.

    Examples
    --------
    >>> estimate(np.array([0.5, 0.4, 0.6, 0.5]), alpha=0.5)
    (0.5, 0.45, 0.55)
    """
    return (float(distribution[0]), *percentile_interval(distribution, alpha))


def bias_corrected(distribution: np.ndarray, alpha: float = 0.05) -> tuple[float, float, float]:
    """``(estimate, ci_low, ci_high)``: the bootstrap bias-corrected value and its interval.

    With θ̂ = column 0, θ*_b the finite draws (columns 1..B), their mean θ̄* and quantiles
    q̂, the estimated bias b̂ = θ̄* - θ̂ is removed once from the estimate, and the interval is
    symmetric about it:

    .. math:: \\hat\\theta_{bc} = \\hat\\theta - \\hat b,\\qquad
              \\hat\\theta_{bc} \\pm \\bigl(\\max(\\hat q_{1-\\alpha/2} - \\bar\\theta^*,\\;
              \\bar\\theta^* - \\hat q_{\\alpha/2}) + |\\hat b| / 2\\bigr)

    The half-width is the longer of the draws' two tails (from their mean to their quantiles),
    so the interval holds both the basic interval (the sampling error the mirror image of the
    bootstrap error) and the percentile interval moved to θ̂_bc (the same shape), plus half the
    estimated bias, an allowance for the error of the bias estimate itself: for a sum of
    absolute values such as the binned ECE the bootstrap estimates the bias only to within a
    factor of about two (docs/statistics.md, "Bias-corrected ECE", gives the coverage). It always
    contains θ̂_bc. NaN without two finite draws. Parameters and return as :func:`estimate`.

    See Also
    --------
    estimate : the plug-in value and its percentile interval.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, sec. 10.6 (bias
       correction) and 13.4. Chapman & Hall.
    .. [2] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 2.2.1 and
       5.2 (basic and percentile intervals). Cambridge University Press.

    Examples
    --------
    Draws with mean 0.33, 0.03 above the plug-in 0.30, and quartiles 0.315 and 0.345: the
    estimate is 0.27, the half-width max(0.015, 0.015) + 0.015:

    >>> [round(v, 6) for v in bias_corrected(np.array([0.30, 0.30, 0.32, 0.34, 0.36]), alpha=0.5)]
    [0.27, 0.24, 0.3]
    """
    draws = np.asarray(distribution, dtype=np.float64)[1:]
    finite = draws[np.isfinite(draws)]
    point = float(distribution[0])
    if finite.size < 2 or not math.isfinite(point):
        return math.nan, math.nan, math.nan
    low, high = percentile_interval(distribution, alpha)
    mean = float(finite.mean())
    corrected = 2 * point - mean
    half = max(high - mean, mean - low) + abs(mean - point) / 2
    return corrected, corrected - half, corrected + half


def best_marks(
    distributions: Sequence[np.ndarray],
    direction: str,
    *,
    never_best: Sequence[bool] | None = None,
    corrected: bool = False,
    alpha: float = 0.05,
) -> list[bool]:
    """Which values carry the "best" mark: the best one, and every other one whose paired
    interval of the difference from it contains 0.

    Row i's estimate θ̂_i is column 0 of its distribution (bias-corrected, :func:`bias_corrected`,
    with ``corrected``); the best row b has the highest (``"max"``) or lowest (``"min"``) estimate
    among the rows that may be best. Row i is marked when i = b or when the 1 - α interval of
    the difference, computed from the paired draws d_i - d_b (column j of every distribution
    comes from bootstrap iteration j, so the draws share their resampled patients), contains 0:

    .. math:: \\text{best}_i = [i = b] \\lor [\\ell(d_i - d_b) \\le 0 \\le u(d_i - d_b)]

    A mark therefore says "not distinguishable from the best"; a single mark says the best is
    ahead of every other row. Rows without a finite estimate and ``never_best`` rows (the simple
    baseline) are never marked.

    Parameters
    ----------
    distributions : sequence of arrays of shape (1 + B,)
        One per row: the observed value, then its bootstrap draws.
    direction : {"max", "min"}
    never_best : sequence of bool, optional
    corrected : bool, default False
        Compare bias-corrected estimates with their intervals (``<X>_bc`` columns).
    alpha : float, default 0.05

    Returns
    -------
    list of bool

    See Also
    --------
    summarise : gives every ``<X>_best`` column of a table this way.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, sec. 16.4 (paired
       comparisons from one set of bootstrap samples). Chapman & Hall.

    Examples
    --------
    Three agents on four paired draws: b's draws always trail a's by 0.1, c's straddle a's.

    >>> a = np.array([0.5, 0.5, 0.6, 0.4, 0.5])
    >>> best_marks([a, a - 0.1, np.array([0.49, 0.6, 0.5, 0.5, 0.4])], "max", alpha=0.5)
    [True, False, True]
    """
    if direction not in ("max", "min"):
        raise ValueError(f"direction must be 'max' or 'min', got {direction!r}")
    reduce = bias_corrected if corrected else estimate
    arrays = [np.asarray(d, dtype=np.float64) for d in distributions]
    points = np.array([reduce(d, alpha)[0] for d in arrays], dtype=np.float64)
    skip = np.zeros(len(arrays), bool) if never_best is None else np.asarray(never_best, bool)
    usable = ~skip & np.isfinite(points)
    if not usable.any():
        return [False] * len(arrays)
    candidates = np.where(usable, points if direction == "max" else -points, -np.inf)
    best = int(np.argmax(candidates))
    marks = []
    for i, d in enumerate(arrays):
        if not usable[i]:
            marks.append(False)
            continue
        low, high = reduce(d - arrays[best], alpha)[1:]
        marks.append(i == best or bool(low <= 0.0 <= high))
    return marks


def summarise(
    rows: Sequence[Mapping],
    intervals: Mapping[str, tuple[str, str]],
    alpha: float = 0.05,
    *,
    best: Mapping[str, str] | None = None,
    groups: Sequence | None = None,
    never_best: Sequence[bool] | None = None,
) -> list[dict]:
    """Table rows from rows of distributions: each column with an interval holds a (1 + B,) array,
    replaced by its column-0 value and followed by its percentile interval (:func:`estimate`); a
    column named ``<X>_bc`` is the bias-corrected value with its interval
    (:func:`bias_corrected`) instead. Each column of ``best`` also gets ``<X>_best``
    (:func:`best_marks` among the rows of the same group).

    Parameters
    ----------
    rows : sequence of mappings
        Column -> value; the columns of ``intervals`` hold arrays of shape (1 + B,).
    intervals : mapping
        Column -> its ``(low, high)`` interval columns (a table declaration's ``intervals``).
    alpha : float, default 0.05
    best : mapping, optional
        Column -> ``"max"``/``"min"``: the columns whose best values are marked.
    groups : sequence, optional
        Per row, the group within which the best is sought (default: one group).
    never_best : sequence of bool, optional
        Rows that are never marked (the simple baseline).

    Returns
    -------
    list of dict

    See Also
    --------
    estimate, best_marks

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, ch. 13.

    Examples
    --------
    >>> summarise([{"agent": "a", "score": np.array([0.5, 0.4, 0.6])}],
    ...           {"score": ("score_ci_low", "score_ci_high")}, alpha=0.5)
    [{'agent': 'a', 'score': 0.5, 'score_ci_low': 0.45, 'score_ci_high': 0.55}]
    """
    marks = _best_columns(rows, best or {}, groups, never_best, alpha)
    out = []
    for i, row in enumerate(rows):
        flat = {}
        for column, value in row.items():
            if column in intervals:
                correct = column.endswith("_bc")
                point, low, high = (bias_corrected if correct else estimate)(value, alpha)
                flat |= {column: point, intervals[column][0]: low, intervals[column][1]: high}
            else:
                flat[column] = value
        out.append(flat | {f"{column}_best": m[i] for column, m in marks.items()})
    return out


def _best_columns(rows, best, groups, never_best, alpha) -> dict[str, list[bool]]:
    """Column -> per-row best mark (:func:`best_marks` within each group)."""
    keys = [None] * len(rows) if groups is None else list(groups)
    never = [False] * len(rows) if never_best is None else list(never_best)
    members: dict = {}
    for i, key in enumerate(keys):
        members.setdefault(key, []).append(i)
    out = {}
    for column, direction in best.items():
        marks = [False] * len(rows)
        for idx in members.values():
            found = best_marks(
                [rows[i][column] for i in idx],
                direction,
                never_best=[never[i] for i in idx],
                corrected=column.endswith("_bc"),
                alpha=alpha,
            )
            for i, mark in zip(idx, found, strict=True):
                marks[i] = mark
        out[column] = marks
    return out


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
    automd_analysis.analysis.store.mean_sd : the mean and SD.

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
