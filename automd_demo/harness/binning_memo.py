"""Memoised bin thresholds of scikit-learn's HistGradientBoosting in the harness's worker processes.

A class-weighted HistGradientBoosting fit spends most of its time before the first tree: scikit-learn
computes the bin edges of every feature as weighted percentiles, one sort of the column per edge
(``binning._find_binning_thresholds``, about 2 s per fit on the 45,000 hourly training rows of the
sepsis tasks). An agent's search fits many models on the *same* columns with the *same* weights -
another learning rate, depth or seed - so the edges are the same each time. :func:`install`
replaces the function, in this process only, by one that returns the edges already computed for
identical input bytes (the column, its dtype and shape, ``max_bins``, the weights): the function is
pure, so every fitted model - and every byte of the demo archive - is what it was without the memo.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

#: Thresholds kept per process (each at most 254 floats).
MAX_ENTRIES = 4096
_LOCK = threading.Lock()


def _key(col_data, max_bins, sample_weight) -> bytes:
    h = hashlib.sha256()
    col = np.ascontiguousarray(col_data)
    h.update(f"{col.dtype.str}{col.shape}|{int(max_bins)}|".encode())
    h.update(col.tobytes())
    if sample_weight is None:
        h.update(b"unweighted")
    else:
        weights = np.ascontiguousarray(sample_weight)
        h.update(f"{weights.dtype.str}{weights.shape}|".encode())
        h.update(weights.tobytes())
    return h.digest()


def memoised(function, max_entries: int = MAX_ENTRIES):
    """``function(col_data, max_bins, sample_weight=None)`` with its results kept by input bytes
    (a copy is returned, so a caller changing it cannot change the memo).

    Examples
    --------
    >>> calls = []
    >>> def edges(col, max_bins, sample_weight=None):
    ...     calls.append(1)
    ...     return np.quantile(col, np.linspace(0, 1, max_bins + 1)[1:-1])
    >>> fast = memoised(edges)
    >>> col = np.arange(10.0)
    >>> bool((fast(col, 4) == fast(col.copy(), 4)).all()), len(calls)
    (True, 1)
    >>> _ = fast(col, 4, sample_weight=np.ones(10)); len(calls)
    2
    """
    cache: OrderedDict[bytes, np.ndarray] = OrderedDict()

    def thresholds(col_data, max_bins, sample_weight=None):
        key = _key(col_data, max_bins, sample_weight)
        with _LOCK:
            found = cache.get(key)
            if found is not None:
                cache.move_to_end(key)
                return found.copy()
        value = function(col_data, max_bins, sample_weight=sample_weight)
        with _LOCK:
            cache[key] = np.array(value, copy=True)
            while len(cache) > max_entries:
                cache.popitem(last=False)
        return value

    thresholds.automd_memoised = True
    thresholds.__wrapped__ = function
    return thresholds


def install() -> None:
    """Memoise scikit-learn's HistGradientBoosting bin thresholds in this process (idempotent)."""
    from sklearn.ensemble._hist_gradient_boosting import binning

    current = binning._find_binning_thresholds
    if not getattr(current, "automd_memoised", False):
        binning._find_binning_thresholds = memoised(current)
