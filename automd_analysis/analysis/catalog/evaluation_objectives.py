"""Notebook 03 - evaluation objectives: paper Tables 4, 15, 16 and Figure 4."""

from __future__ import annotations

from automd_analysis.analysis.catalog.declaration import Column, Figure, Stat, Table, TableSpec

NOTEBOOK = "03_evaluation_objectives"
TITLE = "Evaluation objectives"

_METRICS = tuple(c for m in ("auroc", "brier", "ece") for c in Column.mean_sd(m, interval=True))
#: How the intervals of Tables 4 and 15 are drawn (their captions' bracket sentence).
INTERVAL_NOTE = (
    "Brackets: 95% bootstrap interval of the mean (the runs of each agent redrawn under each "
    "objective; the task and its test set are held fixed)."
)
_COUNTS = Column.counts("n_runs", "n_valid")


def _objective_spec(caption: str, labels: tuple[str, ...], marked: bool) -> TableSpec:
    """Tables 4 and 15: valid runs, then AUROC, Brier and ECE as mean ± SD [interval]; with
    ``marked`` the best objective of each metric is bold (higher AUROC, lower Brier and ECE)."""
    metrics = (("AUROC", "auroc", "max"), ("Brier", "brier", "min"), ("ECE", "ece", "min"))
    return TableSpec(
        caption=caption,
        labels=labels,
        stats=(
            Stat("Valid runs", "n_valid", integer=True),
            *(
                Stat(title, f"{m}_mean", f"{m}_sd", direction=d if marked else None)
                for title, m, d in metrics
            ),
        ),
        exclude_from_best=(),
        interval_note=INTERVAL_NOTE,
    )


TABLE4 = Table(
    "table4_objectives",
    NOTEBOOK,
    "AUROC, Brier and ECE under each stated objective (all agents).",
    (*Column.texts("task", "objective"), *_COUNTS, *_METRICS),
    paper="Table 4",
    spec=_objective_spec(
        "Calibration under the evaluation objectives on one task (mean ± SD over the valid runs "
        "of all agents).",
        ("task", "objective"),
        marked=True,
    ),
    computed_by="automd_analysis.analysis.objectives.objective_summary",
)

TABLE15 = Table(
    "table15_objectives_by_agent",
    NOTEBOOK,
    "AUROC, Brier and ECE under each stated objective, by agent.",
    (*Column.texts("task", "agent", "objective"), *_COUNTS, *_METRICS),
    paper="Table 15",
    spec=_objective_spec(
        "Table 4 by agent: calibration under the evaluation objectives on one task (mean ± SD "
        "over the agent's valid runs).",
        ("task", "agent", "objective"),
        marked=False,
    ),
    computed_by="automd_analysis.analysis.objectives.objective_summary_by_agent",
)

TABLE16 = Table(
    "table16_objective_practices",
    NOTEBOOK,
    "Calibration-relevant practices under each stated objective.",
    (
        Column("objective", "str"),
        Column("n_valid", "int", title="Valid runs", kind="count"),
        Column("averaged_ranks", "int", title="Averaged ranks", kind="number"),
        Column(
            "imbalance_without_recalibration",
            "int",
            title="Imbalance handled, no recalibration",
            kind="number",
        ),
        Column("explicit_calibration", "int", title="Explicit calibration", kind="number"),
        Column("n_unannotated", "int", title="Not annotated", kind="count"),
    ),
    paper="Table 16",
    caption="Calibration-relevant practices of the valid runs under each stated objective "
    "(numbers of runs; a run can count in several columns).",
    computed_by="automd_analysis.analysis.objectives.objective_practices",
)

FIG4 = Table(
    "fig4_objectives",
    NOTEBOOK,
    "The runs behind Figure 4 and their practice group.",
    (
        *Column.texts("objective", "agent", "run_id"),
        *Column.numbers("auroc", "ece"),
        *Column.texts(
            "group",
            "averaged_ranks",
            "imbalance_handling",
            "recalibration",
            "probability_calibration",
        ),
    ),
    paper="Fig. 4",
    computed_by="automd_analysis.analysis.objectives.objective_points",
)

TABLES = (TABLE4, TABLE15, TABLE16, FIG4)

FIGURES = (
    Figure(
        "fig4_objectives",
        NOTEBOOK,
        "AUROC and ECE under each stated objective.",
        paper="Fig. 4",
        caption="*Figure 4.* AUROC (left) and ECE (right) of the valid runs under each stated "
        "objective: short thick black lines the objective means, points the runs (spread "
        "sideways), each calibration-practice group its own grey and marker (legend), the "
        "dashed black line the simple baseline's mean. The y axes span the data, not 0.",
        computed_by="automd_analysis.report.figures.figure4",
    ),
)
