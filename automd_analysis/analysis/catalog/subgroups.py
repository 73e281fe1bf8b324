"""Notebook 05 - subgroups: paper Table 14."""

from __future__ import annotations

from automd_analysis.analysis.catalog.declaration import Column, Figure, Table

NOTEBOOK = "05_subgroups"
TITLE = "Subgroups"

TABLE14 = Table(
    "table14_subgroup_gaps",
    NOTEBOOK,
    "Gap between the best and worst subgroup per task, attribute and agent.",
    (
        Column("task_group", "str", title="task group"),
        *Column.texts("attribute", "agent"),
        Column("n_runs", "int", title="Runs", kind="count"),
        *Column.mean_sd("gap", interval=True, title="Gap (mean ± SD)"),
        Column("lowest_group", "str", title="Most often lowest group"),
        Column("lowest_share", title="Lowest in", kind="share"),
        Column("same_lowest_share", title="Same lowest group as the baseline", kind="share"),
        Column("n_compared", "int", title="Runs compared", kind="count"),
    ),
    paper="Table 14",
    caption="Gap between the highest- and the lowest-scoring eligible subgroup of each valid run "
    "(mean ± SD over runs), the group most often lowest and the share of runs in which it is, "
    "and the share of runs whose lowest group is the simple baseline's on the same task.",
    computed_by="automd_analysis.analysis.subgroups.subgroup_gaps",
)

RESULTS = Table(
    "subgroup_results",
    NOTEBOOK,
    "Every subgroup's score per task and agent.",
    (
        *Column.texts("task", "attribute", "group", "agent"),
        *Column.counts("n_runs", "n_eligible"),
        *Column.mean_sd(),
        Column("n_mean", kind="count"),
    ),
    computed_by="automd_analysis.analysis.subgroups.subgroup_table",
)

CHECKS = Table(
    "subgroup_checks",
    NOTEBOOK,
    "Valid runs whose code checked performance by subgroup.",
    (
        *Column.texts("agent"),
        *Column.counts("n_valid", "n_answered", "n_checked"),
        Column("percent", kind="percent"),
    ),
    computed_by="automd_analysis.analysis.subgroups.subgroup_checks",
)

TABLES = (TABLE14, RESULTS, CHECKS)

FIGURES = (
    Figure(
        "subgroup_gaps",
        NOTEBOOK,
        "Mean gap between subgroups per agent.",
        paper="Table 14",
        caption="Mean gap between the highest- and the lowest-scoring subgroup per task group "
        "and attribute (rows), one point per agent with its 95% interval (runs redrawn within "
        "each agent and task, each scored on resampled test patients), one colour per agent; "
        "the x axis starts at 0, and further right means a less even performance across "
        "subgroups.",
        computed_by="automd_analysis.report.figures.subgroup_gap_figure",
    ),
)
