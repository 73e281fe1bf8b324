"""Normalised score of a raw task metric (Auto-MD-bench, eq. (1))."""

from __future__ import annotations

import numpy as np

__all__ = ["normalized_score"]


def normalized_score(raw, null_score):
    """Rescale a raw metric so that null predictions score 0 and perfect ones 1.

    Implements eq. (1) of Auto-MD-bench (Sec. 3.3):

    .. math:: s = \\min\\bigl(1, \\max\\bigl(0, (m - m_0) / (1 - m_0)\\bigr)\\bigr)

    with :math:`m_0 = 0.5` for C^td and AUROC and :math:`m_0 = 0` for min(Se, PPV) and the
    PhysioNet 2019 utility (``automd_analysis.schema.NULL_SCORES``).

    Parameters
    ----------
    raw : float or array-like of float
        Raw metric value(s) m. ``nan`` (an invalid or undefined score) stays ``nan``; ``+inf`` maps to
        1 and ``-inf`` to 0 like any value beyond the clip range.
    null_score : float or array-like of float
        Score m0 of null predictions; must be finite and < 1 (broadcast against ``raw``).

    Returns
    -------
    float or numpy.ndarray
        A Python ``float`` when both inputs are scalars, otherwise a float64 array of the broadcast
        shape. Every non-NaN value lies in [0, 1].

    Raises
    ------
    ValueError
        If ``null_score`` is not finite or is >= 1 (the denominator 1 - m0 would be <= 0), or the inputs
        cannot be broadcast together.

    See Also
    --------
    automd_analysis.metrics.concordance_td, automd_analysis.metrics.auroc,
    automd_analysis.metrics.min_se_ppv, automd_analysis.metrics.sepsis_utility : the raw metrics m.

    References
    ----------
    .. [1] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, Sec. 3.3, eq. (1).

    Examples
    --------
    >>> normalized_score(0.75, 0.5)
    0.5
    >>> normalized_score([0.4, 0.5, 1.0, float("nan")], 0.5).tolist()
    [0.0, 0.0, 1.0, nan]
    """
    raw_arr = np.asarray(raw, dtype=np.float64)
    m0 = np.asarray(null_score, dtype=np.float64)
    if not np.isfinite(m0).all() or (m0 >= 1.0).any():
        bad = m0 if m0.ndim == 0 else m0[~np.isfinite(m0) | (m0 >= 1.0)][0]
        raise ValueError(f"null_score must be finite and < 1; got {float(bad)!r}.")
    with np.errstate(invalid="ignore"):
        out = np.clip((raw_arr - m0) / (1.0 - m0), 0.0, 1.0)
    if out.ndim == 0:
        return float(out)
    return out
