"""Metric declarations: what a metric is called, which task kinds it scores, and how it is called.

Every metric the score store computes per submission is a :class:`Metric`, the built-in ones
(:data:`BUILTIN_METRICS`, keyed by the task manifest's ``metric``; :data:`ECE_METRICS`, keyed by
task kind) and the user's own (``automd score --metric module:attribute`` or the entry-point group
``automd.metrics``; docs/extending.md). A metric's ``function`` receives the arrays of its task kind
(:class:`MetricInputs`) and keyword ``weights``:

=============== ========================================================================
kind            call
=============== ========================================================================
survival        ``f(durations, events, surv, time_grid, *, weights)``
classification  ``f(y_true, y_prob, *, weights)``; a function with a ``y_pred_label``
                parameter also gets the submitted labels (``None`` when the task has none)
sequential      ``f(patient_ids, hours, y_true, y_prob, y_pred_label, *, weights)``
=============== ========================================================================

``weights`` are integer multiplicities of the resampling units - patients (survival), rows
(classification), patients in order of first appearance in ``patient_ids`` (sequential; every hour
of a patient carries the patient's weight, see
:func:`~automd_analysis.metrics.cluster_row_weights`) - all ones for the observed data and the
counts of one bootstrap resample for each replicate, so a user metric's interval comes from the
same resamples as the built-ins'. A ``vectorized`` metric also accepts a matrix of weight vectors
(one row per replicate) and returns one value per row; the built-ins are vectorized, user metrics
are called once per vector unless they declare it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from automd_analysis.metrics.calibration import ece
from automd_analysis.metrics.concordance import concordance_td
from automd_analysis.metrics.discrimination import auroc, min_se_ppv
from automd_analysis.metrics.survival_calibration import survival_ece
from automd_analysis.metrics.utility import sepsis_utility

__all__ = ["BUILTIN_METRICS", "ECE_METRICS", "KINDS", "Metric", "MetricInputs", "ece_metric"]

#: Task kinds, in the order of the paper's tables.
KINDS: tuple[str, ...] = ("survival", "classification", "sequential")


@dataclass(frozen=True)
class MetricInputs:
    """The arrays a metric of one task kind receives, aligned to the hidden labels.

    Attributes
    ----------
    kind : str
        ``survival``, ``classification`` or ``sequential``.
    args : tuple of numpy.ndarray
        The positional arguments of the kind's call (module docstring).
    label : numpy.ndarray or None
        Classification: the submitted binary labels, passed as ``y_pred_label`` to functions that
        take it.
    n_units : int
        Resampling units: the length of one weight vector.
    """

    kind: str
    args: tuple
    label: np.ndarray | None = None
    n_units: int = 0


@dataclass(frozen=True)
class Metric:
    """A metric of submissions: its name, the task kinds it applies to, its direction and function.

    Parameters
    ----------
    name : str
        Unique name (letters, digits, ``_``, ``-``, ``.``); the ``metric`` column of the store.
    kinds : str or sequence of str
        Task kinds it scores (a subset of :data:`KINDS`).
    higher_is_better : bool
        Direction, shown with the metric in the report.
    function : callable
        Called as in the module docstring; returns a float (an array of floats for a weight
        matrix when ``vectorized``).
    vectorized : bool, default False
        ``function`` accepts a 2-D weight matrix.

    Examples
    --------
    >>> import numpy as np
    >>> def accuracy(y_true, y_prob, *, weights):
    ...     return float(np.average((np.asarray(y_prob) >= 0.5) == y_true, weights=weights))
    >>> m = Metric("accuracy", "classification", True, accuracy)
    >>> m.kinds
    ('classification',)
    >>> inputs = MetricInputs("classification", (np.array([0, 1, 1]), np.array([0.2, 0.9, 0.4])),
    ...                       n_units=3)
    >>> round(m.evaluate(inputs, np.array([1, 1, 1])), 4)
    0.6667
    """

    name: str
    kinds: tuple[str, ...]
    higher_is_better: bool
    function: Callable = field(repr=False)
    vectorized: bool = False

    def __post_init__(self) -> None:
        name = self.name
        if (
            not isinstance(name, str)
            or not name
            or not all(c.isalnum() or c in "_-." for c in name)
        ):
            raise ValueError(
                f"a metric name must be a non-empty string of letters, digits, '_', '-' or '.', "
                f"got {name!r}."
            )
        kinds = (self.kinds,) if isinstance(self.kinds, str) else tuple(self.kinds)
        unknown = [k for k in kinds if k not in KINDS]
        if not kinds or unknown:
            raise ValueError(
                f"metric {name!r}: kinds must be a non-empty subset of {KINDS}, got {self.kinds!r}."
            )
        object.__setattr__(self, "kinds", kinds)
        if not isinstance(self.higher_is_better, bool):
            raise ValueError(
                f"metric {name!r}: higher_is_better must be True or False, "
                f"got {self.higher_is_better!r}."
            )
        if not callable(self.function):
            raise ValueError(f"metric {name!r}: function must be callable.")

    @property
    def takes_label(self) -> bool:
        """Whether a classification call passes ``y_pred_label`` (the function names it)."""
        try:
            params = inspect.signature(self.function).parameters
        except (TypeError, ValueError):
            return False
        return "y_pred_label" in params or any(p.kind == p.VAR_KEYWORD for p in params.values())

    def arguments(self, inputs: MetricInputs) -> tuple[tuple, dict]:
        """The positional and keyword arguments of ``function`` on ``inputs`` (all but
        ``weights``)."""
        if inputs.kind not in self.kinds:
            raise ValueError(f"metric {self.name!r} does not score {inputs.kind} tasks.")
        if inputs.kind == "classification" and self.takes_label:
            return inputs.args, {"y_pred_label": inputs.label}
        return inputs.args, {}

    def evaluate(self, inputs: MetricInputs, weights=None):
        """``function`` on ``inputs`` with ``weights`` (a vector, or a matrix when vectorized)."""
        args, kwargs = self.arguments(inputs)
        return self.function(*args, weights=weights, **kwargs)


def _min_se_ppv(y_true, y_prob, *, weights=None, y_pred_label=None):
    return min_se_ppv(y_true, y_pred_label, weights=weights)


def _utility(patient_ids, hours, y_true, y_prob, y_pred_label, *, weights=None):
    return sepsis_utility(patient_ids, y_true, y_pred_label, hours, weights=weights)


def _hourly_ece(patient_ids, hours, y_true, y_prob, y_pred_label, *, weights=None, n_bins=10):
    return ece(y_true, y_prob, n_bins, weights=weights, cluster=patient_ids)


def _survival_ece(durations, events, surv, time_grid, *, weights=None):
    result = survival_ece(durations, events, surv, time_grid, weights=weights)
    return result if isinstance(result, np.ndarray) else result.ece


#: The primary metrics (Auto-MD-bench Sec. 3.3), by the manifest's ``metric`` value.
BUILTIN_METRICS: Mapping[str, Metric] = {
    m.name: m
    for m in (
        Metric(
            "ctd_adj_antolini",
            "survival",
            True,
            functools.partial(concordance_td, method="adj_antolini"),
            vectorized=True,
        ),
        Metric("auroc", "classification", True, auroc, vectorized=True),
        Metric("min_se_ppv", "classification", True, _min_se_ppv, vectorized=True),
        Metric("utility_2019", "sequential", True, _utility, vectorized=True),
    )
}


def ece_metric(kind: str, n_bins: int = 10) -> Metric:
    """The ECE of task kind ``kind`` (:data:`ECE_METRICS`) with ``n_bins`` equal-width bins for
    binary and hourly tasks (``automd score --ece-bins``); survival keeps its Kaplan-Meier groups.

    .. math:: \\mathrm{ECE} = \\sum_{b=1}^{B} \\frac{n_b}{N} \\, |\\bar p_b - \\bar y_b|

    over the B = ``n_bins`` bins [(b-1)/B, b/B) (hourly tasks: over patient-hours, patients as the
    resampling units).

    Parameters
    ----------
    kind : {"survival", "classification", "sequential"}
    n_bins : int, default 10
        Bins of the binary and hourly ECE (the paper's: 10).

    Returns
    -------
    Metric
        Vectorized, lower is better.

    See Also
    --------
    automd_analysis.metrics.ece : the binned ECE itself.

    References
    ----------
    .. [1] Naeini MP, Cooper GF, Hauskrecht M (2015). Obtaining well calibrated probabilities
       using Bayesian binning. AAAI 29(1).

    Examples
    --------
    >>> import numpy as np
    >>> y, p = np.array([0, 1, 0, 1]), np.array([0.1, 0.32, 0.35, 0.9])
    >>> inputs = MetricInputs("classification", (y, p), n_units=4)
    >>> [round(float(ece_metric("classification", b).evaluate(inputs)), 4) for b in (2, 10)]
    [0.0825, 0.1325]
    """
    if kind == "survival":
        return Metric("survival_ece", "survival", False, _survival_ece, vectorized=True)
    function = ece if kind == "classification" else _hourly_ece
    name = "ece" if kind == "classification" else "ece_hourly"
    if n_bins != 10:
        function = functools.partial(function, n_bins=int(n_bins))
    return Metric(name, kind, False, function, vectorized=True)


#: The ECE of each task kind (App. F): 10 equal-width bins (sequential: over patient-hours, patients
#: resampled), the Kaplan-Meier ECE at three event-time quantiles for survival.
ECE_METRICS: Mapping[str, Metric] = {kind: ece_metric(kind) for kind in KINDS}
