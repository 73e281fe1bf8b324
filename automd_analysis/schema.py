"""One place for the data contracts: the run key and the columns of every score-store table.

Every writer and reader of the score store (``scoring.publish`` writes it, ``analysis.store`` reads
it, ``masking`` adds ``masking.parquet``, the tests build stores by hand) takes its column names
and types from here, so that a column is named once. The meaning of every column is
``docs/score_store.md`` (a test keeps that page and :data:`SCHEMAS` in step).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pyarrow as pa

__all__ = [
    "CALIBRATION_MEASURE_COLUMNS",
    "CODE_SKIPPED",
    "CURVE_COLUMNS",
    "NET_BENEFIT_THRESHOLDS",
    "net_benefit_column",
    "MASKING_COLUMNS",
    "MASKING_SCHEMA",
    "NOT_NULL",
    "NOT_SCORABLE",
    "NULL_SCORES",
    "PROCESS_KIND",
    "REQUIRED_COLUMNS",
    "RUN_KEY",
    "RUN_KEY_FIELDS",
    "RUN_STATUSES",
    "SCHEMAS",
    "SORT_KEYS",
    "STORE_SCHEMA_VERSION",
    "TABLES",
    "TABLE_KEYS",
    "columns",
    "key_columns",
]

STORE_SCHEMA_VERSION = 1

_STR, _BOOL, _F64, _I64 = pa.string(), pa.bool_(), pa.float64(), pa.int64()
_TS = pa.timestamp("us", tz="UTC")
RUN_KEY_FIELDS = [
    ("run_id", _STR),
    ("experiment", _STR),
    ("agent", _STR),
    ("llm", _STR),
    ("task", _STR),
    ("rep", _I64),
    ("reference", _BOOL),
]
_TASK_COLS = [
    ("task_kind", _STR),
    ("metric", _STR),
    ("validation", _STR),
    ("shift", _STR),
    ("internal_counterpart", _STR),
    ("shared_test_set", _STR),
]


#: ``runs.status``: what the run's selected submission is. ``valid`` and ``invalid`` (the file
#: passed / failed the checks; an invalid run counts 0 in the penalised score) are scored;
#: :data:`NOT_SCORABLE` means the archive holds no prediction file for the task's test set (an
#: imported run whose source kept none): such a run has no ``scores`` rows, is never counted
#: invalid and never penalised.
RUN_STATUSES: tuple[str, ...] = ("valid", "invalid", "not_scorable")
NOT_SCORABLE = "not_scorable"
#: ``tasks.task_kind`` of a process-only task (runs with a development process and nothing to
#: score).
PROCESS_KIND = "process"
#: m0 of eq. (1) of each primary metric (``runs.metric``; paper section 3.3), published per task
#: as ``tasks.null_score`` and per version as ``scores.null_score``.
NULL_SCORES: Mapping[str, float] = {
    "ctd_adj_antolini": 0.5,
    "auroc": 0.5,
    "min_se_ppv": 0.0,
    "utility_2019": 0.0,
}
#: ``problems.effect`` of a code file the scorer could not read (its version's code lacks it).
CODE_SKIPPED = "code file skipped"
#: Agent, task, run and experiment names: one safe path component (no separators, no leading dot).
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
#: ``runs.selection_rule``: the App. C rules that choose a run's submitted version.
RULE_FINAL_FILE = "final_file"
RULE_BEST_NON_FAULTY = "best_reported_val_non_faulty"
RULE_LATEST_STAGE = "latest_stage_best_node"
RULE_FML_BEST_STEP = "earliest_best_val_metric_step"


#: Thresholds of the stored decision curve (columns ``net_benefit_p01`` ... ``net_benefit_p50``).
NET_BENEFIT_THRESHOLDS: tuple[float, ...] = (
    0.01,
    0.02,
    0.05,
    0.10,
    0.15,
    0.20,
    0.25,
    0.30,
    0.40,
    0.50,
)


def net_benefit_column(threshold: float) -> str:
    """Column name of the net benefit at ``threshold``: ``net_benefit_p`` + round(100 t), 2 digits.

    See Also
    --------
    NET_BENEFIT_THRESHOLDS : the stored thresholds.

    References
    ----------
    .. [1] Vickers AJ, Elkin EB (2006). Decision curve analysis. Medical Decision Making 26:565-574.

    Examples
    --------
    >>> net_benefit_column(0.05), net_benefit_column(0.5)
    ('net_benefit_p05', 'net_benefit_p50')
    """
    return f"net_benefit_p{round(threshold * 100):02d}"


_SCALARS: tuple[str, ...] = (
    "ece_10",
    "ece_15",
    "ece_equal_mass_10",
    "cal_intercept",
    "cal_intercept_se",
    "cal_intercept_lo",
    "cal_intercept_hi",
    "cal_slope",
    "cal_slope_se",
    "cal_slope_lo",
    "cal_slope_hi",
    "cal_se_method",
    "n_clusters",
    "citl_difference",
    "ici",
    "e50",
    "e90",
    "emax",
    "spiegelhalter_z",
    "spiegelhalter_p",
    "brier",
    "brier_reliability",
    "brier_resolution",
    "brier_uncertainty",
    "prevalence",
)
_SURVIVAL: tuple[str, ...] = (
    "dcal_statistic",
    "dcal_p",
    "dcal_divergence",
    "horizon",
    "horizon_quantile",
    "horizon_observed_risk",
    "horizon_predicted_risk",
    "horizon_ece",
)

#: Columns of ``calibration_measures.parquet`` beyond the run key (keys of
#: :func:`automd_analysis.scoring.calibration_measures.calibration_measures`), in a stable order.
CALIBRATION_MEASURE_COLUMNS: tuple[str, ...] = (
    *_SCALARS,
    *(net_benefit_column(t) for t in NET_BENEFIT_THRESHOLDS),
    *_SURVIVAL,
    "measure_warnings",
)

#: Columns of ``calibration_curves.parquet`` beyond the run key.
CURVE_COLUMNS: tuple[str, ...] = ("kind", "horizon", "x", "observed", "se", "lo", "hi")


def _schema(cols) -> pa.Schema:
    return pa.schema([pa.field(n, t) for n, t in cols])


SCHEMAS: dict[str, pa.Schema] = {
    "scores": _schema(
        RUN_KEY_FIELDS
        + [("version", _STR), ("is_selected", _BOOL), ("source_version", _STR)]
        + _TASK_COLS
        + [
            ("step", _I64),
            ("parent", _STR),
            ("created_at", _TS),
            ("elapsed_min", _F64),
            ("reported_val", _F64),
            ("valid", _BOOL),
            ("reason_code", _STR),
            ("reason_codes", _STR),
            ("reason_message", _STR),
            ("raw", _F64),
            ("null_score", _F64),
            ("score", _F64),
            ("auroc", _F64),
            ("ece", _F64),
            ("brier", _F64),
            ("n", _I64),
            ("n_rows", _I64),
            ("n_events", _I64),
            ("metric_warnings", _STR),
            ("score_ci_low", _F64),
            ("score_ci_high", _F64),
            ("ece_bc", _F64),
            ("ece_bc_ci_low", _F64),
            ("ece_bc_ci_high", _F64),
            ("submission_sha256", _STR),
            ("cache_key", _STR),
            ("scorer_version", _STR),
        ]
    ),
    "runs": _schema(
        RUN_KEY_FIELDS
        + [
            ("search", _STR),
            ("objective", _STR),
            ("started_at", _TS),
            ("ended_at", _TS),
            ("run_minutes", _F64),
            ("budget_minutes", _F64),
            ("ended_before_budget", _BOOL),
            ("tokens_prompt", _I64),
            ("tokens_completion", _I64),
            ("tokens_total", _I64),
            ("tokens_simulated", _BOOL),
            ("tokens_source", _STR),
            ("selection_rule", _STR),
            ("selected_version", _STR),
            ("reported_val_score", _F64),
            ("n_versions", _I64),
            ("has_submission", _BOOL),
            ("incomplete", _BOOL),
            ("status", _STR),
            ("import_format", _STR),
            ("import_source", _STR),
        ]
        + _TASK_COLS
        + [
            ("n_steps", _I64),
            ("n_steps_ok", _I64),
            ("has_annotations", _BOOL),
            ("annotator", _STR),
            ("annotations_source", _STR),
        ]
    ),
    "steps": _schema(
        RUN_KEY_FIELDS
        + [
            ("step", _I64),
            ("ok", _BOOL),
            ("reported_val_score", _F64),
            ("created_at", _TS),
            ("elapsed_min", _F64),
            ("version", _STR),
            ("node", _STR),
            ("parent", _STR),
        ]
    ),
    "subgroups": _schema(
        RUN_KEY_FIELDS
        + [
            ("task_kind", _STR),
            ("attribute", _STR),
            ("group", _STR),
            ("group_order", _I64),
            ("metric", _STR),
            ("n", _I64),
            ("n_events", _I64),
            ("score_raw", _F64),
            ("eligible", _BOOL),
            ("reason", _STR),
        ]
    ),
    "calibration_bins": _schema(
        RUN_KEY_FIELDS
        + [
            ("kind", _STR),
            ("quantile", _F64),
            ("time", _F64),
            ("bin", _I64),
            ("lo", _F64),
            ("hi", _F64),
            ("n", _I64),
            ("mean_pred", _F64),
            ("observed", _F64),
            ("kept", _BOOL),
            ("weight", _F64),
        ]
    ),
    "reasons": _schema(
        RUN_KEY_FIELDS + [("version", _STR), ("code", _STR), ("message", _STR), ("examples", _STR)]
    ),
    "annotations": _schema(
        RUN_KEY_FIELDS
        + [("field", _STR), ("value", _STR), ("affected_weight", _F64), ("evidence", _STR)]
    ),
    "pairs": _schema(
        RUN_KEY_FIELDS
        + [
            ("pair_index", _I64),
            ("earlier", _STR),
            ("later", _STR),
            ("change", _STR),
            ("affects_predictions", _BOOL),
            ("evidence", _STR),
        ]
    ),
    "calibration_measures": _schema(
        RUN_KEY_FIELDS
        + [("task_kind", _STR)]
        + [
            (
                name,
                _STR
                if name in ("cal_se_method", "measure_warnings")
                else _I64
                if name == "n_clusters"
                else _F64,
            )
            for name in CALIBRATION_MEASURE_COLUMNS
        ]
    ),
    "calibration_curves": _schema(
        RUN_KEY_FIELDS
        + [
            ("kind", _STR),
            ("horizon", _F64),
            ("x", _F64),
            ("observed", _F64),
            ("se", _F64),
            ("lo", _F64),
            ("hi", _F64),
        ]
    ),
    "annotation_comparison": _schema(
        RUN_KEY_FIELDS
        + [
            ("field", _STR),
            ("reference_value", _STR),
            ("generated_value", _STR),
            ("reference_annotator", _STR),
            ("generated_annotator", _STR),
        ]
    ),
    "replicates": _schema([("run_id", _STR), ("replicate", _I64), ("score", _F64), ("ece", _F64)]),
    "subgroup_replicates": _schema(
        [("run_id", _STR), ("attribute", _STR), ("group", _STR), ("replicates", pa.list_(_F64))]
    ),
    "extra_metrics": _schema(
        RUN_KEY_FIELDS
        + [
            ("task_kind", _STR),
            ("metric", _STR),
            ("higher_is_better", _BOOL),
            ("value", _F64),
            ("ci_low", _F64),
            ("ci_high", _F64),
            ("replicates", pa.list_(_F64)),
        ]
    ),
    "code": _schema(RUN_KEY_FIELDS + [("version", _STR), ("n_files", _I64), ("code_sha256", _STR)]),
    "code_texts": _schema([("code_sha256", _STR), ("text", _STR)]),
    "code_files": _schema(
        RUN_KEY_FIELDS + [("version", _STR), ("file", _STR), ("start", _I64), ("length", _I64)]
    ),
    "tasks": _schema(
        [("task", _STR), ("title", _STR), ("origin", _STR)]
        + _TASK_COLS
        + [
            ("null_score", _F64),
            ("unit", _STR),
            ("access", _STR),
            ("synthetic", _BOOL),
            ("manifest_sha256", _STR),
            # the scale of the process metrics' normalised improvement (docs/score_store.md)
            ("higher_is_better", _BOOL),
            ("baseline_value", _F64),
            ("value_transform", _STR),
            ("best_value", _F64),
            ("worst_value", _F64),
        ]
    ),
    "problems": _schema(
        [
            ("run_id", _STR),
            ("experiment", _STR),
            ("agent", _STR),
            ("task", _STR),
            ("rep", _I64),
            ("version", _STR),
            ("effect", _STR),
            ("code", _STR),
            ("message", _STR),
            ("path", _STR),
            ("location", _STR),
            ("fix", _STR),
        ]
    ),
}
#: Table names, in the order they are written (store.json last).
TABLES = tuple(SCHEMAS)
#: Columns shared by every store table except ``problems``: they identify one run.
RUN_KEY: tuple[str, ...] = tuple(name for name, _ in RUN_KEY_FIELDS)


#: Canonical row order of every table. Readers sort on load, so that sums (and every float derived
#: from them) do not depend on the order in which the rows were written.
SORT_KEYS: Mapping[str, tuple[str, ...]] = {
    "scores": ("run_id", "version"),
    "runs": ("run_id",),
    "subgroups": ("run_id", "attribute", "group"),
    "calibration_bins": ("run_id", "kind", "quantile", "bin"),
    "reasons": ("run_id", "version", "code"),
    "annotations": ("run_id", "field", "value"),
    "pairs": ("run_id", "earlier", "later", "change"),
    "steps": ("run_id", "step"),
    "calibration_measures": ("run_id",),
    "calibration_curves": ("run_id", "kind", "x"),
    "annotation_comparison": ("run_id", "field"),
    "replicates": ("run_id", "replicate"),
    "subgroup_replicates": ("run_id", "attribute", "group"),
    "code": ("run_id", "version"),
    "code_texts": ("code_sha256",),
    "code_files": ("run_id", "version", "file"),
    "tasks": ("task",),
    "extra_metrics": ("run_id", "metric"),
}

#: Columns the analyses read, beyond the run key: a table without one of them is refused on load
#: (a store written by an incompatible scorer). ``automd score`` writes every column of
#: :data:`SCHEMAS`; a store built by hand (``ScoreStore.from_frames``) needs these only.
REQUIRED_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "scores": ("version", "is_selected", "task_kind", "validation", "shift",
               "internal_counterpart", "valid", "reason_code", "raw", "score", "auroc", "ece",
               "brier"),
    "runs": ("objective", "tokens_total"),
    "subgroups": ("attribute", "group", "n", "score_raw", "eligible"),
    "calibration_bins": ("kind", "quantile", "time", "bin", "lo", "hi", "n", "mean_pred",
                         "observed", "kept", "weight"),
    "reasons": ("version", "code", "message"),
    "annotations": ("field", "value"),
    "pairs": ("earlier", "later", "change", "affects_predictions"),
    "steps": ("step", "ok"),
    "calibration_measures": ("task_kind", "ece_10", "cal_intercept", "cal_slope", "ici"),
    "calibration_curves": ("kind", "horizon", "x", "observed", "lo", "hi"),
    "annotation_comparison": ("field", "reference_value", "generated_value",
                              "reference_annotator", "generated_annotator"),
    "replicates": ("replicate", "score", "ece"),
    "subgroup_replicates": ("attribute", "group", "replicates"),
    "code": ("version", "n_files", "code_sha256"),
    "code_texts": ("text",),
    "code_files": ("version", "file", "start", "length"),
    "tasks": ("task_kind", "metric", "unit", "access"),
    "problems": ("effect", "code", "message"),
    "extra_metrics": ("task_kind", "metric", "higher_is_better", "value", "ci_low", "ci_high",
                      "replicates"),
}  # fmt: skip

#: Columns that are never null, beyond the run key (``llm`` may be null): readers refuse a null
#: there, and read the column with its exact type (the others of type int may hold nulls and are
#: read as float, NaN for null).
NOT_NULL: Mapping[str, frozenset[str]] = {
    "scores": frozenset({"is_selected", "valid"}),
    "subgroups": frozenset({"n", "eligible"}),
    "calibration_bins": frozenset({"bin", "n", "kept"}),
    "steps": frozenset({"step", "ok"}),
    "replicates": frozenset({"replicate"}),
    "subgroup_replicates": frozenset({"attribute", "group"}),
    "code": frozenset({"n_files"}),
    "code_files": frozenset({"version", "file", "start", "length"}),
    "tasks": frozenset({"task"}),
    "extra_metrics": frozenset({"metric", "higher_is_better"}),
}

#: Key columns of tables that are not keyed by the run (``replicates`` by ``run_id`` alone).
TABLE_KEYS: Mapping[str, tuple[str, ...]] = {
    "replicates": ("run_id",),
    "subgroup_replicates": ("run_id",),
    "code_texts": ("code_sha256",),
    "tasks": ("task",),
    "problems": ("run_id", "experiment", "agent", "task", "rep"),  # null for archive problems
}


def key_columns(table: str) -> tuple[str, ...]:
    """The columns identifying a row's run (or task, text) in ``table``: :data:`RUN_KEY` unless
    the table says otherwise (:data:`TABLE_KEYS`).

    Examples
    --------
    >>> key_columns("scores")[:2], key_columns("tasks")
    (('run_id', 'experiment'), ('task',))
    """
    return TABLE_KEYS.get(table, RUN_KEY)


def columns(table: str) -> tuple[str, ...]:
    """Column names of score-store table ``table``, in file order.

    Examples
    --------
    >>> columns("runs")[:3]
    ('run_id', 'experiment', 'agent')
    """
    return tuple(SCHEMAS[table].names)


#: Columns of ``masking.parquet`` and their Arrow types (every column nullable except the key).
MASKING_COLUMNS: Mapping[str, pa.DataType] = {
    "run_id": pa.string(),
    "experiment": pa.string(),
    "agent": pa.string(),
    "llm": pa.string(),
    "task": pa.string(),
    "rep": pa.int64(),
    "reference": pa.bool_(),
    "search": pa.string(),
    "seed": pa.int64(),
    "status": pa.string(),
    "flagged": pa.bool_(),
    "fraction_all_rows": pa.float64(),
    "fraction_last_rows": pa.float64(),
    "n_retained_rows": pa.int64(),
    "n_changed_rows": pa.int64(),
    "n_patients": pa.int64(),
    "n_changed_last": pa.int64(),
    "threshold": pa.float64(),
    "reproduces_original": pa.bool_(),
    "n_changed_vs_original": pa.int64(),
    "reason": pa.string(),
    "isolation": pa.string(),
    "cache_key": pa.string(),
}
MASKING_SCHEMA = pa.schema(
    [
        pa.field(name, dtype, nullable=name not in ("run_id", "status"))
        for name, dtype in MASKING_COLUMNS.items()
    ]
)
