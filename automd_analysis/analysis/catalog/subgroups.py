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
        Column("attribute", "str"),
        Column("agent", "str"),
        Column("n_runs", "int", title="Runs"),
        Column("gap_mean", interval=True, title="Gap (mean ± SD)"),
        Column("gap_sd"),
        Column("lowest_group", "str", title="Most often lowest group"),
        Column("lowest_share", title="Lowest in"),
        Column("same_lowest_share", title="Same lowest group as the baseline"),
        Column("n_compared", "int", title="Runs compared"),
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
        Column("task", "str"),
        Column("attribute", "str"),
        Column("group", "str"),
        Column("agent", "str"),
        Column("n_runs", "int"),
        Column("n_eligible", "int"),
        Column("mean"),
        Column("sd"),
        Column("n_mean"),
    ),
    computed_by="automd_analysis.analysis.subgroups.subgroup_table",
)

CHECKS = Table(
    "subgroup_checks",
    NOTEBOOK,
    "Valid runs whose code checked performance by subgroup.",
    (
        Column("agent", "str"),
        Column("n_valid", "int"),
        Column("n_answered", "int"),
        Column("n_checked", "int"),
        Column("percent"),
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
