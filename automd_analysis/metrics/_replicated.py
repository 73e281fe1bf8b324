"""A metric on the observed data and on its bootstrap resamples in one kernel call.

A bootstrap interval needs the metric twice: on the observed data (every weight 1) and on each
resample (a row of :func:`~automd_analysis.metrics.bootstrap_weights`). Every kernel takes a
weight matrix, so both are one call on the matrix whose first row is all ones:

.. math:: W^{+} = \\begin{pmatrix} \\mathbf{1}^\\top \\\\ W \\end{pmatrix}, \\qquad
          m(x; W^{+}) = \\bigl(m(x),\\ m(x; w_1),\\ \\dots,\\ m(x; w_B)\\bigr)

Each row is computed on its own, so the first value is the observed metric to the last bit.
:func:`with_replicates` makes that call and splits the result, and the undefined-metric
warnings, into the observed part (as a call without weights would warn) and the replicates' part
(as a call with ``W`` would warn).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from automd_analysis.metrics._validation import UndefinedMetricWarning, undefined_message

__all__ = [
    "Replicated",
    "observed_first",
    "recorded",
    "recording",
    "stacked_result",
    "with_replicates",
]


@dataclass(frozen=True)
class Replicated:
    """A metric's observed result and its bootstrap replicates.

    Attributes
    ----------
    observed : float or result object
        The metric on the observed data.
    replicates : numpy.ndarray of shape (B,) or None
        The metric on each resample (``nan`` where undefined); ``None`` without resamples.
    observed_warnings, replicate_warnings : tuple of str
        Messages of the undefined values of each part.
    """

    observed: Any
    replicates: np.ndarray | None = None
    observed_warnings: tuple[str, ...] = ()
    replicate_warnings: tuple[str, ...] = ()


def observed_first(weights: np.ndarray) -> np.ndarray:
    """``weights`` (shape ``(B, n)``) with a first row of ones: the observed data, then the B
    resamples (the dtype of ``weights`` is kept)."""
    w = np.asarray(weights)
    return np.concatenate([np.ones((1, w.shape[1]), dtype=w.dtype), w])


@contextmanager
def recording() -> Iterator[list]:
    """A block whose :class:`UndefinedMetricWarning` messages are collected into the list it
    yields (filled when the block ends; any other warning is emitted again, unchanged)."""
    undefined: list = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        yield undefined
    for w in caught:
        if issubclass(w.category, UndefinedMetricWarning):
            undefined.append(w.message)
        else:  # pragma: no cover - re-emit anything else unchanged
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def recorded(fn: Callable, *args, **kwargs) -> tuple[Any, list[UndefinedMetricWarning]]:
    """``fn(*args, **kwargs)`` and the :class:`UndefinedMetricWarning` it emitted (:func:`recording`)."""
    with recording() as undefined:
        value = fn(*args, **kwargs)
    return value, undefined


def _split(warning, n_values: int) -> tuple[list[str], list[str]]:
    """The messages of a warning of the stacked call: the observed row's and the replicates'."""
    mask = getattr(warning, "undefined", None)
    if mask is None or len(mask) != n_values:  # not told which vectors: both parts
        return [str(warning)], [str(warning)]
    observed = [undefined_message(warning.metric, warning.why)] if mask[0] else []
    rest = mask[1:]
    replicates = [undefined_message(warning.metric, warning.why, rest)] if rest.any() else []
    return observed, replicates


def with_replicates(evaluate: Callable, weights: np.ndarray | None) -> Replicated:
    """``evaluate`` on the observed data and on every resample of ``weights``, in one call.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(w)``: the metric with weight argument ``w`` (``None``: every weight 1; a
        matrix: one value per row), e.g. ``lambda w: auroc(y, p, weights=w)``.
    weights : numpy.ndarray of shape (B, n), or None
        The resample weights; ``None`` computes the observed value only.

    Returns
    -------
    Replicated
        ``observed`` is ``evaluate(None)`` and ``replicates`` is ``evaluate(weights)``, both from
        the one call ``evaluate(observed_first(weights))``; the undefined-metric messages are
        those the two separate calls would give.

    Examples
    --------
    >>> from automd_analysis.metrics import auroc
    >>> y, p = np.array([1, 0, 1, 0]), np.array([0.8, 0.4, 0.4, 0.1])
    >>> res = with_replicates(lambda w: auroc(y, p, weights=w), np.array([[1, 1, 0, 2], [0, 1, 2, 1]]))
    >>> res.observed, res.replicates.tolist()
    (0.875, [1.0, 0.75])
    >>> res = with_replicates(lambda w: auroc(y, p, weights=w), np.array([[0, 2, 0, 2]]))
    >>> res.observed, res.replicate_warnings
    (0.875, ('AUROC is undefined (y_true contains only one class) in 1 of 1 weight vectors; they are nan.',))
    """
    if weights is None:
        value, caught = recorded(evaluate, None)
        return Replicated(value, None, tuple(str(w) for w in caught))
    return stacked_result(*recorded(evaluate, observed_first(weights)))


def stacked_result(values, undefined: list) -> Replicated:
    """The :class:`Replicated` of a call on :func:`observed_first` weights: row 0 the observed
    value, the rest the replicates, each part with the undefined-metric messages it would have
    had on its own (``undefined``: the call's warnings, e.g. from :func:`recording`)."""
    values = np.asarray(values, dtype=np.float64)
    observed, replicates = [], []
    for warning in undefined:
        mine, theirs = _split(warning, len(values))
        observed += mine
        replicates += theirs
    return Replicated(float(values[0]), values[1:], tuple(observed), tuple(replicates))
