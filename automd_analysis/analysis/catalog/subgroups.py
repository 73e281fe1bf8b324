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
        Column("task_group", "str"),
        Column("attribute", "str"),
        Column("agent", "str"),
        Column("n_runs", "int"),
        Column("gap_mean", interval=True),
        Column("gap_sd"),
        Column("lowest_group", "str"),
        Column("lowest_share"),
        Column("same_lowest_share"),
        Column("n_compared", "int"),
    ),
    paper="Table 14",
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
    ),
)
