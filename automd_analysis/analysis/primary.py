"""Primary task performance: paper Table 2, Table 12 and the invalid-submission breakdown (App. E).

Every function takes a :class:`~automd_analysis.analysis.store.ScoreStore` and returns a tidy
DataFrame; it uses the selected submission of each run of the main experiment (``experiment``).

Aggregation rules (paper App. E; docs/tables.md, docs/decisions.md item 19):

- **Penalised** score: an invalid run scores 0; for each (agent, repetition) the normalised scores
  are averaged over the tasks, then the mean and sample SD (``ddof=1``) over repetitions are
  reported.
- **Non-penalised** score: valid runs are averaged within each task, then tasks are weighted equally;
  its SD (over repetitions, as above) is reported only when *all* the agent's runs are valid.
- **Ranks**: within each task the agents (never the simple baseline) are ranked by their mean
  normalised score under each convention, 1 = best, ties get their average rank; the mean and SD of
  an agent's ranks over tasks are reported.
- The normalised score is already clipped to [0, 1] by the scorer (eq. 1), so negative sequential
  utilities count as 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from automd_analysis import submissions
from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    PER_TASK_COLUMNS,
    ScoreStore,
    agent_order,
    mean_sd,
    per_task_summary,
    selected_runs,
    skipped_runs,
)
from automd_analysis.precision import comparable

__all__ = [
    "TABLE12_COLUMNS",
    "TABLE2_COLUMNS",
    "agent_summary",
    "coverage",
    "invalid_breakdown",
    "rank_table",
    "scores_by_task",
    "table12",
    "table2",
    "task_means",
]

TABLE2_COLUMNS: tuple[str, ...] = (
    "agent",
    "penalized_mean",
    "penalized_sd",
    "nonpenalized_mean",
    "nonpenalized_sd",
    "valid_rate_mean",
    "valid_rate_sd",
    "rank_penalized_mean",
    "rank_penalized_sd",
    "rank_nonpenalized_mean",
    "rank_nonpenalized_sd",
)
TABLE12_COLUMNS: tuple[str, ...] = PER_TASK_COLUMNS


def task_means(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.DataFrame:
    """Mean normalised score of every (task, agent) under both conventions.

    Columns: ``task``, ``agent``, ``reference``, ``n_runs``, ``n_valid``, ``penalized`` (mean over
    runs with invalid = 0), ``nonpenalized`` (mean over valid runs; NaN when none is valid).
    Sorted by task, then agent.
    """
    runs = selected_runs(store, experiment)
    grouped = runs.groupby(["task", "agent"], sort=True)
    out = grouped.agg(
        reference=("reference", "any"),
        n_runs=("run_id", "size"),
        n_valid=("valid", "sum"),
        penalized=("penalized", "mean"),
        nonpenalized=("score", "mean"),
    ).reset_index()
    out["n_valid"] = out["n_valid"].astype(int)
    return out


def _rank_within_task(means: pd.DataFrame, column: str) -> pd.Series:
    """Average ranks (1 = best) of the non-reference agents within each task; NaN scores unranked."""
    ranked = means.loc[~means["reference"]].copy()
    rounded = comparable(ranked[column])
    ranks = rounded.groupby(ranked["task"]).rank(ascending=False, method="average")
    return ranks.reindex(means.index)


def rank_table(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.DataFrame:
    """Per-task ranks of the agents under both conventions (paper App. E).

    Within each task, agents are ranked by their mean normalised score (:func:`task_means`),
    1 = best, ties receive the average of the ranks they span (``scipy.stats.rankdata(-x,
    'average')``). The simple baseline (``reference``) is not ranked (NaN). Under the non-penalised
    convention an agent with no valid run on a task has no score and is not ranked on that task.

    Columns: ``task``, ``agent``, ``rank_penalized``, ``rank_nonpenalized``.
    """
    means = task_means(store, experiment)
    means["rank_penalized"] = _rank_within_task(means, "penalized")
    means["rank_nonpenalized"] = _rank_within_task(means, "nonpenalized")
    return means[["task", "agent", "rank_penalized", "rank_nonpenalized"]]


def agent_summary(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.DataFrame:
    """Paper Table 2: primary task performance per agent.

    For agent a with repetitions k = 1..K and tasks t = 1..T:

    - ``penalized_mean/sd``: mean / sample SD over k of ``P_k = mean_t s'_{t,k}`` where ``s'`` is the
      normalised score with invalid runs set to 0.
    - ``nonpenalized_mean``: ``mean_t ( mean of the valid s_{t,k} over k )`` over tasks with at least
      one valid run; ``nonpenalized_sd``: sample SD over k of ``mean_t s_{t,k}`` - only when every
      run of the agent is valid, else NaN.
    - ``valid_rate_mean/sd``: mean / sample SD over k of the share of valid runs among the tasks.
    - ``rank_*_mean/sd``: mean / sample SD over tasks of the agent's per-task rank
      (:func:`rank_table`); NaN for the simple baseline (never ranked).

    A repetition averages over the tasks it has runs for (an agent missing from a task is not
    penalised for it; see ``docs/decisions.md``). One row per agent, the baseline last.

    Returns
    -------
    DataFrame with columns :data:`TABLE2_COLUMNS`.
    """
    runs = selected_runs(store, experiment)
    ranks = rank_table(store, experiment)
    rows = []
    for agent in agent_order(runs["agent"]):
        mine = runs.loc[runs["agent"] == agent]
        per_rep = mine.groupby("rep", sort=True).agg(
            penalized=("penalized", "mean"),
            valid_rate=("valid", "mean"),
            score=("score", "mean"),
        )
        pen_mean, pen_sd = mean_sd(per_rep["penalized"])
        rate_mean, rate_sd = mean_sd(per_rep["valid_rate"].astype(float))
        per_task = mine.groupby("task", sort=True)["score"].mean()
        nonpen_mean = float(per_task.mean()) if per_task.notna().any() else math.nan
        all_valid = bool(mine["valid"].all()) and bool(mine["score"].notna().all())
        nonpen_sd = mean_sd(per_rep["score"])[1] if all_valid else math.nan
        agent_ranks = ranks.loc[ranks["agent"] == agent]
        rp_mean, rp_sd = mean_sd(agent_ranks["rank_penalized"])
        rn_mean, rn_sd = mean_sd(agent_ranks["rank_nonpenalized"])
        rows.append(
            (
                agent,
                pen_mean,
                pen_sd,
                nonpen_mean,
                nonpen_sd,
                rate_mean,
                rate_sd,
                rp_mean,
                rp_sd,
                rn_mean,
                rn_sd,
            )
        )
    return pd.DataFrame(rows, columns=list(TABLE2_COLUMNS))


def scores_by_task(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """Paper Table 12: normalised primary score per task and agent over valid runs.

    ``mean`` and ``sd`` (sample SD, ``ddof=1``; NaN with fewer than two valid runs) of the valid
    runs' normalised scores and their number ``n_valid``. A (task, agent) with runs but no valid one
    has ``mean = sd = NaN`` and ``n_valid = 0``. The baseline's row averages its (five) repetitions.

    Returns
    -------
    DataFrame with columns :data:`TABLE12_COLUMNS`, sorted by task then agent (baseline last).
    """
    runs = selected_runs(store, experiment)
    return per_task_summary(runs, "score")


def _category_of(code: str, kind: str | None, unit: str | None) -> str:
    """Paper category of a reason code (``submissions.paper_category`` when it is available)."""
    function = getattr(submissions, "paper_category", None)
    if callable(function):
        return str(function(code, kind=kind, unit=unit))
    return code


def invalid_breakdown(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    units: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Invalid selected submissions by agent and reason (paper App. E, "Invalid Submissions").

    Each invalid run is counted once, under its first failing check (``reason_code``), mapped to the
    paper's category by :func:`automd_analysis.submissions.paper_category` (which needs the task
    kind - from the store - and the task's unit for identifier problems).

    Parameters
    ----------
    units : mapping task -> unit, optional
        Manifest ``sizes.unit`` of each task (``patients``, ``encounters``, ``stays``), so that an
        identifier problem reads "incorrect encounter identifiers"; the score store does not carry
        the unit, and tasks not listed default to patients.

    Returns
    -------
    DataFrame
        ``agent``, ``category``, ``reason_code``, ``n_invalid``, ``n_runs`` (the agent's runs) and
        ``share_of_invalid`` (``n_invalid`` / the agent's invalid runs). Agents without invalid runs
        do not appear. Sorted by agent, then decreasing ``n_invalid``, then category and code.
    """
    runs = selected_runs(store, experiment)
    n_runs = runs.groupby("agent").size()
    invalid = runs.loc[~runs["valid"]].copy()
    columns = ["agent", "category", "reason_code", "n_invalid", "n_runs", "share_of_invalid"]
    if invalid.empty:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    invalid["reason_code"] = invalid["reason_code"].fillna("unknown").astype(str)
    unit_of = dict(units or {})
    invalid["category"] = [
        _category_of(code, kind, unit_of.get(task))
        for code, kind, task in zip(
            invalid["reason_code"], invalid["task_kind"], invalid["task"], strict=True
        )
    ]
    counts = (
        invalid.groupby(["agent", "category", "reason_code"], sort=True)
        .size()
        .rename("n_invalid")
        .reset_index()
    )
    counts["n_runs"] = counts["agent"].map(n_runs).astype(int)
    per_agent = counts.groupby("agent")["n_invalid"].transform("sum")
    counts["share_of_invalid"] = counts["n_invalid"] / per_agent
    counts = counts.sort_values(
        ["agent", "n_invalid", "category", "reason_code"],
        ascending=[True, False, True, True],
        kind="mergesort",
    )
    return counts[columns].reset_index(drop=True)


def coverage(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.DataFrame:
    """Which runs the tables rest on: per (task, agent) ``n_runs``, ``n_valid``, ``n_skipped`` and
    ``n_incomplete``.

    ``n_skipped`` counts runs of the experiment that the scorer could not read
    (``problems.parquet``, :func:`~automd_analysis.analysis.store.skipped_runs`): they are missing
    from every table (not counted as invalid), so a non-zero value flags an incomplete archive.
    ``n_incomplete`` counts scored runs whose source lacked a part or stopped inside a stage
    (``runs.incomplete``, set by ``automd import``): they are in the tables as they are.
    Sorted by task, then agent (baseline last).
    """
    runs = selected_runs(store, experiment)
    flags = store.runs.set_index("run_id")["incomplete"] if "incomplete" in store.runs else None
    runs = runs.assign(
        incomplete=False if flags is None else runs["run_id"].map(flags).fillna(False).astype(bool)
    )
    counts = runs.groupby(["task", "agent"], sort=True).agg(
        n_runs=("run_id", "size"), n_valid=("valid", "sum"), n_incomplete=("incomplete", "sum")
    )
    skipped = skipped_runs(store, experiment)
    extra = skipped.dropna(subset=["task", "agent"]).groupby(["task", "agent"]).size()
    table = counts.join(extra.rename("n_skipped"), how="outer").fillna(0).astype("int64")
    table = table[["n_runs", "n_valid", "n_skipped", "n_incomplete"]]
    table = table.reset_index()
    order = {a: i for i, a in enumerate(agent_order(table["agent"]))}
    table["_order"] = table["agent"].map(order)
    table = table.sort_values(["task", "_order"], kind="mergesort").drop(columns="_order")
    return table.reset_index(drop=True)


# Paper names (the notebooks use the descriptive names above).
table2 = agent_summary
table12 = scores_by_task
