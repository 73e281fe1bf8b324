"""Notebook 02 - calibration and modelling practices: paper Tables 3, 13, 20, Figures 2a/2b, and
the calibration measures beyond the 10-bin ECE."""

from __future__ import annotations

from automd_analysis.analysis.catalog.declaration import (
    Column,
    Figure,
    Stat,
    Table,
    TableSpec,
)
from automd_analysis.analysis.catalog.primary_scores import PER_TASK, per_task_spec
from automd_analysis.analysis.store import TASK_CLASSES

NOTEBOOK = "02_calibration_and_practices"
TITLE = "Calibration and modelling practices"

_CLASS_TITLES = {"survival": "Survival", "classification": "Classification"}
_CLASS_TITLES |= {"sequential": "Sequential", "all": "All tasks"}

TABLE3 = Table(
    "table3_ece",
    NOTEBOOK,
    "ECE per agent and task class.",
    (
        *Column.texts("agent"),
        *Column.numbers(*TASK_CLASSES, "all"),
        *(
            Column(f"{c}_bc", interval=True, bias_corrected=True, kind="number")
            for c in (*TASK_CLASSES, "all")
        ),
    ),
    paper="Table 3",
    spec=TableSpec(
        caption="ECE by agent and task class (lower is better); runs averaged within task, "
        "tasks weighted equally. Plug-in: the paper's binned ECE (App. F), biased upwards on "
        "finite test sets, so shown without an interval. Bias-corrected: 2 x plug-in minus the "
        "mean of the bootstrap replicates, with its 95% interval, which reaches from below the "
        "corrected value up to the plug-in: the bias of a binned ECE is estimated only partly "
        "by the bootstrap (docs/statistics.md section 9).",
        labels=("agent",),
        stats=(
            *(Stat(_CLASS_TITLES[c], c) for c in (*TASK_CLASSES, "all")),
            *(
                Stat(f"{_CLASS_TITLES[c]}, bias-corrected", f"{c}_bc", direction="min")
                for c in (*TASK_CLASSES, "all")
            ),
        ),
        interval_note="Intervals: 95% bootstrap intervals of the bias-corrected values "
        "(runs of every agent and task redrawn, each drawn run's ECE on a shared test "
        "resample).",
    ),
    computed_by="automd_analysis.analysis.calibration_practices.ece_by_task_class",
)

TABLE13 = Table(
    "table13_task_ece",
    NOTEBOOK,
    "ECE per task and agent.",
    PER_TASK,
    paper="Table 13",
    spec=per_task_spec("ECE"),
    computed_by="automd_analysis.analysis.calibration_practices.ece_by_task",
)

PROVENANCE = Table(
    "annotation_provenance",
    NOTEBOOK,
    "Who produced the codebook answers behind Fig. 2a.",
    (*Column.texts("annotator", "annotations_source"), *Column.counts("n_runs")),
    spec=TableSpec(
        caption="Who produced the codebook answers of the valid agent runs behind Figure 2a and "
        "Table 20 (archive: the run's own annotations.json; generated: automd annotate output "
        "passed with --annotations; none: no answers).",
        labels=("annotator", "annotations_source"),
        stats=(Stat("Runs", "n_runs", integer=True),),
        exclude_from_best=(),
        titles={"annotations_source": "source"},
    ),
    computed_by="automd_analysis.analysis.annotation_provenance.annotation_provenance",
)

#: How the intervals of Figure 2a/2b are drawn (their captions' bracket sentence).
RUNS_REDRAWN_NOTE = (
    "Brackets: 95% bootstrap interval (the runs of every agent and of the simple baseline redrawn "
    "within each task, 1,000 draws; the test sets are held fixed)."
)

FIG2A = Table(
    "fig2a_ece_decomposition",
    NOTEBOOK,
    "Practice groups' share of runs and of the ECE gap to the baselines.",
    (
        *Column.texts("group"),
        *Column.counts("n_runs"),
        Column("share_of_runs", interval=True, kind="share"),
        Column("share_of_difference", interval=True, kind="share"),
        Column("mean_ece", interval=True, kind="number"),
    ),
    paper="Fig. 2a",
    spec=TableSpec(
        caption="Contributions of practice groups to the ECE difference from the simple "
        "baselines (valid agent runs).",
        interval_note=RUNS_REDRAWN_NOTE,
        labels=("group",),
        stats=(
            Stat("Runs", "n_runs", integer=True),
            Stat("Share of runs", "share_of_runs", percent=True, decimals=0),
            Stat("Share of ECE difference", "share_of_difference", percent=True, decimals=0),
            Stat("Mean ECE", "mean_ece"),
        ),
    ),
    computed_by="automd_analysis.analysis.calibration_practices.ece_decomposition",
)

FIG2B = Table(
    "fig2b_recalibration",
    NOTEBOOK,
    "ECE of runs handling class imbalance, with or without recalibration.",
    (
        *Column.texts("run_id", "agent", "task", "imbalance_handling"),
        Column("recalibrated", "bool"),
        *Column.numbers("ece"),
    ),
    paper="Fig. 2b",
    computed_by="automd_analysis.analysis.calibration_practices.recalibration_effect",
)

FIG2B_SUMMARY = Table(
    "fig2b_recalibration_summary",
    NOTEBOOK,
    "Mean ECE with and without recalibration after imbalance handling.",
    (
        Column("recalibrated", "bool", title="Recalibrated after imbalance handling"),
        Column("n_runs", "int", title="Runs", kind="count"),
        *Column.mean_sd(interval=True, title="ECE (mean ± SD)"),
    ),
    paper="Fig. 2b",
    caption="ECE of the valid runs that handle class imbalance, without and with recalibration "
    "afterwards (mean ± SD over runs).",
    interval_note=RUNS_REDRAWN_NOTE,
    computed_by="automd_analysis.analysis.calibration_practices.recalibration_summary",
)

TABLE20 = Table(
    "table20_practices",
    NOTEBOOK,
    "Modelling practices as % of eligible valid runs (long form, counts).",
    (
        *Column.texts("practice", "agent"),
        *Column.counts("n_eligible", "n_positive", "n_missing"),
        Column("percent", kind="percent"),
    ),
    paper="Table 20",
    computed_by="automd_analysis.analysis.calibration_practices.practice_prevalence",
)

TABLE20_WIDE = Table.percent_per_agent(
    "table20_practices_wide",
    NOTEBOOK,
    "Modelling practices as % of eligible valid runs, one column per agent.",
    ("practice",),
    "Modelling practices: % of each agent's eligible valid runs.",
    paper="Table 20",
    computed_by="automd_analysis.analysis.calibration_practices.practice_prevalence_wide",
)

AGREEMENT = Table(
    "annotation_agreement",
    NOTEBOOK,
    "Agreement of automd annotate with the archive's own answers, per field.",
    (
        *Column.texts("field"),
        *Column.counts("n_runs"),
        *Column.numbers("exact", "kappa"),
        Column("multi", "bool"),
    ),
    computed_by="automd_analysis.analysis.annotator_agreement.annotator_agreement",
)

AGREEMENT_VALUES = Table(
    "annotation_agreement_values",
    NOTEBOOK,
    "Precision and recall of every generated codebook value.",
    (
        *Column.texts("field", "value"),
        *Column.counts("n_reference", "n_rated"),
        *Column.numbers("precision", "recall"),
    ),
    computed_by="automd_analysis.analysis.annotator_agreement.annotator_agreement",
)

AGREEMENT_CONFUSION = Table(
    "annotation_agreement_confusion",
    NOTEBOOK,
    "The archive's answers against the generated ones (counts).",
    (*Column.texts("field", "reference", "rated"), *Column.counts("n")),
    computed_by="automd_analysis.analysis.annotator_agreement.annotator_agreement",
)

BY_MEASURE = Table(
    "calibration_by_measure",
    NOTEBOOK,
    "The agents' calibration under seven measures.",
    (
        *Column.texts("measure", "agent"),
        *Column.numbers("value"),
        *Column.counts("n_tasks", "n_runs", "n_undefined"),
        *Column.numbers("rank"),
    ),
    spec=TableSpec(
        caption="Calibration of each agent under each measure (valid runs averaged within task, "
        "tasks weighted equally; lower is better: ECE, ICI, |slope - 1|, |intercept|, "
        "D-calibration X²/n).",
        pivot=("measure", "agent"),
        cell=Stat("value", "value"),
    ),
    computed_by="automd_analysis.analysis.measure_comparison.compare_calibration_measures",
)

RANKING_AGREEMENT = Table(
    "calibration_ranking_agreement",
    NOTEBOOK,
    "Each measure's ranking of the agents against the 10-bin ECE's.",
    (
        *Column.texts("measure"),
        *Column.counts("n_agents"),
        *Column.numbers("spearman", "kendall"),
        *Column.counts("n_pairs", "n_flipped"),
        *Column.texts("best_agent"),
        Column("same_best", "bool"),
    ),
    spec=TableSpec(
        caption="Each measure's ranking of the agents against the paper's 10-bin ECE: rank "
        "correlation, agent pairs in reversed order, and the best-calibrated agent.",
        labels=("measure", "best_agent"),
        stats=(
            Stat("Agents", "n_agents", integer=True),
            Stat("Spearman", "spearman"),
            Stat("Kendall", "kendall"),
            Stat("Agent pairs", "n_pairs", integer=True),
            Stat("Reversed", "n_flipped", integer=True),
        ),
        exclude_from_best=(),
        titles={"best_agent": "best agent"},
    ),
    computed_by="automd_analysis.analysis.measure_comparison.compare_calibration_measures",
)

RANK_FLIPS = Table(
    "calibration_rank_flips",
    NOTEBOOK,
    "Agent pairs whose order reverses under another calibration measure.",
    (
        Column("measure_a", "str", title="measure A"),
        Column("measure_b", "str", title="measure B"),
        Column("agent_1", "str", title="agent 1"),
        Column("agent_2", "str", title="agent 2"),
        Column("value_a_1", title="agent 1 under A", kind="number"),
        Column("value_a_2", title="agent 2 under A", kind="number"),
        Column("value_b_1", title="agent 1 under B", kind="number"),
        Column("value_b_2", title="agent 2 under B", kind="number"),
        Column("better_under_a", "str", title="better under A"),
        Column("better_under_b", "str", title="better under B"),
    ),
    caption="Agent pairs ordered one way by the 10-bin ECE (measure A) and the other way by "
    "another calibration measure (measure B); a pair counts only when both differences are "
    "clear (their 95% intervals exclude 0).",
    empty="No agent pair reverses: wherever two agents are clearly apart under the 10-bin ECE "
    "and under another measure, the two measures order them the same way.",
    computed_by="automd_analysis.analysis.measure_comparison.compare_calibration_measures",
)

CORRELATIONS = Table(
    "calibration_measure_correlations",
    NOTEBOOK,
    "Rank correlations between calibration measures.",
    (
        *Column.texts("level", "measure_a", "measure_b"),
        *Column.counts("n"),
        *Column.numbers("spearman", "kendall"),
        *Column.texts("reason"),
    ),
    spec=TableSpec(
        caption="Rank correlation between calibration measures: over the agents' values (agent) "
        "or over the (task, agent) cells (task); reason: why a correlation is undefined.",
        labels=("level", "measure_a", "measure_b"),
        stats=(
            Stat("Pairs", "n", integer=True),
            Stat("Spearman", "spearman"),
            Stat("Kendall", "kendall"),
        ),
        exclude_from_best=(),
    ),
    computed_by="automd_analysis.analysis.measure_comparison.compare_calibration_measures",
)

SLOPE_INTERCEPT = Table(
    "calibration_slope_intercept",
    NOTEBOOK,
    "Calibration slope and intercept per agent and task class.",
    (
        *Column.texts("agent", "task_class"),
        *Column.mean_sd("slope"),
        *Column.mean_sd("intercept"),
        *Column.counts("n_tasks", "n_runs"),
    ),
    spec=TableSpec(
        caption="Calibration slope and intercept by agent and task class (mean ± SD over the "
        "class's tasks of the per-task mean over valid runs). Calibrated: slope 1, intercept 0. "
        "Binary tasks: logistic recalibration slope and calibration-in-the-large; survival: "
        "Cox calibration slope at the median event time (no intercept). An agent and class "
        "where no valid run has a finite slope has no row.",
        labels=("agent", "task_class"),
        stats=(
            Stat("Slope", "slope_mean", "slope_sd"),
            Stat("Intercept", "intercept_mean", "intercept_sd"),
            Stat("Tasks", "n_tasks", integer=True),
            Stat("Runs", "n_runs", integer=True),
        ),
        titles={"task_class": "task class"},
    ),
    computed_by="automd_analysis.analysis.measure_comparison.compare_calibration_measures",
)

RELIABILITY = Table(
    "reliability_bins",
    NOTEBOOK,
    "The bins behind the reliability diagrams (each run's bins, averaged over runs).",
    (
        *Column.texts("task", "agent", "kind"),
        *Column.numbers("quantile", "time"),
        Column("bin", "int", kind="number"),
        *Column.numbers("lo", "hi"),
        *Column.counts("n", "n_runs"),
        *Column.numbers("mean_pred", "observed"),
    ),
    computed_by="automd_analysis.analysis.calibration_practices.reliability_table",
)

CURVES = Table(
    "smoothed_calibration_curves",
    NOTEBOOK,
    "The smoothed calibration curves behind the curve figures.",
    (
        *Column.texts("task", "agent", "kind"),
        *Column.numbers("x"),
        *Column.mean_sd("observed"),
        *Column.numbers("lo_mean", "hi_mean"),
        *Column.counts("n_runs"),
    ),
    computed_by="automd_analysis.analysis.measure_comparison.compare_calibration_measures",
)

DECISION_CURVES = Table(
    "decision_curves",
    NOTEBOOK,
    "Net benefit by risk threshold per task and agent.",
    (
        *Column.texts("task", "agent"),
        *Column.numbers("threshold"),
        *Column.mean_sd("net_benefit"),
        *Column.counts("n_runs"),
        *Column.numbers("treat_all", "treat_none"),
    ),
    computed_by="automd_analysis.analysis.measure_comparison.compare_calibration_measures",
)

TABLES = (
    TABLE3,
    TABLE13,
    PROVENANCE,
    FIG2A,
    FIG2B,
    FIG2B_SUMMARY,
    TABLE20,
    TABLE20_WIDE,
    AGREEMENT,
    AGREEMENT_VALUES,
    AGREEMENT_CONFUSION,
    BY_MEASURE,
    RANKING_AGREEMENT,
    RANK_FLIPS,
    CORRELATIONS,
    SLOPE_INTERCEPT,
    RELIABILITY,
    CURVES,
    DECISION_CURVES,
)

FIGURES = (
    Figure(
        "table3_forest",
        NOTEBOOK,
        "ECE per agent and task class with 95% intervals.",
        paper="Table 3",
        caption="Bias-corrected ECE per agent and task class with its 95% bootstrap "
        "interval (from below the corrected value up to the plug-in; lower is better), one colour "
        "per agent. Dashed grey: the simple baseline's estimate. Each panel's x axis spans its "
        "intervals.",
        computed_by="automd_analysis.report.uncertainty_figures.table3_forest",
    ),
    Figure(
        "pairwise_ece",
        NOTEBOOK,
        "ECE difference of every pair of agents.",
        caption="Row agent's ECE reduction over the column agent (column minus row mean "
        "per-task ECE; blue: the row agent is better calibrated) with the Holm-adjusted "
        "p-value of the paired bootstrap test on these tasks; `*` and a black frame mark "
        "p < 0.05.",
        computed_by="automd_analysis.report.uncertainty_figures.pairwise_matrix",
    ),
    Figure(
        "fig2a_ece_decomposition",
        NOTEBOOK,
        "Where the ECE gap to the baselines sits.",
        paper="Fig. 2a",
        caption="*Figure 2a.* Share of valid agent runs (light grey) and share of the total ECE "
        "difference from the simple baselines (dark grey) per practice group, in %, black lines "
        "their 95% "
        "intervals (the runs of every agent and of the baseline redrawn within each task, the "
        "test sets held fixed); under each group its number of runs and mean ECE. The footnote "
        "names who produced the codebook answers.",
        computed_by="automd_analysis.report.figures.figure2a",
    ),
    Figure(
        "fig2b_recalibration",
        NOTEBOOK,
        "Recalibration after imbalance handling.",
        paper="Fig. 2b",
        caption="*Figure 2b.* ECE of the valid runs that handle class imbalance, without and "
        "with recalibration: open grey circles are runs (spread sideways to stay apart), black "
        "diamonds the group means, the black lines through them their 95% intervals (runs "
        "redrawn within each agent and task, the test sets held fixed). The y axis spans the "
        "runs' ECE.",
        computed_by="automd_analysis.report.figures.figure2b",
    ),
    Figure(
        "calibration_measure_ranks",
        NOTEBOOK,
        "Each agent's rank under each measure.",
        caption="Each agent's rank (1 = best calibrated) under each measure, with the measure's "
        "value below it. A column that differs from the first means that measure orders the "
        "agents differently from the paper's 10-bin ECE. The simple baseline is not ranked.",
        computed_by="automd_analysis.report.calibration_figures.measure_rank_figure",
    ),
    Figure(
        "reliability_<task>",
        NOTEBOOK,
        "Reliability diagrams of one task.",
        caption="Reliability diagrams of `{task}`, one panel per agent, both axes 0 to 1: "
        "observed against mean predicted per bin, each point the mean over the agent's valid "
        "runs of that run's bin (markers all one size). Binary tasks: 10 equal-width bins, 0.1 "
        "wide, circles in the agent's colour; light grey bars along the bottom are the bin's "
        "predictions summed over the runs (height proportional to the count, the tallest a "
        "quarter of the panel; its count in the panel title). Survival tasks: one curve per "
        "time quantile, each its own grey, line style and marker (legend), points the risk "
        "groups (patients per group in the title). Dashed grey: perfect calibration.",
        computed_by="automd_analysis.report.figures.reliability_figure",
    ),
    Figure(
        "calibration_curve_<task>",
        NOTEBOOK,
        "Smoothed calibration curves of one task.",
        caption="Smoothed calibration curves of `{task}`, one panel per agent, both axes 0 to "
        "1: the smoothed calibration curve of each valid run, averaged over the runs (line, in "
        "the agent's colour), the mean pointwise 95% interval of a run (band), the 10-bin "
        "reliability points computed the same way - each run's bins, averaged over the runs "
        "(open circles) - and perfect calibration (dashed grey). The curve is cut where fewer "
        "than half of the agent's runs reach.",
        computed_by="automd_analysis.report.calibration_figures.smoothed_calibration_figures",
    ),
    Figure(
        "decision_curves",
        NOTEBOOK,
        "Decision curves of the classification tasks.",
        caption="Net benefit against the threshold probability (0.01 to 0.5) per classification "
        "task: one solid line per agent in its colour (mean over valid runs; the simple baseline "
        "solid grey), treat all (dotted black) and treat none (dashed black, net benefit 0). "
        "Higher is better; the y axis runs from a little below the lowest agent curve or 0 "
        "(treat all, which falls steeply, is cut there) to a little above the highest curve.",
        computed_by="automd_analysis.report.calibration_figures.decision_curve_figure",
    ),
)
