"""The multiplicity rule: every table of several p-values adjusts them as one family.

A table whose rows each test a hypothesis (pairs of agents, process metrics) publishes each
row's p-value and its Holm-adjusted value (``p_holm``): rejecting every row with ``p_holm < α``
keeps the family-wise error rate - the chance of at least one false claim in the table - at or
below α under any dependence between the tests (Holm 1979). Each table names its family in its
caption (e.g. "over the pairs of one measure").
"""

from __future__ import annotations

import numpy as np

__all__ = ["holm_adjust"]


def holm_adjust(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error rate control).

    Sorting the m finite p-values p_(1) <= ... <= p_(m),

    .. math:: \\tilde p_{(i)} = \\min\\Bigl(1, \\max_{j \\le i} (m - j + 1)\\, p_{(j)}\\Bigr)

    and each adjusted value is returned at its original position; NaN p-values are not part of the
    family and stay NaN. Equal to ``statsmodels.stats.multitest.multipletests(p, method="holm")``.

    Parameters
    ----------
    p_values : array-like of float

    Returns
    -------
    numpy.ndarray of float

    See Also
    --------
    automd_analysis.stats.paired.sign_flip_test : a per-pair test.

    References
    ----------
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal
    of Statistics 6(2), 65-70.

    Examples
    --------
    >>> holm_adjust([0.01, 0.04, 0.03, float("nan")]).tolist()
    [0.03, 0.06, 0.06, nan]
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p_values must be one-dimensional, got shape {p.shape}.")
    finite = np.flatnonzero(np.isfinite(p))
    bad = (p[finite] < 0) | (p[finite] > 1)
    if bad.any():
        i = int(finite[np.flatnonzero(bad)[0]])
        raise ValueError(f"p_values must lie in [0, 1]; p_values[{i}] is {p[i]!r}.")
    out = np.full(p.shape, np.nan)
    m = finite.size
    if m == 0:
        return out
    order = finite[np.argsort(p[finite], kind="stable")]
    scaled = (m - np.arange(m)) * p[order]
    out[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return out
