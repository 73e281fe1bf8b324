"""FML-bench process-level metrics (FML-bench section 3.4 and App. E), on Auto-MD-bench runs and on
FML-bench's own (process-only) tasks.

Per run, from the score store: its development steps (``steps.parquet``), versions
(``scores.parquet``; for a process-only task, its steps), run record (``runs.parquet``), the task's
improvement scale (``tasks.parquet``) and, for the exploration metrics, each version's code text
(``code.parquet``, published by the scorer from the archive):

========================  =====================================================================
metric                    definition (T = the run's number of development steps)
========================  =====================================================================
auc_over_steps            (1/T) sum_t P_best(t), P_best(t) = max(0, max_{s<=t} p_val(s))
first_improvement_step    first t with p_val(t) > 0; NaN if none
best_improvement_step     first t whose reported validation value is the run's best in the
                          metric's direction (max, or min for a loss; exact float equality;
                          ties -> the first); NaN without any value
late_gain_fraction        (P_best(T) - P_best(floor(T/2))) / P_best(T), P_best(0) = 0; NaN when
                          P_best(T) <= 1e-12
valid_step_ratio          #valid steps / T
val_test_gap              p_val(selected) - p_test(selected) (signed); val_test_gap_abs = |.|
token_cost_m              tokens_total / 1e6
wall_clock_h              run_minutes / 60
exploration_spread        mean_t ||e_t - mean(e)||_2
exploration_reach         max_t ||e_t - e_base||_2, e_base = the run's first version
exploration_uniqueness    #clusters / n (agglomerative, cosine, average linkage, threshold
                          0.015; zero vectors form one extra cluster)
effective_dim             (sum lambda)^2 / sum lambda^2, lambda = covariance eigenvalues
opportunity_density       phi_opp = sum_{k in P} imp_k / (sum_{k in P} d_k / d_max)
========================  =====================================================================

**Normalised validation improvement.** FML-bench normalises a validation metric against the task's
untouched baseline code, in the metric's direction: ``p_val = max(0, s (f(v) - f(b)) / |p_best -
p_worst|)`` (:func:`improvement_over_baseline`; ``s = -1`` for a loss, ``f`` the task's transform).
A process-only task (FML-bench's own; :class:`~automd_analysis.tasks.ProcessTask`) takes ``b``,
the range and ``f`` from its declaration; without a known range, AUC-over-steps and opportunity
density are NaN and first improvement and late gain use the unscaled ``s (f(v) - f(b))``. Our
medical tasks have no baseline code; the natural zero is the null predictions, so ``p_val =
clip((v - m0) / (1 - m0), 0, 1)`` - the paper's eq. (1) applied to the agent's reported validation
score ``v`` with the task's null score ``m0`` (0.5 for AUROC and C^td, 0 otherwise); every medical
primary metric is higher-is-better. ``p_test`` is the score store's normalised test score of the
same file; a process-only task has none (val-test gap and final score NaN).

**Steps.** A step enters the validation trajectory when ``ok`` and its reported score is finite.
A step is *valid* (valid-step ratio) when ``ok`` and, if it wrote a prediction file, that file
passed the submission checks (the analogue of FML-bench's "task-specific constraint violation");
in a process-only task, when ``ok``. Step indices are 1-based positions in the run's step order.

**Where we follow the paper, not FML-bench's released code** (docs/decisions.md items 7 and
60, which list every difference from its ``compute_agent_metrics.py``):
best-improvement step takes the *first* step reaching the best (the code takes the last);
late-gain uses ``P_best(floor(T/2))`` with ``P_best(0) = 0``, so ``T = 1`` gives 1 when the only
step improved (the code's index wraps and gives 0); first improvement uses ``> 0`` (the code uses
``> 1e-15``); the valid-step ratio divides by the run's number of steps; exploration embeddings are
averaged over chunks, not summed (see :mod:`~automd_analysis.analysis.embeddings`).

**Opportunity density** (the paper gives the formula, not ``imp_k`` / ``d_k``): for step ``k`` whose
prediction file has a predecessor version (its nearest ancestor version for tree agents, the
previous version in time for linear agents; any validity), ``imp_k = P_best(k) - P_best(k-1)`` (the
gain of the best-so-far normalised validation improvement at that step) and ``d_k = ||e_k -
e_pred(k)||_2`` (the code change). ``P = {k : imp_k > 0}``, ``d_max = max_k d_k`` over steps with a
predecessor. ``phi_opp = 0`` when no such step improves; NaN when no step has a predecessor or the
improving steps changed no code (zero denominator). High values = gains come from small code
changes (dense opportunities). :func:`opportunity_partition` averages per task and splits the tasks
at the median (``dense`` if above the median, else ``sparse``).

**Pairwise win-rate** (:func:`pairwise_win_rate`): per task, A strictly beats B on a pair of runs
when A's run is valid and either B's is invalid or A's raw test metric is strictly higher (all
primary metrics are higher-is-better); ties and invalid-vs-invalid are not wins. A's strict-win
fraction against B on a task averages over all pairs of their runs (with one run each this is the
paper's indicator); ``WR(A)`` averages over opponents and tasks where both ran.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from automd_analysis.analysis.catalog.methods_and_development import (
    PROCESS_SPEARMAN,
    PROCESS_TABLE4,
)
from automd_analysis.analysis.development import filter_runs, selected_rows, version_rows
from automd_analysis.analysis.embeddings import embed_code
from automd_analysis.analysis.store import ScoreStore
from automd_analysis.errors import ScoreStoreError
from automd_analysis.precision import comparable
from automd_analysis.schema import NULL_SCORES, PROCESS_KIND, RUN_KEY
from automd_analysis.stats.correlation import TEST_NAME as STRATIFIED_TEST
from automd_analysis.stats.correlation import within_cell_spearman
from automd_analysis.stats.intervals import check_alpha, estimate
from automd_analysis.stats.multiplicity import holm_adjust
from automd_analysis.stats.resample import resample
from automd_analysis.stats.rules import mean_over, row_groups
from automd_analysis.version_pairs import (
    as_bool,
    chronological,
    form_version_pairs,
    require_columns,
)

__all__ = [
    "LATE_GAIN_MIN_TOTAL",
    "METRIC_DIMENSIONS",
    "PROCESS_METRICS",
    "UNIQUENESS_THRESHOLD",
    "TrajectoryScale",
    "agent_means",
    "auc_over_steps",
    "best_improvement_step",
    "best_so_far",
    "effective_dimension",
    "exploration_reach",
    "exploration_spread",
    "exploration_uniqueness",
    "first_improvement_step",
    "improvement_over_baseline",
    "late_gain_fraction",
    "normalised_improvement",
    "opportunity_density",
    "opportunity_partition",
    "pairwise_win_rate",
    "process_metrics",
    "process_summary",
    "spearman_table",
    "val_test_gap",
    "valid_step_ratio",
]

#: Cosine distance below which two code embeddings merge into one cluster (FML-bench).
UNIQUENESS_THRESHOLD = 0.015

#: The twelve metrics of FML-bench Table 4 with their analysis dimension, in its row order.
METRIC_DIMENSIONS: Mapping[str, str] = {
    "exploration_spread": "Exploration",
    "exploration_uniqueness": "Exploration",
    "exploration_reach": "Exploration",
    "effective_dim": "Exploration",
    "val_test_gap_abs": "Generalization",
    "valid_step_ratio": "Reliability",
    "auc_over_steps": "Efficiency",
    "first_improvement_step": "Efficiency",
    "late_gain_fraction": "Efficiency",
    "best_improvement_step": "Efficiency",
    "token_cost_m": "Cost",
    "wall_clock_h": "Cost",
}
#: Column names of the twelve metrics.
PROCESS_METRICS: tuple[str, ...] = tuple(METRIC_DIMENSIONS)


# --------------------------------------------------------------------------------------------------
# trajectory metrics (pure functions on per-step arrays)
# --------------------------------------------------------------------------------------------------


def normalised_improvement(values, null_score: float) -> np.ndarray:
    """Eq. (1) normalisation ``clip((v - m0) / (1 - m0), 0, 1)``; NaN stays NaN.

    Parameters
    ----------
    values : array-like of float
        Raw metric values (higher is better), NaN where a step has none.
    null_score : float
        The task's m0, < 1.
    """
    if not null_score < 1:
        raise ValueError(f"null_score must be < 1, got {null_score}")
    v = np.asarray(values, dtype=np.float64)
    return np.clip((v - null_score) / (1.0 - null_score), 0.0, 1.0)


def improvement_over_baseline(values, baseline: float, span: float,
                              higher_is_better: bool) -> np.ndarray:  # fmt: skip
    """FML-bench's normalised improvement of each value over the task's baseline (App. E).

    .. math:: \\hat p(v) = \\max\\!\\left(0, \\frac{s\\,(v - p_{baseline})}{|p_{best} -
              p_{worst}|}\\right), \\qquad s = +1 \\text{ (higher is better)}, -1 \\text{ (lower)}

    Parameters
    ----------
    values : array-like of float
        Reported validation values (NaN where a step has none).
    baseline : float
        The untouched baseline's validation value ``p_baseline``.
    span : float
        ``|p_best - p_worst|`` (> 0).
    higher_is_better : bool
        The metric's direction: for a loss an improvement is a decrease.

    Returns
    -------
    ndarray
        ``p_hat`` per value, >= 0 (not capped above: FML-bench's unbounded-worst tasks); NaN
        where the value is NaN, and everywhere when ``baseline`` or ``span`` is not finite.

    See Also
    --------
    normalised_improvement : the medical tasks' eq. (1), the same with ``p_baseline = m0``,
        ``span = 1 - m0`` and values capped at 1.

    References
    ----------
    .. [1] FML-bench, section 3.3 and App. E ("Normalized test improvement", "Unbounded-worst
       convention").

    Examples
    --------
    >>> improvement_over_baseline([0.40, 0.55, 0.30], baseline=0.5, span=0.5,
    ...                           higher_is_better=False)
    array([0.2, 0. , 0.4])
    """
    v = np.asarray(values, dtype=np.float64)
    if not (math.isfinite(baseline) and math.isfinite(span) and span > 0):
        return np.full(v.shape, np.nan)
    sign = 1.0 if higher_is_better else -1.0
    return np.maximum(sign * (v - baseline) / span, 0.0)


@dataclass(frozen=True)
class TrajectoryScale:
    """How one task turns a run's reported validation values into the improvement ``p_val``.

    ``transform`` applies to the reported values first (``neg_log10``: FML-bench's unlearning
    task); ``higher_is_better``, ``baseline`` and ``span`` refer to the transformed scale. A
    medical task is ``(True, m0, 1 - m0)`` capped at 1 (eq. (1)); a process-only task takes its
    declaration (:class:`~automd_analysis.tasks.ProcessTask`). An unknown ``span`` (NaN) leaves
    AUC-over-steps and opportunity density undefined; the scale-free metrics (first improvement,
    late gain) are then computed on the unscaled difference from the baseline.
    """

    higher_is_better: bool
    baseline: float
    span: float
    transform: str = "none"
    cap: float = math.inf
    process_only: bool = False

    def values(self, reported) -> np.ndarray:
        """The reported values on the scale the direction refers to (``transform`` applied)."""
        v = np.asarray(reported, dtype=np.float64)
        if self.transform == "neg_log10":
            with np.errstate(divide="ignore", invalid="ignore"):
                return np.where(v > 0, -np.log10(np.where(v > 0, v, 1.0)), np.nan)
        return v

    def improvement(self, values, *, unit_span: bool = False) -> np.ndarray:
        """``p_val`` of transformed ``values`` (``unit_span``: divided by 1, not the span)."""
        span = 1.0 if unit_span else self.span
        p = improvement_over_baseline(values, self.baseline, span, self.higher_is_better)
        return np.minimum(p, self.cap)

    @property
    def scaled(self) -> bool:
        """Whether the span (and the baseline) is known."""
        return math.isfinite(self.span) and math.isfinite(self.baseline)


def best_so_far(improvement) -> np.ndarray:
    """``P_best(t) = max(0, max_{s <= t} p(s))`` ignoring NaN steps (0 before any value)."""
    p = np.asarray(improvement, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError("improvement must be 1-D")
    return np.maximum.accumulate(np.where(np.isnan(p), 0.0, np.maximum(p, 0.0))) if p.size else p


def auc_over_steps(improvement) -> float:
    """AUC-over-steps: ``(1/T) sum_{t=1..T} P_best(t)`` (left Riemann mean); NaN when T = 0.

    >>> auc_over_steps([np.nan, 0.2, 0.1, 0.4])
    0.2
    """
    p = best_so_far(improvement)
    return float(p.mean()) if p.size else float("nan")


def first_improvement_step(improvement) -> float:
    """First 1-based step with ``p(t) > 0`` (validation beats the null predictions); NaN if none."""
    p = np.asarray(improvement, dtype=np.float64)
    hits = np.flatnonzero(np.nan_to_num(p, nan=0.0) > 0)
    return float(hits[0] + 1) if hits.size else float("nan")


def best_improvement_step(values, higher_is_better: bool = True) -> float:
    """First 1-based step whose value is the run's best in the metric's direction.

    .. math:: t^\\star = \\min\\{t : v_t = \\operatorname{best}_s v_s\\}, \\qquad
              \\operatorname{best} = \\max \\text{ (higher is better) or } \\min

    Parameters
    ----------
    values : array-like of float
        The reported validation values in step order (on the scale the direction refers to), NaN
        for steps without one.
    higher_is_better : bool, default True
        The metric's direction: a loss (lower is better) takes the step of the smallest value.

    Returns
    -------
    float
        The step (exact equality; ties resolve to the first step, as the paper's "first
        achieved"; FML-bench's code takes the last); NaN without any value.

    References
    ----------
    .. [1] FML-bench, App. E "Best-improvement step".

    Examples
    --------
    >>> best_improvement_step([0.3, 0.5, 0.5, 0.4])
    2.0
    >>> best_improvement_step([0.9, 0.4, np.nan, 0.6], higher_is_better=False)
    2.0
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0 or np.isnan(v).all():
        return float("nan")
    best = np.nanmax(v) if higher_is_better else np.nanmin(v)
    return float(np.flatnonzero(v == best)[0] + 1)


#: A final best-so-far improvement at or below this gives a NaN late-gain fraction (FML-bench's
#: ``compute_agent_metrics.py``: the fraction of a vanishing gain is noise).
LATE_GAIN_MIN_TOTAL = 1e-12


def late_gain_fraction(improvement) -> float:
    """Share of the final best-so-far improvement gained after step ``floor(T/2)``.

    ``(P_best(T) - P_best(floor(T/2))) / P_best(T)`` with ``P_best(0) = 0``; NaN when ``T = 0`` or
    ``P_best(T) <= 1e-12`` (:data:`LATE_GAIN_MIN_TOTAL`, as FML-bench's script). For odd T the
    middle step counts as second half (``floor``); ``T = 1`` gives 1 when the single step improved.

    >>> late_gain_fraction([0.1, 0.2, 0.2, 0.5])
    0.6
    >>> late_gain_fraction([1e-13, 2e-13])
    nan
    """
    p = best_so_far(improvement)
    if p.size == 0 or p[-1] <= LATE_GAIN_MIN_TOTAL:
        return float("nan")
    half = p.size // 2
    at_half = p[half - 1] if half >= 1 else 0.0
    return float((p[-1] - at_half) / p[-1])


def valid_step_ratio(valid) -> float:
    """``#valid steps / T``; NaN when the run has no steps."""
    v = np.asarray(valid, dtype=bool)
    return float(v.mean()) if v.size else float("nan")


def val_test_gap(val_value: float, test_score: float, null_score: float) -> tuple[float, float]:
    """Signed and absolute val-test gap on normalised scores.

    ``p_val = clip((val_value - m0)/(1 - m0), 0, 1)``; ``gap = p_val - test_score`` (positive =
    validation more optimistic than test). NaN when either input is missing.
    """
    if not (math.isfinite(val_value) and math.isfinite(test_score)):
        return float("nan"), float("nan")
    gap = float(normalised_improvement(val_value, null_score)) - float(test_score)
    return gap, abs(gap)


# --------------------------------------------------------------------------------------------------
# exploration metrics (pure functions on an embedding matrix, one row per version)
# --------------------------------------------------------------------------------------------------


def _matrix(embeddings) -> np.ndarray:
    e = np.asarray(embeddings, dtype=np.float64)
    if e.ndim != 2:
        raise ValueError(f"embeddings must be 2-D (versions x dims), got shape {e.shape}")
    if not np.isfinite(e).all():
        raise ValueError("embeddings must be finite")
    return e


def exploration_spread(embeddings) -> float:
    """``D_spread = (1/n) sum_t ||e_t - mean(e)||_2``; NaN for n = 0."""
    e = _matrix(embeddings)
    if e.shape[0] == 0:
        return float("nan")
    return float(np.linalg.norm(e - e.mean(axis=0), axis=1).mean())


def exploration_reach(embeddings, base) -> float:
    """``D_reach = max_t ||e_t - e_base||_2``; NaN for n = 0."""
    e = _matrix(embeddings)
    b = np.asarray(base, dtype=np.float64)
    if b.shape != (e.shape[1],):
        raise ValueError(f"base must have shape ({e.shape[1]},), got {b.shape}")
    if e.shape[0] == 0:
        return float("nan")
    return float(np.linalg.norm(e - b, axis=1).max())


def exploration_uniqueness(embeddings, threshold: float = UNIQUENESS_THRESHOLD) -> float:
    """``U = #clusters / n`` (FML-bench App. E).

    Non-zero embeddings (norm > 1e-8) are clustered with scikit-learn's
    ``AgglomerativeClustering(metric="cosine", linkage="average", distance_threshold=threshold)``
    (clusters whose average cosine distance is below the threshold merge); all zero embeddings
    (empty code) count as one extra cluster; with fewer than two non-zero embeddings each is its
    own cluster. NaN for n = 0.
    """
    from sklearn.cluster import AgglomerativeClustering

    e = _matrix(embeddings)
    n = e.shape[0]
    if n == 0:
        return float("nan")
    nonzero = np.linalg.norm(e, axis=1) > 1e-8
    k = int(nonzero.sum())
    if k >= 2:
        model = AgglomerativeClustering(
            n_clusters=None, metric="cosine", linkage="average", distance_threshold=threshold
        )
        clusters = int(model.fit(e[nonzero]).n_clusters_)
    else:
        clusters = k
    clusters += int((~nonzero).any())
    return clusters / n


def effective_dimension(embeddings) -> float:
    """Participation ratio ``(sum lambda)^2 / sum lambda^2`` of the covariance eigenvalues.

    ``lambda`` are the eigenvalues of the sample covariance ``C = Xc' Xc / (n - 1)`` of the centred
    embeddings ``Xc``. Since ``sum lambda = tr C`` and ``sum lambda^2 = ||C||_F^2``, and ``Xc' Xc``
    and the n x n Gram matrix ``G = Xc Xc'`` share their non-zero eigenvalues, the ratio is computed
    exactly as ``tr(G)^2 / ||G||_F^2`` (no eigen-decomposition; O(n^2 d)). 0 when ``n < 2`` or all
    eigenvalues are zero (FML-bench convention).
    """
    e = _matrix(embeddings)
    n = e.shape[0]
    if n < 2:
        return 0.0
    centred = e - e.mean(axis=0)
    gram = centred @ centred.T
    denom = float((gram * gram).sum())
    return float(np.trace(gram) ** 2 / denom) if denom > 0 else 0.0


def opportunity_density(improvement_gain, distance) -> float:
    """``phi_opp = sum_{k in P} imp_k / (sum_{k in P} d_k / d_max)``, ``P = {k : imp_k > 0}``.

    Parameters
    ----------
    improvement_gain : array-like of float
        ``imp_k`` of each step that has a predecessor version (see module docstring).
    distance : array-like of float
        ``d_k``: code-embedding distance of the same steps from their predecessor.

    Returns
    -------
    float
        0 when no step improves; NaN when there are no steps or the denominator is 0.
    """
    imp = np.asarray(improvement_gain, dtype=np.float64)
    d = np.asarray(distance, dtype=np.float64)
    if imp.shape != d.shape or imp.ndim != 1:
        raise ValueError("improvement_gain and distance must be 1-D of the same length")
    keep = np.isfinite(imp) & np.isfinite(d)
    imp, d = imp[keep], d[keep]
    if imp.size == 0:
        return float("nan")
    improving = imp > 0
    if not improving.any():
        return 0.0
    d_max = d.max()
    denom = d[improving].sum() / d_max if d_max > 0 else 0.0
    return float(imp[improving].sum() / denom) if denom > 0 else float("nan")


# --------------------------------------------------------------------------------------------------
# per-run table
# --------------------------------------------------------------------------------------------------

_STEP_COLS = ("step", "ok", "reported_val_score", "version")
_RUN_COLS = ("search", "metric", "run_minutes", "tokens_total", "reported_val_score")
#: ``tasks.parquet`` columns of the improvement scale (docs/score_store.md).
_SCALE_COLS = ("task_kind", "higher_is_better", "baseline_value", "value_transform",
               "best_value", "worst_value")  # fmt: skip


def _float(value) -> float:
    """A float, NaN for missing values (None, pd.NA, NaN, non-numbers)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _null_score(metric: str, run_id: str) -> float:
    try:
        return NULL_SCORES[str(metric)]
    except KeyError:
        raise ScoreStoreError(
            f"run {run_id!r} has unknown metric {metric!r}",
            path="runs.parquet",
            location="metric",
            code="store.metric",
            fix=f"metric must be one of {sorted(NULL_SCORES)}",
        ) from None


def _process_scales(store: ScoreStore) -> dict[str, TrajectoryScale]:
    """The scale of every process-only task of the store's ``tasks`` table (by task id)."""
    tasks = store.tasks
    if tasks is None or not set(_SCALE_COLS) <= set(tasks.columns):
        return {}
    out = {}
    for row in tasks[tasks["task_kind"] == PROCESS_KIND].itertuples(index=False):
        best, worst = _float(row.best_value), _float(row.worst_value)
        span = abs(best - worst)
        out[str(row.task)] = TrajectoryScale(
            higher_is_better=bool(row.higher_is_better),
            baseline=_float(row.baseline_value),
            span=span if math.isfinite(span) and span > 0 else float("nan"),
            transform=str(row.value_transform),
            process_only=True,
        )
    return out


def _scale(run, scales: Mapping[str, TrajectoryScale]) -> TrajectoryScale:
    """The run's task scale: its process-only declaration, else eq. (1) with the metric's m0."""
    if run.task in scales:
        return scales[run.task]
    m0 = _null_score(run.metric, run.run_id)
    return TrajectoryScale(higher_is_better=True, baseline=m0, span=1.0 - m0, cap=1.0)


def _step_versions(st: pd.DataFrame) -> pd.DataFrame:
    """A process-only run's versions (its steps), shaped as ``scores.parquet`` version rows."""
    has = st["version"].map(lambda v: isinstance(v, str) and bool(v))
    rows = st[has.to_numpy(dtype=bool)]
    return pd.DataFrame(
        {
            "version": rows["version"].astype(str).to_numpy(),
            "step": rows["step"].to_numpy(),
            "elapsed_min": pd.to_numeric(rows.get("elapsed_min"), errors="coerce").to_numpy()
            if "elapsed_min" in rows
            else np.full(len(rows), np.nan),
            "parent": rows["parent"].to_numpy() if "parent" in rows else [None] * len(rows),
            "valid": as_bool(rows["ok"]).to_numpy(),
        }
    )


def _exploration(
    versions: pd.DataFrame,
    texts: Mapping[str, str],
    embed: Callable[[Sequence[str]], tuple[np.ndarray, str]],
) -> tuple[dict, dict[str, np.ndarray], str | None]:
    """Exploration metrics over the versions that have code, and their embeddings by version."""
    nan = float("nan")
    metrics = {
        "exploration_spread": nan,
        "exploration_reach": nan,
        "exploration_uniqueness": nan,
        "effective_dim": nan,
        "n_versions_embedded": 0,
    }
    ordered = chronological(versions)
    ids = [v for v in ordered["version"].astype(str) if v in texts]
    if not ids:
        return metrics, {}, None
    e, backend = embed([texts[v] for v in ids])
    e = _matrix(e)
    metrics.update(
        exploration_spread=exploration_spread(e),
        exploration_reach=exploration_reach(e, e[0]),
        exploration_uniqueness=exploration_uniqueness(e),
        effective_dim=effective_dimension(e),
        n_versions_embedded=len(ids),
    )
    return metrics, dict(zip(ids, e, strict=True)), backend


def _trajectory(st: pd.DataFrame, scale: TrajectoryScale, version_valid: Mapping[str, bool]):
    """The trajectory metrics of one run's steps, its step versions and ``p_val`` per step."""
    ok = as_bool(st["ok"]).to_numpy()
    reported = pd.to_numeric(st["reported_val_score"], errors="coerce").to_numpy(dtype=float)
    values = scale.values(np.where(ok, reported, np.nan))
    step_version = [v if isinstance(v, str) and v else None for v in st["version"]]
    if scale.process_only:  # nothing was scored: a step is valid when it ran
        file_ok = np.ones(len(st), dtype=bool)
    else:
        file_ok = np.array([v is None or version_valid.get(v, False) for v in step_version])
    improvement = scale.improvement(values)
    # first improvement and late gain do not depend on the span: without one, the unscaled gain
    gain = improvement if scale.scaled else scale.improvement(values, unit_span=True)
    metrics = {
        "n_steps": len(st),
        "auc_over_steps": auc_over_steps(improvement) if scale.scaled else float("nan"),
        "first_improvement_step": first_improvement_step(gain),
        "best_improvement_step": best_improvement_step(values, scale.higher_is_better),
        "late_gain_fraction": late_gain_fraction(gain),
        "valid_step_ratio": valid_step_ratio(ok & file_ok) if len(st) else float("nan"),
    }
    return metrics, step_version, improvement


def _opportunity(versions, emb, run, steps, step_version, improvement, scaled: bool) -> float:
    """The run's opportunity density from its embedded versions and step improvements (NaN
    without code or without the task's improvement scale)."""
    if not emb or not scaled:
        return float("nan")
    with_code = versions[versions["version"].astype(str).isin(emb)]
    pairs = form_version_pairs(with_code, str(run.search), valid_only=False, steps=steps)
    predecessor = dict(zip(pairs["later"], pairs["earlier"], strict=True))
    gain = np.diff(np.concatenate([[0.0], best_so_far(improvement)]))
    imp_k, d_k = [], []
    for k, v in enumerate(step_version):
        if v in predecessor:
            imp_k.append(gain[k])
            d_k.append(float(np.linalg.norm(emb[v] - emb[predecessor[v]])))
    return opportunity_density(imp_k, d_k)


def process_metrics(
    store: ScoreStore,
    *,
    backend: str = "auto",
    embedding_cache: str | Path | None = None,
    embed: Callable[[Sequence[str]], tuple[np.ndarray, str]] | None = None,
    experiment: str | None = "main",
    include_reference: bool = False,
) -> pd.DataFrame:
    """The FML-bench process metrics of every run (module docstring gives the definitions).

    Parameters
    ----------
    store : ScoreStore
        Reads ``runs``, ``steps`` (a store without it gives runs without steps), ``scores``,
        ``tasks`` (the scale of process-only tasks) and each version's code text
        (:meth:`~automd_analysis.analysis.store.ScoreStore.code_texts`). A run without code has
        NaN exploration metrics and opportunity density and ``embedding_backend == "none"``.
    backend : {"auto", "minilm", "hashing"}
        Embedding backend for :func:`~automd_analysis.analysis.embeddings.embed_code`.
    embedding_cache : path, optional
        ``cache_dir`` of ``embed_code``: reuse code vectors across calls (notebook re-runs).
    embed : callable, optional
        Replaces ``embed_code`` (texts -> (matrix, backend name)).
    experiment, include_reference
        Which runs (default: the main experiment without the simple baselines).

    Returns
    -------
    DataFrame
        One row per run (sorted by ``run_id``): run key, ``n_steps``, the twelve
        :data:`PROCESS_METRICS`, ``val_test_gap`` (signed), ``opportunity_density``,
        ``final_score`` (penalised normalised test score of the selected submission: invalid => 0;
        NaN for a process-only task or a run not scorable here, which have nothing scored),
        ``selected_valid``, ``n_versions_embedded`` and ``embedding_backend``.
    """
    runs, scores = store.runs, store.scores
    steps = store.steps
    if steps is None:
        steps = pd.DataFrame({c: pd.Series(dtype=object) for c in ("run_id", *_STEP_COLS)})
    require_columns(runs, (*RUN_KEY, *_RUN_COLS), "runs.parquet")
    require_columns(steps, ("run_id", *_STEP_COLS), "steps.parquet")
    require_columns(
        scores, ("run_id", "version", "is_selected", "valid", "score", "elapsed_min", "parent"),
        "scores.parquet",
    )  # fmt: skip
    if embed is None:

        def embed(texts):
            return embed_code(texts, backend=backend, cache_dir=embedding_cache)

    runs = filter_runs(runs, experiment, include_reference).sort_values("run_id")
    scores = scores[scores["run_id"].isin(runs["run_id"])]
    selected = selected_rows(scores)
    selected_valid = as_bool(selected["valid"])
    code = store.code_texts(runs["run_id"])
    scales = _process_scales(store)
    versions_by_run = dict(tuple(version_rows(scores).groupby("run_id", sort=False)))
    steps_by_run = dict(tuple(steps[steps["run_id"].isin(runs["run_id"])].groupby("run_id")))
    rows = []
    for run in runs.itertuples(index=False):
        run_id = run.run_id
        scale = _scale(run, scales)
        row = {col: getattr(run, col) for col in RUN_KEY}
        st = steps_by_run.get(run_id)
        if st is None or st.empty:
            st = steps.iloc[0:0]
        st = st.sort_values("step", kind="mergesort")
        if scale.process_only:
            versions = _step_versions(st)
        else:
            versions = versions_by_run.get(run_id, scores.iloc[0:0])
        version_valid = dict(
            zip(versions["version"].astype(str), as_bool(versions["valid"]), strict=True)
        )

        # --- trajectory over steps
        trajectory, step_version, improvement = _trajectory(st, scale, version_valid)
        row.update(trajectory)

        # --- selected submission, generalisation, cost
        sel_valid = bool(selected_valid.get(run_id, False))
        test = _float(selected.at[run_id, "score"]) if sel_valid else float("nan")
        row["selected_valid"] = sel_valid
        if scale.process_only or run_id not in selected.index:  # nothing scored: no test
            row["final_score"] = float("nan")  # score, no gap; never penalised as 0
            gap, gap_abs = float("nan"), float("nan")
        else:
            row["final_score"] = test if sel_valid and math.isfinite(test) else 0.0
            gap, gap_abs = val_test_gap(_float(run.reported_val_score), test, scale.baseline)
        row["val_test_gap"], row["val_test_gap_abs"] = gap, gap_abs
        row["token_cost_m"] = _float(run.tokens_total) / 1e6
        row["wall_clock_h"] = _float(run.run_minutes) / 60.0

        # --- exploration and opportunity density (need code)
        texts = code.get(run_id) or {}
        explo, emb, used = _exploration(versions, texts, embed)
        row.update(explo)
        row["embedding_backend"] = used or "none"
        row["opportunity_density"] = _opportunity(
            versions, emb, run, steps_by_run.get(run_id), step_version, improvement, scale.scaled
        )
        rows.append(row)
    columns = [
        *RUN_KEY,
        "n_steps",
        *PROCESS_METRICS,
        "val_test_gap",
        "opportunity_density",
        "final_score",
        "selected_valid",
        "n_versions_embedded",
        "embedding_backend",
    ]
    return pd.DataFrame(rows, columns=columns)


# --------------------------------------------------------------------------------------------------
# cross-run tables
# --------------------------------------------------------------------------------------------------


def _backends(per_run: pd.DataFrame) -> str:
    """The embedding backend(s) behind a per-run table, ``;``-joined (``"none"`` without code)."""
    if "embedding_backend" not in per_run:
        return "none"
    used = sorted(set(per_run["embedding_backend"].dropna().astype(str)) - {"none"})
    return ";".join(used) or "none"


def spearman_table(
    per_run: pd.DataFrame,
    target: str = "final_score",
    metrics: Sequence[str] = PROCESS_METRICS,
    *,
    n_permutations: int = 9999,
    seed: int = 0,
) -> pd.DataFrame:
    """Within-cell Spearman correlation of each metric with the final score, and its test.

    FML-bench Table 4 pools all runs; runs are not independent units: runs of one task share its
    difficulty, and runs of one agent share its policy, so a pooled correlation reads differences
    between tasks or between agents as association (with agent effects on both variables, a test
    within tasks alone rejects a true null 13-41 % of the time: docs/statistics.md). Here, for each
    metric, runs where the metric or the target is NaN are dropped (e.g. runs that never improved
    have no first-improvement step), Spearman's rho is computed within every cell (an agent's runs
    on one task) with at least three such runs and neither column constant, and the cells are
    combined by their run-weighted mean; the two-sided p-value is the within-cell permutation test
    of :func:`~automd_analysis.stats.correlation.within_cell_spearman`, and ``p_holm`` its Holm
    adjustment over the metrics of the table (:func:`~automd_analysis.stats.multiplicity.
    holm_adjust`).

    .. math:: \\bar\\rho_w = \\sum_c n_c \\rho_c / \\sum_c n_c

    Parameters
    ----------
    per_run : DataFrame
        :func:`process_metrics` rows (``agent``, ``task``, the metrics, the target,
        ``embedding_backend``).
    target : str, default "final_score"
    metrics : sequence of str, default :data:`PROCESS_METRICS`
    n_permutations : int, default 9999
        Within-cell permutations of the test (all of them when there are fewer).
    seed : int, default 0

    Returns
    -------
    DataFrame
        ``dimension, metric, rho, p, p_holm, test, n_tasks, n_runs, embedding_backend`` in the
        order of ``metrics``: ``rho`` and ``p`` NaN without a cell with a defined correlation;
        ``n_tasks``/``n_runs`` the tasks and runs behind ``rho``; ``test`` names the test;
        ``embedding_backend`` the backend(s) behind the exploration metrics.

    See Also
    --------
    process_summary : the same correlations beside the agents' means.

    References
    ----------
    .. [1] FML-bench, section 5.2 and Table 4 (the pooled version).
    .. [2] Good P (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses, 3rd ed.,
       sec. 3.6. Springer.

    Examples
    --------
    >>> per_run = pd.DataFrame({"agent": "a", "task": ["a"] * 4 + ["b"] * 4,
    ...     "auc_over_steps": [1, 2, 3, 4, 1, 2, 3, 4],
    ...     "final_score": [0.1, 0.3, 0.2, 0.4, 0.6, 0.7, 0.9, 0.8]})
    >>> spearman_table(per_run, metrics=["auc_over_steps"])[["rho", "p", "n_tasks", "n_runs"]]
       rho       p  n_tasks  n_runs
    0  0.8  0.0625        2       8
    """
    require_columns(per_run, ("agent", "task", target, *metrics), "per-run process metrics")
    rows = []
    y = pd.to_numeric(per_run[target], errors="coerce").to_numpy(dtype=float)
    tasks = per_run["task"].astype(str).to_numpy()
    cells = (per_run["agent"].astype(str) + "\x1f" + per_run["task"].astype(str)).to_numpy()
    for metric in metrics:
        x = pd.to_numeric(per_run[metric], errors="coerce").to_numpy(dtype=float)
        result = within_cell_spearman(
            x, y, cells, n_permutations=n_permutations, seed=seed, tag=f"{metric}~{target}"
        )
        used = np.isin(cells, list(result.cells))
        rows.append(
            {
                "dimension": METRIC_DIMENSIONS.get(metric, ""),
                "metric": metric,
                "rho": result.rho,
                "p": result.p_value,
                "p_holm": np.nan,
                "test": STRATIFIED_TEST,
                "n_tasks": int(np.unique(tasks[used]).size),
                "n_runs": result.n_runs,
                "embedding_backend": _backends(per_run),
            }
        )
    adjusted = holm_adjust([r["p"] for r in rows]) if rows else []
    for row, p in zip(rows, adjusted, strict=True):
        row["p_holm"] = float(p)
    return PROCESS_SPEARMAN.frame(pd.DataFrame(rows, columns=PROCESS_SPEARMAN.named))


def agent_means(
    per_run: pd.DataFrame,
    metrics: Sequence[str] = PROCESS_METRICS,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict[str, dict[str, tuple[float, float, float]]]:
    """Per agent and metric: the mean over the agent's runs and its bootstrap interval.

    The mean skips runs without a value (NaN). Its interval redraws the runs of every (agent,
    task) (:func:`~automd_analysis.stats.resample.resample`: residuals around each cell's mean,
    widened for the few runs per cell; an agent keeps its number of runs on every task, so the
    interval treats the tasks as fixed) and takes the interval of
    :func:`~automd_analysis.stats.intervals.estimate`. The process metrics are properties of the
    runs, not of a test set, so there is no test-patient stage.

    .. math:: \\bar m_a = \\frac{1}{|R_a|} \\sum_{r \\in R_a} m_r

    Parameters
    ----------
    per_run : DataFrame
        :func:`process_metrics` rows (``agent``, ``task`` and the metrics).
    metrics : sequence of str
    n_boot : int, default 1000
    seed : int, default 0
    alpha : float, default 0.05

    Returns
    -------
    dict
        agent -> metric -> ``(mean, ci_low, ci_high)``; agents sorted.

    See Also
    --------
    automd_analysis.stats.intervals.estimate : the point value and percentile interval.

    References
    ----------
    .. [1] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8
       (stratified resampling). Cambridge University Press.

    Examples
    --------
    >>> per_run = pd.DataFrame({"agent": "a", "task": ["t", "t", "u", "u"],
    ...     "auc_over_steps": [0.2, 0.4, 0.6, np.nan]})
    >>> mean, low, high = agent_means(per_run, ["auc_over_steps"], n_boot=200)["a"]["auc_over_steps"]
    >>> round(mean, 3), low <= mean <= high
    (0.4, True)
    """
    require_columns(per_run, ("agent", "task", *metrics), "per-run process metrics")
    check_alpha(alpha)
    runs = per_run.reset_index(drop=True)
    units = runs[["agent", "task"]]
    draws = resample(
        units,
        ("agent", "task"),
        n_boot=n_boot,
        seed=seed,
        tag="process_metrics_table4",
        model_validity=False,
    )
    values = {
        m: draws.values(pd.to_numeric(runs[m], errors="coerce").to_numpy(dtype=float))
        for m in metrics
    }
    out: dict[str, dict[str, tuple[float, float, float]]] = {}
    for agent, rows in row_groups(runs, ["agent"]).items():
        out[str(agent[0])] = {m: estimate(mean_over(values[m], rows), alpha) for m in metrics}
    return out


def process_summary(
    per_run: pd.DataFrame,
    target: str = "final_score",
    *,
    n_boot: int = 1000,
    n_permutations: int = 9999,
    seed: int = 0,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """FML-bench Table 4 layout: per-agent means with intervals, then the within-task correlation.

    One row per metric of :data:`PROCESS_METRICS`: each agent's mean (:func:`agent_means`, with
    its interval in ``<agent>_ci_low/high``), then ``rho``, ``p``, ``p_holm``, ``test``, ``n_tasks``,
    ``n_runs`` of :func:`spearman_table` and the embedding backend(s) behind the exploration
    metrics.

    Parameters
    ----------
    per_run : DataFrame
        :func:`process_metrics` rows.
    target : str, default "final_score"
    n_boot, seed, alpha
        As :func:`agent_means`.
    n_permutations : int, default 9999
        As :func:`spearman_table`.

    Returns
    -------
    DataFrame
        ``metric, dimension, <agent>, <agent>_ci_low, <agent>_ci_high, ..., rho, p, p_holm, test,
        n_tasks, n_runs, embedding_backend``.

    See Also
    --------
    spearman_table, agent_means

    References
    ----------
    .. [1] FML-bench, Table 4.

    Examples
    --------
    >>> per_run = pd.DataFrame({"agent": ["a"] * 3 + ["b"] * 3, "task": "t",
    ...     "embedding_backend": "none", "final_score": [0.1, 0.3, 0.2, 0.4, 0.6, 0.5],
    ...     **{m: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0] for m in PROCESS_METRICS}})
    >>> table = process_summary(per_run, n_boot=50)
    >>> str(table.loc[0, "metric"]), [float(table.loc[0, c]) for c in ("a", "b", "n_runs")]
    ('exploration_spread', [2.0, 5.0, 6.0])
    """
    require_columns(per_run, ("agent", "embedding_backend", target, *PROCESS_METRICS), "per-run")
    means = agent_means(per_run, PROCESS_METRICS, n_boot=n_boot, seed=seed, alpha=alpha)
    corr = spearman_table(per_run, target, n_permutations=n_permutations, seed=seed)
    corr = corr.set_index("metric")
    rows = []
    for metric in PROCESS_METRICS:
        row = {"metric": metric, "dimension": corr.at[metric, "dimension"]}
        for agent, values in means.items():
            mean, low, high = values[metric]
            row |= {agent: mean, f"{agent}_ci_low": low, f"{agent}_ci_high": high}
        row |= {c: corr.at[metric, c] for c in ("rho", "p", "p_holm", "test", "n_tasks", "n_runs")}
        rows.append(row | {"embedding_backend": _backends(per_run)})
    return PROCESS_TABLE4.frame(rows)


def opportunity_partition(per_run: pd.DataFrame) -> pd.DataFrame:
    """Per-task opportunity density and the dense/sparse split at the median (FML-bench App. G).

    ``phi_opp`` of a task is the mean over its runs with a defined value; tasks with
    ``phi_opp > median`` are ``"dense"``, the others ``"sparse"``; tasks without any defined value
    are ``"undefined"`` and do not enter the median.

    Returns
    -------
    DataFrame
        ``task, phi_opp, n_runs, partition, median, embedding_backend`` sorted by task.
    """
    require_columns(per_run, ("task", "opportunity_density"), "per-run process metrics")
    phi = pd.to_numeric(per_run["opportunity_density"], errors="coerce")
    grouped = phi.groupby(per_run["task"], sort=True)
    out = pd.DataFrame({"phi_opp": comparable(grouped.mean()), "n_runs": grouped.count()})
    median = float(out["phi_opp"].median()) if out["phi_opp"].notna().any() else float("nan")
    out["partition"] = np.where(
        out["phi_opp"].isna(), "undefined", np.where(out["phi_opp"] > median, "dense", "sparse")
    )
    out["median"] = median
    out["embedding_backend"] = _backends(per_run)
    return out.reset_index(names="task")


def pairwise_win_rate(
    store: ScoreStore,
    *,
    experiment: str | None = "main",
    include_reference: bool = False,
) -> pd.DataFrame:
    """Pairwise head-to-head win-rate of each agent (FML-bench section 3.3 and App. E).

    ``WR(A) = mean over tasks t and opponents B != A (both with runs on t) of
    win_t(A, B)``, with ``win_t(A, B)`` the share of (run of A, run of B) pairs on task t where A
    strictly wins: A's selected submission is valid and B's is invalid or has a strictly lower raw
    primary metric. Ties and invalid-vs-invalid count as no win. Simple baselines are excluded by
    default (never ranked).

    Returns
    -------
    DataFrame
        ``agent, win_rate, n_comparisons`` (number of (task, opponent) terms averaged).
    """
    scores = store.scores
    require_columns(scores, (*RUN_KEY, "is_selected", "valid", "raw"), "scores.parquet")
    sel = filter_runs(scores[as_bool(scores["is_selected"])], experiment, include_reference)
    sel = sel.assign(
        _valid=as_bool(sel["valid"]).to_numpy(),
        _raw=pd.to_numeric(sel["raw"], errors="coerce").to_numpy(dtype=float),
    )
    sel.loc[~np.isfinite(sel["_raw"]), "_valid"] = False
    agents = sorted(sel["agent"].unique())
    terms: dict[str, list[float]] = {a: [] for a in agents}
    for _, task_rows in sel.groupby("task", sort=True):
        by_agent = {a: g for a, g in task_rows.groupby("agent")}
        for a, ga in by_agent.items():
            va, ra = ga["_valid"].to_numpy(), ga["_raw"].to_numpy()
            for b, gb in by_agent.items():
                if a == b:
                    continue
                vb, rb = gb["_valid"].to_numpy(), gb["_raw"].to_numpy()
                wins = va[:, None] & (~vb[None, :] | (ra[:, None] > rb[None, :]))
                terms[a].append(float(wins.mean()))
    rows = [
        {
            "agent": a,
            "win_rate": float(np.mean(terms[a])) if terms[a] else float("nan"),
            "n_comparisons": len(terms[a]),
        }
        for a in agents
    ]
    return pd.DataFrame(rows, columns=["agent", "win_rate", "n_comparisons"])
