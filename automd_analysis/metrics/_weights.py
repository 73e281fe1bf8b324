"""Integer weights of the metric kernels: one vector, or a matrix of them (bootstrap replicates).

Every metric of the score store takes ``weights=``: non-negative integer multiplicities, one per
resampling unit (a row; for a clustered metric one per cluster, in order of first appearance).
``metric(x, weights=w)`` is the metric on the data with unit i repeated ``w[i]`` times (w = 0 drops
it), and a matrix of shape ``(m, n)`` holds m such vectors - the multiplicities of m bootstrap
resamples - for which the metric returns the m values at once. ``None`` means every weight is 1.

Kernels that sum weights work in float64, where integer sums are exact below 2**53; the checks
below keep every total far under that.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from automd_analysis.metrics._numba import cached_njit
from automd_analysis.metrics._resample import cluster_codes

__all__ = [
    "LANES",
    "MAX_TOTAL_WEIGHT",
    "as_weight_vector",
    "as_weights",
    "cluster_row_weights",
    "is_matrix",
    "key_sums",
    "lane_blocks",
    "lane_dot",
    "n_vectors",
    "ones_or",
    "row_units",
    "split_sums",
    "unit_weights",
    "weight_totals",
]

#: Weight vectors processed together by a lane kernel (the innermost loop runs over them).
LANES = 64
#: Largest total weight of one vector: pair counts (C^td) stay exact integers in float64.
MAX_TOTAL_WEIGHT = 2**26


def as_weights(weights, n: int, unit: str = "observation") -> np.ndarray | None:
    """Validated weights: ``None``, or an integer array of shape ``(n,)`` or ``(m, n)``.

    Integer (and bool) arrays are kept as they are (no copy); floats must hold whole numbers and
    become int64. Raises ValueError naming the first offending entry when the shape is wrong, an
    entry is negative, not an integer or not finite, or a vector's total is 0 (nothing left to
    score) or above :data:`MAX_TOTAL_WEIGHT`.
    """
    if weights is None:
        return None
    w = np.asarray(weights)
    if w.ndim not in (1, 2) or w.shape[-1] != n or (w.ndim == 2 and w.shape[0] < 1):
        raise ValueError(
            f"weights must have shape ({n},) - one multiplicity per {unit} - or (m, {n}) for m "
            f"weight vectors, got shape {w.shape}."
        )
    if w.dtype.kind == "b":
        w = w.view(np.uint8)
    elif w.dtype.kind == "f":
        bad = ~np.isfinite(w) | (w != np.floor(w))
        if bad.any():
            raise ValueError(
                f"weights must be whole numbers (multiplicities); {_at(bad)} is "
                f"{w[_where(bad)].item()!r}."
            )
        w = w.astype(np.int64)
    elif w.dtype.kind not in "iu":
        raise ValueError(f"weights must be non-negative integers, got dtype {w.dtype}.")
    if w.dtype.kind == "i" and w.size and w.min() < 0:
        bad = w < 0
        raise ValueError(f"weights must be non-negative; {_at(bad)} is {w[_where(bad)].item()!r}.")
    totals = np.atleast_1d(w.sum(axis=-1, dtype=np.float64))
    if (totals <= 0).any():
        k = int(np.flatnonzero(totals <= 0)[0])
        which = "weights" if w.ndim == 1 else f"weights[{k}]"
        raise ValueError(f"{which} sums to 0: every {unit} would be left out.")
    if (totals > MAX_TOTAL_WEIGHT).any():
        raise ValueError(
            f"weights sum to {int(totals.max())}, above {MAX_TOTAL_WEIGHT}: the exact integer "
            "counts of the kernels would not fit in float64."
        )
    return w


def row_units(cluster, n: int) -> tuple[np.ndarray | None, int, str]:
    """(unit of each row, number of units, unit name): the rows themselves without ``cluster``,
    else the clusters in order of first appearance."""
    if cluster is None:
        return None, n, "observation"
    codes, n_units = cluster_codes(cluster)
    if len(codes) != n:
        raise ValueError(f"cluster must have one label per row: {len(codes)} labels for {n} rows.")
    return codes, n_units, "cluster"


def unit_weights(weights, cluster, n: int) -> tuple[np.ndarray | None, int, np.ndarray | None]:
    """(unit of each row, number of units, validated weights) of ``n`` rows: :func:`row_units`
    and :func:`as_weights` of its units."""
    codes, n_units, unit = row_units(cluster, n)
    return codes, n_units, as_weights(weights, n_units, unit)


def as_weight_vector(weights, n: int, unit: str = "observation") -> np.ndarray | None:
    """:func:`as_weights` for measures that take one weight vector (no matrix)."""
    w = as_weights(weights, n, unit)
    if w is not None and w.ndim != 1:
        raise ValueError(
            f"weights must be one vector of shape ({n},) for this measure, got shape {w.shape}."
        )
    return w


def _where(mask: np.ndarray) -> tuple[int, ...]:
    return tuple(int(v) for v in np.argwhere(mask)[0])


def _at(mask: np.ndarray) -> str:
    return "weights[" + ", ".join(str(v) for v in _where(mask)) + "]"


def is_matrix(weights: np.ndarray | None) -> bool:
    """True for a matrix of weight vectors (the metric then returns one value per vector)."""
    return weights is not None and weights.ndim == 2


def n_vectors(weights: np.ndarray | None) -> int:
    """Number of weight vectors (1 for ``None`` or a single vector)."""
    return weights.shape[0] if is_matrix(weights) else 1


def ones_or(weights: np.ndarray | None, n: int) -> np.ndarray:
    """``weights`` as a 2-D (m, n) array (``None``: one vector of ones)."""
    if weights is None:
        return np.ones((1, n), dtype=np.uint8)
    return weights if weights.ndim == 2 else weights[None, :]


def weight_totals(weights: np.ndarray | None, n: int) -> np.ndarray:
    """Total weight of each vector (float64, shape (m,))."""
    return ones_or(weights, n).sum(axis=1, dtype=np.float64)


def lane_blocks(
    weights: np.ndarray | None, n: int, order: np.ndarray | None = None, lanes: int = LANES
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first vector, array of shape (rows, k))``: up to ``lanes`` weight vectors over
    ``n`` units as the contiguous columns of one C-ordered array, the layout of the lane kernels
    (their inner loop runs over a row's k lanes). Row r holds the weights of unit ``order[r]``
    (default: unit r), so ``order`` both sorts and expands (cluster -> rows). The weights keep
    their integer dtype (uint8 for bootstrap counts: an eighth of the memory traffic of float64);
    without weights the single lane is float64 ones."""
    if weights is None:
        yield 0, np.ones((n if order is None else len(order), 1), dtype=np.float64)
        return
    w = ones_or(weights, n)
    for k0 in range(0, w.shape[0], lanes):
        block = w[k0 : k0 + lanes].T
        yield k0, np.ascontiguousarray(block if order is None else np.take(block, order, axis=0))


@cached_njit(nogil=True)
def key_sums(w, keys, values, n_keys):
    """out[key, v, lane] = Σ over the rows i with keys[i] = key of w[i, lane] * values[i, v], summed
    in row order (lanes as from :func:`lane_blocks`)."""
    lanes = w.shape[1]
    n_val = values.shape[1]
    out = np.zeros((n_keys, n_val, lanes), dtype=np.float64)
    for i in range(keys.shape[0]):
        key = keys[i]
        if lanes == 1:  # one weight vector (a point value): no lane loop
            wi = w[i, 0]
            for v in range(n_val):
                out[key, v, 0] += wi * values[i, v]
            continue
        for v in range(n_val):
            x = values[i, v]
            for k in range(lanes):
                out[key, v, k] += w[i, k] * x
    return out


@cached_njit(nogil=True)
def lane_dot(w, x):
    """out[lane] = Σ_i w[i, lane] x[i], summed in row order (the same for any number of lanes)."""
    out = np.zeros(w.shape[1], dtype=np.float64)
    for i in range(w.shape[0]):
        xi = x[i]
        for k in range(w.shape[1]):
            out[k] += w[i, k] * xi
    return out


@cached_njit(nogil=True)
def split_sums(w, flag, lo, hi, hit, rest):
    """hit[lane] = Σ w[i, lane] over the rows lo <= i < hi with flag[i], rest[lane] over the others
    (both overwritten; lanes as from :func:`lane_blocks`)."""
    lanes = w.shape[1]
    for k in range(lanes):
        hit[k] = 0.0
        rest[k] = 0.0
    for i in range(lo, hi):
        if flag[i]:
            for k in range(lanes):
                hit[k] += w[i, k]
        else:
            for k in range(lanes):
                rest[k] += w[i, k]


def cluster_row_weights(cluster, weights) -> np.ndarray:
    """Per-row weights from per-cluster weights: each row gets the weight of its cluster.

    .. math:: w^{\\mathrm{row}}_i = w_{c(i)}

    with c(i) the cluster of row i, clusters numbered in order of first appearance in ``cluster``
    (the convention of every clustered metric, e.g. the patients of an hourly task), so
    ``weights[k]`` is the weight of the k-th distinct label met when reading ``cluster`` from the
    top. A user metric of an hourly task gets per-patient weights and can expand them with this.

    Parameters
    ----------
    cluster : array-like of shape (n,)
        Cluster label of each row (e.g. the patient id of a patient-hour).
    weights : array-like of shape (n_clusters,) or (m, n_clusters)
        Non-negative integer multiplicities of the clusters.

    Returns
    -------
    numpy.ndarray of shape (n,) or (m, n)

    See Also
    --------
    automd_analysis.metrics.ece : takes ``cluster=`` with per-cluster weights itself.

    References
    ----------
    Davison, A. C., Hinkley, D. V. (1997). Bootstrap Methods and their Application, sec. 3.8
    (resampling clusters). Cambridge University Press.

    Examples
    --------
    >>> cluster_row_weights(["b", "b", "a", "c"], [2, 0, 1]).tolist()
    [2, 2, 0, 1]
    """
    codes, n_clusters = cluster_codes(cluster)
    w = as_weights(weights, n_clusters, unit="cluster")
    return w[..., codes]
