"""Bootstrap resample indices and their multiplicity counts (the weights the metric kernels take).

Resampling scheme
-----------------
Replicate b draws n row (or cluster) positions uniformly with replacement. The draws come in
blocks of :data:`BLOCK` replicates: block k uses its own generator
``numpy.random.default_rng(SeedSequence(entropy=seed, spawn_key=(k,)))`` and draws an ``(m, n)``
array with ``Generator.integers(0, n, dtype=uint32)``. So replicate b depends only on (seed, n,
b): asking for more replicates appends new ones and never changes the first ones.

Every metric of the toolkit is invariant to the order of its rows, so a replicate is fully
described by the *multiplicity* of each unit: :func:`bootstrap_weights` counts the draws
(``np.bincount``), and every metric called with ``weights=`` that count matrix returns its value on
each resample (a unit drawn twice is a tied pair of identical observations, exactly what the
duplicated rows would be).

Clusters (e.g. the patients of a sequential task) are numbered in order of first appearance;
indices then address clusters, and replicate b is the concatenation of the rows of the drawn
clusters (each cluster's rows in their original order, clusters in draw order).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from automd_analysis.metrics._numba import cached_njit

__all__ = [
    "BLOCK",
    "as_indices",
    "bootstrap_indices",
    "bootstrap_weights",
    "check_alpha",
    "check_n_boot",
    "cluster_codes",
    "explicit_blocks",
    "index_blocks",
    "rows_of_clusters",
]

#: Replicates per generator block (and per lane block of the kernels).
BLOCK = 64
#: Positions are drawn as uint32 (four times faster than int64 draws in numpy's generator).
_MAX_N = 2**32 - 1


def check_n_boot(n_boot) -> int:
    """Return ``n_boot`` as an int >= 1, else raise ValueError."""
    if isinstance(n_boot, bool) or not isinstance(n_boot, int | np.integer) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}.")
    return int(n_boot)


def check_alpha(alpha) -> float:
    """Return ``alpha`` as a float in (0, 1), else raise ValueError."""
    try:
        value = float(alpha)
    except (TypeError, ValueError):
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}.") from None
    if not 0.0 < value < 1.0:
        raise ValueError(f"alpha must be a number in (0, 1), got {alpha!r}.")
    return value


def _seed_entropy(seed):
    msg = f"seed must be a non-negative integer or a sequence of them, got {seed!r}."
    if isinstance(seed, bool | str | bytes | float):
        raise ValueError(msg)
    if isinstance(seed, int | np.integer):
        if seed < 0:
            raise ValueError(msg)
        return int(seed)
    try:
        items = list(seed)
    except TypeError:
        raise ValueError(msg) from None
    ok = all(isinstance(s, int | np.integer) and not isinstance(s, bool) and s >= 0 for s in items)
    if not items or not ok:
        raise ValueError(msg)
    return [int(s) for s in items]


def _block_rng(entropy, k: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(entropy=entropy, spawn_key=(k,)))


def index_blocks(n: int, n_boot: int, seed=0) -> Iterator[tuple[int, np.ndarray]]:
    """Yield ``(first replicate, indices of shape (m, n))`` for consecutive blocks of replicates.

    The blocks concatenate to :func:`bootstrap_indices` ``(n, n_boot, seed)``.
    """
    if n < 1:
        raise ValueError(f"cannot resample an empty sample (n = {n}).")
    if n > _MAX_N:
        raise ValueError(f"cannot resample more than {_MAX_N} units (n = {n}).")
    n_boot = check_n_boot(n_boot)
    entropy = _seed_entropy(seed)
    for k, b0 in enumerate(range(0, n_boot, BLOCK)):
        m = min(BLOCK, n_boot - b0)
        yield b0, _block_rng(entropy, k).integers(0, n, size=(m, n), dtype=np.uint32)


def bootstrap_indices(n: int, n_boot: int, seed=0) -> np.ndarray:
    """Resample positions of the toolkit's bootstrap: array of shape ``(n_boot, n)``.

    Row b holds the n positions (in [0, n)) drawn with replacement for replicate b; it depends only
    on ``(seed, n, b)`` (module docstring). The replicate functions of
    :mod:`automd_analysis.metrics.bootstrap` use exactly these indices when ``indices`` is None.

    Parameters
    ----------
    n : int
        Sample size (rows, or clusters for a cluster bootstrap).
    n_boot : int
        Number of replicates.
    seed : int or sequence of int, default 0
        Non-negative entropy of ``numpy.random.SeedSequence``.

    Returns
    -------
    numpy.ndarray of int64, shape (n_boot, n)

    See Also
    --------
    automd_analysis.metrics.bootstrap_ci : resamples with these indices.

    References
    ----------
    O'Neill, M. E. (2014). PCG: A family of simple fast space-efficient statistically good
    algorithms for random number generation (numpy's default bit generator). HMC-CS-2014-0905.

    Examples
    --------
    >>> idx = bootstrap_indices(5, 3, seed=1)
    >>> idx.shape
    (3, 5)
    >>> bool((bootstrap_indices(5, 2, seed=1) == idx[:2]).all())  # replicates are prefix-stable
    True
    """
    n = int(n)
    blocks = [block for _, block in index_blocks(n, n_boot, seed)]
    return np.concatenate(blocks, axis=0).astype(np.int64)


def as_indices(indices, n: int) -> np.ndarray:
    """Validate explicit resample indices: a 2-D integer array with entries in [0, n)."""
    arr = np.asarray(indices)
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(
            f"indices must be a 2-D array of shape (n_boot, resample size) with both sizes >= 1, "
            f"got shape {arr.shape}."
        )
    if arr.dtype.kind not in "iu":
        raise ValueError(f"indices must be integers, got dtype {arr.dtype}.")
    arr = arr.astype(np.int64, copy=False)
    bad = (arr < 0) | (arr >= n)
    if bad.any():
        b, k = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"indices must lie in [0, {n}) (positions of the {n} resampling units); "
            f"indices[{b}, {k}] is {arr[b, k]}."
        )
    return arr


def explicit_blocks(indices: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """Yield :data:`BLOCK`-row slices of explicit indices, like :func:`index_blocks`."""
    for b0 in range(0, indices.shape[0], BLOCK):
        yield b0, indices[b0 : b0 + BLOCK]


def bootstrap_weights(n: int, n_boot: int, seed=0) -> np.ndarray:
    """Multiplicities of the toolkit's bootstrap resamples: array of shape ``(n_boot, n)``.

    Row b counts how often each unit was drawn in replicate b of :func:`bootstrap_indices`,

    .. math:: W_{b i} = \\#\\{k : \\mathrm{idx}_{b k} = i\\}

    (a ``np.bincount`` of each replicate's draws), which is all an order-free metric needs: every metric of the
    toolkit called with ``weights=W`` returns its value on each resample. The same (n, n_boot, seed)
    give the same draws as :func:`bootstrap_indices`, and the first replicates do not change when
    ``n_boot`` grows. The dtype is the smallest unsigned integer type that holds the counts (uint8
    almost always: 49 MB for 1,000 replicates of 49,291 units).

    Parameters
    ----------
    n, n_boot, seed
        As :func:`bootstrap_indices`.

    Returns
    -------
    numpy.ndarray of unsigned int, shape (n_boot, n)
        Each row sums to n.

    See Also
    --------
    bootstrap_indices : the draws these count.

    References
    ----------
    Efron, B., Tibshirani, R. (1993). An Introduction to the Bootstrap, ch. 6. Chapman & Hall.

    Examples
    --------
    >>> w = bootstrap_weights(5, 3, seed=1)
    >>> w.shape, w.sum(axis=1).tolist()
    ((3, 5), [5, 5, 5])
    >>> idx = bootstrap_indices(5, 3, seed=1)
    >>> bool((w[2] == np.bincount(idx[2], minlength=5)).all())
    True
    """
    n = int(n)
    n_boot = check_n_boot(n_boot)
    out = np.empty((n_boot, n), dtype=np.uint8)
    for b0, block in index_blocks(n, n_boot, seed):
        rows = out[b0 : b0 + block.shape[0]]
        while not _count_draws(block, rows, np.iinfo(out.dtype).max):
            out = out.astype(np.uint16 if out.dtype == np.uint8 else np.uint32)  # counts <= n
            rows = out[b0 : b0 + block.shape[0]]
    return out


@cached_njit(nogil=True)
def _count_draws(block, out, top):
    """out[k] = ``np.bincount(block[k], minlength=n)`` in one compiled pass; False (stop) when a
    count would exceed ``top``, the largest value of out's dtype."""
    for k in range(block.shape[0]):
        for j in range(out.shape[1]):
            out[k, j] = 0
        for i in range(block.shape[1]):
            u = block[k, i]
            if out[k, u] == top:
                return False
            out[k, u] += 1
    return True


def cluster_codes(cluster) -> tuple[np.ndarray, int]:
    """Cluster label per row -> (code per row in order of first appearance, number of clusters)."""
    labels = np.asarray(cluster)
    if labels.ndim != 1:
        raise ValueError(f"cluster must be one-dimensional, got an array of shape {labels.shape}.")
    if labels.size == 0:
        raise ValueError("cluster is empty; at least one observation is required.")
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        i = int(np.flatnonzero(np.isnan(labels))[0])
        raise ValueError(f"cluster labels must not be NaN; cluster[{i}] is nan.")
    try:
        _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    except TypeError as exc:
        raise ValueError(
            "cluster labels must be mutually comparable (all numbers or all strings)."
        ) from exc
    rank = np.empty(len(first), dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.ravel()], len(first)


def rows_of_clusters(codes: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """(row numbers grouped by cluster, CSR offsets of each cluster's rows)."""
    order = np.argsort(codes, kind="stable")
    offsets = np.zeros(n_clusters + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=n_clusters), out=offsets[1:])
    return order, offsets
