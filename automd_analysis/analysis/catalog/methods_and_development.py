"""Notebook 07 - modelling methods and development: paper Tables 6, 17, 18, 19, Figures 3 and 5,
App. G (masking test), App. H (version pairs) and FML-bench's process metrics."""

from __future__ import annotations

from automd_analysis.analysis.catalog.declaration import (
    Column,
    Figure,
    PerAgent,
    Stat,
    Table,
    TableSpec,
)
from automd_analysis.schema import RUN_KEY

NOTEBOOK = "07_methods_and_development"
TITLE = "Methods and development"

_RUN_KEY = tuple(
    Column(c, "int", kind="count")
    if c == "rep"
    else Column(c, "bool" if c == "reference" else "str")
    for c in RUN_KEY
)


def _pct(title: str, column: str) -> Stat:
    # the analyses already report percentages (0-100): print them as they are
    return Stat(title, column, decimals=0)


TABLE6 = Table(
    "table6_methods",
    NOTEBOOK,
    "Modelling methods of valid runs (long form, counts).",
    (
        *Column.texts("field", "category", "agent"),
        *Column.mean_sd("pct", "percent"),
        *Column.counts("n_reps"),
        Column("pct_pooled", kind="percent"),
        *Column.counts("n_runs_with", "n_valid_runs", "n_unannotated"),
    ),
    paper="Table 6",
    computed_by="automd_analysis.analysis.methods.method_prevalence",
)

TABLE6_WIDE = Table.percent_per_agent(
    "table6_methods_wide",
    NOTEBOOK,
    "Modelling methods of valid runs, one column per agent.",
    ("field", "category"),
    "Modelling methods in valid runs: % of each agent's valid, annotated runs "
    "(mean ± SD over repetitions; categories can overlap).",
    sd=True,
    paper="Table 6",
    computed_by="automd_analysis.analysis.methods.method_prevalence_wide",
)

TABLE17_SUMMARY = Table(
    "table17_censoring_summary",
    NOTEBOOK,
    "Valid survival runs that mishandle censoring, by agent.",
    (
        *Column.texts("agent"),
        *Column.counts(
            "n_valid_survival",
            "n_with_error",
            "censored_as_death",
            "censored_as_survivor",
            "wrong_ipcw",
            "n_exceeding_baseline",
        ),
    ),
    paper="Table 17",
    spec=TableSpec(
        caption="Valid survival submissions whose code mishandles censoring, by agent.",
        labels=("agent",),
        stats=(
            Stat("Valid survival runs", "n_valid_survival", integer=True),
            Stat("With a censoring error", "n_with_error", integer=True),
            Stat("Censored as death", "censored_as_death", integer=True),
            Stat("Censored as survivor", "censored_as_survivor", integer=True),
            Stat("Wrong IPCW", "wrong_ipcw", integer=True),
            Stat("Still above the baseline", "n_exceeding_baseline", integer=True),
        ),
    ),
    computed_by="automd_analysis.analysis.methods.censoring_summary",
)

TABLE17 = Table(
    "table17_censoring",
    NOTEBOOK,
    "Each survival run with a censoring error.",
    (
        *Column.texts("run_id", "agent", "task"),
        *Column.counts("rep"),
        *Column.texts("error", "description"),
        *Column.numbers("affected_weight"),
        *Column.texts("label"),
        *Column.numbers("score", "baseline_score"),
        Column("exceeds_baseline", "bool"),
    ),
    paper="Table 17",
    computed_by="automd_analysis.analysis.methods.censoring_errors",
)

TABLE18 = Table(
    "table18_development",
    NOTEBOOK,
    "Development pace and submission selection per agent.",
    (
        *Column.texts("agent"),
        *Column.counts("n_runs"),
        *Column.numbers("versions_per_run", "time_to_first_valid_min"),
        *Column.counts("n_runs_with_valid_version"),
        *Column.numbers("run_time_min"),
        Column("ended_before_budget_pct", kind="percent"),
        Column("selected_is_best_pct", kind="percent"),
        *Column.counts("n_runs_selection"),
        *Column.numbers("val_minus_test"),
        *Column.counts("n_runs_val_test"),
    ),
    paper="Table 18",
    spec=TableSpec(
        caption="Development pace and submission selection (means over runs). Selected = best: % "
        "of runs whose selected submission has the highest test score among the run's valid "
        "versions (ties count). Reported validation - test: raw metric, AUROC and C^td tasks.",
        labels=("agent",),
        stats=(
            Stat("Runs", "n_runs", integer=True),
            Stat("Versions per run", "versions_per_run", decimals=1),
            Stat("Time to first valid version (min)", "time_to_first_valid_min", decimals=0),
            Stat("Run time (min)", "run_time_min", decimals=0),
            _pct("Ended before budget (%)", "ended_before_budget_pct"),
            _pct("Selected = best (%)", "selected_is_best_pct"),
            Stat("Reported validation - test", "val_minus_test", decimals=3),
        ),
    ),
    computed_by="automd_analysis.analysis.development.development_by_agent",
)

FIG5 = Table(
    "fig5_development_curves",
    NOTEBOOK,
    "Mean test score over development time.",
    (
        *Column.texts("agent"),
        *Column.numbers("time_min", "mean_score", "sd_score"),
        *Column.counts("n_runs"),
    ),
    paper="Fig. 5",
    computed_by="automd_analysis.analysis.development.development_curves",
)

PAIRS_SAMPLED = Table(
    "version_pairs_sampled",
    NOTEBOOK,
    "The version pairs drawn for annotation.",
    (
        *_RUN_KEY,
        *Column.texts("search"),
        *Column.counts("pair_index", "n_pairs"),
        *Column.texts("earlier", "later"),
        *Column.numbers("earlier_score", "later_score", "score_change", "later_elapsed_min"),
        *Column.texts("stage"),
        *Column.counts("group_size"),
    ),
    paper="App. H",
    computed_by="automd_analysis.analysis.development.sample_pairs",
)

PAIRS_COVERAGE = Table(
    "version_pairs_coverage",
    NOTEBOOK,
    "Drawn version pairs with and without an annotation.",
    (
        *Column.texts("agent", "stage"),
        *Column.counts("n_sampled", "n_annotated", "n_unannotated"),
    ),
    paper="App. H",
    computed_by="automd_analysis.analysis.development.pair_coverage",
)

FIG3 = Table(
    "fig3_pair_changes",
    NOTEBOOK,
    "Share of version pairs with each change type, by agent and stage.",
    (
        *Column.texts("agent", "stage", "change"),
        *Column.counts("n_pairs", "n_with_change"),
        Column("share", kind="share"),
        *Column.counts("n_unannotated"),
    ),
    paper="Fig. 3",
    computed_by="automd_analysis.analysis.development.pair_change_shares",
)

TABLE19 = Table(
    "table19_pair_changes",
    NOTEBOOK,
    "Score change of version pairs by change type.",
    (
        *Column.texts("change"),
        *Column.counts("n"),
        *Column.mean_sd(),
        Column("share_positive", kind="share"),
    ),
    paper="Table 19",
    spec=TableSpec(
        caption="Score change (later - earlier normalised test score) of sampled version pairs "
        "containing each change type, pooled across agents.",
        labels=("change",),
        stats=(
            Stat("Pairs", "n", integer=True),
            Stat("Mean change", "mean", "sd", decimals=3),
            Stat("Share positive", "share_positive", percent=True, decimals=0),
        ),
        exclude_from_best=(),
    ),
    computed_by="automd_analysis.analysis.development.pair_change_effects",
)

MASKING_SUMMARY = Table(
    "masking_summary",
    NOTEBOOK,
    "Masking test of the real-time rule per agent, task.",
    (
        *Column.texts("agent", "task"),
        *Column.counts(
            "n_runs",
            "n_tested",
            "n_flagged",
            "n_below_threshold",
            "n_no_change",
            "n_errors",
            "n_not_reproduced",
        ),
        Column("max_fraction_all_rows", kind="fraction"),
        Column("max_fraction_last_rows", kind="fraction"),
    ),
    paper="App. G",
    spec=TableSpec(
        caption="Masking test of the real-time rule (paper App. G): runs tested, flagged "
        "(a changed-alarm fraction above 0.1 %), below the threshold, unchanged, failed re-runs, "
        "and full re-runs that did not reproduce the archived alarms.",
        labels=("agent", "task"),
        stats=(
            Stat("Runs", "n_runs", integer=True),
            Stat("Tested", "n_tested", integer=True),
            Stat("Flagged", "n_flagged", integer=True),
            Stat("Below threshold", "n_below_threshold", integer=True),
            Stat("No change", "n_no_change", integer=True),
            Stat("Errors", "n_errors", integer=True),
            Stat("Not reproduced", "n_not_reproduced", integer=True),
            Stat("Max changed (all rows)", "max_fraction_all_rows", percent=True, decimals=2),
            Stat("Max changed (last rows)", "max_fraction_last_rows", percent=True, decimals=2),
        ),
        exclude_from_best=(),
    ),
    computed_by="automd_analysis.analysis.realtime.masking_summary",
)

MASKING_RUNS = Table(
    "masking_runs",
    NOTEBOOK,
    "Masking test result of every tested run.",
    (
        *Column.texts("run_id", "agent", "task"),
        *Column.counts("rep"),
        *Column.texts("status"),
        Column("flagged", "bool"),
        Column("fraction_all_rows", kind="fraction"),
        Column("fraction_last_rows", kind="fraction"),
        *Column.counts("n_retained_rows", "n_changed_rows", "n_patients", "n_changed_last"),
        Column("reproduces_original", "bool"),
        *Column.texts("reason"),
    ),
    paper="App. G",
    computed_by="automd_analysis.analysis.realtime.masking_runs",
)

_PROCESS_TEST = (
    *Column.numbers("rho"),
    Column("p", kind="p"),
    Column("p_holm", kind="p"),
    *Column.texts("test"),
    *Column.counts("n_tasks", "n_runs"),
    *Column.texts("embedding_backend"),
)

#: How the process tables' correlation and test are computed (captions of the table and figure).
PROCESS_TEST_NOTE = (
    "rho: Spearman correlation with the final normalised score (invalid submissions count 0) "
    "within each agent's runs on one task, averaged over these cells weighted by their runs; "
    "p: two-sided permutation test permuting the scores among the runs of each cell (the unit is "
    "the run within its agent and task: differences between agents and between tasks do not "
    "enter); Holm p: adjusted over the table's metrics; tasks and runs: those with a defined "
    "within-cell correlation."
)


def _process_table4_spec(frame) -> TableSpec:
    labels = ("metric", "dimension")
    named = {"metric", "dimension", *(c.name for c in _PROCESS_TEST)}
    agents = [c for c in frame.columns if c not in named and PROCESS_AGENTS.is_agent(c)]
    return TableSpec(
        caption="Process metrics (FML-bench Table 4 layout): each agent's mean over its runs. "
        + PROCESS_TEST_NOTE,
        labels=labels,
        stats=(
            *(Stat(str(a), str(a)) for a in agents),
            Stat("rho", "rho", interval=False),
            Stat("p", "p", p_value=True),
            Stat("Holm p", "p_holm", p_value=True),
            Stat("Tasks", "n_tasks", integer=True),
            Stat("Runs", "n_runs", integer=True),
        ),
        exclude_from_best=(),
        interval_note="Brackets: 95% bootstrap interval of the agent's mean (its runs redrawn "
        "within each task; the tasks are held fixed).",
    )


#: The agents' columns of the process Table 4: mean and interval.
PROCESS_AGENTS = PerAgent(interval=True, kind="number")

PROCESS_TABLE4 = Table(
    "process_metrics_table4",
    NOTEBOOK,
    "Process metrics per agent and their within-cell correlation with the score.",
    (*Column.texts("metric", "dimension"), PROCESS_AGENTS, *_PROCESS_TEST),
    paper="FML-bench Table 4",
    spec=_process_table4_spec,
    computed_by="automd_analysis.analysis.process.process_summary",
)

PROCESS_SPEARMAN = Table(
    "process_spearman",
    NOTEBOOK,
    "Within-cell (agent x task) Spearman correlation of each process metric with the final score.",
    (*Column.texts("dimension", "metric"), *_PROCESS_TEST),
    paper="FML-bench",
    computed_by="automd_analysis.analysis.process.spearman_table",
)

PROCESS_RUNS = Table(
    "process_metrics_runs",
    NOTEBOOK,
    "Process metrics of every run.",
    (
        *_RUN_KEY,
        *Column.counts("n_steps"),
        *Column.numbers(
            "exploration_spread",
            "exploration_uniqueness",
            "exploration_reach",
            "effective_dim",
            "val_test_gap_abs",
            "valid_step_ratio",
            "auc_over_steps",
            "first_improvement_step",
        ),
        Column("late_gain_fraction", kind="fraction"),
        *Column.numbers(
            "best_improvement_step",
            "token_cost_m",
            "wall_clock_h",
            "val_test_gap",
            "opportunity_density",
            "final_score",
        ),
        Column("selected_valid", "bool"),
        *Column.counts("n_versions_embedded"),
        *Column.texts("embedding_backend"),
    ),
    paper="FML-bench",
    computed_by="automd_analysis.analysis.process.process_metrics",
)

WIN_RATE = Table(
    "process_win_rate",
    NOTEBOOK,
    "Head-to-head win-rate per agent.",
    (*Column.texts("agent"), Column("win_rate", kind="share"), *Column.counts("n_comparisons")),
    paper="FML-bench",
    spec=TableSpec(
        caption="Pairwise head-to-head win-rate (FML-bench): share of run pairs on a task where "
        "the agent's valid submission beats the opponent's, averaged over opponents and tasks.",
        labels=("agent",),
        stats=(
            Stat("Win-rate", "win_rate"),
            Stat("Task x opponent terms", "n_comparisons", integer=True),
        ),
    ),
    computed_by="automd_analysis.analysis.process.pairwise_win_rate",
)

OPPORTUNITY = Table(
    "process_opportunity_density",
    NOTEBOOK,
    "Opportunity density per task.",
    (
        *Column.texts("task"),
        *Column.numbers("phi_opp"),
        *Column.counts("n_runs"),
        *Column.texts("partition"),
        *Column.numbers("median"),
        *Column.texts("embedding_backend"),
    ),
    paper="FML-bench",
    computed_by="automd_analysis.analysis.process.opportunity_partition",
)

TABLES = (
    TABLE6,
    TABLE6_WIDE,
    TABLE17_SUMMARY,
    TABLE17,
    TABLE18,
    FIG5,
    PAIRS_SAMPLED,
    PAIRS_COVERAGE,
    FIG3,
    TABLE19,
    MASKING_SUMMARY,
    MASKING_RUNS,
    PROCESS_TABLE4,
    PROCESS_SPEARMAN,
    PROCESS_RUNS,
    WIN_RATE,
    OPPORTUNITY,
)

FIGURES = (
    Figure(
        "fig5_development",
        NOTEBOOK,
        "Mean test score over development time.",
        paper="Fig. 5",
        caption="*Figure 5.* Mean normalised test score of the latest valid version over "
        "development time, one step curve per agent in its colour (number of runs in the "
        "legend); 0 before an agent's first valid version. Both axes start at 0.",
        computed_by="automd_analysis.report.figures.figure5",
    ),
    Figure(
        "fig3_pair_changes",
        NOTEBOOK,
        "Change types of version pairs by stage.",
        paper="Fig. 3",
        caption="*Figure 3.* Share of the sampled version pairs with each change type, per agent "
        "(panels) and stage of development (bars, light to dark grey: early, middle, late; pairs "
        "per stage in each panel title), y axis 0 to 100%. Only change types that occur are "
        "drawn; the table has all of them.",
        computed_by="automd_analysis.report.figures.figure3",
    ),
    Figure(
        "process_spearman",
        NOTEBOOK,
        "Process metrics against the final score.",
        paper="FML-bench",
        caption="Within-task Spearman correlation of each FML-bench process metric with the "
        "final normalised score (x axis -1 to 1), a grey and hatch per dimension (legend), with its "
        "within-task permutation p-value "
        "and the tasks and runs behind it; the title names the embedding backend of the "
        "exploration metrics. " + PROCESS_TEST_NOTE,
        computed_by="automd_analysis.report.figures.process_correlation_figure",
    ),
)
