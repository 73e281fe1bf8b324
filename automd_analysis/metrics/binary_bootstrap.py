"""Bootstrap replicates of the binary metrics (AUROC, ECE, min(Se, PPV)), exact per replicate.

Replicate b is the plain metric on the rows ``indices[b]`` (or, with ``cluster``, on the rows of the
clusters ``indices[b]``, concatenated). The three metrics do not depend on the order of rows, so a
replicate is determined by the multiplicity w_u of each resampling unit u (a row, or a cluster of
rows) and each metric becomes a weighted sum over structure computed once:

- **AUROC.** Rows are sorted by score once and cut into groups of tied scores. A replicate needs,
  per group g, the weighted positives P_g and negatives N_g; then, in half-units,
  H = Σ_g P_g (2 Σ_{h < g} N_h + N_g) and AUROC = H / (2 Σ P Σ N), the integer bookkeeping of
  :func:`~automd_analysis.metrics.auroc`, so the replicate is the same correctly rounded fraction.
  A duplicated row is a positive and a negative tied with itself only if it is both, which it never
  is, so duplicates need no special case.
- **ECE.** The bin of every row is fixed; a replicate needs per bin the weighted count, sum of
  probabilities and sum of outcomes, then the formula of :func:`~automd_analysis.metrics.ece`.
- **min(Se, PPV).** Weighted TP, FN and FP counts (exact integers).

Each unit's contribution is aggregated once (per unit: its group or bin entries), and a block of
64 replicates is processed together with the replicates as the innermost ("lane") loop.
"""

from __future__ import annotations

import warnings

import numpy as np

from automd_analysis.metrics._numba import cached_njit
from automd_analysis.metrics._resample import (
    as_indices,
    check_n_boot,
    cluster_codes,
    explicit_blocks,
    index_blocks,
    lane_counts,
)
from automd_analysis.metrics._validation import (
    UndefinedMetricWarning,
    as_binary,
    as_finite_1d,
    as_probabilities,
    check_same_length,
)
from automd_analysis.metrics.calibration import check_n_bins

__all__ = ["auroc_bootstrap", "ece_bootstrap", "min_se_ppv_bootstrap"]


def _units(n_rows: int, cluster, n_boot, seed, indices):
    """(unit code per row, number of units, iterator of index blocks, n_boot)."""
    if cluster is None:
        codes, n_units = np.arange(n_rows, dtype=np.int64), n_rows
    else:
        codes, n_units = cluster_codes(cluster)
        if len(codes) != n_rows:
            raise ValueError(
                f"Inputs must have the same length: the metric inputs have {n_rows} rows, "
                f"cluster has {len(codes)}."
            )
    if indices is None:
        n_boot = check_n_boot(n_boot)
        return codes, n_units, index_blocks(n_units, n_boot, seed), n_boot
    idx = as_indices(indices, n_units)
    return codes, n_units, explicit_blocks(idx), idx.shape[0]


def _warn_nan(out: np.ndarray, metric: str, why: str) -> None:
    n_nan = int(np.isnan(out).sum())
    if n_nan:
        warnings.warn(
            f"{metric} is undefined ({why}) in {n_nan} of {len(out)} bootstrap replicates; "
            "they are nan.",
            UndefinedMetricWarning,
            stacklevel=3,
        )


def _entries(codes: np.ndarray, keys: np.ndarray, n_keys: int):
    """The distinct (key, unit) pairs of the rows, sorted by key then unit.

    Returns (CSR offsets of the entries over keys, unit of each entry, rows per entry, entry of
    each row). A replicate's value at key k is then the sum over the entries of k of
    w[unit] * value.
    """
    order = np.lexsort((codes, keys))
    c, k = codes[order], keys[order]
    new = np.r_[True, (c[1:] != c[:-1]) | (k[1:] != k[:-1])]
    starts = np.flatnonzero(new)
    entry_of_row = np.empty(len(codes), dtype=np.int64)
    entry_of_row[order] = np.cumsum(new) - 1
    key_off = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(np.bincount(k[starts], minlength=n_keys), out=key_off[1:])
    count = np.diff(np.r_[starts, len(c)]).astype(np.float64)
    return key_off, c[starts].astype(np.int64), count, entry_of_row


@cached_njit(nogil=True)
def _key_sums(w, key_off, entry_unit, values):
    """out[key, v, lane] = sum over the key's entries e of w[unit_e, lane] * values[e, v]."""
    lanes = w.shape[1]
    n_keys = key_off.shape[0] - 1
    n_val = values.shape[1]
    out = np.zeros((n_keys, n_val, lanes), dtype=np.float64)
    for key in range(n_keys):
        for e in range(key_off[key], key_off[key + 1]):
            u = entry_unit[e]
            for v in range(n_val):
                x = values[e, v]
                for k in range(lanes):
                    out[key, v, k] += w[u, k] * x
    return out


@cached_njit(nogil=True)
def _auroc_lanes(w, key_off, entry_unit, pos_val, neg_val):
    """AUROC of each lane, streaming over the score groups in increasing order."""
    lanes = w.shape[1]
    half = np.zeros(lanes, dtype=np.float64)
    below = np.zeros(lanes, dtype=np.float64)
    n_pos = np.zeros(lanes, dtype=np.float64)
    pos = np.empty(lanes, dtype=np.float64)
    neg = np.empty(lanes, dtype=np.float64)
    for g in range(key_off.shape[0] - 1):
        for k in range(lanes):
            pos[k] = 0.0
            neg[k] = 0.0
        for e in range(key_off[g], key_off[g + 1]):
            u = entry_unit[e]
            pv = pos_val[e]
            nv = neg_val[e]
            for k in range(lanes):
                pos[k] += w[u, k] * pv
                neg[k] += w[u, k] * nv
        for k in range(lanes):
            half[k] += pos[k] * (2.0 * below[k] + neg[k])
            below[k] += neg[k]
            n_pos[k] += pos[k]
    out = np.empty(lanes, dtype=np.float64)
    for k in range(lanes):
        if n_pos[k] == 0.0 or below[k] == 0.0:
            out[k] = np.nan
        else:
            out[k] = half[k] / (2.0 * n_pos[k] * below[k])
    return out


def auroc_bootstrap(
    y_true, y_prob, n_boot: int = 1000, seed=0, indices=None, cluster=None
) -> np.ndarray:
    """Bootstrap replicates of the AUROC, each equal to ``sklearn.metrics.roc_auc_score`` on its rows.

    With w_u the multiplicity of unit u in replicate b and P_g, N_g the weighted positives and
    negatives among the rows with the g-th smallest distinct score,

    .. math:: \\mathrm{AUROC}_b = \\frac{\\sum_g P_g \\bigl(\\sum_{h < g} N_h + \\tfrac12 N_g\\bigr)}
              {\\sum_g P_g \\sum_g N_g}

    which is :func:`~automd_analysis.metrics.auroc` on the resampled rows (the same integer
    half-unit count and single division, so the same float). The scores are sorted once; a
    replicate costs O(n) (module docstring).

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
        As :func:`~automd_analysis.metrics.auroc`.
    n_boot : int, default 1000
        Number of replicates (ignored when ``indices`` is given).
    seed : int or sequence of int, default 0
        Seed of :func:`~automd_analysis.metrics.bootstrap_indices` (ignored with ``indices``).
    indices : array-like of int, shape (n_boot, m), optional
        Resample positions of the units (rows, or clusters numbered in order of first appearance).
    cluster : array-like of shape (n,), optional
        Cluster label of each row (e.g. patient of a patient-hour); whole clusters are resampled.

    Returns
    -------
    numpy.ndarray of float64, shape (n_boot,)
        ``nan`` where a replicate holds one class only (one :class:`UndefinedMetricWarning`).

    Raises
    ------
    ValueError
        As :func:`auroc`; bad ``n_boot``, ``indices`` or ``cluster``.

    See Also
    --------
    auroc : the metric on one sample.
    bootstrap_ci : interval from replicates.

    References
    ----------
    Hanley, J. A., McNeil, B. J. (1982). The meaning and use of the area under a receiver operating
    characteristic (ROC) curve. Radiology 143(1), 29-36.

    Examples
    --------
    >>> import numpy as np
    >>> from automd_analysis.metrics import auroc
    >>> y = np.array([0, 0, 1, 1, 0, 1])
    >>> p = np.array([0.1, 0.4, 0.35, 0.8, 0.4, 0.9])
    >>> idx = np.array([[0, 1, 2, 3, 4, 5], [1, 1, 2, 2, 4, 5]])
    >>> reps = auroc_bootstrap(y, p, indices=idx)
    >>> bool(reps[1] == auroc(y[idx[1]], p[idx[1]]))
    True
    """
    y = as_binary("y_true", y_true)
    p = as_finite_1d("y_prob", y_prob)
    n = check_same_length(y_true=y, y_prob=p)
    codes, n_units, blocks, n_boot = _units(n, cluster, n_boot, seed, indices)
    order = np.argsort(p, kind="stable")
    new = np.r_[True, p[order][1:] != p[order][:-1]]
    group = np.empty(n, dtype=np.int64)
    group[order] = np.cumsum(new) - 1  # tie group of the score, in increasing order
    key_off, unit, count, entry_of_row = _entries(codes, group, int(new.sum()))
    pos_val = np.bincount(entry_of_row, weights=y, minlength=len(unit))
    neg_val = count - pos_val
    out = np.empty(n_boot, dtype=np.float64)
    for b0, block in blocks:
        w = lane_counts(block, n_units)
        out[b0 : b0 + block.shape[0]] = _auroc_lanes(w, key_off, unit, pos_val, neg_val)
    _warn_nan(out, "AUROC", "the replicate contains only one class")
    return out


@cached_njit(nogil=True)
def _ece_lanes(cnt, sum_p, sum_y):
    """ECE of each lane from per-bin weighted counts and sums (bins x lanes)."""
    n_bins, lanes = cnt.shape
    out = np.empty(lanes, dtype=np.float64)
    for k in range(lanes):
        total = 0.0
        for b in range(n_bins):
            total += cnt[b, k]
        acc = 0.0
        for b in range(n_bins):
            if cnt[b, k] > 0:
                acc += (cnt[b, k] / total) * abs(sum_p[b, k] / cnt[b, k] - sum_y[b, k] / cnt[b, k])
        out[k] = acc
    return out


def ece_bootstrap(
    y_true, y_prob, n_bins: int = 10, n_boot: int = 1000, seed=0, indices=None, cluster=None
) -> np.ndarray:
    """Bootstrap replicates of the equal-width-bin ECE, each equal to ``ece`` on its rows.

    With w_u the multiplicity of unit u in replicate b, per bin b': n = Σ w (rows in the bin),
    p̄ = Σ w p / n and ȳ = Σ w y / n over the bin's rows, and

    .. math:: \\mathrm{ECE}_b = \\sum_{b'} \\frac{n_{b'}}{\\sum n} \\bigl|\\bar p_{b'} - \\bar y_{b'}\\bigr|

    (bins and their convention as :func:`~automd_analysis.metrics.ece`). Equal to ``ece`` on the
    resampled rows up to floating-point summation order (< 1e-12).

    Parameters
    ----------
    y_true, y_prob : array-like of shape (n,)
        As :func:`~automd_analysis.metrics.ece`.
    n_bins : int, default 10
    n_boot, seed, indices, cluster
        As :func:`auroc_bootstrap`.

    Returns
    -------
    numpy.ndarray of float64, shape (n_boot,)

    Raises
    ------
    ValueError
        As :func:`ece`; bad ``n_boot``, ``indices`` or ``cluster``.

    See Also
    --------
    ece : the metric on one sample.
    bootstrap_ci : interval from replicates.

    References
    ----------
    Naeini, M. P., Cooper, G., Hauskrecht, M. (2015). Obtaining well calibrated probabilities using
    Bayesian binning. AAAI 29(1).

    Examples
    --------
    >>> import numpy as np
    >>> from automd_analysis.metrics import ece
    >>> y = np.array([0, 0, 1, 1])
    >>> p = np.array([0.1, 0.4, 0.35, 0.8])
    >>> idx = np.array([[0, 0, 2, 3]])
    >>> reps = ece_bootstrap(y, p, indices=idx)
    >>> bool(abs(reps[0] - ece(y[idx[0]], p[idx[0]])) < 1e-12)
    True
    """
    n_bins = check_n_bins(n_bins)
    y = as_binary("y_true", y_true)
    p = as_probabilities("y_prob", y_prob)
    n = check_same_length(y_true=y, y_prob=p)
    codes, n_units, blocks, n_boot = _units(n, cluster, n_boot, seed, indices)
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1).astype(np.int64)
    key_off, unit, count, entry_of_row = _entries(codes, bins, n_bins)
    m = len(unit)
    values = np.column_stack(
        [
            count,
            np.bincount(entry_of_row, weights=p, minlength=m),
            np.bincount(entry_of_row, weights=y, minlength=m),
        ]
    )
    out = np.empty(n_boot, dtype=np.float64)
    for b0, block in blocks:
        w = lane_counts(block, n_units)
        sums = _key_sums(w, key_off, unit, values)
        out[b0 : b0 + block.shape[0]] = _ece_lanes(sums[:, 0], sums[:, 1], sums[:, 2])
    return out


def min_se_ppv_bootstrap(
    y_true, y_pred_label, n_boot: int = 1000, seed=0, indices=None, cluster=None
) -> np.ndarray:
    """Bootstrap replicates of min(Se, PPV), each equal to ``min_se_ppv`` on its rows.

    With weighted counts TP = Σ w [y = 1, ŷ = 1], FN = Σ w [y = 1, ŷ = 0], FP = Σ w [y = 0, ŷ = 1],

    .. math:: \\min\\Bigl(\\frac{TP}{TP + FN}, \\frac{TP}{TP + FP}\\Bigr)

    with a 0/0 ratio ignored as in :func:`~automd_analysis.metrics.min_se_ppv` (exact integer
    counts, so each replicate is the same float).

    Parameters
    ----------
    y_true, y_pred_label : array-like of shape (n,)
        As :func:`~automd_analysis.metrics.min_se_ppv`.
    n_boot, seed, indices, cluster
        As :func:`auroc_bootstrap`.

    Returns
    -------
    numpy.ndarray of float64, shape (n_boot,)
        ``nan`` where both ratios are 0/0 (one :class:`UndefinedMetricWarning`).

    See Also
    --------
    min_se_ppv : the metric on one sample.

    References
    ----------
    Silva, I., Moody, G., Scott, D. J., Celi, L. A., Mark, R. G. (2012). Predicting in-hospital
    mortality of ICU patients: the PhysioNet/Computing in Cardiology Challenge 2012. Computing in
    Cardiology 39, 245-248.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([1, 1, 1, 0, 0])
    >>> pred = np.array([1, 0, 1, 1, 0])
    >>> min_se_ppv_bootstrap(y, pred, indices=np.array([[0, 1, 2, 3, 4], [0, 0, 1, 4, 4]])).tolist()
    [0.6666666666666666, 0.6666666666666666]
    """
    y = as_binary("y_true", y_true)
    pred = as_binary("y_pred_label", y_pred_label)
    n = check_same_length(y_true=y, y_pred_label=pred)
    codes, n_units, blocks, n_boot = _units(n, cluster, n_boot, seed, indices)
    kind = (2 * y + pred).astype(np.int64)  # 0 TN, 1 FP, 2 FN, 3 TP
    key_off, unit, count, _ = _entries(codes, kind, 4)
    out = np.empty(n_boot, dtype=np.float64)
    for b0, block in blocks:
        w = lane_counts(block, n_units)
        cells = _key_sums(w, key_off, unit, count[:, None])[:, 0]
        fp, fn, tp = cells[1], cells[2], cells[3]
        with np.errstate(invalid="ignore", divide="ignore"):
            se = np.where(tp + fn > 0, tp / np.where(tp + fn > 0, tp + fn, 1.0), np.nan)
            ppv = np.where(tp + fp > 0, tp / np.where(tp + fp > 0, tp + fp, 1.0), np.nan)
        out[b0 : b0 + block.shape[0]] = np.fmin(se, ppv)
    _warn_nan(out, "min(Se, PPV)", "no deaths and no predicted positives")
    return out
