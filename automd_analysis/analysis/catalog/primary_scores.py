"""Notebook 01 - primary scores: paper Table 2, Table 12, App. E and the agent comparisons."""

from __future__ import annotations

from automd_analysis.analysis.catalog.declaration import (
    FEW_VALID_NOTE,
    Column,
    Figure,
    Stat,
    Table,
    TableSpec,
)

NOTEBOOK = "01_primary_scores"
TITLE = "Primary scores"
#: The task classes of the per-class tables, then all tasks.
TASK_GROUPS = ("survival", "classification", "sequential", "all")

_PAIR_KEY = Column.texts("agent_a", "agent_b", "measure")
#: Columns of the per-task summaries (paper Tables 12 and 13).
PER_TASK = (*Column.texts("task", "agent"), *Column.mean_sd(), *Column.counts("n_valid"))


def per_task_spec(quantity: str) -> TableSpec:
    """Display of a per-task summary (Tables 12, 13): ``quantity`` by task (rows) and agent
    (columns), mean ± SD over valid runs, few valid runs marked."""
    return TableSpec(
        caption=f"{quantity} by task over valid runs (mean ± SD). {FEW_VALID_NOTE}",
        pivot=("task", "agent"),
        cell=Stat("score", "mean", "sd", "n_valid"),
    )


def _pair_spec(caption: str, *stats: Stat) -> TableSpec:
    """Display of an agent-pair table: agents A and B, the measure, the mean difference, ``stats``."""
    return TableSpec(
        caption=caption,
        labels=tuple(c.name for c in _PAIR_KEY),
        stats=(Stat("Mean difference (A - B)", "diff_mean"), *stats),
        exclude_from_best=(),
        titles={"agent_a": "Agent A", "agent_b": "Agent B", "measure": "Measure"},
    )


def _ms(title: str, prefix: str, direction: str | None, decimals: int | None = None) -> Stat:
    return Stat(title, f"{prefix}_mean", f"{prefix}_sd", direction=direction, decimals=decimals)


OVERVIEW = Table(
    "overview_runs",
    NOTEBOOK,
    "Runs, valid runs and runs not scorable here per experiment and agent.",
    (
        *Column.texts("experiment", "agent"),
        *Column.counts("runs", "valid", "not_scorable", "tasks"),
    ),
    spec=TableSpec(
        caption="runs, valid runs and runs not scorable here (no predictions for the task's "
        "test set archived: neither valid nor invalid) per experiment and agent.",
        labels=("experiment", "agent"),
        stats=(
            Stat("Tasks", "tasks", integer=True),
            Stat("Runs", "runs", integer=True),
            Stat("Valid runs", "valid", integer=True),
            Stat("Not scorable", "not_scorable", integer=True),
        ),
    ),
    computed_by="automd_analysis.analysis.primary.run_overview",
)

TABLE2 = Table(
    "table2_primary_scores",
    NOTEBOOK,
    "Penalised and non-penalised score, valid runs and ranks per agent.",
    (
        *Column.texts("agent"),
        *Column.mean_sd("penalized", interval=True),
        *Column.mean_sd("nonpenalized", interval=True),
        *Column.mean_sd("valid_rate", "share"),
        *Column.mean_sd("rank_penalized", interval=True),
        *Column.mean_sd("rank_nonpenalized", interval=True),
    ),
    paper="Table 2",
    spec=TableSpec(
        caption="Primary task performance: mean ± SD over repetitions (ranks: over tasks). "
        "Penalised scores count invalid runs as 0.",
        labels=("agent",),
        stats=(
            _ms("Penalised score", "penalized", "max"),
            _ms("Non-penalised score", "nonpenalized", "max"),
            Stat("Valid runs", "valid_rate_mean", "valid_rate_sd", percent=True, decimals=0),
            _ms("Rank (penalised)", "rank_penalized", None, 2),
            _ms("Rank (non-penalised)", "rank_nonpenalized", None, 2),
        ),
    ),
    computed_by="automd_analysis.analysis.primary.agent_summary",
)

PAIRWISE = Table(
    "pairwise_comparisons",
    NOTEBOOK,
    "Every pair of agents compared on score and ECE: difference, interval, p-value.",
    (
        *_PAIR_KEY,
        Column("diff_mean", interval=True, ci="", kind="number"),
        Column("p_value", kind="p"),
        Column("p_holm", kind="p"),
        *Column.counts("n_tasks", "tasks_a_better"),
        Column("tasks_p_value", kind="p"),
        Column("tasks_p_holm", kind="p"),
    ),
    spec=_pair_spec(
        "Paired comparison of every pair of agents on the primary score and on ECE. Mean "
        "difference: mean over the common tasks of A's per-task mean minus B's (score: invalid "
        "runs count 0; ECE: valid runs). On these tasks (tasks fixed; each agent's runs, their "
        "validity and the test patients resampled): the interval and p, the paired bootstrap "
        "test that inverts it (p < 0.05 exactly when the interval excludes 0; never below "
        "1/(B + 1), shown < 0.001). Across tasks (tasks as the units: does "
        "it generalise?): two-sided sign-flip test of the per-task differences. Holm: adjusted "
        "over the agent pairs of each measure (one family per measure and question). Tasks A "
        "better: higher score, lower ECE.",
        Stat("p", "p_value", p_value=True),
        Stat("Holm p", "p_holm", p_value=True),
        Stat("Tasks", "n_tasks", integer=True),
        Stat("Tasks A better", "tasks_a_better", integer=True),
        Stat("Across tasks p", "tasks_p_value", p_value=True),
        Stat("Across tasks Holm p", "tasks_p_holm", p_value=True),
    ),
    intervals_after=True,
    computed_by="automd_analysis.analysis.uncertainty.pairwise_comparisons",
)

POWER = Table(
    "power_table",
    NOTEBOOK,
    "Repetitions per task that would make each difference between agents significant.",
    (
        *_PAIR_KEY,
        *Column.numbers("diff_mean"),
        *Column.counts("n_tasks", "reps_observed"),
        *Column.numbers("se_observed", "se_test_set", "sd_one_repetition"),
        Column("reps_needed", kind="count"),
        Column("reachable", "bool"),
    ),
    spec=_pair_spec(
        "Repetitions per agent and task at which each observed mean difference would be "
        "significant on these tasks (two-sided, normal approximation, observed run-to-run and "
        "test-set variances). – : unreachable, the difference is within the test-set noise. "
        "SE: standard error of the mean difference at the observed runs; test-set SE: its part "
        "that more repetitions cannot remove.",
        Stat("Tasks", "n_tasks", integer=True),
        Stat("Runs observed", "reps_observed", integer=True),
        Stat("SE", "se_observed"),
        Stat("Test-set SE", "se_test_set"),
        Stat("Repetitions needed", "reps_needed", integer=True),
    ),
    computed_by="automd_analysis.analysis.uncertainty.power_table",
)

TABLE12 = Table(
    "table12_task_scores",
    NOTEBOOK,
    "Normalised primary score per task and agent.",
    PER_TASK,
    paper="Table 12",
    spec=per_task_spec("Normalised primary score"),
    computed_by="automd_analysis.analysis.primary.scores_by_task",
)

INVALID = Table(
    "invalid_submissions",
    NOTEBOOK,
    "Why runs were invalid, by agent and first check.",
    (
        *Column.texts("agent", "category"),
        Column("reason_code", "str", title="first failed check"),
        Column("n_invalid", "int", title="Invalid runs", kind="count"),
        Column("n_runs", "int", title="Runs", kind="count"),
        Column("share_of_invalid", title="Share of the agent's invalid runs", kind="share"),
    ),
    paper="App. E",
    caption="Invalid selected submissions by agent and the first check they fail (its reason "
    "code and paper category, App. E).",
    empty="No selected submission is invalid.",
    computed_by="automd_analysis.analysis.primary.invalid_breakdown",
)

COVERAGE = Table(
    "run_coverage",
    NOTEBOOK,
    "Runs, valid, not scorable, skipped and incomplete per task and agent.",
    (
        *Column.texts("task", "agent"),
        *Column.counts("n_runs", "n_valid", "n_not_scorable", "n_skipped", "n_incomplete"),
    ),
    computed_by="automd_analysis.analysis.primary.coverage",
)

COVERAGE_BY_RUN = Table(
    "run_coverage_runs",
    NOTEBOOK,
    "Runs not scorable, skipped or with recorded problems, with every problem code.",
    (*Column.texts("task", "agent"), *Column.counts("rep"), *Column.texts("status", "problems")),
    computed_by="automd_analysis.analysis.primary.coverage_by_run",
)

EXTRA_METRICS = Table(
    "extra_metrics_by_agent",
    NOTEBOOK,
    "Metrics of your own (automd score --metric) per agent and task class.",
    (
        Column("metric", "str"),
        Column("higher_is_better", "bool"),
        *Column.texts("agent"),
        *Column.counts("n_runs"),
        *Column.numbers(*TASK_GROUPS, interval=True),
    ),
    intervals_after=True,
    computed_by="automd_analysis.analysis.extra_metrics.extra_metrics_by_agent",
)

TABLES = (
    OVERVIEW,
    TABLE2,
    PAIRWISE,
    POWER,
    TABLE12,
    INVALID,
    EXTRA_METRICS,
    COVERAGE,
    COVERAGE_BY_RUN,
)

FIGURES = (
    Figure(
        "table2_forest",
        NOTEBOOK,
        "Each agent's mean score with its 95% interval.",
        paper="Table 2",
        caption="Mean normalised primary score per agent with its 95% two-stage bootstrap "
        "interval, one colour per agent; left: invalid runs count 0, right: valid runs only. "
        "Dashed grey: the simple baseline's estimate. Each panel's x axis spans its intervals.",
        computed_by="automd_analysis.report.uncertainty_figures.table2_forest",
    ),
    Figure(
        "pairwise_score",
        NOTEBOOK,
        "Score difference of every pair of agents.",
        caption="Each cell is the row agent's mean per-task score minus the column agent's "
        "(blue: the row agent scores higher) with the Holm-adjusted p-value of the paired "
        "bootstrap comparison on these tasks; `*` and a black frame mark p < 0.05. The matrix is antisymmetric: each pair "
        "appears twice with opposite signs.",
        computed_by="automd_analysis.report.uncertainty_figures.pairwise_matrix",
    ),
)
