"""Calibration of survival curves: Kaplan-Meier ECE at three event-time quantiles (Auto-MD-bench App. F).

One weighted kernel computes the ECE for one weight vector or for many (one per bootstrap
replicate); with integer weights w_i (patient i repeated w_i times) every step below is the step
on the repeated rows:

1. t_q = the quantile of the event times of the repeated cohort, numpy's linear rule (index
   (M - 1) q over the M = Σ w_i d_i event copies and numpy's two-sided interpolation formula), read
   off the event times in time order; the evaluation column is the grid point nearest t_q.
2. Patients in order of predicted survival at that column (a stable sort, done once per column for
   every vector) are cut into ``n_groups`` groups where ``np.array_split`` would cut the repeated
   rows (the first N mod G groups one larger, N = Σ w_i); a cut inside a block of equal
   predictions moves to the end of the block, so ties - and the copies of one patient - are never
   split.
3. One pass over the distinct times up to the evaluation time (sorted once) builds every group's
   Kaplan-Meier product there with weighted numbers at risk and events, as
   ``exp(Σ log(r - d) - log r)`` over the group's distinct times - the lifelines formula of
   :func:`~automd_analysis.metrics.kaplan_meier`, with the logs of the integers from one table of
   ``np.log`` and the exponential taken by ``np.exp``, so without weights the values are those of
   ``kaplan_meier`` bit for bit.
4. ECE_q = Σ over kept groups (n_g / Σ kept n) |mean prediction - KM|, summed in group order;
   the group means are numpy's pairwise sums (:func:`_pairwise_sum`) of w_i S_i divided by n_g, so
   without weights they equal ``np.mean``. The result is the mean over the quantiles.

With weights the result equals the ECE of the repeated rows up to the order of floating-point
sums (< 1e-12).

Cost. Everything no weight vector changes is computed once per call: the time order, the event
times, and for each grid column that some vector evaluates, the stable order of the patients by
predicted survival with their dense ranks and the position of each patient in it. A weight
matrix (e.g. 1,000 bootstrap replicates) then goes through one compiled pass: per vector, its
weights are put in time order once (a gather from its row of ``n`` bytes for bootstrap counts),
and per quantile step 2 is one sequential pass in prediction order (running weight, weighted
predictions; each cut is a binary search in the running weight) and step 3 one sequential pass
over the times up to t_q, reading the group of each patient from an array of one byte per
patient. O(n) per vector and quantile; the only scattered reads are in the vector's own weights
and groups (n bytes each, in cache), every other array is read in order. Memory: 20 bytes per
patient and evaluated column, plus O(n) work arrays. The sums are those of the per-vector
algorithm above, in the same order, so a replicate is bit for bit the value of the weight vector
alone (the tests check this against the previous one-vector-at-a-time kernels).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from automd_analysis.metrics._docstrings import SURVIVAL_INPUTS, fill_doc
from automd_analysis.metrics._numba import cached_njit
from automd_analysis.metrics._replicated import Replicated, observed_first, recorded
from automd_analysis.metrics._validation import check_survival_ece_inputs, finish
from automd_analysis.metrics._weights import as_weights, is_matrix, ones_or

__all__ = ["SurvivalECEResult", "survival_ece", "survival_ece_replicated"]


@dataclass(frozen=True)
class SurvivalECEResult:
    """Survival ECE with the per-time and per-group pieces behind it (for reliability plots).

    Attributes
    ----------
    ece : float
        Mean of ``per_time["ece"]`` (``nan`` if undefined).
    per_time : dict of numpy.ndarray
        One entry per quantile: ``quantile``, ``target_time`` (t_q), ``grid_index``, ``time`` (the
        grid time used), ``n_kept`` (patients in kept groups) and ``ece``.
    groups : dict of numpy.ndarray
        One entry per (quantile, group): ``quantile``, ``time``, ``group`` (1 = lowest predicted
        survival), ``n``, ``mean_pred``, ``km``, ``abs_diff``, ``kept`` and ``weight`` (0 for skipped
        groups). ``km`` and ``abs_diff`` are ``nan`` for skipped groups.
    """

    ece: float
    per_time: dict[str, np.ndarray] = field(repr=False)
    groups: dict[str, np.ndarray] = field(repr=False)

    def __float__(self) -> float:
        return float(self.ece)


def nearest_grid_index(grid: np.ndarray, t: float) -> int:
    """Index of the grid time nearest to t; the earlier one when two are exactly equally near.

    .. math:: g(t) = \\min \\operatorname{arg\\,min}_k |g_k - t|

    Parameters
    ----------
    grid : numpy.ndarray of shape (G,)
        Sorted grid times (not validated here).
    t : float
        Target time (an event-time quantile in :func:`survival_ece`).

    Returns
    -------
    int
        Index in [0, G - 1].

    See Also
    --------
    survival_ece : evaluates calibration at the grid point this picks.
    automd_analysis.metrics.grid_index_post : the step rule (last grid time <= t) of C^td.

    References
    ----------
    .. [1] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. F (the grid point nearest each
       event-time quantile).

    Examples
    --------
    >>> import numpy as np
    >>> nearest_grid_index(np.array([0.0, 2.0, 4.0]), 3.0)  # 2 and 4 are equally near: the earlier
    1
    >>> nearest_grid_index(np.array([0.0, 2.0, 4.0]), 3.1)
    2
    """
    return int(np.argmin(np.abs(grid - t)))  # argmin returns the first (earlier) minimiser


@cached_njit(nogil=True)
def _block_sum(a, lo, n):
    """numpy's sum of a[lo:lo + n] for n <= 128: 8 accumulators (plain loop below 8 values)."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    i = 8
    while i < n - n % 8:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@cached_njit(nogil=True)
def _pairwise_sum(a, lo, n):
    """numpy's pairwise summation of a[lo:lo + n] (``np.sum`` of a contiguous float64 array, bit
    for bit): blocks of at most 128 values (:func:`_block_sum`), larger ranges split in two at
    ``n // 2`` rounded down to a multiple of 8, left and right sums added.

    The recursion runs on an explicit stack: numba cannot link a recursive kernel loaded from its
    on-disk cache into a caller compiled later in the same process.
    """
    if n <= 128:
        return _block_sum(a, lo, n)
    start = np.empty(64, dtype=np.int64)  # depth <= log2(n / 128) + 1
    size = np.empty(64, dtype=np.int64)
    left = np.empty(64, dtype=np.float64)
    on_left = np.empty(64, dtype=np.bool_)
    top = 0
    start[0] = lo
    size[0] = n
    descending = True  # evaluate frame ``top``; else hand ``value`` back to it
    value = 0.0
    while True:
        if descending:
            if size[top] <= 128:
                value = _block_sum(a, start[top], size[top])
                top -= 1
                descending = False
            else:  # left half first
                half = size[top] // 2
                on_left[top] = True
                start[top + 1] = start[top]
                size[top + 1] = half - half % 8
                top += 1
            continue
        if top < 0:
            return value
        half = size[top] // 2
        half -= half % 8
        if on_left[top]:  # the left half is done: keep it, then the right half
            left[top] = value
            on_left[top] = False
            start[top + 1] = start[top] + half
            size[top + 1] = size[top] - half
            top += 1
            descending = True
        else:  # both halves done
            value = left[top] + value
            top -= 1


@cached_njit(nogil=True)
def _quantile_column(ev_t, cum, total, q, grid):
    """(t_q, nearest grid index): numpy's linear quantile of the M = ``total`` repeated event times
    (index (M - 1) q, its two-sided interpolation formula), where repeated event k (0-based) is
    ``ev_t`` at the first position with ``cum > k``; the earlier grid point on an exact tie."""
    virtual = (total - 1.0) * q
    below = np.floor(virtual)
    last = virtual >= total - 1.0
    lo = total - 1.0 if last else below
    hi = total - 1.0 if last else min(below + 1.0, total - 1.0)
    gamma = virtual - below
    x_lo = ev_t[np.searchsorted(cum, lo, side="right")]
    x_hi = ev_t[np.searchsorted(cum, hi, side="right")]
    diff = x_hi - x_lo
    t_q = x_hi - diff * (1.0 - gamma) if gamma >= 0.5 else x_lo + diff * gamma
    best = 0
    for g in range(1, grid.shape[0]):
        if abs(grid[g] - t_q) < abs(grid[best] - t_q):
            best = g
    return t_q, best


@cached_njit(nogil=True)
def _targets(w, ev_order, ev_t, qs, grid):
    """Step 1 of every vector: t_q and the nearest grid index (-1 and nan without an event).

    ``ev_order`` lists the patients with an event in time order, ``ev_t`` their times. With
    ``cum[i]`` the vector's event weight up to the i-th of them, repeated event k (0-based) is the
    first event with ``cum > k``: a binary search in ``cum``, which skips the events of weight 0.
    """
    m = w.shape[0]
    n_ev = ev_order.shape[0]
    n_q = qs.shape[0]
    target = np.full((m, n_q), np.nan)
    column = np.full((m, n_q), -1, dtype=np.int64)
    cum = np.empty(n_ev, dtype=np.float64)
    for v in range(m):
        total = 0.0
        for i in range(n_ev):
            total += w[v, ev_order[i]]
            cum[i] = total
        if total == 0.0:
            continue
        for a in range(n_q):
            target[v, a], column[v, a] = _quantile_column(ev_t, cum, total, qs[a], grid)
    return target, column


@cached_njit(nogil=True)
def _cut(wt, order, rank, pred, n_groups, total, cw, wp, group, size, mean):
    """Step 2 of one vector in one column: the group of every position in prediction order,
    ``size`` and ``mean`` of every group.

    ``wt`` holds the vector's weights in time order; ``order`` the time positions of the patients
    in stable order of predicted survival, ``rank`` and ``pred`` their dense ranks and predictions
    in that order. With ``cw[j]`` the weight of the first j positions, group g ends at the first
    j with ``cw[j]`` >= its nominal end (where ``np.array_split`` cuts the repeated rows; a binary
    search), moved past the patients of weight 0 and the rest of the tie block of the last
    patient counted.
    """
    n = order.shape[0]
    acc = 0
    cw[0] = 0
    for j in range(n):  # cumulative weights and weighted predictions in prediction order
        x = wt[order[j]]
        acc += x
        cw[j + 1] = acc
        wp[j] = x * pred[j]
    base = total // n_groups
    extra = total - base * n_groups
    j = 0
    nominal = 0
    for g in range(n_groups):
        nominal += base + 1 if g < extra else base
        start = j
        j = max(j, np.searchsorted(cw, nominal, side="left"))
        last = j - 1  # the last patient of positive weight so far: its tie block stays
        while last >= 0 and cw[last + 1] == cw[last]:
            last -= 1
        last_rank = rank[last] if last >= 0 else -1
        while j < n and (cw[j + 1] == cw[j] or rank[j] == last_rank):
            j += 1
        group[start:j] = g
        size[g] = cw[j] - cw[start]
        if size[g] > 0:
            mean[g] = _pairwise_sum(wp, start, j - start) / size[g]


@cached_njit(nogil=True)
def _km_logs(wt, group, pred_pos, block, e, n_blocks, size, log_int, removed, died, log_s):
    """Step 3 of one vector in one column: log S_KM of every group at the grid time into
    ``log_s``, in one pass over the first ``n_blocks`` distinct times (time positions
    ``block[b]:block[b + 1]``); ``group[pred_pos[i]]`` is the group of time position i.

    Each distinct time adds ``log(r - d) - log r`` to every group (r at risk, d died; ``r``
    floored at 1): exactly 0 for a group without a death there, the same sum as skipping it, so
    neither patients of weight 0 nor groups without a patient at that time need a branch.
    ``removed`` and ``died`` are zeroed work arrays of one entry per group.
    """
    n_groups = size.shape[0]
    at_risk = np.empty(n_groups, dtype=np.int64)
    for g in range(n_groups):
        at_risk[g] = np.int64(size[g])
        log_s[g] = 0.0
    for b in range(n_blocks):
        i0 = block[b]
        i1 = block[b + 1]
        if i1 - i0 == 1:  # one patient at this time: only its group changes
            g = group[pred_pos[i0]]
            wu = np.int64(wt[i0])
            r = max(at_risk[g], 1)
            log_s[g] += log_int[r - wu * e[i0]] - log_int[r]
            at_risk[g] -= wu
            continue
        for i in range(i0, i1):
            g = group[pred_pos[i]]
            wu = np.int64(wt[i])
            removed[g] += wu
            died[g] += wu * e[i]
        for g in range(n_groups):
            r = max(at_risk[g], 1)
            log_s[g] += log_int[r - died[g]] - log_int[r]
            at_risk[g] -= removed[g]
            removed[g] = 0
            died[g] = 0


@cached_njit(nogil=True)
def _groups(
    w,
    column,
    slot,
    order,
    rank,
    pred,
    pred_pos,
    n_blocks,
    t_order,
    block,
    e,
    log_int,
    group,
    n_groups,
):
    """Steps 2-3 for every (vector, quantile): group sizes (summed weights), mean predictions and
    the log Kaplan-Meier survival of every group at the evaluation time.

    ``t_order`` is the stable time order, ``block`` the time positions where the distinct times
    start (and n), ``e`` the event indicators in time order. Per used grid column (row
    ``slot[column]``): ``order`` holds the time positions of the patients in stable order of
    predicted survival, ``rank`` and ``pred`` their dense ranks and predictions in that order,
    ``pred_pos`` the position in that order of each time position and ``n_blocks`` the number of
    distinct times up to the column's grid time. ``group`` is a work array of one entry per patient.
    """
    m, n_q = column.shape
    n = t_order.shape[0]
    size = np.zeros((m, n_q, n_groups))
    mean = np.full((m, n_q, n_groups), np.nan)
    log_s = np.zeros((m, n_q, n_groups))
    wt = np.empty(n, dtype=w.dtype)
    cw = np.empty(n + 1, dtype=np.int32)  # totals < 2**26
    wp = np.empty(n, dtype=np.float64)
    removed = np.zeros(n_groups, dtype=np.int64)
    died = np.zeros(n_groups, dtype=np.int64)
    for v in range(m):
        total = 0
        for i in range(n):  # the vector's weights in time order
            wt[i] = w[v, t_order[i]]
            total += wt[i]
        for a in range(n_q):
            if column[v, a] < 0:
                continue
            c = slot[column[v, a]]
            out = size[v, a], mean[v, a]
            _cut(wt, order[c], rank[c], pred[c], n_groups, total, cw, wp, group, *out)
            _km_logs(
                wt,
                group,
                pred_pos[c],
                block,
                e,
                n_blocks[c],
                size[v, a],
                log_int,
                removed,
                died,
                log_s[v, a],
            )
    return size, mean, log_s


@cached_njit(nogil=True)
def _ece_values(size, mean, km, min_group):
    """Step 4: ECE_q of every (vector, quantile) and their mean per vector (nan if undefined)."""
    m, n_q, n_groups = size.shape
    per_time = np.full((m, n_q), np.nan)
    n_kept = np.zeros((m, n_q))
    out = np.full(m, np.nan)
    for v in range(m):
        total = 0.0
        ok = True
        for a in range(n_q):
            kept = 0.0
            for g in range(n_groups):
                if size[v, a, g] >= min_group:
                    kept += size[v, a, g]
            n_kept[v, a] = kept
            if kept == 0.0:
                ok = False
                continue
            acc = 0.0
            for g in range(n_groups):
                if size[v, a, g] >= min_group:
                    acc += (size[v, a, g] / kept) * abs(mean[v, a, g] - km[v, a, g])
            per_time[v, a] = acc
            total += acc
        if ok:
            out[v] = total / n_q
    return per_time, n_kept, out


class _Columns:
    """What no weight vector changes: the time order, the distinct times, the events, and per grid
    column the patients in stable order of predicted survival (:meth:`stacked`)."""

    def __init__(self, t: np.ndarray, e: np.ndarray, surv: np.ndarray, grid: np.ndarray):
        self.surv, self.grid = surv, grid
        self.t_order = np.argsort(t, kind="stable")
        self.t_sorted = t[self.t_order]
        self.e_sorted = e[self.t_order].astype(np.int64)
        self.ev_order = self.t_order[
            self.e_sorted == 1
        ]  # the patients with an event, in time order
        new_time = np.r_[True, self.t_sorted[1:] != self.t_sorted[:-1]]
        self.block = np.r_[np.flatnonzero(new_time), len(t)]  # time positions of the distinct times
        self.position = np.empty_like(self.t_order)  # time position of each patient
        self.position[self.t_order] = np.arange(len(t))

    def stacked(self, columns: np.ndarray):
        """The per-column arguments of :func:`_groups` for the grid columns in ``columns``:
        slot (row of each grid column), order, rank, pred, pred_pos (one row per used column) and
        n_blocks (distinct times up to each column's grid time)."""
        used = np.unique(columns[columns >= 0])
        slot = np.full(self.surv.shape[1], -1, dtype=np.int64)
        slot[used] = np.arange(len(used))
        n = self.surv.shape[0]
        order = np.empty((len(used), n), dtype=np.int32)
        rank = np.empty((len(used), n), dtype=np.int32)
        pred = np.empty((len(used), n), dtype=np.float64)
        pred_pos = np.empty((len(used), n), dtype=np.int32)
        for k, g in enumerate(used):
            by_pred = np.argsort(self.surv[:, g], kind="stable")
            pred[k] = self.surv[by_pred, g]
            rank[k] = np.cumsum(np.r_[False, pred[k, 1:] != pred[k, :-1]])  # dense ranks
            order[k] = self.position[by_pred]
            pred_pos[k, order[k]] = np.arange(n)
        times = self.t_sorted[self.block[:-1]]
        n_blocks = np.searchsorted(times, self.grid[used], side="right").astype(np.int64)
        return slot, order, rank, pred, pred_pos, n_blocks


def _parts(t, e, s, grid, qs, n_groups, min_group, w):
    """Kernel outputs (target, column, size, mean, km, per_time, n_kept, values) of every weight
    vector (first axis)."""
    weights = ones_or(w, len(t))
    columns = _Columns(t, e, s, grid)
    target, column = _targets(weights, columns.ev_order, t[columns.ev_order], qs, grid)
    top = int(weights.sum(axis=1, dtype=np.float64).max())
    with np.errstate(divide="ignore"):  # log 0 = -inf: a group whose last patients all die
        log_int = np.log(np.arange(top + 1, dtype=np.float64))
    size, mean, log_s = _groups(
        weights,
        column,
        *columns.stacked(column),
        columns.t_order,
        columns.block,
        columns.e_sorted,
        log_int,
        np.empty(len(t), dtype=np.int8 if n_groups < 128 else np.int64),  # group of each patient
        n_groups,
    )
    km = np.exp(log_s)  # numpy's exp, as kaplan_meier
    per_time, n_kept, values = _ece_values(size, mean, km, float(min_group))
    return target, column, size, mean, km, per_time, n_kept, values


def _result(qs, grid, parts, min_group, n_total) -> SurvivalECEResult:
    """The detailed result of one weight vector (row 0 of the kernel outputs)."""
    target, column, size, mean, km, per_time, n_kept, values = (p[0] for p in parts)
    if column[0] < 0:  # no event
        per = {k: np.full(qs.size, np.nan) for k in ("target_time", "time", "ece")}
        per |= {
            "quantile": qs,
            "grid_index": np.full(qs.size, -1),
            "n_kept": np.zeros(qs.size, int),
        }
        empty = {k: np.array([]) for k in _GROUP_FIELDS}
        ece = finish(np.array([np.nan]), False, "survival ECE", "the test set has no event")
        return SurvivalECEResult(ece=ece, per_time=per, groups=empty)
    n_q, n_groups = size.shape
    kept = size >= min_group
    with np.errstate(invalid="ignore", divide="ignore"):
        weight = np.where(kept, size / n_kept[:, None], 0.0)
    km_kept = np.where(kept, km, np.nan)
    per_time = {
        "quantile": qs,
        "target_time": target,
        "grid_index": column,
        "time": grid[column],
        "n_kept": n_kept.astype(int),
        "ece": per_time,
    }
    groups = {
        "quantile": np.repeat(qs, n_groups),
        "time": np.repeat(grid[column], n_groups),
        "group": np.tile(np.arange(1, n_groups + 1), n_q),
        "n": size.astype(int).ravel(),
        "mean_pred": mean.ravel(),
        "km": km_kept.ravel(),
        "abs_diff": np.abs(mean - km_kept).ravel(),
        "kept": kept.ravel(),
        "weight": weight.ravel(),
    }
    why = f"at some time every group has fewer than min_group={min_group} patients (n={n_total})"
    return SurvivalECEResult(
        ece=finish(np.array([values]), False, "survival ECE", why),
        per_time=per_time,
        groups=groups,
    )


_GROUP_FIELDS = ("quantile", "time", "group", "n", "mean_pred", "km", "abs_diff", "kept", "weight")


@fill_doc(survival_inputs=SURVIVAL_INPUTS)
def survival_ece(
    durations,
    events,
    surv,
    time_grid,
    quantiles=(0.25, 0.5, 0.75),
    n_groups: int = 10,
    min_group: int = 5,
    *,
    weights=None,
):
    """Expected calibration error of survival curves against Kaplan-Meier (Auto-MD-bench App. F).

    For each quantile q:

    1. t_q = ``np.quantile(event_times, q)`` (linear interpolation) over the test durations of patients
       with an event; the evaluation time is the grid point nearest t_q (the earlier one on an exact
       tie), grid index g.
    2. Patients are ordered by predicted survival S_i(grid[g]) and split into ``n_groups`` groups
       where ``np.array_split`` cuts (sizes differ by at most one; group 1 has the lowest predicted
       survival) - except that patients with *equal* predicted survival are never split: a cut
       inside a block of ties moves to the end of the block, so the block stays in the group it
       starts in. Without ties this is exactly ``np.array_split``; with ties it makes the result
       independent of the order of the rows (docs/decisions.md).
    3. Groups with fewer than ``min_group`` patients are skipped. For each kept group b,
       e_b = |mean_i S_i(grid[g]) - KM_b(grid[g])|, where KM_b is the Kaplan-Meier curve of the group's
       own (T, E) read as a right-continuous step (1 before its first time, last value carried forward).
    4. ECE_q = Σ_b w_b e_b with w_b = n_b / Σ_kept n_b.

    The result is the mean of ECE_q over the quantiles (a grid point chosen by two quantiles counts
    twice). With ``weights`` patient i counts as w_i patients in every step (quantiles, group sizes,
    means and the Kaplan-Meier estimates), which is the ECE of the repeated rows up to the order of
    floating-point sums (< 1e-12); the algorithm is in the module docstring.

    Parameters
    ----------
    {survival_inputs}
    quantiles : sequence of float, default (0.25, 0.5, 0.75)
        Levels in [0, 1] of the test event-time distribution.
    n_groups : int, default 10
    min_group : int, default 5
    weights : array-like of int, shape (n,) or (m, n), optional
        Multiplicity of each patient, or m such vectors (e.g.
        :func:`~automd_analysis.metrics.bootstrap_weights`) for m values in one call.

    Returns
    -------
    SurvivalECEResult, or numpy.ndarray of shape (m,) for a weight matrix
        ``ece`` plus ``per_time`` and ``groups`` details (for a weight matrix: the ECE of each
        vector, ``nan`` where undefined). ``ece`` is ``nan`` with
        :class:`UndefinedMetricWarning` when the test set has no event, or when at some time every group
        is smaller than ``min_group`` (fewer than ``n_groups * min_group`` patients, roughly).

    Raises
    ------
    ValueError
        Shape mismatch; NaN/inf/negative durations; events other than 0/1; a non-increasing grid;
        survival values outside [0, 1]; quantiles outside [0, 1]; ``n_groups`` or ``min_group`` not a
        positive integer; bad weights.

    See Also
    --------
    automd_analysis.metrics.bootstrap_weights : weights of bootstrap resamples.
    automd_analysis.metrics.ece : the binary-task ECE.
    automd_analysis.metrics.kaplan_meier : the observed survival of each group.
    automd_analysis.metrics.survival_calibration_at : Kaplan-Meier groups at one horizon, with
        more measures (docs/calibration.md).

    References
    ----------
    .. [1] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. F.
    .. [2] Nagpal C, Yadlowsky S, Rostamzadeh N, Heller K (2021). Deep Cox mixtures for survival
       regression. Machine Learning for Healthcare, PMLR 149:674-708 (ECE against Kaplan-Meier in
       groups of predicted risk).
    .. [3] Kaplan EL, Meier P (1958). Nonparametric estimation from incomplete observations.
       Journal of the American Statistical Association 53:457-481.

    Examples
    --------
    Six patients, one quantile (the median event time 2.5 reads grid point 2), two groups of three.
    The low group (predicted 0.2, 0.4, 0.6; mean 0.4) has Kaplan-Meier 1/3 at t = 2, the high group
    (0.7, 0.8, 0.9; mean 0.8) has 1: ECE = 1/2 |0.4 - 1/3| + 1/2 |0.8 - 1| = 2/15.

    >>> import numpy as np
    >>> s2 = np.array([0.2, 0.4, 0.6, 0.7, 0.8, 0.9])
    >>> surv = np.column_stack([np.ones(6), s2, s2 / 2])  # curves on the grid 0, 2, 4
    >>> res = survival_ece([1, 2, 3, 4, 5, 6], [1, 1, 1, 0, 1, 0], surv, [0, 2, 4],
    ...                    quantiles=(0.5,), n_groups=2, min_group=3)
    >>> round(res.ece, 6), res.per_time["time"].tolist()
    (0.133333, [2.0])
    >>> [round(float(v), 6) for v in res.groups["km"]]
    [0.333333, 1.0]
    """
    t, e, s, grid, qs = check_survival_ece_inputs(
        durations, events, surv, time_grid, quantiles, n_groups, min_group
    )
    w = as_weights(weights, len(t), unit="patient")
    parts = _parts(t, e, s, grid, qs, int(n_groups), int(min_group), w)
    if not is_matrix(w):
        total = len(t) if w is None else int(w.sum())
        return _result(qs, grid, parts, min_group, total)
    return _matrix_values(parts[-1])


def _matrix_values(values: np.ndarray) -> np.ndarray:
    why = "no event, or at some time every group is smaller than min_group"
    return finish(values, True, "survival ECE", why)


def survival_ece_replicated(
    durations,
    events,
    surv,
    time_grid,
    weights=None,
    quantiles=(0.25, 0.5, 0.75),
    n_groups: int = 10,
    min_group: int = 5,
) -> Replicated:
    """:func:`survival_ece` of the observed data, with its details, and of each resample, in one
    pass of the kernel.

    The kernel runs once over the weight matrix whose first row is all ones and whose other rows
    are ``weights`` (:func:`~automd_analysis.metrics._replicated.observed_first`); each row is
    computed on its own, so the observed result equals ``survival_ece(durations, events, surv,
    time_grid)`` and the replicates equal ``survival_ece(..., weights=weights)``.

    Parameters
    ----------
    durations, events, surv, time_grid, quantiles, n_groups, min_group
        As :func:`survival_ece`.
    weights : array-like of int, shape (B, n), optional
        The resamples' patient multiplicities; ``None``: the observed result only.

    Returns
    -------
    Replicated
        ``observed``: the :class:`SurvivalECEResult` of the observed data; ``replicates``: the ECE
        of each resample (``nan`` where undefined); the undefined-value messages of each part.

    See Also
    --------
    survival_ece : the measure (Auto-MD-bench App. F).

    References
    ----------
    .. [1] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. F.

    Examples
    --------
    >>> import numpy as np
    >>> s2 = np.array([0.2, 0.4, 0.6, 0.7, 0.8, 0.9])
    >>> surv = np.column_stack([np.ones(6), s2, s2 / 2])
    >>> res = survival_ece_replicated([1, 2, 3, 4, 5, 6], [1, 1, 1, 0, 1, 0], surv, [0, 2, 4],
    ...                               [[1, 1, 1, 1, 1, 1]], quantiles=(0.5,), n_groups=2,
    ...                               min_group=3)
    >>> round(res.observed.ece, 6), [round(float(v), 6) for v in res.replicates]
    (0.133333, [0.133333])
    """
    t, e, s, grid, qs = check_survival_ece_inputs(
        durations, events, surv, time_grid, quantiles, n_groups, min_group
    )
    if weights is None:
        observed, caught = recorded(survival_ece, durations, events, surv, time_grid, quantiles,
                                    n_groups, min_group)  # fmt: skip
        return Replicated(observed, None, tuple(str(w) for w in caught))
    w = as_weights(observed_first(weights), len(t), unit="patient")
    parts = _parts(t, e, s, grid, qs, int(n_groups), int(min_group), w)
    observed, caught = recorded(_result, qs, grid, parts, min_group, len(t))
    replicates, caught_replicates = recorded(_matrix_values, parts[-1][1:])
    return Replicated(
        observed,
        replicates,
        tuple(str(c) for c in caught),
        tuple(str(c) for c in caught_replicates),
    )
