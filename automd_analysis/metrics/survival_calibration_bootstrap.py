"""Bootstrap replicates of the survival ECE (Kaplan-Meier ECE at three event-time quantiles).

A replicate is computed from the resampled rows following
:func:`~automd_analysis.metrics.survival_ece` step by step:

1. t_q = the quantile of the resample's event times by numpy's linear rule (index (m - 1) q and
   numpy's two-sided interpolation formula, applied to the event times read off the time order,
   so the same float as ``np.quantile``); the evaluation column is the grid point nearest t_q.
2. The stable sort by predicted survival at that column is a stable *counting* sort of the rows by
   the dense rank of their prediction (ranks of each column computed once, when a replicate first
   needs the column): the same order as ``np.argsort(kind="stable")``, in O(n).
3. ``np.array_split`` sizes (the first n mod 10 groups one larger) give the cuts; a cut inside a
   block of equal predictions moves to the end of the block (ties are never split), and each row
   gets its group.
4. One pass over the resampled rows in time order (a counting sort by the dense rank of the
   duration, once per replicate) builds every group's Kaplan-Meier product at the evaluation time,
   as ``exp(Σ log(r - d) - log r)`` over the group's distinct times up to it, the lifelines
   formula of :func:`~automd_analysis.metrics.kaplan_meier` (r and d are counts, so the logs come
   from a table of ``np.log`` of 0..n built once).
5. ECE_q = Σ over kept groups (n_g / Σ kept n) |mean prediction - KM|; the replicate is the mean
   over the quantiles.

The only difference from ``survival_ece`` on the resampled rows is the order of floating-point
summation in the group means (sequential here, pairwise in numpy): replicates agree to 1e-12.
Cost per replicate O(n + G) after the first use of a column, against O(n log n) sorts and a
Kaplan-Meier fit per group for a fresh call.
"""

from __future__ import annotations

import warnings

import numpy as np

from automd_analysis.metrics._numba import cached_njit
from automd_analysis.metrics._resample import (
    as_indices,
    check_n_boot,
    explicit_blocks,
    index_blocks,
)
from automd_analysis.metrics._validation import (
    UndefinedMetricWarning,
    check_survival_ece_inputs,
)
from automd_analysis.metrics.survival_calibration import nearest_grid_index

__all__ = ["survival_ece_bootstrap"]


@cached_njit(nogil=True)
def _counting_order(keys, n_keys):
    """Positions sorted by integer key, ties in position order (a stable counting sort)."""
    start = np.zeros(n_keys + 1, dtype=np.int64)
    for i in range(keys.shape[0]):
        start[keys[i] + 1] += 1
    for k in range(n_keys):
        start[k + 1] += start[k]
    order = np.empty(keys.shape[0], dtype=np.int64)
    for i in range(keys.shape[0]):
        k = keys[i]
        order[start[k]] = i
        start[k] += 1
    return order


@cached_njit(nogil=True)
def _time_ece(
    pred, pred_rank, n_pred_rank, t_r, e_r, time_order, time, n_groups, min_group, log_int
):
    """ECE_q of one resample at one evaluation time (module docstring, steps 2-5); nan when no
    group reaches ``min_group``."""
    m = pred.shape[0]
    order = _counting_order(pred_rank, n_pred_rank)
    group = np.empty(m, dtype=np.int64)
    sizes = np.empty(n_groups, dtype=np.int64)
    sum_pred = np.zeros(n_groups, dtype=np.float64)
    base = m // n_groups
    extra = m % n_groups
    j = 0
    nominal = 0
    for g in range(n_groups):
        nominal += base + 1 if g < extra else base
        end = max(nominal, j)
        while 0 < end < m and pred_rank[order[end]] == pred_rank[order[end - 1]]:
            end += 1  # never split a block of tied predictions
        sizes[g] = end - j
        while j < end:
            p = order[j]
            group[p] = g
            sum_pred[g] += pred[p]
            j += 1
    n_kept = 0
    for g in range(n_groups):
        if sizes[g] >= min_group:
            n_kept += sizes[g]
    if n_kept == 0:
        return np.nan
    # Kaplan-Meier of every group at ``time``, one pass over the rows in time order
    at_risk = sizes.astype(np.float64)
    log_s = np.zeros(n_groups, dtype=np.float64)
    cur_t = np.zeros(n_groups, dtype=np.float64)
    started = np.zeros(n_groups, dtype=np.bool_)
    removed = np.zeros(n_groups, dtype=np.float64)
    died = np.zeros(n_groups, dtype=np.float64)
    for k in range(m + n_groups):
        if k < m:
            p = time_order[k]
            g = group[p]
            if started[g] and cur_t[g] == t_r[p]:
                removed[g] += 1.0
                died[g] += e_r[p]
                continue
        else:
            g = k - m  # flush the last distinct time of every group
            p = -1
        if started[g]:
            if cur_t[g] <= time:
                # log of small integers from a table: a log per distinct time was most of the cost
                r = np.int64(at_risk[g])
                log_s[g] += log_int[r - np.int64(died[g])] - log_int[r]
            at_risk[g] -= removed[g]
        if p >= 0:
            started[g] = True
            cur_t[g] = t_r[p]
            removed[g] = 1.0
            died[g] = e_r[p]
        else:
            started[g] = False
    ece = 0.0
    for g in range(n_groups):
        if sizes[g] >= min_group:
            mean_pred = sum_pred[g] / sizes[g]
            ece += (sizes[g] / n_kept) * abs(mean_pred - np.exp(log_s[g]))
    return ece


class _Columns:
    """A grid column of the predictions as a contiguous copy (gathering from it stays in cache,
    unlike a strided read of the n x G matrix) and its dense ranks, computed on first use."""

    def __init__(self, surv: np.ndarray):
        self.surv = surv
        self.cache: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}

    def __getitem__(self, g: int) -> tuple[np.ndarray, np.ndarray, int]:
        if g not in self.cache:
            column = np.ascontiguousarray(self.surv[:, g])
            values, inverse = np.unique(column, return_inverse=True)
            self.cache[g] = (column, inverse.ravel().astype(np.int64), len(values))
        return self.cache[g]


@cached_njit(nogil=True)
def _sorted_events(t_r, e_r, time_order):
    """The resample's event times in increasing order (from its time order)."""
    n_ev = 0
    for p in range(t_r.shape[0]):
        if e_r[p] != 0:
            n_ev += 1
    out = np.empty(n_ev, dtype=np.float64)
    j = 0
    for p in time_order:
        if e_r[p] != 0:
            out[j] = t_r[p]
            j += 1
    return out


def _quantiles_of_sorted(values: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """``np.quantile(values, qs)`` (default linear method) for an already sorted array, in O(1)
    per level instead of a partition: numpy's index rule and its two-sided ``_lerp`` formula."""
    n = values.size
    virtual = (n - 1) * qs
    below = np.floor(virtual)
    above = below + 1
    last = virtual >= n - 1
    lo = np.where(last, n - 1, below).astype(np.int64)
    hi = np.where(last, n - 1, np.minimum(above, n - 1)).astype(np.int64)
    gamma = virtual - below
    a, b = values[lo], values[hi]
    diff = b - a
    return np.where(gamma >= 0.5, b - diff * (1 - gamma), a + diff * gamma)


def _replicate(t, e, s, grid, t_rank, n_t_rank, columns, rows, qs, n_groups, min_group, log_int):
    t_r = t[rows]
    e_r = e[rows]
    time_order = _counting_order(t_rank[rows], n_t_rank)
    event_times = _sorted_events(t_r, e_r, time_order)
    if event_times.size == 0:
        return float("nan")
    e_f = e_r.astype(np.float64)
    total = 0.0
    for target in _quantiles_of_sorted(event_times, qs):
        g = nearest_grid_index(grid, float(target))
        column, rank, n_rank = columns[g]
        value = _time_ece(
            column[rows],
            rank[rows],
            n_rank,
            t_r,
            e_f,
            time_order,
            float(grid[g]),
            n_groups,
            min_group,
            log_int,
        )
        if np.isnan(value):
            return float("nan")
        total += value
    return total / len(qs)


def survival_ece_bootstrap(
    durations,
    events,
    surv,
    time_grid,
    quantiles=(0.25, 0.5, 0.75),
    n_groups: int = 10,
    min_group: int = 5,
    n_boot: int = 1000,
    seed=0,
    indices=None,
) -> np.ndarray:
    """Bootstrap replicates of the Kaplan-Meier survival ECE, each equal to ``survival_ece`` on its rows.

    For replicate b with rows r = ``indices[b]`` (in that order):

    .. math:: \\mathrm{ECE}_b = \\frac{1}{|Q|} \\sum_{q \\in Q} \\sum_{g\\ \\mathrm{kept}}
              \\frac{n_g}{\\sum_{\\mathrm{kept}} n} \\bigl|\\bar S_g(t_q) - \\mathrm{KM}_g(t_q)\\bigr|

    computed on the resampled rows as :func:`~automd_analysis.metrics.survival_ece` does, in O(n)
    per replicate (module docstring: the row order matters for tied predictions, and is kept).
    Equal to ``survival_ece`` on the resampled rows to 1e-12 (summation order of the group means).

    Parameters
    ----------
    durations, events, surv, time_grid, quantiles, n_groups, min_group
        As :func:`~automd_analysis.metrics.survival_ece`.
    n_boot : int, default 1000
        Number of replicates (ignored when ``indices`` is given).
    seed : int or sequence of int, default 0
        Seed of :func:`~automd_analysis.metrics.bootstrap_indices`.
    indices : array-like of int, shape (n_boot, m), optional
        Explicit row positions in [0, n).

    Returns
    -------
    numpy.ndarray of float64, shape (n_boot,)
        ``nan`` where the replicate's ECE is undefined (no event, or every group of some time below
        ``min_group``); one :class:`UndefinedMetricWarning` reports how many.

    Raises
    ------
    ValueError
        As :func:`survival_ece`; bad ``n_boot`` or ``indices``.

    See Also
    --------
    survival_ece : the metric on one sample.
    bootstrap_ci : interval from replicates.

    References
    ----------
    Kaplan, E. L., Meier, P. (1958). Nonparametric estimation from incomplete observations. Journal
    of the American Statistical Association 53(282), 457-481.

    Examples
    --------
    >>> import numpy as np
    >>> from automd_analysis.metrics import survival_ece
    >>> rng = np.random.default_rng(0)
    >>> t = rng.exponential(10.0, 60)
    >>> e = (rng.random(60) < 0.7).astype(int)
    >>> grid = np.linspace(0.0, 30.0, 16)
    >>> surv = np.exp(-np.outer(rng.uniform(0.05, 0.15, 60), grid))
    >>> idx = rng.integers(0, 60, (2, 60))
    >>> reps = survival_ece_bootstrap(t, e, surv, grid, indices=idx)
    >>> bool(abs(reps[1] - survival_ece(t[idx[1]], e[idx[1]], surv[idx[1]], grid).ece) < 1e-12)
    True
    """
    t, ev, s, grid, qs = check_survival_ece_inputs(
        durations, events, surv, time_grid, quantiles, n_groups, min_group
    )
    n = len(t)
    if indices is None:
        n_boot = check_n_boot(n_boot)
        blocks = index_blocks(n, n_boot, seed)
    else:
        idx = as_indices(indices, n)
        n_boot = idx.shape[0]
        blocks = explicit_blocks(idx)
    uniq_t, t_rank = np.unique(t, return_inverse=True)
    t_rank = t_rank.ravel().astype(np.int64)
    columns = _Columns(s)
    size = n if indices is None else idx.shape[1]
    with np.errstate(divide="ignore"):  # log 0 = -inf: a group whose last patients all die
        log_int = np.log(np.arange(size + 1, dtype=np.float64))
    out = np.empty(n_boot, dtype=np.float64)
    for b0, block in blocks:
        for k, rows in enumerate(block):
            out[b0 + k] = _replicate(
                t,
                ev,
                s,
                grid,
                t_rank,
                len(uniq_t),
                columns,
                rows.astype(np.int64),
                qs,
                int(n_groups),
                int(min_group),
                log_int,
            )
    n_nan = int(np.isnan(out).sum())
    if n_nan:
        warnings.warn(
            f"survival ECE is undefined in {n_nan} of {n_boot} bootstrap replicates; they are nan.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return out
