"""Bootstrap replicates of one scored submission: the per-run intervals of the score store.

:func:`run_replicates` takes exactly what
:func:`~automd_analysis.scoring.metrics_for.metric_record` takes (a validated submission aligned to
the hidden labels) and returns, for ``n_boot`` resamples of the test set, the normalised score
(eq. (1), clipped to [0, 1]) and the ECE of the submission on each resample, with their percentile
intervals. Pure: no I/O, no cache; the caller stores the result.

Which resamples
---------------
The resample positions depend only on (task id, number of test units, ``n_boot``, ``seed``)
(:func:`task_resample_indices`): every submission on a task — every agent, repetition and version —
is evaluated on the *same* resampled test sets. Replicate b of two runs on one task is therefore a
paired comparison on the same patients, which is what the two-stage aggregate intervals and the
paired agent comparisons of :mod:`automd_analysis.analysis.uncertainty` rely on. Different tasks
get independent resamples (the task id enters the seed).

Units: survival and classification tasks resample their rows (patients, encounters, stays);
sequential tasks resample *patients* (the first id column), each drawn patient with all its hours —
never single hours, whose utilities and labels only make sense within the patient's stay. The ECE
of a sequential task is then computed over the drawn patients' hours.

How: the resamples are multiplicity counts (:func:`task_resample_weights`, ``np.bincount`` of the
drawn positions), and every metric is called once with that weight matrix - the same kernel that
computes the point value, which sorts the data once and re-weighs it per replicate. Nothing is
subsampled: all ``n_boot`` replicates of both measures are computed, so replicate b of the score
and of the ECE always describe the same resample. Timings are in ``docs/performance.md``
("Bootstrap replicates").
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from automd_analysis import metrics
from automd_analysis.docstrings import fill_doc
from automd_analysis.scoring.metrics_for import (
    ECE_BINS,
    SubmissionEvaluation,
    metric_inputs,
    primary_metric,
)

__all__ = [
    "REPLICATE_COLUMNS",
    "RunReplicates",
    "replicates_frame",
    "resample_seed",
    "run_replicates",
    "task_resample_indices",
    "task_resample_weights",
]

#: Columns of the tidy replicates table (one row per run and replicate).
REPLICATE_COLUMNS: tuple[str, ...] = ("run_id", "replicate", "score", "ece")

#: The References section of the task resamples (the nonparametric bootstrap).
_EFRON_TIBSHIRANI_CH6 = """
References
----------
Efron, B., Tibshirani, R. (1993). An Introduction to the Bootstrap, ch. 6. Chapman & Hall.
"""


def resample_seed(task_id: str, seed: int = 0) -> list[int]:
    """Entropy of a task's resamples: ``[seed, four 32-bit words of sha256(task id)]``.

    See Also
    --------
    task_resample_indices : the resamples this seeds.

    Examples
    --------
    >>> resample_seed("demo_support", 0)[0]
    0
    >>> resample_seed("a") != resample_seed("b")
    True
    """
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}.")
    digest = hashlib.sha256(str(task_id).encode("utf-8")).digest()
    words = np.frombuffer(digest[:16], dtype="<u4")
    return [int(seed), *(int(w) for w in words)]


@fill_doc(efron_tibshirani_ch6=_EFRON_TIBSHIRANI_CH6)
def task_resample_indices(task_id: str, n_units: int, n_boot: int, seed: int = 0) -> np.ndarray:
    """The resample positions every submission on ``task_id`` is evaluated on.

    ``bootstrap_indices(n_units, n_boot, seed=resample_seed(task_id, seed))``: shape
    ``(n_boot, n_units)``, row b = the units of replicate b (rows, or patients of a sequential task
    in order of first appearance). Depends only on (task id, n_units, n_boot, seed), and the first
    replicates do not change when ``n_boot`` grows.

    See Also
    --------
    automd_analysis.metrics.bootstrap_indices : the resampling scheme.

    {efron_tibshirani_ch6}

    Examples
    --------
    >>> idx = task_resample_indices("demo_support", 5, 3)
    >>> idx.shape
    (3, 5)
    >>> bool((task_resample_indices("demo_support", 5, 2) == idx[:2]).all())
    True
    """
    return metrics.bootstrap_indices(n_units, n_boot, seed=resample_seed(task_id, seed))


@fill_doc(efron_tibshirani_ch6=_EFRON_TIBSHIRANI_CH6)
def task_resample_weights(task_id: str, n_units: int, n_boot: int, seed: int = 0) -> np.ndarray:
    """Multiplicities of the resamples of :func:`task_resample_indices`, shape ``(n_boot, n_units)``.

    Row b counts the draws of each unit in replicate b (``np.bincount`` of row b of the indices):
    the ``weights=`` every metric takes.

    See Also
    --------
    automd_analysis.metrics.bootstrap_weights : the counting.

    {efron_tibshirani_ch6}

    Examples
    --------
    >>> w = task_resample_weights("demo_support", 5, 3)
    >>> idx = task_resample_indices("demo_support", 5, 3)
    >>> bool((w[1] == np.bincount(idx[1], minlength=5)).all())
    True
    """
    return metrics.bootstrap_weights(n_units, n_boot, seed=resample_seed(task_id, seed))


@dataclass(frozen=True)
class RunReplicates:
    """Bootstrap replicates and percentile intervals of one submission.

    Attributes
    ----------
    score, ece : numpy.ndarray of shape (n_boot,)
        Normalised score (eq. (1), clipped) and ECE on each resample (``nan`` where undefined).
    score_ci_low, score_ci_high, ece_ci_low, ece_ci_high : float
        Percentile intervals (``nan`` with fewer than two finite replicates).
    n_boot, seed : int
    alpha : float
    n_units : int
        Resampling units of the test set (rows; patients for sequential tasks).
    warnings : list of str
        Messages of undefined replicates (each metric reports how many were ``nan``).
    """

    score: np.ndarray = field(repr=False)
    ece: np.ndarray = field(repr=False)
    score_ci_low: float
    score_ci_high: float
    ece_ci_low: float
    ece_ci_high: float
    n_boot: int
    seed: int
    alpha: float
    n_units: int
    warnings: list[str] = field(default_factory=list)

    def ci_fields(self) -> dict[str, float]:
        """``{score_ci_low, score_ci_high, ece_ci_low, ece_ci_high}`` for a score-store row."""
        return {
            "score_ci_low": self.score_ci_low,
            "score_ci_high": self.score_ci_high,
            "ece_ci_low": self.ece_ci_low,
            "ece_ci_high": self.ece_ci_high,
        }

    def head(self, k: int) -> RunReplicates:
        """The first ``k`` replicates with their own percentile intervals.

        The resamples are prefix-stable (:func:`task_resample_indices`), so this is what
        :func:`run_replicates` gives with ``n_boot = k`` (apart from ``warnings``, which are left
        empty: they counted the undefined replicates of all ``n_boot``).

        Examples
        --------
        >>> res = RunReplicates(np.array([0.5, 0.6, 0.9]), np.array([0.1, 0.2, 0.3]), 0.5, 0.9,
        ...                     0.1, 0.3, n_boot=3, seed=0, alpha=0.05, n_units=10)
        >>> h = res.head(2)
        >>> h.n_boot, h.score.tolist(), round(h.score_ci_high, 4)
        (2, [0.5, 0.6], 0.5975)
        """
        if not 2 <= k <= self.n_boot:
            raise ValueError(f"k must lie in [2, {self.n_boot}], got {k}.")
        score, ece = self.score[:k], self.ece[:k]
        s_low, s_high = metrics.percentile_interval(score, self.alpha)
        e_low, e_high = metrics.percentile_interval(ece, self.alpha)
        return RunReplicates(score=score, ece=ece, score_ci_low=s_low, score_ci_high=s_high,
                             ece_ci_low=e_low, ece_ci_high=e_high, n_boot=int(k), seed=self.seed,
                             alpha=self.alpha, n_units=self.n_units)  # fmt: skip

    def to_dict(self) -> dict:
        """JSON-ready dict (floats as Python floats, NaN as ``None``), inverse of :meth:`from_dict`."""

        def clean(values) -> list:
            return [None if not math.isfinite(v) else float(v) for v in np.asarray(values)]

        out = {k: (None if not math.isfinite(v) else v) for k, v in self.ci_fields().items()}
        return out | {
            "score": clean(self.score),
            "ece": clean(self.ece),
            "n_boot": self.n_boot,
            "seed": self.seed,
            "alpha": self.alpha,
            "n_units": self.n_units,
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_dict(cls, data: dict) -> RunReplicates:
        """Rebuild from :meth:`to_dict` output (e.g. a cache entry)."""

        def arr(values) -> np.ndarray:
            return np.array([math.nan if v is None else v for v in values], dtype=np.float64)

        def num(value) -> float:
            return math.nan if value is None else float(value)

        return cls(
            score=arr(data["score"]),
            ece=arr(data["ece"]),
            score_ci_low=num(data["score_ci_low"]),
            score_ci_high=num(data["score_ci_high"]),
            ece_ci_low=num(data["ece_ci_low"]),
            ece_ci_high=num(data["ece_ci_high"]),
            n_boot=int(data["n_boot"]),
            seed=int(data["seed"]),
            alpha=float(data["alpha"]),
            n_units=int(data["n_units"]),
            warnings=list(data.get("warnings", [])),
        )


@fill_doc(ece_bins=ECE_BINS)
def run_replicates(
    kind: str,
    metric: str,
    null_score: float,
    labels,
    predictions,
    *,
    task_id: str,
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    weights: np.ndarray | None = None,
    ece_bins: int = 10,
    evaluation: SubmissionEvaluation | None = None,
) -> RunReplicates:
    """Bootstrap replicates of the normalised score and the ECE of one validated submission.

    For resample b of the task's test units (:func:`task_resample_indices`), with m_b the primary
    metric (:data:`~automd_analysis.metrics.BUILTIN_METRICS`) on the resampled units,

    .. math:: s_b = \\min\\bigl(1, \\max\\bigl(0, (m_b - m_0) / (1 - m_0)\\bigr)\\bigr)

    and ECE_b the task kind's ECE (10 equal-width bins over units / patient-hours; survival: the
    Kaplan-Meier ECE) on the same resample. Each replicate equals what
    :func:`~automd_analysis.scoring.metrics_for.metric_record` would report for the resampled test
    set (sequential: each drawn copy of a patient counted as its own patient). The intervals are
    the percentile intervals of the finite replicates.

    Parameters
    ----------
    kind, metric, null_score, labels, predictions
        As :func:`~automd_analysis.scoring.metrics_for.metric_record`.
    task_id : str
        The task's id: it seeds the resamples, so all runs on a task share them.
    n_boot : int, default 1000
    seed : int, default 0
        The report seed.
    alpha : float, default 0.05
        1 - confidence level of the intervals.
    weights : numpy.ndarray of shape (n_boot, n_units), optional
        The resample weights, when the caller already has them
        (:func:`task_resample_weights` of the same task, ``n_boot`` and ``seed``).
    {ece_bins}
    evaluation : SubmissionEvaluation, optional
        The submission's kernels with these resample weights: its primary metric and ECE were
        evaluated on the observed data and on the resamples in one call each, which this reads
        (made here from ``weights`` when not given).

    Returns
    -------
    RunReplicates

    Raises
    ------
    ValueError
        Unknown kind/metric, predictions not aligned to the labels, bad ``n_boot`` / ``seed`` /
        ``alpha``.

    See Also
    --------
    task_resample_weights : the resamples, as the weights the metrics take.
    replicates_frame : the tidy table the aggregate intervals read.

    References
    ----------
    Efron, B., Tibshirani, R. (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from automd_analysis.submissions import AlignedPredictions
    >>> from automd_analysis.tasks import TaskLabels
    >>> y = np.array([0, 0, 1, 1, 0, 1, 0, 1], dtype=np.int8)
    >>> p = np.array([0.1, 0.4, 0.35, 0.8, 0.2, 0.9, 0.3, 0.6])
    >>> labels = TaskLabels(ids=pd.DataFrame({"id": [str(i) for i in range(8)]}), label=y)
    >>> res = run_replicates("classification", "auroc", 0.5, labels,
    ...                      AlignedPredictions(probability=p), task_id="demo", n_boot=200)
    >>> res.score.shape, bool(res.score_ci_low <= res.score_ci_high)
    ((200,), True)
    """
    if evaluation is None:
        primary_metric(kind, metric)
        if weights is None:
            n_units = metric_inputs(kind, labels, predictions).n_units
            weights = task_resample_weights(task_id, n_units, n_boot, seed)
        evaluation = SubmissionEvaluation(
            kind, labels, predictions, metric=metric, weights=weights, ece_bins=ece_bins
        )
    if evaluation.weights is None:
        raise ValueError("the evaluation has no resample weights, so it has no replicates")
    w = evaluation.weights
    n_units = evaluation.inputs.n_units
    primary, scored_ece = evaluation.primary, evaluation.scored_ece
    raw, ece = primary.replicates, scored_ece.replicates
    messages = [*primary.replicate_warnings, *scored_ece.replicate_warnings]
    score = np.asarray(metrics.normalized_score(raw, null_score), dtype=np.float64)
    s_low, s_high = metrics.percentile_interval(score, alpha)
    e_low, e_high = metrics.percentile_interval(ece, alpha)
    return RunReplicates(
        score=score,
        ece=np.asarray(ece, dtype=np.float64),
        score_ci_low=s_low,
        score_ci_high=s_high,
        ece_ci_low=e_low,
        ece_ci_high=e_high,
        n_boot=int(w.shape[0]),
        seed=int(seed),
        alpha=float(alpha),
        n_units=int(n_units),
        warnings=sorted(set(messages)),
    )


def replicates_frame(run_id: str, result: RunReplicates) -> pd.DataFrame:
    """The tidy rows of one run: ``run_id``, ``replicate`` (0-based), ``score``, ``ece``.

    Concatenate the frames of every valid selected run to get the store's ``replicates`` table
    (read by :func:`automd_analysis.stats.resample.run_draws`).

    See Also
    --------
    automd_analysis.stats.resample.run_draws : reads these rows.

    Examples
    --------
    >>> import numpy as np
    >>> res = RunReplicates(np.array([0.5, 0.6]), np.array([0.1, 0.2]), 0.5, 0.6, 0.1, 0.2,
    ...                     n_boot=2, seed=0, alpha=0.05, n_units=10)
    >>> replicates_frame("main/a/t/rep0", res).to_dict("list")["replicate"]
    [0, 1]
    """
    n = len(result.score)
    return pd.DataFrame(
        {
            "run_id": np.full(n, str(run_id), dtype=object),
            "replicate": np.arange(n, dtype=np.int64),
            "score": np.asarray(result.score, dtype=np.float64),
            "ece": np.asarray(result.ece, dtype=np.float64),
        },
        columns=list(REPLICATE_COLUMNS),
    )
