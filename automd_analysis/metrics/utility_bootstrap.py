"""Bootstrap replicates of the PhysioNet/CinC 2019 utility, resampling whole patients.

The utility is a sum over patients of per-patient sums, so a patient-cluster bootstrap replicate is
a weighted sum: with w_k the number of copies of patient k and U_obs,k, U_best,k, U_inaction,k the
patient's sums (integers in units of 1/180, computed once by the scorer's kernel),

    U_b = (Σ w_k U_obs,k - Σ w_k U_inaction,k) / (Σ w_k U_best,k - Σ w_k U_inaction,k).

The sums are exact integers, so U_b is the same correctly rounded division as
:func:`~automd_analysis.metrics.sepsis_utility` on the resampled patients. Single hours are never
resampled: a patient's hours only make sense together (onset, early/late windows).
"""

from __future__ import annotations

import warnings

import numpy as np

from automd_analysis.metrics._resample import (
    as_indices,
    check_n_boot,
    explicit_blocks,
    index_blocks,
    lane_counts,
)
from automd_analysis.metrics._validation import UndefinedMetricWarning
from automd_analysis.metrics.utility import UTILITY_UNIT, sepsis_utility_parts

__all__ = ["sepsis_utility_bootstrap"]


def sepsis_utility_bootstrap(
    patient_ids,
    labels,
    predicted_labels,
    hours=None,
    n_boot: int = 1000,
    seed=0,
    indices=None,
) -> np.ndarray:
    """Patient-cluster bootstrap replicates of the PhysioNet 2019 normalised utility, exactly.

    Replicate b resamples patients (numbered 0..P-1 in order of first appearance): it equals
    :func:`~automd_analysis.metrics.sepsis_utility` on the rows of the patients ``indices[b]``
    concatenated, each copy of a patient counted as a separate patient. With w_k the copies of
    patient k,

    .. math:: U_b = \\frac{\\sum_k w_k (U_{obs,k} - U_{inaction,k})}
              {\\sum_k w_k (U_{best,k} - U_{inaction,k})}

    where the per-patient sums are those of :func:`~automd_analysis.metrics.sepsis_utility_parts`
    (exact integers in units of 1/180, so the replicate is the same float).

    Parameters
    ----------
    patient_ids, labels, predicted_labels, hours
        As :func:`~automd_analysis.metrics.sepsis_utility` (each patient's rows contiguous).
    n_boot : int, default 1000
        Number of replicates (ignored when ``indices`` is given).
    seed : int or sequence of int, default 0
        Seed of :func:`~automd_analysis.metrics.bootstrap_indices` over the P patients.
    indices : array-like of int, shape (n_boot, m), optional
        Explicit patient positions in [0, P).

    Returns
    -------
    numpy.ndarray of float64, shape (n_boot,)
        ``nan`` where a replicate holds no septic patient (one :class:`UndefinedMetricWarning`).

    Raises
    ------
    ValueError
        As :func:`sepsis_utility`; bad ``n_boot`` or ``indices``.

    See Also
    --------
    sepsis_utility : the metric on one cohort.
    bootstrap_ci : interval from replicates.

    References
    ----------
    Reyna, M. A., et al. (2020). Early prediction of sepsis from clinical data: the PhysioNet/
    Computing in Cardiology Challenge 2019. Critical Care Medicine 48(2), 210-217.

    Examples
    --------
    >>> import numpy as np
    >>> from automd_analysis.metrics import sepsis_utility
    >>> pid = np.array([1] * 10 + [2] * 5)
    >>> lab = np.r_[np.zeros(4), np.ones(6), np.zeros(5)].astype(int)
    >>> pred = np.r_[np.zeros(2), np.ones(8), np.zeros(4), 1].astype(int)
    >>> reps = sepsis_utility_bootstrap(pid, lab, pred, indices=np.array([[0, 0, 1]]))
    >>> relabelled = np.r_[np.zeros(10), np.ones(10), np.full(5, 2)]  # copies are new patients
    >>> rows = np.r_[0:10, 0:10, 10:15]
    >>> bool(reps[0] == sepsis_utility(relabelled, lab[rows], pred[rows]))
    True
    """
    with warnings.catch_warnings():  # validation + per-patient sums; a nan total is fine here
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        parts = sepsis_utility_parts(patient_ids, labels, predicted_labels, hours)
    n_pat = parts.n_patients
    # back to the exact integer units the kernel summed (each value is k / 180 for an integer k)
    units = np.column_stack(
        [
            np.rint(parts.patient_observed * UTILITY_UNIT),
            np.rint(parts.patient_best * UTILITY_UNIT),
            np.rint(parts.patient_inaction * UTILITY_UNIT),
        ]
    )
    gain = units[:, 0] - units[:, 2]  # U_obs - U_inaction per patient
    span = units[:, 1] - units[:, 2]  # U_best - U_inaction per patient (> 0 iff septic)
    if indices is None:
        n_boot = check_n_boot(n_boot)
        blocks = index_blocks(n_pat, n_boot, seed)
    else:
        idx = as_indices(indices, n_pat)
        n_boot = idx.shape[0]
        blocks = explicit_blocks(idx)
    out = np.empty(n_boot, dtype=np.float64)
    for b0, block in blocks:
        w = lane_counts(block, n_pat)
        num = gain @ w
        den = span @ w
        with np.errstate(invalid="ignore", divide="ignore"):
            out[b0 : b0 + block.shape[0]] = np.where(
                den > 0, num / np.where(den > 0, den, 1), np.nan
            )
    n_nan = int(np.isnan(out).sum())
    if n_nan:
        warnings.warn(
            f"PhysioNet 2019 utility is undefined (no septic patient) in {n_nan} of {n_boot} "
            "bootstrap replicates; they are nan.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return out
