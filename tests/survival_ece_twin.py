"""The survival ECE kernels as of commit dd125a2 (one weighted Kaplan-Meier pass per weight vector
and quantile), kept as the naive twin of the batched kernels of
``automd_analysis/metrics/survival_calibration.py``: the tests compare both on random inputs with
ties, duplicated patients and zero weights (``bench/bench_survival_ece.py`` times the same
commit's ``survival_ece`` through ``bench/_baseline.py``)."""

from __future__ import annotations

import numpy as np

from automd_analysis.metrics._numba import cached_njit
from automd_analysis.metrics._validation import check_survival_ece_inputs
from automd_analysis.metrics._weights import as_weights, ones_or
from automd_analysis.metrics.survival_calibration import (
    _ece_values,
    _pairwise_sum,
    _quantile_column,
)


@cached_njit(nogil=True)
def _targets(w, t_order, t, e, qs, grid):
    """Event-time quantile t_q of every vector and the nearest grid index (-1: no event), from the
    events of positive weight compacted in time order (the quantile rule is shared)."""
    m = w.shape[0]
    n_q = qs.shape[0]
    target = np.full((m, n_q), np.nan)
    column = np.full((m, n_q), -1, dtype=np.int64)
    n_ev = 0
    for i in range(t_order.shape[0]):
        if e[t_order[i]]:
            n_ev += 1
    ev_t = np.empty(n_ev, dtype=np.float64)
    ev_w = np.empty(n_ev, dtype=np.float64)
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
            target[v, a], column[v, a] = _quantile_column(ev_t, ev_w[:j], total, qs[a], grid)
    return target, column


@cached_njit(nogil=True)
def _groups(w, column, slot, order, rank, pred, t_order, t, e, grid, n_groups, log_int):
    """Group sizes, mean predictions and log Kaplan-Meier survival of every (vector, quantile)."""
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
                    g = k - n
                    u = -1
                if started[g]:
                    if cur_t[g] <= time:
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


def naive_parts(
    durations,
    events,
    surv,
    time_grid,
    quantiles=(0.25, 0.5, 0.75),
    n_groups=10,
    min_group=5,
    weights=None,
):
    """(target, column, size, mean, km, per_time, n_kept, values) of every weight vector, the
    kernel outputs of dd125a2's survival ECE."""
    t, e, s, grid, qs = check_survival_ece_inputs(
        durations, events, surv, time_grid, quantiles, n_groups, min_group
    )
    w = np.ascontiguousarray(ones_or(as_weights(weights, len(t)), len(t)), dtype=np.float64)
    t_order = np.argsort(t, kind="stable")
    target, column = _targets(w, t_order, t, e, qs, grid)
    used = np.unique(column[column >= 0])
    slot = np.full(s.shape[1], -1, dtype=np.int64)
    slot[used] = np.arange(len(used))
    order = np.empty((len(used), len(t)), dtype=np.int64)
    rank = np.empty_like(order)
    pred = np.empty((len(used), len(t)))
    for k, g in enumerate(used):
        order[k] = np.argsort(s[:, g], kind="stable")
        rank[k] = np.unique(s[:, g], return_inverse=True)[1].ravel()
        pred[k] = s[order[k], g]
    with np.errstate(divide="ignore"):
        log_int = np.log(np.arange(int(w.sum(axis=1).max()) + 1, dtype=np.float64))
    size, mean, log_s = _groups(
        w,
        column,
        slot,
        order,
        rank,
        pred,
        t_order,
        t,
        e.astype(np.float64),
        grid,
        int(n_groups),
        log_int,
    )
    km = np.exp(log_s)
    per_time, n_kept, values = _ece_values(size, mean, km, float(min_group))
    return target, column, size, mean, km, per_time, n_kept, values
