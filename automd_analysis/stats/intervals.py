"""The interval rule, the p-value rule and the best marks of every published table.

A table value is computed from a *distribution*: an array of shape ``(1 + B,)`` whose column 0 is
the observed value and whose columns 1..B are the draws of the resampler
(:mod:`automd_analysis.stats.resample`). Three rules turn it into what a table publishes:

- **interval** (:func:`estimate`): the α/2 and 1 - α/2 quantiles of the finite draws (the
  percentile interval of :func:`automd_analysis.metrics.percentile_interval`), widened where needed
  to hold the estimate (an interval never excludes its own estimate) and cut to the quantity's
  range; for a value that the resampling biases (the binned ECE) the bias-corrected estimate and
  its interval from below it up to the plug-in (:func:`bias_corrected`,
  :func:`automd_analysis.metrics.bias_corrected_interval`);
- **p-value** (:func:`p_value`): the two-sided test of "θ = 0" that inverts that interval, never
  below 1 / (B + 1), so "p < α" exactly when the interval excludes 0;
- **best marks** (:func:`best_marks`): the best row, and every row whose paired difference from it
  has an interval holding 0.

:func:`summarise` applies them to the rows of a table declaration. The level is 1 - α for every
interval (:func:`check_alpha`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

import numpy as np

from automd_analysis.metrics.bootstrap import bias_corrected_interval, check_alpha
from automd_analysis.metrics.bootstrap import percentile_interval as _percentile

__all__ = [
    "best_marks",
    "bias_corrected",
    "check_alpha",
    "estimate",
    "p_value",
    "percentile_interval",
    "summarise",
]


def percentile_interval(distribution: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """The percentile interval of the draws (columns 1..B; column 0 is not used).

    .. math:: [\\hat q_{\\alpha/2}, \\hat q_{1-\\alpha/2}] \\text{ of } \\{\\theta^*_b\\}_{b=1}^B

    ``(nan, nan)`` with fewer than two finite draws (e.g. a store without replicates, B = 0).

    Parameters
    ----------
    distribution : numpy.ndarray of shape (1 + B,)
    alpha : float, default 0.05

    Returns
    -------
    (float, float)

    See Also
    --------
    estimate : the published value and interval.

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
    return _percentile(np.asarray(distribution, dtype=np.float64)[1:], alpha)


def _hull(point: float, low: float, high: float, bounds) -> tuple[float, float]:
    """``[low, high]`` widened to hold ``point`` and cut to ``bounds``."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return low, high
    if math.isfinite(point):
        low, high = min(low, point), max(high, point)
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return float(low), float(high)


def estimate(
    distribution: np.ndarray, alpha: float = 0.05, bounds: tuple[float, float] | None = None
) -> tuple[float, float, float]:
    """``(point, ci_low, ci_high)``: column 0 and the interval of the draws that holds it.

    .. math:: [\\min(\\hat q_{\\alpha/2}, \\hat\\theta),\\ \\max(\\hat q_{1-\\alpha/2},
              \\hat\\theta)] \\cap [l, u]

    The percentile interval of the draws (:func:`percentile_interval`), widened to the estimate
    θ̂ when the draws lie on one side of it (the resampler's draws centre on its model of the
    runs, e.g. an invalid rate that is not exactly the observed one: the published interval never
    excludes its estimate), and cut to the quantity's range ``bounds`` (e.g. (0, 1) for a score).

    Parameters
    ----------
    distribution : numpy.ndarray of shape (1 + B,)
    alpha : float, default 0.05
    bounds : (float, float), optional

    Returns
    -------
    (float, float, float)

    See Also
    --------
    percentile_interval, bias_corrected

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 5.2.

    Examples
    --------
    >>> estimate(np.array([0.5, 0.4, 0.6, 0.5]), alpha=0.5)
    (0.5, 0.45, 0.55)
    >>> estimate(np.array([0.7, 0.4, 0.6, 0.5]), alpha=0.5)  # the draws lie below 0.7
    (0.7, 0.45, 0.7)
    """
    point = float(distribution[0])
    return (point, *_hull(point, *percentile_interval(distribution, alpha), bounds))


def bias_corrected(
    distribution: np.ndarray, alpha: float = 0.05, bounds: tuple[float, float] | None = None
) -> tuple[float, float, float]:
    """``(estimate, ci_low, ci_high)``: the bias-corrected value of column 0 and its interval.

    :func:`automd_analysis.metrics.bias_corrected_interval` of column 0 and the draws:

    .. math:: \\hat\\theta_{bc} = 2\\hat\\theta - \\bar\\theta^*,\\quad
              \\bigl[\\min(\\hat\\theta, \\hat\\theta - \\kappa \\hat b) - h,\\;
              \\max(\\hat\\theta, \\hat\\theta_{bc}) + h\\bigr]

    with b̂ = θ̄* - θ̂, h the longer tail of the draws from their mean and κ = 1/(√2 - 1): the
    interval brackets the bias between none and the largest the bootstrap estimate allows,
    cut to ``bounds`` (the estimate too: a corrected ECE below 0 is published as 0). Parameters
    and return as :func:`estimate`.

    See Also
    --------
    estimate : the plug-in value and its interval.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, sec. 10.6. Chapman &
       Hall.

    Examples
    --------
    >>> [round(v, 4) for v in bias_corrected(np.array([0.30, 0.30, 0.32, 0.34, 0.36]), 0.5)]
    [0.27, 0.2126, 0.315]
    """
    draws = np.asarray(distribution, dtype=np.float64)
    lower = None if bounds is None else bounds[0]
    point, low, high = bias_corrected_interval(draws[0], draws[1:], alpha, lower=lower)
    if bounds is not None and math.isfinite(point):
        point, low, high = (min(v, bounds[1]) for v in (point, low, high))
    return point, low, high


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


def p_value(distribution: np.ndarray, alpha: float = 0.05) -> float:
    """Two-sided p-value of "θ = 0" by inverting the interval of :func:`estimate`.

    With θ̂ = column 0, q̂ the linearly interpolated quantile function of the B finite draws
    (the one of :func:`percentile_interval`), u₋ = sup{u : q̂(u) ≤ 0} and
    u₊ = inf{u : q̂(u) ≥ 0}:

    .. math:: p = \\max\\Bigl(\\frac{1}{B + 1},\\ \\min\\bigl(1,\\ 2u_-\\bigr)\\Bigr)
              \\ (\\hat\\theta > 0),\\qquad
              \\max\\Bigl(\\frac{1}{B + 1},\\ \\min\\bigl(1,\\ 2(1 - u_+)\\bigr)\\Bigr)
              \\ (\\hat\\theta < 0),\\qquad 1\\ (\\hat\\theta = 0)

    So the interval of :func:`estimate` excludes 0 exactly when p < α, for every α > 2/(B + 1):
    it excludes 0 only when the estimate and the whole percentile interval lie on one side of 0.
    At the given ``alpha`` the equivalence is also enforced against the interval as computed
    (floating-point rounding of u± cannot move p across α). A p-value is never 0: with every draw
    on the estimate's side it is 1 / (B + 1), shown "< 0.001" at B = 1,000. NaN with fewer than
    two finite draws.

    Parameters
    ----------
    distribution : numpy.ndarray of shape (1 + B,)
    alpha : float, default 0.05
        The level of the published interval.

    Returns
    -------
    float

    See Also
    --------
    estimate : the interval it inverts.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, sec. 15.4. Chapman &
       Hall.
    .. [2] Phipson B, Smyth GK (2010). Permutation p-values should never be zero. Statistical
       Applications in Genetics and Molecular Biology 9(1):39.

    Examples
    --------
    >>> p_value(np.array([0.5, *range(-9, 91)]))  # 0 at quantile 9/99
    0.18181818181818182
    >>> p_value(np.array([2.0, 1.0, 2.0, 3.0]), alpha=0.5)  # every draw above 0: 1 / (B + 1)
    0.25
    """
    alpha = check_alpha(alpha)
    values = np.asarray(distribution, dtype=np.float64)
    finite = np.sort(values[1:][np.isfinite(values[1:])])
    point = float(values[0])
    if finite.size < 2 or not math.isfinite(point):
        return math.nan
    if point > 0:
        p = 2.0 * _crossing(finite, upper=False)
    elif point < 0:
        p = 2.0 * (1.0 - _crossing(finite, upper=True))
    else:
        p = 1.0
    p = min(1.0, max(p, 1.0 / (finite.size + 1)))
    low, high = estimate(values, alpha)[1:]
    excludes = bool(low > 0 or high < 0)
    if excludes and not p < alpha:
        p = float(np.nextafter(alpha, 0.0))
    elif not excludes and p < alpha:
        p = float(alpha)
    return float(p)


def best_marks(
    distributions: Sequence[np.ndarray],
    direction: str,
    *,
    never_best: Sequence[bool] | None = None,
    corrected: bool = False,
    alpha: float = 0.05,
) -> list[bool]:
    """Which values carry the "best" mark: the best one, and every other one whose paired
    interval of the difference from it holds 0.

    Row i's estimate θ̂_i is column 0 of its distribution (bias-corrected, :func:`bias_corrected`,
    with ``corrected``); the best row b has the highest (``"max"``) or lowest (``"min"``) estimate
    among the rows that may be best. Row i is marked when i = b or when the interval of the
    difference (:func:`estimate`, or :func:`bias_corrected` with ``corrected``), computed from the
    paired draws d_i - d_b (column j of every distribution comes from draw j, so the draws share
    their resampled patients), holds 0:

    .. math:: \\text{best}_i = [i = b] \\lor [\\ell(d_i - d_b) \\le 0 \\le u(d_i - d_b)]

    A mark therefore says "not distinguishable from the best"; a single mark says the best is
    ahead of every other row (measured under exchangeable agents in docs/statistics.md). Rows
    without a finite estimate and ``never_best`` rows (the simple baseline) are never marked.

    Parameters
    ----------
    distributions : sequence of arrays of shape (1 + B,)
        One per row: the observed value, then its draws.
    direction : {"max", "min"}
    never_best : sequence of bool, optional
    corrected : bool, default False
        Compare bias-corrected estimates with their intervals (the declaration's
        ``corrected`` columns).
    alpha : float, default 0.05

    Returns
    -------
    list of bool

    See Also
    --------
    summarise : gives every ``<X>_best`` column of a table this way.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, sec. 16.4. Chapman &
       Hall.

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
        low, high = reduce(d - arrays[best], alpha)[1:]  # a difference: no bounds
        marks.append(i == best or bool(low <= 0.0 <= high))
    return marks


def summarise(
    rows: Sequence[Mapping],
    intervals: Mapping[str, tuple[str, str]],
    alpha: float = 0.05,
    *,
    corrected: Collection[str] = (),
    best: Mapping[str, str] | None = None,
    groups: Sequence | None = None,
    never_best: Sequence[bool] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
) -> list[dict]:
    """Table rows from rows of distributions: each column with an interval holds a (1 + B,) array,
    replaced by its value and interval (:func:`estimate`); a column of ``corrected`` is the
    bias-corrected value with its interval (:func:`bias_corrected`) instead. Each column of
    ``best`` also gets ``<X>_best`` (:func:`best_marks` among the rows of the same group).

    Parameters
    ----------
    rows : sequence of mappings
        Column -> value; the columns of ``intervals`` hold arrays of shape (1 + B,), or a
        ``(value, low, high)`` tuple an interval rule of its own gave (mean ranks).
    intervals : mapping
        Column -> its ``(low, high)`` interval columns (a table declaration's ``intervals``).
    alpha : float, default 0.05
    corrected : collection of str, optional
        The bias-corrected columns (a declaration's ``corrected``).
    best : mapping, optional
        Column -> ``"max"``/``"min"``: the columns whose best values are marked.
    groups : sequence, optional
        Per row, the group within which the best is sought (default: one group).
    never_best : sequence of bool, optional
        Rows that are never marked (the simple baseline).
    bounds : mapping, optional
        Column -> the quantity's range; ``corrected`` columns default to (0, 1) (a calibration
        error).

    Returns
    -------
    list of dict

    See Also
    --------
    estimate, bias_corrected, best_marks

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, ch. 13.

    Examples
    --------
    >>> summarise([{"agent": "a", "score": np.array([0.5, 0.4, 0.6])}],
    ...           {"score": ("score_ci_low", "score_ci_high")}, alpha=0.5)
    [{'agent': 'a', 'score': 0.5, 'score_ci_low': 0.45, 'score_ci_high': 0.55}]
    """
    alpha = check_alpha(alpha)
    ranges = dict(bounds or {})
    corrected = frozenset(corrected)
    marks = _best_columns(rows, best or {}, groups, never_best, alpha, corrected)
    out = []
    for i, row in enumerate(rows):
        flat = {}
        for column, value in row.items():
            if column in intervals and isinstance(value, tuple):  # computed by its own rule
                point, low, high = value
                flat |= {column: point, intervals[column][0]: low, intervals[column][1]: high}
            elif column in intervals:
                rule = bias_corrected if column in corrected else estimate
                limits = ranges.get(column, (0.0, 1.0) if column in corrected else None)
                point, low, high = rule(value, alpha, limits)
                flat |= {column: point, intervals[column][0]: low, intervals[column][1]: high}
            else:
                flat[column] = value
        out.append(flat | {f"{column}_best": m[i] for column, m in marks.items()})
    return out


def _best_columns(rows, best, groups, never_best, alpha, corrected) -> dict[str, list[bool]]:
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
                corrected=column in corrected,
                alpha=alpha,
            )
            for i, mark in zip(idx, found, strict=True):
                marks[i] = mark
        out[column] = marks
    return out
