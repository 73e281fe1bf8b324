"""The one rule for comparing floating-point results: 12 significant digits.

Two numbers that are equal in exact arithmetic can differ in their last bits when they are computed
by different paths (``2.0`` from a Gram matrix is ``1.9999999999999993`` on one CPU and
``2.0000000000000004`` on another; a mean summed in another order differs by an ulp). Ranking,
sorting, "best" marks, rank flips, thresholds and selection ties must not depend on that noise, and
neither may a published number. Everything that compares or publishes a computed float goes
through :func:`comparable` first: the value rounded to :data:`SIGNIFICANT_DIGITS` significant
digits, correctly rounded (the decimal text ``%.12g``, read back). Values that agree to 12
significant digits compare equal and print equal on every machine; a double carries 15-17
significant digits, so the rule leaves three or more for the noise and never merges values that
differ in a digit anyone reads.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["SIGNIFICANT_DIGITS", "comparable", "comparable_scalar", "sample_sd"]

#: Significant digits at which two computed floats count as equal (docs/decisions.md).
SIGNIFICANT_DIGITS = 12

_FORMAT = f"%.{SIGNIFICANT_DIGITS}g"


def comparable_scalar(value: float) -> float:
    """One float rounded to :data:`SIGNIFICANT_DIGITS` significant digits; NaN and inf kept."""
    value = float(value)
    if not math.isfinite(value) or value == 0.0:
        return 0.0 if value == 0.0 else value
    return float(_FORMAT % value)


def comparable(values):
    """``values`` rounded to :data:`SIGNIFICANT_DIGITS` significant digits, for comparing.

    A scalar gives a float, a :class:`pandas.Series` a Series (same index), a DataFrame a DataFrame
    (every float column rounded, other columns kept), anything else a float ndarray. NaN and
    infinities stay; ``-0.0`` becomes ``0.0``.

    Examples
    --------
    >>> comparable([1.9999999999999993, 2.0000000000000004, 0.1 + 0.2])
    array([2. , 2. , 0.3])
    >>> comparable(0.1 + 0.2) == 0.3
    True
    """
    if isinstance(values, pd.DataFrame):
        out = values.copy()
        for column in out.columns:
            if pd.api.types.is_float_dtype(out[column]):
                out[column] = comparable(out[column])
        return out
    if isinstance(values, pd.Series):
        return pd.Series(
            comparable(values.to_numpy(dtype=float, na_value=np.nan)),
            index=values.index,
            name=values.name,
        )
    if np.ndim(values) == 0:
        return comparable_scalar(values)
    array = np.asarray(values, dtype=np.float64)
    flat = [comparable_scalar(v) for v in array.ravel().tolist()]
    return np.asarray(flat, dtype=np.float64).reshape(array.shape)


def sample_sd(values) -> float:
    """Sample standard deviation (``ddof=1``) of :func:`comparable` values; NaN below two values.

    Values equal to 12 significant digits give exactly 0, not the ``1e-17`` their last bits would.
    """
    v = comparable(np.asarray(values, dtype=np.float64).ravel())
    if v.size < 2:
        return math.nan
    if (v == v[0]).all():  # np.std of equal values is not always 0 (its mean is rounded)
        return 0.0
    return float(np.std(v, ddof=1))
