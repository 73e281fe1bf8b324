"""Notebook 04 - population shift: paper Table 5."""

from __future__ import annotations

from automd_analysis.analysis.catalog.declaration import Column, Figure, Stat, Table, TableSpec

NOTEBOOK = "04_population_shift"
TITLE = "Population shift"

_KEY = Column.texts("agent", "task", "internal_task")

TABLE5 = Table(
    "table5_external",
    NOTEBOOK,
    "Score on external tasks and its ratio to the score without the shift.",
    (*_KEY, *Column.numbers("score", interval=True), Column("ratio", interval=True, kind="share")),
    paper="Table 5",
    spec=TableSpec(
        caption="Performance under population shift: mean normalised score on the external "
        "task; parentheses: ratio to the score without the shift.",
        pivot=("task", "agent"),
        cell=Stat("score", "score", interval=False),
        extra="ratio",
        direction="max",
    ),
    computed_by="automd_analysis.analysis.shift.external_ratios",
)

TABLE5_DETAIL = Table(
    "table5_external_detail",
    NOTEBOOK,
    "Table 5 with the SDs and counts behind each cell.",
    (
        *_KEY,
        *Column.numbers("score", "ratio"),
        Column("score_sd", sd_of="score"),
        *Column.counts("n_valid", "n_pairs"),
        *Column.numbers("internal_score"),
    ),
    paper="Table 5",
    computed_by="automd_analysis.analysis.shift.external_ratios_detail",
)

TABLES = (TABLE5, TABLE5_DETAIL)

FIGURES = (
    Figure(
        "table5_forest",
        NOTEBOOK,
        "External / internal ratio with 95% intervals.",
        paper="Table 5",
        caption="External / internal score ratio (%) per external task and agent with its 95% "
        "two-stage bootstrap interval, one colour per agent; the dotted black line is 100% (no "
        "loss under the shift). The x axis spans the intervals.",
        computed_by="automd_analysis.report.uncertainty_figures.table5_forest",
    ),
    Figure(
        "external_ratios",
        NOTEBOOK,
        "External / internal score ratio per agent.",
        paper="Table 5",
        caption="External / internal normalised score (%) per external task and agent: the "
        "points are Table 5's ratios, the vertical lines their 95% intervals (two-stage bootstrap "
        "of Table 5), one colour per agent; dashed black: 100%, no loss on the external "
        "population. The y axis spans the ratios, their intervals and 100% with a margin, not 0.",
        computed_by="automd_analysis.report.figures.external_ratio_figure",
    ),
)
