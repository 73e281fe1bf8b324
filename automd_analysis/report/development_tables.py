"""Display specifications and reader-facing views of notebook 07's tables.

The analyses (:mod:`~automd_analysis.analysis.methods`, :mod:`~automd_analysis.analysis.development`,
:mod:`~automd_analysis.analysis.process`, :mod:`~automd_analysis.analysis.realtime`) return tidy
numeric tables; this module says how their LaTeX/HTML renderings look (:data:`TABLE_SPECS`, used by
:meth:`automd_analysis.report.notebook.Report.table` for these names) and builds the two reshaped
views the paper prints: Table 6 with one column per agent (:func:`table6_wide`) and the annotation
coverage of the sampled version pairs (:func:`pair_coverage`). Nothing here computes a new number.
"""

from __future__ import annotations

import pandas as pd

from automd_analysis.report.tables import Stat, TableSpec

__all__ = ["TABLE_SPECS", "pair_coverage", "table6_spec", "table6_wide"]


def _pct(title: str, column: str, direction: str | None = None) -> Stat:
    # the analyses already report percentages (0-100): print them as they are
    return Stat(title, column, direction=direction, decimals=0)


#: Display specifications of notebook 07's tables (keyed by CSV file stem).
TABLE_SPECS: dict[str, TableSpec] = {
    "table18_development": TableSpec(
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
            _pct("Selected = best (%)", "selected_is_best_pct", "max"),
            Stat("Reported validation - test", "val_minus_test", decimals=3),
        ),
    ),
    "table19_pair_changes": TableSpec(
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
    "table17_censoring_summary": TableSpec(
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
    "process_win_rate": TableSpec(
        caption="Pairwise head-to-head win-rate (FML-bench): share of run pairs on a task where "
        "the agent's valid submission beats the opponent's, averaged over opponents and tasks.",
        labels=("agent",),
        stats=(
            Stat("Win-rate", "win_rate", direction="max"),
            Stat("Task x opponent terms", "n_comparisons", integer=True),
        ),
    ),
    "masking_summary": TableSpec(
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
}


def table6_wide(table6: pd.DataFrame, *, keep_empty: bool = False) -> pd.DataFrame:
    """Paper Table 6 layout: one row per (field, category), per agent ``<agent>`` = mean % over
    repetitions and ``<agent>_sd`` = its sample SD.

    Parameters
    ----------
    table6 : DataFrame
        :func:`automd_analysis.analysis.methods.table6`.
    keep_empty : bool
        Keep categories no agent uses (default: drop them, as the paper's table does; the long
        table keeps every category).

    Returns
    -------
    DataFrame
        ``field, category, <agent>, <agent>_sd, ...`` in the long table's row order, agents
        alphabetically.
    """
    agents = sorted({str(a) for a in table6["agent"]})
    rows = []
    for (field, category), group in table6.groupby(["field", "category"], sort=False):
        pooled = pd.to_numeric(group["pct_pooled"], errors="coerce")
        if not keep_empty and not (pooled > 0).any():
            continue
        row = {"field": field, "category": category}
        by_agent = group.set_index(group["agent"].astype(str))
        for agent in agents:
            row[agent] = float(by_agent.at[agent, "pct_mean"]) if agent in by_agent.index else None
            row[f"{agent}_sd"] = float(by_agent.at[agent, "pct_sd"]) if agent in by_agent.index else None  # fmt: skip
        rows.append(row)
    columns = ["field", "category", *[c for a in agents for c in (a, f"{a}_sd")]]
    return pd.DataFrame(rows, columns=columns)


def table6_spec(wide: pd.DataFrame) -> TableSpec:
    """Display spec of :func:`table6_wide`: ``mean ± SD`` percentages per agent."""
    agents = [c for c in wide.columns[2:] if not str(c).endswith("_sd")]
    return TableSpec(
        caption="Modelling methods in valid runs: % of each agent's valid, annotated runs "
        "(mean ± SD over repetitions; categories can overlap).",
        labels=("field", "category"),
        stats=tuple(Stat(str(a), a, f"{a}_sd", decimals=0) for a in agents),
    )


def pair_coverage(shares: pd.DataFrame) -> pd.DataFrame:
    """Sampled version pairs per agent and stage, and how many lack an annotation.

    Selected from :func:`automd_analysis.analysis.development.figure3_shares` (its ``n_pairs`` is
    the number of annotated sampled pairs, ``n_unannotated`` the rest).

    Returns
    -------
    DataFrame
        ``agent, stage, n_sampled, n_annotated, n_unannotated`` in the stage order early, middle,
        late.
    """
    from automd_analysis.analysis.development import STAGES

    columns = ["agent", "stage", "n_sampled", "n_annotated", "n_unannotated"]
    if shares.empty:
        return pd.DataFrame(columns=columns)
    first = shares.drop_duplicates(["agent", "stage"])[
        ["agent", "stage", "n_pairs", "n_unannotated"]
    ]
    rank = {st: i for i, st in enumerate(STAGES)}
    first = first.assign(_r=first["stage"].map(rank)).sort_values(["agent", "_r"], kind="mergesort")
    return pd.DataFrame(
        {
            "agent": first["agent"].to_numpy(),
            "stage": first["stage"].to_numpy(),
            "n_sampled": (first["n_pairs"] + first["n_unannotated"]).astype(int).to_numpy(),
            "n_annotated": first["n_pairs"].astype(int).to_numpy(),
            "n_unannotated": first["n_unannotated"].astype(int).to_numpy(),
        },
        columns=columns,
    )
