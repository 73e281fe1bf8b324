"""Input checks shared by the metric functions, and the warning for undefined metrics.

Every metric validates its inputs up front (the scikit-learn ``sklearn/metrics`` pattern) so that the
numerical kernels can assume clean arrays. A malformed input raises :class:`ValueError` whose message
names the argument, the first offending index and what was found there. A *well-formed* input on which
a metric is mathematically undefined (one class only, no comparable pair, ...) is not an error: the
metric returns ``nan`` and emits :class:`UndefinedMetricWarning`.
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = [
    "UndefinedMetricWarning",
    "as_binary",
    "as_durations",
    "as_finite_1d",
    "as_probabilities",
    "as_surv_matrix",
    "as_time_grid",
    "check_binary_inputs",
    "check_same_length",
    "check_survival_inputs",
    "check_survival_ece_inputs",
    "finish",
    "undefined_message",
    "warn_at_bounds",
    "warn_undefined",
]


class UndefinedMetricWarning(UserWarning):
    """A metric is mathematically undefined on the given (well-formed) input and was set to ``nan``.

    A warning of :func:`finish` also says what was undefined: ``metric``, ``why`` and, for a
    weight matrix, ``undefined`` (one bool per weight vector); ``None`` where not known.
    """

    metric: str | None = None
    why: str | None = None
    undefined: np.ndarray | None = None


def undefined_message(metric: str, why: str, undefined: np.ndarray | None = None) -> str:
    """The message of an undefined metric: of one value, or (``undefined``: one bool per weight
    vector) of the vectors of a weight matrix."""
    if undefined is None:
        return f"{metric} is undefined ({why}); returning nan."
    return (
        f"{metric} is undefined ({why}) in {int(np.sum(undefined))} of {len(undefined)} weight "
        "vectors; they are nan."
    )


def _warn(metric: str, why: str, undefined: np.ndarray | None = None) -> None:
    warning = UndefinedMetricWarning(undefined_message(metric, why, undefined))
    warning.metric, warning.why, warning.undefined = metric, why, undefined
    warnings.warn(warning, stacklevel=4)


def warn_undefined(metric: str, why: str) -> float:
    """Emit :class:`UndefinedMetricWarning` for ``metric`` and return ``nan``."""
    warnings.warn(undefined_message(metric, why), UndefinedMetricWarning, stacklevel=3)
    return float("nan")


def warn_at_bounds(values: np.ndarray, metric: str, why: str) -> bool:
    """Warn as :func:`warn_undefined` (``why`` formatted with ``n``, ``i``, ``value``: the count, first
    index and value of the entries <= 0 or >= 1) and return True when there is one."""
    extreme = (values <= 0.0) | (values >= 1.0)
    if not extreme.any():
        return False
    i = _first(extreme)
    why = why.format(n=int(extreme.sum()), i=i, value=values[i])
    warnings.warn(undefined_message(metric, why), UndefinedMetricWarning, stacklevel=3)
    return True


def finish(values: np.ndarray, matrix: bool, metric: str, why: str):
    """A metric's result: the float for one weight vector (``nan`` with
    :class:`UndefinedMetricWarning`), the array of values for a weight matrix (one warning counting
    the ``nan`` entries)."""
    values = np.asarray(values, dtype=np.float64)
    undefined = np.isnan(values)
    if not matrix:
        if undefined[0]:
            _warn(metric, why)
        return float(values[0])
    if undefined.any():
        _warn(metric, why, undefined)
    return values


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _as_1d(name: str, values, *, allow_empty: bool = False) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got an array of shape {arr.shape}.")
    if not allow_empty and arr.size == 0:
        raise ValueError(f"{name} is empty; at least one observation is required.")
    return arr


def _reject_first(name: str, arr: np.ndarray, bad: np.ndarray, must: str) -> None:
    """Raise ``ValueError`` naming the first entry of ``arr`` that ``bad`` flags (if any)."""
    if bad.any():
        i = _first(bad)
        raise ValueError(f"{name} must {must}; {name}[{i}] is {arr[i].item()!r}.")


def as_finite_1d(name: str, values, *, allow_empty: bool = False) -> np.ndarray:
    """Return ``values`` as a 1-D float64 array; raise if any entry is NaN or infinite."""
    arr = _as_1d(name, values, allow_empty=allow_empty)
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}.")
    arr = arr.astype(np.float64, copy=False)
    _reject_first(name, arr, ~np.isfinite(arr), "be finite")
    return arr


def as_probabilities(name: str, values) -> np.ndarray:
    """Return ``values`` as a 1-D float64 array of finite numbers in [0, 1]."""
    arr = as_finite_1d(name, values)
    _reject_first(name, arr, (arr < 0.0) | (arr > 1.0), "be probabilities in [0, 1]")
    return arr


def as_binary(name: str, values) -> np.ndarray:
    """Return ``values`` as a 1-D int8 array; raise unless every entry is 0 or 1 (bools allowed)."""
    arr = _as_1d(name, values)
    if arr.dtype == bool:
        return arr.astype(np.int8)
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must contain only 0 and 1, got dtype {arr.dtype}.")
    if arr.dtype.kind in "iu" and arr.min() >= 0 and arr.max() <= 1:  # fast path, no copy to float
        return arr.astype(np.int8)
    # NaN compares unequal to both, so it is caught here
    _reject_first(name, arr, (arr != 0) & (arr != 1), "contain only 0 and 1")
    return arr.astype(np.int8)


def as_durations(name: str, values) -> np.ndarray:
    """Return ``values`` as a 1-D float64 array of finite, non-negative times."""
    arr = as_finite_1d(name, values)
    _reject_first(name, arr, arr < 0.0, "be non-negative")
    return arr


def as_time_grid(name: str, values) -> np.ndarray:
    """Return ``values`` as a 1-D float64 array of finite, strictly increasing times."""
    arr = as_finite_1d(name, values)
    bad = np.diff(arr) <= 0.0
    if bad.any():
        i = _first(bad) + 1
        raise ValueError(
            f"{name} must be strictly increasing (sorted, no duplicates); "
            f"{name}[{i}] = {arr[i].item()!r} follows {name}[{i - 1}] = {arr[i - 1].item()!r}."
        )
    return arr


def as_surv_matrix(name: str, values, n_patients: int, n_grid: int) -> np.ndarray:
    """Return a C-contiguous float64 ``(n_patients, n_grid)`` matrix of survival probabilities.

    Raises if the shape is wrong or any entry is NaN, infinite or outside [0, 1]; the message names the
    first offending ``[patient, grid point]``.
    """
    arr = np.asarray(values)
    if arr.ndim != 2 or arr.shape != (n_patients, n_grid):
        raise ValueError(
            f"{name} must have shape (n_patients, n_grid) = ({n_patients}, {n_grid}), "
            f"got {arr.shape}."
        )
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}.")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    # One pass for the common (valid) case; locate the culprit only when something is wrong.
    if arr.size and not (np.isfinite(arr).all() and arr.min() >= 0.0 and arr.max() <= 1.0):
        bad = ~np.isfinite(arr) | (arr < 0.0) | (arr > 1.0)
        i, k = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} must hold survival probabilities: finite values in [0, 1]; "
            f"{name}[{i}, {k}] is {arr[i, k].item()!r}."
        )
    return arr


def check_same_length(**arrays: np.ndarray) -> int:
    """Raise unless every array has the same length; return that length."""
    lengths = {name: len(a) for name, a in arrays.items()}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{name} has {n}" for name, n in lengths.items())
        raise ValueError(f"Inputs must have the same length: {desc}.")
    return next(iter(lengths.values()))


def check_binary_inputs(y_true, y_prob) -> tuple[np.ndarray, np.ndarray, int]:
    """Validated ``(y_true, y_prob, n)`` of a binary metric: 0/1 outcomes, probabilities of the
    same length ``n``; ``ValueError`` naming the argument otherwise."""
    y = as_binary("y_true", y_true)
    p = as_probabilities("y_prob", y_prob)
    return y, p, check_same_length(y_true=y, y_prob=p)


def check_survival_inputs(durations, events, surv, time_grid):
    """Validated ``(durations, events, surv, time_grid)`` of a survival metric: follow-up times,
    0/1 events of the same length, a strictly increasing grid and one curve per patient on it;
    ``ValueError`` naming the argument otherwise."""
    t = as_durations("durations", durations)
    e = as_binary("events", events)
    n = check_same_length(durations=t, events=e)
    grid = as_time_grid("time_grid", time_grid)
    s = as_surv_matrix("surv", surv, n, len(grid))
    return t, e, s, grid


def check_survival_ece_inputs(durations, events, surv, time_grid, quantiles, n_groups, min_group):
    """Validated ``(durations, events, surv, time_grid, quantiles)`` of :func:`survival_ece` (and of
    its bootstrap twin); ``ValueError`` naming the argument otherwise."""
    t, e, s, grid = check_survival_inputs(durations, events, surv, time_grid)
    qs = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if qs.ndim != 1 or qs.size == 0 or not np.all((qs >= 0.0) & (qs <= 1.0)):
        raise ValueError(
            f"quantiles must be a non-empty sequence of levels in [0, 1], got {quantiles!r}."
        )
    for name, value in (("n_groups", n_groups), ("min_group", min_group)):
        if isinstance(value, bool) or int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    return t, e, s, grid, qs
