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
3. One pass over the patients in time order (sorted once) builds every group's Kaplan-Meier
   product at the evaluation time with weighted numbers at risk and events, as
   ``exp(Σ log(r - d) - log r)`` over the group's distinct times up to it - the lifelines formula of
   :func:`~automd_analysis.metrics.kaplan_meier`, with the logs of the integers from one table of
   ``np.log`` and the exponential taken by ``np.exp``, so without weights the values are those of
   ``kaplan_meier`` bit for bit.
4. ECE_q = Σ over kept groups (n_g / Σ kept n) |mean prediction - KM|, summed in group order;
   the group means are numpy's pairwise sums (:func:`_pairwise_sum`) of w_i S_i divided by n_g, so
   without weights they equal ``np.mean``. The result is the mean over the quantiles.

Cost per weight vector O(n) per quantile after the sorts; with weights the result equals the ECE
of the repeated rows up to the order of floating-point sums (< 1e-12).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from automd_analysis.metrics._numba import cached_njit
from automd_analysis.metrics._validation import check_survival_ece_inputs, finish
from automd_analysis.metrics._weights import as_weights, is_matrix, n_vectors, ones_or

__all__ = ["SurvivalECEResult", "survival_ece"]


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
def _pairwise_sum(a, lo, n):
    """numpy's pairwise summation of a[lo:lo + n] (``np.sum`` of a contiguous float64 array, bit
    for bit): blocks of at most 128 values summed with 8 accumulators, larger ranges split in two."""
    if n < 8:
        res = 0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    if n <= 128:
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
    half = n // 2
    half -= half % 8
    return _pairwise_sum(a, lo, half) + _pairwise_sum(a, lo + half, n - half)


@cached_njit(nogil=True)
def _targets(w, t_order, t, e, qs, grid):
    """Event-time quantile t_q of every vector (step 1) and the nearest grid index; index -1 and
    t_q = nan for a vector without an event."""
    m = w.shape[0]
    n_q = qs.shape[0]
    target = np.full((m, n_q), np.nan)
    column = np.full((m, n_q), -1, dtype=np.int64)
    n_ev = 0
    for i in range(t_order.shape[0]):
        if e[t_order[i]]:
            n_ev += 1
    ev_t = np.empty(n_ev, dtype=np.float64)  # event times in time order
    ev_w = np.empty(n_ev, dtype=np.float64)  # cumulative event weight up to each
    for v in range(m):
        j = 0
        cum = 0.0
        for i in range(t_order.shape[0]):
            u = t_order[i]
            if e[u] and w[v, u] > 0:
                cum += w[v, u]
                ev_t[j] = t[u]
                ev_w[j] = cum
                j += 1
        if j == 0:
            continue
        total = cum
        for a in range(n_q):
            # numpy's linear quantile of the repeated event times: index (M - 1) q, two-sided lerp
            virtual = (total - 1.0) * qs[a]
            below = np.floor(virtual)
            last = virtual >= total - 1.0
            lo = total - 1.0 if last else below
            hi = total - 1.0 if last else min(below + 1.0, total - 1.0)
            gamma = virtual - below
            # the repeated position r holds the first event whose cumulative weight exceeds r
            x_lo = ev_t[np.searchsorted(ev_w[:j], lo, side="right")]
            x_hi = ev_t[np.searchsorted(ev_w[:j], hi, side="right")]
            diff = x_hi - x_lo
            q = x_hi - diff * (1.0 - gamma) if gamma >= 0.5 else x_lo + diff * gamma
            target[v, a] = q
            best = 0  # nearest grid point, the earlier one on an exact tie
            for g in range(1, grid.shape[0]):
                if abs(grid[g] - q) < abs(grid[best] - q):
                    best = g
            column[v, a] = best
    return target, column


@cached_njit(nogil=True)
def _groups(w, column, slot, order, rank, pred, t_order, t, e, grid, n_groups, log_int):
    """Steps 2-3 for every (vector, quantile): group sizes (summed weights), mean predictions and
    the log Kaplan-Meier survival of every group at the evaluation time.

    ``order``, ``rank`` and ``pred`` hold, per used grid column (row ``slot[column]``), the stable
    order of the patients by predicted survival, their dense ranks and the sorted predictions.
    """
    m, n_q = column.shape
    n = t_order.shape[0]
    size = np.zeros((m, n_q, n_groups))
    mean = np.full((m, n_q, n_groups), np.nan)
    log_s = np.zeros((m, n_q, n_groups))
    group = np.empty(n, dtype=np.int64)
    wp = np.empty(n, dtype=np.float64)
    at_risk = np.empty(n_groups)
    removed = np.empty(n_groups)
    died = np.empty(n_groups)
    cur_t = np.empty(n_groups)
    started = np.empty(n_groups, dtype=np.bool_)
    for v in range(m):
        total = 0.0
        for u in range(n):
            total += w[v, u]
        base = np.floor(total / n_groups)
        extra = total - base * n_groups
        for a in range(n_q):
            if column[v, a] < 0:
                continue
            c = slot[column[v, a]]
            time = grid[column[v, a]]
            # step 2: cut where array_split cuts the copies; past a cut only ties of the last
            # counted patient (and patients of weight 0) still join the group
            j = 0
            pos = 0.0
            nominal = 0.0
            last_rank = -1
            for g in range(n_groups):
                nominal += base + 1.0 if g < extra else base
                start = j
                while j < n:
                    u = order[c, j]
                    wu = w[v, u]
                    if pos >= nominal and wu > 0 and rank[c, u] != last_rank:
                        break
                    group[u] = g
                    wp[j] = wu * pred[c, j]
                    pos += wu
                    size[v, a, g] += wu
                    if wu > 0:
                        last_rank = rank[c, u]
                    j += 1
                if size[v, a, g] > 0:
                    mean[v, a, g] = _pairwise_sum(wp, start, j - start) / size[v, a, g]
            # step 3: Kaplan-Meier of every group, one pass in time order
            for g in range(n_groups):
                at_risk[g] = size[v, a, g]
                started[g] = False
            for k in range(n + n_groups):
                if k < n:
                    u = t_order[k]
                    if w[v, u] == 0:
                        continue
                    g = group[u]
                    if started[g] and cur_t[g] == t[u]:
                        removed[g] += w[v, u]
                        died[g] += w[v, u] * e[u]
                        continue
                else:
                    g = k - n  # flush the last distinct time of every group
                    u = -1
                if started[g]:
                    if cur_t[g] <= time:
                        # log of integers from a table of np.log: the values of kaplan_meier
                        r = np.int64(at_risk[g])
                        log_s[v, a, g] += log_int[r - np.int64(died[g])] - log_int[r]
                    at_risk[g] -= removed[g]
                if u >= 0:
                    started[g] = True
                    cur_t[g] = t[u]
                    removed[g] = w[v, u]
                    died[g] = w[v, u] * e[u]
                else:
                    started[g] = False
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
    """Per grid column, computed on first use: the stable order of the patients by predicted
    survival, their dense ranks and the sorted predictions."""

    def __init__(self, surv: np.ndarray):
        self.surv = surv
        self.cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def stacked(self, columns: np.ndarray):
        """(slot of each grid column, order, rank, sorted predictions) for ``columns``."""
        used = np.unique(columns[columns >= 0])
        slot = np.full(self.surv.shape[1], -1, dtype=np.int64)
        slot[used] = np.arange(len(used))
        parts = [self._column(int(g)) for g in used]
        n = self.surv.shape[0]
        stack = [
            np.array([p[k] for p in parts], dtype=dtype).reshape(len(used), n)
            for k, dtype in enumerate((np.int64, np.int64, np.float64))
        ]
        return slot, *stack

    def _column(self, g: int):
        if g not in self.cache:
            pred = self.surv[:, g]
            order = np.argsort(pred, kind="stable")
            _, rank = np.unique(pred, return_inverse=True)
            self.cache[g] = (order, rank.ravel().astype(np.int64), pred[order])
        return self.cache[g]


#: Weight vectors per kernel call (a float64 block of 64 x 49,291 weights is 25 MB).
_CHUNK = 64


def _chunks(t, e, s, grid, qs, n_groups, min_group, w):
    """Yield (first vector, kernel outputs) for blocks of :data:`_CHUNK` weight vectors."""
    n = len(t)
    weights = ones_or(w, n)
    t_order = np.argsort(t, kind="stable")
    e_f = e.astype(np.float64)
    columns = _Columns(s)
    top = int(weights.sum(axis=1, dtype=np.float64).max())
    with np.errstate(divide="ignore"):  # log 0 = -inf: a group whose last patients all die
        log_int = np.log(np.arange(top + 1, dtype=np.float64))
    for v0 in range(0, weights.shape[0], _CHUNK):
        wf = np.ascontiguousarray(weights[v0 : v0 + _CHUNK], dtype=np.float64)
        target, column = _targets(wf, t_order, t, e, qs, grid)
        slot, order, rank, pred = columns.stacked(column)
        size, mean, log_s = _groups(
            wf, column, slot, order, rank, pred, t_order, t, e_f, grid, n_groups, log_int
        )
        km = np.exp(log_s)  # numpy's exp, as kaplan_meier
        per_time, n_kept, values = _ece_values(size, mean, km, float(min_group))
        yield v0, (target, column, size, mean, km, per_time, n_kept, values)


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
    durations : array-like of shape (n,)
        Test follow-up times (finite, >= 0).
    events : array-like of shape (n,)
        1 = event, 0 = censored (bool allowed).
    surv : array-like of shape (n, G)
        Predicted survival curves on ``time_grid``, finite, in [0, 1].
    time_grid : array-like of shape (G,)
        Strictly increasing grid times.
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
    chunks = _chunks(t, e, s, grid, qs, int(n_groups), int(min_group), w)
    if not is_matrix(w):
        total = len(t) if w is None else int(w.sum())
        return _result(qs, grid, next(chunks)[1], min_group, total)
    out = np.empty(n_vectors(w), dtype=np.float64)
    for v0, parts in chunks:
        out[v0 : v0 + len(parts[-1])] = parts[-1]
    why = "no event, or at some time every group is smaller than min_group"
    return finish(out, True, "survival ECE", why)
