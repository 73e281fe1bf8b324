"""Time-dependent concordance C^td (Antolini et al. 2005) with pycox's exact semantics, weighted, in
O(G n log n).

Definitions (pycox ``EvalSurv(...).concordance_td``, ``steps='post'``)
--------------------------------------------------------------------
Patient i has duration T_i, event indicator d_i and a survival curve S_i on the grid. Let
k_i = clip(last grid index with grid <= T_i, 0, G - 1) and, for a pair (i, j), compare
s_i = S_i(grid[k_i]) with s_j = S_j(grid[k_i]): both curves are read at *i's* duration. The index is
Σ conc(i, j) / Σ comp(i, j) over ordered pairs i != j.

``'antolini'``: comp = [T_i < T_j, d_i] or [T_i = T_j, d_i, not d_j]; conc = comp and s_i < s_j.

``'adj_antolini'``: comp = [T_i < T_j, d_i] or [T_i = T_j, d_i or d_j]; for T_i < T_j,
conc = [s_i < s_j] + ½[s_i = s_j]; for T_i = T_j: both events -> 1 if s_i = s_j else ½; only i an event
-> [s_i < s_j] + ½[s_i = s_j]; only j an event -> [s_i > s_j] + ½[s_i = s_j]. Tied-time pairs are thus
seen from both sides (an event/censored tie scores the same value twice), ordinary pairs once.

Weights
-------
With integer multiplicities w_i (patient i repeated w_i times; a bootstrap replicate counts the
draws of each patient) every term is a sum over ordered pairs of *copies*. Two copies of one
patient are a pair with tied time, status and prediction, which the tie rules above already score
(both events: comparable and concordant, 1 point, in the adjusted index; otherwise not
comparable), so

.. math:: C^{td}_w = \\frac{\\sum_{i, j} w_i (w_j - [i = j])\\, \\mathrm{conc}(i, j)}
                          {\\sum_{i, j} w_i (w_j - [i = j])\\, \\mathrm{comp}(i, j)}

with conc(i, i) and comp(i, i) the values of two distinct copies. This is exactly C^td of the
repeated rows. Every count below is an integer number of half-points (conc ∈ {0, ½, 1}) times
products of integer weights, held exactly in float64 (< 2**53), so the result is the correctly
rounded ratio - the value pycox gives on the repeated rows, bit for bit.

Algorithm
---------
pycox loops over all n² ordered pairs. Here the sum is split by *where* the pair's comparison column
lives. Sort patients by duration. Since k_i is non-decreasing in T_i, the patients whose duration
maps to grid column c form one contiguous *block* B_c of the sorted order. Every comparable pair has
an event anchor i and a partner j with T_j >= T_i, compared in column c = k_i. Either

1. j lies in a later block (k_j > c; then T_j > T_i for sure): the "suffix" pairs. For each column c
   the anchors' values S_i(grid[c]) are sorted once, and a prefix-sum array Q_c holds the total
   weight of the first k anchors. Every later patient j binary-searches its own value S_j(grid[c])
   in that sorted list: Q_c at the first anchor >= S_j counts the anchors strictly below it
   (concordant, 2 half-points each), and in the adjusted index Q_c at the end of the run of equal
   anchors minus that counts the tied anchors (1 half-point each); j's half-points are multiplied
   by w_j. With all weights 1 (the point value) Q_c is the position itself and no table is built. Each patient touches only the columns before its own block, reading its curve row
   contiguously: O(Σ_j k_j · log a) = O(G n log n) with a = anchors per column. On large inputs
   (>= ``_PARALLEL_MIN_WORK`` patient-column visits) rows are processed in interleaved chunks on
   the numba threads (``prange``); small inputs run serially, because a parallel region costs
   more than it saves there.
2. j lies in the same block. This is a one-dimensional problem in column c. Walk the block's tie
   groups from the latest time to the earliest, keeping a Fenwick (binary indexed) tree of the
   summed weights at the dense ranks of the values already visited. For each event of a tie group,
   "greater" and "equal" weights among the later patients come from two prefix queries. Tied-time
   partners in the same group are handled explicitly: the group's censored members are inserted
   first and the events queried again (the difference is the event/censored tie weight, doubled in
   the adjusted index), and event/event ties add E(E - 1) + Σ_runs R(R - 1) half-points (E the
   summed event weight of the group, R that of a run of equal values - which is where the copies of
   one patient meet). Then the group is inserted. O(b log b) per block, O(n log n) overall.
3. The denominator is a closed form over the tie groups of the sorted durations, with the group
   sizes replaced by summed weights.

Many weight vectors at once
---------------------------
A weight matrix (one row per vector, e.g. 1,000 bootstrap replicates) is processed in blocks of
64 vectors ("lanes"): the weights form a (patients x lanes) array and every inner loop runs over the
lanes, which the compiler vectorises, so the sorted structure, ranks and tie groups are read once
per block instead of once per vector. With more than one block, the binary searches of step 1 are
done once and their slots stored (O(G n) memory); every block then only sums prefix sums over the
stored slots: O(G n) additions per vector, against O(n²) pair visits for a fresh pycox call.
Memory: the input matrix plus O(n) work arrays per lane (and the stored slots for many blocks).
"""

from __future__ import annotations

import numpy as np

from automd_analysis.metrics._numba import cached_njit, prange
from automd_analysis.metrics._validation import (
    check_survival_inputs,
    finish,
)
from automd_analysis.metrics._weights import (
    LANES,
    as_weights,
    is_matrix,
    lane_blocks,
    n_vectors,
    split_sums,
)
from automd_analysis.metrics.survival import grid_index_post

__all__ = ["CONCORDANCE_METHODS", "concordance_td"]

CONCORDANCE_METHODS = ("adj_antolini", "antolini")

_N_CHUNKS = 256  # interleaved row chunks of the parallel step-1 kernel (load balance)
# Threads only pay off on large inputs: a parallel region costs from tens of microseconds (idle
# machine) to milliseconds (busy machine), so below this many (patient, column) visits the kernels
# run serially. Scoring parallelises over submissions with processes anyway.
_PARALLEL_MIN_WORK = 1_000_000


class _Structure:
    """Everything about one (durations, events, surv, grid) that no weight vector changes."""

    def __init__(self, t, d, s, grid, adjusted):
        n = len(t)
        order = np.argsort(t, kind="stable").astype(np.int64)
        t_sorted = t[order]
        d_sorted = d[order].astype(np.bool_)
        col_sorted = grid_index_post(grid, t_sorted).astype(np.int64)
        n_grid = len(grid)
        self.surv, self.order, self.col_sorted = s, order, col_sorted
        self.adjusted = adjusted
        self.d_sorted = d_sorted

        # tie groups of the sorted durations (denominator; step 2 walks them per block)
        starts = np.flatnonzero(np.r_[True, t_sorted[1:] != t_sorted[:-1]])
        self.group_off = np.r_[starts, n].astype(np.int64)

        # step 1: anchors (events) sorted by value within each column, CSR over columns, with one
        # extra prefix slot per column: slot anchor_off[c] + c + k = weight of the first k anchors
        ev_pos = np.flatnonzero(d_sorted)
        ev_col = col_sorted[ev_pos]
        ev_val = s[order[ev_pos], ev_col]
        by_col_val = np.lexsort((ev_val, ev_col))
        anchor_col = ev_col[by_col_val]
        self.anchor_vals = np.ascontiguousarray(ev_val[by_col_val])
        self.anchor_pos = ev_pos[by_col_val].astype(np.int64)
        anchor_off = np.searchsorted(anchor_col, np.arange(n_grid + 1), side="left")
        self.anchor_off = anchor_off.astype(np.int64)
        self.n_slots = len(self.anchor_vals) + n_grid
        run_start = np.flatnonzero(
            np.r_[
                True,
                (anchor_col[1:] != anchor_col[:-1])
                | (self.anchor_vals[1:] != self.anchor_vals[:-1]),
            ]
        )
        run_len = np.diff(np.r_[run_start, len(self.anchor_vals)])
        self.anchor_run_end = np.repeat(run_start + run_len, run_len).astype(np.int64)
        self.cols_with = np.flatnonzero(np.diff(anchor_off) > 0).astype(np.int64)
        self.visits = int(col_sorted.sum())  # bound on the (patient, anchored column) visits
        self._slots = None

        # step 2: blocks (runs of equal column in duration order) that contain an event
        block_cols = np.unique(ev_col).astype(np.int64)
        self.block_start = np.searchsorted(col_sorted, block_cols, side="left").astype(np.int64)
        self.block_end = np.searchsorted(col_sorted, block_cols, side="right").astype(np.int64)
        self.block_rank, self.block_nrank = _block_ranks(
            s, order, block_cols, self.block_start, self.block_end
        )

    def slots(self):
        """The stored step-1 searches (computed on first use: only many lane blocks need them)."""
        if self._slots is None:
            self._slots = _case1_slots(
                self.surv,
                self.order,
                self.col_sorted,
                self.anchor_vals,
                self.anchor_off,
                self.cols_with,
                self.adjusted,
            )
        return self._slots


@cached_njit(inline="always")
def _lower_bound(values, lo, hi, v):
    """First index in [lo, hi) of sorted ``values`` whose value is >= v (hi if none)."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if values[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@cached_njit(nogil=True)
def _anchor_prefix(wi, anchor_pos, anchor_off, q):
    """Fill the step-1 prefix sums: q[anchor_off[c] + c + k] = weight of column c's first k
    anchors, every lane (``q`` starts as zeros)."""
    lanes = wi.shape[1]
    for c in range(anchor_off.shape[0] - 1):
        a0 = anchor_off[c]
        base = a0 + c
        for a in range(a0, anchor_off[c + 1]):
            src = anchor_pos[a]
            slot = base + (a - a0)
            for k in range(lanes):
                q[slot + 1, k] = q[slot, k] + wi[src, k]


@cached_njit(nogil=True)
def _case1_rows(
    w,
    q,
    surv,
    order,
    col_sorted,
    anchor_vals,
    anchor_off,
    run_end,
    adjusted,
    unit,
    first,
    step,
):
    """Step-1 half-points of every lane for the sorted rows first, first + step, ... (searching).

    ``unit``: one lane of all ones (the point value), where the prefix weight at a slot is just
    the number of anchors before it (``lo - a0``), read without a memory access.
    """
    lanes = w.shape[1]
    n = order.shape[0]
    num = np.zeros(lanes, dtype=np.float64)
    acc = np.zeros(lanes, dtype=np.int64)
    total = 0  # unit: the half-points of all rows, an exact integer
    for p in range(first, n, step):
        row = order[p]
        kp = col_sorted[p]
        one = 0  # the single-lane sum in a register, else ``acc``
        for k in range(lanes):
            acc[k] = 0
        for c in range(kp):  # the columns of the blocks before p's own
            a0 = anchor_off[c]
            a1 = anchor_off[c + 1]
            if a0 == a1:
                continue
            v = surv[row, c]
            lo = _lower_bound(anchor_vals, a0, a1, v)
            slot = lo + c
            tied = adjusted and lo < a1 and anchor_vals[lo] == v
            # 2 half-points per anchor strictly below (prefix weight at ``slot``), 1 per tied
            # anchor (prefix weight at the end of the run of equal values minus that)
            if unit:
                one += 2 * (lo - a0)
                if tied:
                    one += run_end[lo] - lo
            elif lanes == 1:
                one += 2 * q[slot, 0]
                if tied:
                    one += q[run_end[lo] + c, 0] - q[slot, 0]
            else:
                end = run_end[lo] + c if tied else slot
                for k in range(lanes):
                    acc[k] += q[slot, k] + q[end, k]
        if unit:
            total += one
        elif lanes == 1:
            num[0] += w[p, 0] * np.float64(one)
        else:
            for k in range(lanes):
                num[k] += w[p, k] * np.float64(acc[k])
    if unit:
        num[0] = np.float64(total)
    return num


@cached_njit(parallel=True, nogil=True)
def _case1_parallel(w, q, surv, order, *rest):
    """:func:`_case1_rows` over all rows, in interleaved chunks spread over the numba threads
    (``rest``: its arguments after ``order`` up to ``unit``)."""
    n_chunks = min(_N_CHUNKS, order.shape[0])
    lanes = w.shape[1]
    partial = np.zeros((n_chunks, lanes), dtype=np.float64)
    for chunk in prange(n_chunks):
        partial[chunk] = _case1_rows(w, q, surv, order, *rest, chunk, n_chunks)
    num = np.zeros(lanes, dtype=np.float64)
    for chunk in range(n_chunks):  # exact integers: the order of these sums does not matter
        for k in range(lanes):
            num[k] += partial[chunk, k]
    return num


@cached_njit(nogil=True)
def _case1_slots(surv, order, col_sorted, anchor_vals, anchor_off, cols_with, adjusted):
    """Per sorted patient p and anchored column c < k_p: the prefix slot of the anchors strictly
    below S_p(grid[c]) (CSR ``off``/``lo``) and, for the adjusted index when some anchors tie
    S_p(grid[c]), the (below, at-or-below) slot pair (CSR ``tie_off``/``tie_lo``/``tie_le``)."""
    n = order.shape[0]
    n_with = cols_with.shape[0]
    off = np.zeros(n + 1, dtype=np.int64)
    for p in range(n):
        k = np.searchsorted(cols_with, col_sorted[p])  # anchored columns before p's block
        off[p + 1] = off[p] + k
    lo_slots = np.empty(off[n], dtype=np.int32)
    tie_counts = np.zeros(n + 1, dtype=np.int64)
    tie_lo = np.empty(off[n], dtype=np.int32)
    tie_le = np.empty(off[n], dtype=np.int32)
    n_tie = 0
    for p in range(n):
        row = order[p]
        e = off[p]
        for q in range(min(n_with, off[p + 1] - off[p])):
            c = cols_with[q]
            a0 = anchor_off[c]
            a1 = anchor_off[c + 1]
            v = surv[row, c]
            lo = _lower_bound(anchor_vals, a0, a1, v)
            base = a0 + c  # slot of "no anchor" in column c
            lo_slots[e] = base + (lo - a0)
            e += 1
            if adjusted and lo < a1 and anchor_vals[lo] == v:
                le = lo
                hi = a1
                while le < hi:  # first anchor > v
                    mid = (le + hi) >> 1
                    if anchor_vals[mid] <= v:
                        le = mid + 1
                    else:
                        hi = mid
                tie_lo[n_tie] = base + (lo - a0)
                tie_le[n_tie] = base + (le - a0)
                n_tie += 1
        tie_counts[p + 1] = n_tie
    return off, lo_slots, tie_counts, tie_lo[:n_tie].copy(), tie_le[:n_tie].copy()


@cached_njit(nogil=True)
def _block_ranks(surv, order, block_cols, block_start, block_end):
    """Dense ranks (1..u) of each block's values in its column, and u per block."""
    n_blocks = block_cols.shape[0]
    total = 0
    for k in range(n_blocks):
        total += block_end[k] - block_start[k]
    ranks = np.empty(total, dtype=np.int64)
    nrank = np.empty(n_blocks, dtype=np.int64)
    e = 0
    for k in range(n_blocks):
        s0 = block_start[k]
        b = block_end[k] - s0
        values = np.empty(b, dtype=np.float64)
        for p in range(b):
            values[p] = surv[order[s0 + p], block_cols[k]]
        srt = np.argsort(values, kind="mergesort")
        r = 0
        for q in range(b):
            if q == 0 or values[srt[q]] != values[srt[q - 1]]:
                r += 1
            ranks[e + srt[q]] = r
        nrank[k] = r
        e += b
    return ranks, nrank


@cached_njit(nogil=True)
def _case1_stored(w, q, slot_off, slot_lo, tie_off, tie_lo, tie_le):
    """Step-1 half-points of every lane from the stored searches of :meth:`_Structure.slots`."""
    lanes = w.shape[1]
    n = w.shape[0]
    num = np.zeros(lanes, dtype=np.float64)
    acc = np.zeros(lanes, dtype=q.dtype)
    for p in range(n):
        e0 = slot_off[p]
        e1 = slot_off[p + 1]
        if e0 == e1:
            continue
        for k in range(lanes):
            acc[k] = 0
        for e in range(e0, e1):  # 2 half-points per anchor strictly below
            lo = slot_lo[e]
            for k in range(lanes):
                acc[k] += q[lo, k]
        for k in range(lanes):
            acc[k] += acc[k]
        for e in range(tie_off[p], tie_off[p + 1]):  # 1 per tied anchor (adjusted)
            lo = tie_lo[e]
            le = tie_le[e]
            for k in range(lanes):
                acc[k] += q[le, k] - q[lo, k]
        for k in range(lanes):
            num[k] += w[p, k] * np.float64(acc[k])
    return num


@cached_njit(inline="always")
def _fen_add(tree, i, w, p):
    """Add the lanes of ``w[p]`` at position i of the lane Fenwick tree."""
    lanes = w.shape[1]
    while i < tree.shape[0]:
        for k in range(lanes):
            tree[i, k] += w[p, k]
        i += i & (-i)


@cached_njit(inline="always")
def _fen_prefix(tree, i, out):
    """Lane sums of positions 1..i of the Fenwick tree, into ``out``."""
    lanes = out.shape[0]
    for k in range(lanes):
        out[k] = 0.0
    while i > 0:
        for k in range(lanes):
            out[k] += tree[i, k]
        i -= i & (-i)


@cached_njit(nogil=True)
def _event_ties(num, w, members, ranks, n_ev, ev_w, run_w):
    """Add the adjusted half-points of event/event tied times of one tie group to ``num``:
    E(E - 1) over the group's events plus R(R - 1) over each run of equal predicted values
    (weights are the replicate multiplicities; one event alone gives 2 w (w - 1))."""
    lanes = w.shape[1]
    if n_ev == 1:
        p = members[0]
        for k in range(lanes):
            num[k] += 2.0 * w[p, k] * (w[p, k] - 1.0)
        return
    srt = np.argsort(ranks[:n_ev], kind="mergesort")
    for k in range(lanes):
        ev_w[k] = 0.0
    for j in range(n_ev):
        for k in range(lanes):
            ev_w[k] += w[members[j], k]
    for k in range(lanes):
        num[k] += ev_w[k] * (ev_w[k] - 1.0)
    run_start = 0
    for j in range(1, n_ev + 1):
        if j == n_ev or ranks[srt[j]] != ranks[srt[run_start]]:
            for k in range(lanes):
                run_w[k] = 0.0
            for jj in range(run_start, j):
                for k in range(lanes):
                    run_w[k] += w[members[srt[jj]], k]
            for k in range(lanes):
                num[k] += run_w[k] * (run_w[k] - 1.0)
            run_start = j


@cached_njit(nogil=True)
def _case2(w, d_sorted, group_off, block_start, block_end, block_rank, block_nrank, adjusted):
    """Case-2 half-points of every lane: weighted Fenwick sweep of each block (step 2)."""
    lanes = w.shape[1]
    num = np.zeros(lanes, dtype=np.float64)
    max_b = 1
    max_u = 1
    for blk in range(block_start.shape[0]):
        max_b = max(max_b, block_end[blk] - block_start[blk])
        max_u = max(max_u, block_nrank[blk])
    tree = np.zeros((max_u + 1, lanes), dtype=np.float64)
    ev_le = np.empty((max_b, lanes), dtype=np.float64)
    ev_lt = np.empty((max_b, lanes), dtype=np.float64)
    ranks = np.empty(max_b, dtype=np.int64)
    members = np.empty(max_b, dtype=np.int64)
    le_v = np.empty(lanes, dtype=np.float64)
    lt_v = np.empty(lanes, dtype=np.float64)
    inserted = np.empty(lanes, dtype=np.float64)
    cens_w = np.empty(lanes, dtype=np.float64)
    ev_w = np.empty(lanes, dtype=np.float64)
    run_w = np.empty(lanes, dtype=np.float64)
    e_rank = 0
    for blk in range(block_start.shape[0]):
        s0 = block_start[blk]
        s1 = block_end[blk]
        u = block_nrank[blk]
        for r in range(u + 1):
            for k in range(lanes):
                tree[r, k] = 0.0
        for k in range(lanes):
            inserted[k] = 0.0
        g = np.searchsorted(group_off, s1) - 1  # the block's last tie group ends at s1
        while g >= 0 and group_off[g] >= s0:
            g0 = group_off[g]
            g1 = group_off[g + 1]
            # (a) the group's events against the strictly later patients of the block
            n_ev = 0
            for p in range(g0, g1):
                if d_sorted[p]:
                    r = block_rank[e_rank + p - s0]
                    _fen_prefix(tree, r, le_v)
                    _fen_prefix(tree, r - 1, lt_v)
                    if adjusted:
                        for k in range(lanes):
                            h = 2.0 * inserted[k] - le_v[k] - lt_v[k]
                            num[k] += w[p, k] * h
                    else:
                        for k in range(lanes):
                            num[k] += w[p, k] * 2.0 * (inserted[k] - le_v[k])
                    for k in range(lanes):
                        ev_le[n_ev, k] = le_v[k]
                        ev_lt[n_ev, k] = lt_v[k]
                    ranks[n_ev] = r
                    members[n_ev] = p
                    n_ev += 1
            # (b) censored members first, then the events again: event/censored tied times
            n_cens = (g1 - g0) - n_ev
            if n_cens > 0:
                for k in range(lanes):
                    cens_w[k] = 0.0
                for p in range(g0, g1):
                    if not d_sorted[p]:
                        _fen_add(tree, block_rank[e_rank + p - s0], w, p)
                        for k in range(lanes):
                            cens_w[k] += w[p, k]
                for j in range(n_ev):
                    p = members[j]
                    _fen_prefix(tree, ranks[j], le_v)
                    _fen_prefix(tree, ranks[j] - 1, lt_v)
                    for k in range(lanes):
                        le_c = le_v[k] - ev_le[j, k]
                        lt_c = lt_v[k] - ev_lt[j, k]
                        gt = cens_w[k] - le_c
                        if adjusted:
                            num[k] += w[p, k] * 2.0 * (2.0 * gt + (le_c - lt_c))
                        else:
                            num[k] += w[p, k] * 2.0 * gt
            # (c) event/event tied times (adjusted): E(E - 1) + sum over equal-value runs R(R - 1)
            if adjusted and n_ev > 0:
                _event_ties(num, w, members, ranks, n_ev, ev_w, run_w)
            for j in range(n_ev):
                _fen_add(tree, ranks[j], w, members[j])
            for p in range(g0, g1):
                for k in range(lanes):
                    inserted[k] += w[p, k]
            g -= 1
        e_rank += s1 - s0
    return num


@cached_njit(nogil=True)
def _denominator(w, d_sorted, group_off, adjusted):
    """Comparable pairs of every lane: the closed form over tie groups with summed weights."""
    lanes = w.shape[1]
    den = np.zeros(lanes, dtype=np.float64)
    later = np.zeros(lanes, dtype=np.float64)
    ev = np.empty(lanes, dtype=np.float64)
    cens = np.empty(lanes, dtype=np.float64)
    for g in range(group_off.shape[0] - 2, -1, -1):
        # integer weights: ev + cens is the group's exact total
        split_sums(w, d_sorted, group_off[g], group_off[g + 1], ev, cens)
        if adjusted:
            for k in range(lanes):
                size = ev[k] + cens[k]
                den[k] += ev[k] * later[k] + size * (size - 1.0) - cens[k] * (cens[k] - 1.0)
        else:
            for k in range(lanes):
                den[k] += ev[k] * later[k] + ev[k] * cens[k]
        for k in range(lanes):
            later[k] += ev[k] + cens[k]
    return den


def _lane_values(st: _Structure, lanes: np.ndarray, stored: bool) -> np.ndarray:
    """C^td of each lane (column) of the sorted-order weights ``lanes``; NaN when undefined."""
    # a patient's step-1 sum is at most 2 x (total weight) x (anchored columns): int32 prefix sums
    # when that fits (a 64-lane int32 row is 256 bytes, half the traffic of int64)
    small = 2 * float(lanes.sum(axis=0).max()) * len(st.cols_with) < 2**31
    int_type = np.int32 if small else np.int64
    unit = not stored and lanes.shape[1] == 1 and bool((lanes == 1).all())
    q = np.zeros((1 if unit else st.n_slots, lanes.shape[1]), dtype=int_type)
    if not unit:  # all ones: the prefix weights are positions, no table needed
        _anchor_prefix(lanes.astype(int_type), st.anchor_pos, st.anchor_off, q)
    if stored:
        num = _case1_stored(lanes, q, *st.slots())
    else:
        args = (
            lanes,
            q,
            st.surv,
            st.order,
            st.col_sorted,
            st.anchor_vals,
            st.anchor_off,
            st.anchor_run_end,
            st.adjusted,
            unit,
        )
        if st.visits >= _PARALLEL_MIN_WORK:  # threads only when worth it
            num = _case1_parallel(*args)
        else:
            num = _case1_rows(*args, 0, 1)
    num += _case2(
        lanes,
        st.d_sorted,
        st.group_off,
        st.block_start,
        st.block_end,
        st.block_rank,
        st.block_nrank,
        st.adjusted,
    )
    den = _denominator(lanes, st.d_sorted, st.group_off, st.adjusted)
    # num / 2 and den are exact in float64 (< 2**53), so this single division is the correctly
    # rounded value of the exact fraction, as is pycox's float sum / float sum
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (num / 2.0) / np.where(den > 0, den, 1.0), np.nan)


def concordance_td(
    durations, events, surv, time_grid, method: str = "adj_antolini", *, weights=None
):
    """Time-dependent concordance index C^td of Antolini et al. (2005), exactly as pycox computes it.

    Equal to ``pycox.evaluation.EvalSurv(pd.DataFrame(surv.T, index=time_grid), durations, events,
    steps='post').concordance_td(method)``, including its tie rules, in O(G n log n) time instead of
    pycox's O(n²) (see the module docstring for the algorithm):

    .. math:: C^{td} = \\frac{\\sum_{i \\ne j} \\mathrm{conc}(i, j)}
              {\\sum_{i \\ne j} \\mathrm{comp}(i, j)}

    where conc(i, j) compares S_i and S_j at t_{k_i}, the last grid time <= T_i (index clipped to the
    grid, so durations before the grid read the first column and those after it the last). With
    ``weights``, patient i counts as w_i copies (the sums run over pairs of copies), which is C^td of
    the repeated rows, bit for bit.

    - ``'antolini'``: comparable if T_i < T_j and d_i = 1, or T_i = T_j, d_i = 1 and d_j = 0;
      concordant if S_i < S_j strictly (tied predictions score 0, tied event times are never compared).
      Used for subgroups (Auto-MD-bench App. F).
    - ``'adj_antolini'`` (primary score, Auto-MD-bench Sec. 3.3, m0 = 0.5): tied predictions score ½;
      pairs with tied times and at least one event are comparable and counted in both orders: two tied
      events score 1 if their predictions are equal and ½ otherwise, an event tied with a censored
      patient scores [S_event < S_censored] + ½[equal] twice.

    Parameters
    ----------
    durations : array-like of shape (n,)
        Event or censoring times (finite, >= 0).
    events : array-like of shape (n,)
        1 = event, 0 = censored (bool allowed).
    surv : array-like of shape (n, G)
        Predicted survival probabilities; row i is patient i's curve on ``time_grid``. Values must be
        finite and in [0, 1]; monotonicity is not required.
    time_grid : array-like of shape (G,)
        Strictly increasing grid times.
    method : {"adj_antolini", "antolini"}, default "adj_antolini"
    weights : array-like of int, shape (n,) or (m, n), optional
        Multiplicity of each patient (0 leaves it out), or m such vectors - e.g.
        :func:`~automd_analysis.metrics.bootstrap_weights` - to get m values in one call (the data
        are sorted once for all of them). Default: every patient once.

    Returns
    -------
    float, or numpy.ndarray of shape (m,) for a weight matrix
        C^td in [0, 1]; the pair counts are exact integers (of half-points), so the value is the
        correctly rounded ratio and equals pycox's bit for bit. ``nan`` with
        :class:`UndefinedMetricWarning` when there is no comparable pair (e.g. every patient censored, or
        a single patient), where pycox raises ``ZeroDivisionError``.

    Raises
    ------
    ValueError
        Unknown ``method``; shape mismatch; NaN/inf/negative durations; events other than 0/1; a
        non-increasing or duplicated grid; survival values NaN, infinite or outside [0, 1]; weights
        of the wrong shape, negative, not whole numbers, or summing to 0.

    Notes
    -----
    pycox silently scores NaN predictions as discordant and *returns* (does not raise) an error object
    for an unknown method; both are rejected here.

    See Also
    --------
    automd_analysis.metrics.bootstrap_weights : weights of bootstrap resamples.
    automd_analysis.metrics.grid_index_post : the rule that reads a curve at a duration.
    automd_analysis.metrics.survival_time_grid : the grid submissions report curves on.

    References
    ----------
    .. [1] Antolini L, Boracchi P, Biganzoli E (2005). A time-dependent discrimination index for
       survival data. Statistics in Medicine 24:3927-3944.
    .. [2] Harrell FE Jr, Califf RM, Pryor DB, Lee KL, Rosati RA (1982). Evaluating the yield of
       medical tests. JAMA 247:2543-2546 (the concordance index C^td generalises).
    .. [3] Kvamme H, Borgan O, Scheel I (2019). Time-to-event prediction with neural networks and
       Cox regression. JMLR 20(129):1-30 (pycox, whose ``concordance_td`` this reproduces).
    .. [4] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, Sec. 3.3 and App. F.

    Examples
    --------
    Five patients on the grid [0, 1, 2, 3] (vector P1 of docs/reference_values.md, whose values
    pycox gives); rows are patients, columns the grid times:

    >>> import numpy as np
    >>> surv = np.array([[1, .8, .5, .2], [1, .8, .6, .3], [1, .6, .5, .5],
    ...                  [1, .9, .7, .4], [1, .7, .4, .1]])
    >>> durations, events = [1, 1, 2, 2.5, 3], [1, 1, 0, 1, 1]
    >>> concordance_td(durations, events, surv, [0, 1, 2, 3], method="antolini")  # 2/7
    0.2857142857142857
    >>> concordance_td(durations, events, surv, [0, 1, 2, 3])  # adj_antolini: 4/9
    0.4444444444444444

    Weights are multiplicities: patient 0 twice and patient 2 left out is the same as repeating
    the rows; a weight matrix gives one value per row.

    >>> rows = [0, 0, 1, 3, 4]
    >>> w = [2, 1, 0, 1, 1]
    >>> t, e = np.array(durations), np.array(events)
    >>> bool(concordance_td(t, e, surv, [0, 1, 2, 3], weights=w)
    ...      == concordance_td(t[rows], e[rows], surv[rows], [0, 1, 2, 3]))
    True
    >>> concordance_td(t, e, surv, [0, 1, 2, 3], weights=[[1, 1, 1, 1, 1], w]).shape
    (2,)
    """
    if method not in CONCORDANCE_METHODS:
        raise ValueError(f"method must be one of {CONCORDANCE_METHODS}, got {method!r}.")
    t, d, s, grid = check_survival_inputs(durations, events, surv, time_grid)
    n = len(t)
    w = as_weights(weights, n, unit="patient")
    st = _Structure(t, d, s, grid, method == "adj_antolini")
    m = n_vectors(w)
    out = np.empty(m, dtype=np.float64)
    for k0, lanes in lane_blocks(w, n, st.order):
        out[k0 : k0 + lanes.shape[1]] = _lane_values(st, lanes, stored=m > LANES)
    why = "no comparable pair of patients"
    return finish(out, is_matrix(w), f"C^td ({method})", why)
