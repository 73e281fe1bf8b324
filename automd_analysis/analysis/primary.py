"""Primary task performance: paper Table 2, Table 12 and the invalid-submission breakdown (App. E).

Every function takes a :class:`~automd_analysis.analysis.store.ScoreStore` and returns the tidy
DataFrame its table declares (:mod:`automd_analysis.analysis.catalog.primary_scores`); it uses the
selected submission of each run of the main experiment (``experiment``). Table 2 is computed once
from the run x replicate matrix of :mod:`automd_analysis.stats.resample`: the point values are
its column 0, the intervals the percentiles of the other columns.

Aggregation rules (paper App. E, implemented in :mod:`automd_analysis.stats.rules`;
docs/tables.md, docs/decisions.md item 19):

- **Penalised** score: an invalid run scores 0; for each (agent, repetition) the normalised scores
  are averaged over the tasks, then the mean and sample SD (``ddof=1``) over repetitions are
  reported.
- **Non-penalised** score: valid runs are averaged within each task, then tasks are weighted equally;
  its SD (over repetitions, as above) is reported only when *all* the agent's runs are valid.
- **Ranks**: within each task the agents (never the simple baseline) are ranked by their mean
  normalised score under each convention, 1 = best, ties (equal at the displayed 3 decimals) get
  their average rank; the mean and SD of
  an agent's ranks over tasks are reported.
- The normalised score is already clipped to [0, 1] by the scorer (eq. 1), so negative sequential
  utilities count as 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from automd_analysis.analysis._docstrings import (
    EXAMPLE_STORE,
    bootstrap_references,
    returns_task_agent_summary,
)
from automd_analysis.analysis.catalog.primary_scores import (
    COVERAGE,
    COVERAGE_BY_RUN,
    INVALID,
    OVERVIEW,
    TABLE2,
    TABLE12,
)
from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    NOT_SCORABLE,
    ScoreStore,
    agent_order,
    agent_positions,
    selected_runs,
    skipped_runs,
    task_agent_summary,
)
from automd_analysis.docstrings import fill_doc
from automd_analysis.reason_codes import paper_category
from automd_analysis.stats.intervals import check_alpha, summarise
from automd_analysis.stats.ranks import mean_rank_interval
from automd_analysis.stats.resample import RAISES_NO_REPLICATES, RunDraws, run_draws
from automd_analysis.stats.rules import (
    displayed,
    mean_over,
    mean_sd,
    over_repetitions,
    penalized,
    per_cell,
    per_repetition,
    row_groups,
    valid_only,
)

__all__ = [
    "agent_summary",
    "coverage",
    "coverage_by_run",
    "invalid_breakdown",
    "rank_table",
    "run_overview",
    "scores_by_task",
    "table12",
    "table2",
    "task_means",
    "undefined_scores",
]

#: Cells of the two-stage bootstrap of Table 2: an agent's runs on one task.
_CELLS = ("agent", "task")


def _matrix(store: ScoreStore, experiment: str, n_boot, seed: int) -> RunDraws:
    runs = selected_runs(store, experiment)
    return run_draws(runs, store.replicates, _CELLS, n_boot=n_boot, seed=seed, tag="table2")


def _cell_means(matrix: RunDraws) -> pd.DataFrame:
    """Per (task, agent): run counts and the observed penalised / non-penalised mean score."""
    runs = matrix.units
    cells = row_groups(runs, ["task", "agent"])
    groups = list(cells.values())
    observed = matrix.score[:, :1], matrix.valid[:, :1]
    return pd.DataFrame(
        {
            "task": [k[0] for k in cells],
            "agent": [k[1] for k in cells],
            "reference": [bool(runs["reference"].to_numpy()[g].any()) for g in groups],
            "n_runs": [len(g) for g in groups],
            "n_valid": [int(runs["valid"].to_numpy()[g].sum()) for g in groups],
            "penalized": per_cell(penalized(*observed), groups)[:, 0],
            "nonpenalized": per_cell(valid_only(*observed), groups)[:, 0],
        }
    ).astype({"n_runs": "int64", "n_valid": "int64"})


def task_means(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.DataFrame:
    """Mean normalised score of every (task, agent) under both conventions.

    Columns: ``task``, ``agent``, ``reference``, ``n_runs``, ``n_valid``, ``penalized`` (mean over
    runs with invalid = 0), ``nonpenalized`` (mean over valid runs; NaN when none is valid).
    Sorted by task, then agent.
    """
    observed = run_draws(selected_runs(store, experiment), None, _CELLS, tag="table2")
    return _cell_means(observed)


def _rank_within_task(means: pd.DataFrame, column: str) -> pd.Series:
    """Average ranks (1 = best) of the non-reference agents within each task; NaN scores unranked."""
    ranked = means.loc[~means["reference"]].copy()
    rounded = displayed(ranked[column])  # equal at the shown 3 decimals: a tie
    ranks = rounded.groupby(ranked["task"]).rank(ascending=False, method="average")
    return ranks.reindex(means.index)


def _ranks(means: pd.DataFrame) -> pd.DataFrame:
    means = means.assign(
        rank_penalized=_rank_within_task(means, "penalized"),
        rank_nonpenalized=_rank_within_task(means, "nonpenalized"),
    )
    return means[["task", "agent", "rank_penalized", "rank_nonpenalized"]]


def rank_table(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.DataFrame:
    """Per-task ranks of the agents under both conventions (paper App. E).

    Within each task, agents are ranked by their mean normalised score (:func:`task_means`),
    1 = best, ties (scores equal at the displayed 3 decimals) receive the average of the ranks
    they span (``scipy.stats.rankdata(-x,
    'average')``). The simple baseline (``reference``) is not ranked (NaN). Under the non-penalised
    convention an agent with no valid run on a task has no score and is not ranked on that task.

    Columns: ``task``, ``agent``, ``rank_penalized``, ``rank_nonpenalized``.
    """
    return _ranks(task_means(store, experiment))


@fill_doc(
    references=bootstrap_references("Table 2 and App. E"),
    example_store=EXAMPLE_STORE,
    raises_no_replicates=RAISES_NO_REPLICATES,
)
def agent_summary(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    alpha: float = 0.05,
    seed: int = 0,
    n_boot: int | None = None,
) -> pd.DataFrame:
    """Paper Table 2: primary task performance per agent, with two-stage bootstrap intervals.

    For agent a with repetitions k = 1..K and tasks t = 1..T:

    - ``penalized_mean/sd``: mean / sample SD over k of ``P_k = mean_t s'_{t,k}`` where ``s'`` is the
      normalised score with invalid runs set to 0.
    - ``nonpenalized_mean``: ``mean_t ( mean of the valid s_{t,k} over k )`` over tasks with at least
      one valid run; ``nonpenalized_sd``: sample SD over k of ``mean_t s_{t,k}`` - only when every
      run of the agent is valid, else NaN.
    - ``valid_rate_mean/sd``: mean / sample SD over k of the share of valid runs among the tasks.
    - ``rank_*_mean/sd``: mean / sample SD over tasks of the agent's per-task rank
      (:func:`rank_table`); NaN for the simple baseline (never ranked). ``rank_*_mean_ci_low/high``:
      the interval of the mean rank from the paired comparisons of the per-task means
      (:func:`~automd_analysis.stats.ranks.mean_rank_interval`).
    - ``penalized_mean_ci_low/high``, ``nonpenalized_mean_ci_low/high``: the 1 - ``alpha`` percentile
      interval of the same two means over the B columns of the two-stage bootstrap
      (:func:`~automd_analysis.stats.resample.run_draws`: in column b the runs of every
      (agent, task) are redrawn and each drawn run scores its test resample b),

      .. math:: P_b = \\frac{1}{K} \\sum_k \\frac{1}{|T_k|} \\sum_{t \\in T_k} s'^{(b)}_{t,k}

      Empty when the store has no replicates.

    A repetition averages over the tasks it has runs for (an agent missing from a task is not
    penalised for it; see ``docs/decisions.md``). One row per agent, the baseline last.

    Parameters
    ----------
    store : ScoreStore
    experiment : str
    alpha : float, default 0.05
    seed : int, default 0
        Seed of the repetition draws.
    n_boot : int, optional
        B (default: the replicates per run in the store).

    Returns
    -------
    DataFrame
        The columns of the ``table2_primary_scores`` declaration
        (:mod:`automd_analysis.analysis.catalog.primary_scores`).

    Raises
    ------
    {raises_no_replicates}

    See Also
    --------
    automd_analysis.stats.rules : the aggregation rules.

    {references}

    {example_store}
    >>> row = agent_summary(example_store_with_replicates()).set_index("agent").loc["a"]
    >>> bool(row.penalized_mean_ci_low < row.penalized_mean < row.penalized_mean_ci_high)
    True
    """
    alpha = check_alpha(alpha)
    rows = _table2_rows(_matrix(store, experiment, n_boot, seed))
    bounds = {"penalized_mean": (0.0, 1.0), "nonpenalized_mean": (0.0, 1.0)}
    rows = summarise(rows, TABLE2.intervals, alpha, bounds=bounds, **TABLE2.best_marks(rows))
    return TABLE2.frame(rows)


def _table2_rows(matrix: RunDraws) -> list[dict]:
    """Table 2's rows; the columns with an interval hold their value in every matrix column."""
    runs = matrix.units
    reps = runs["rep"].to_numpy()
    scores = penalized(matrix.score, matrix.valid)
    valid_scores = valid_only(matrix.score, matrix.valid)
    rank_draws = _rank_draws(runs, row_groups(runs, _CELLS), scores, valid_scores)
    ranks = _ranks(_cell_means(matrix))
    agents = agent_order(runs["agent"])
    summaries = group_summaries(matrix, "agent", agents, {"nonpenalized_mean": valid_scores})
    rows = []
    for agent, summary in summaries.items():
        mine = np.flatnonzero((runs["agent"] == agent).to_numpy())
        all_valid = bool(np.isfinite(valid_scores[mine, 0]).all())
        nonpen_rep = per_repetition(reps, valid_scores[:, :1], mine)[:, 0]
        rank_pen = mean_sd(ranks.loc[ranks["agent"] == agent, "rank_penalized"])
        rank_nonpen = mean_sd(ranks.loc[ranks["agent"] == agent, "rank_nonpenalized"])
        none = (math.nan, math.nan, math.nan)
        rows.append(
            {
                "agent": agent,
                **summary,
                "nonpenalized_sd": mean_sd(nonpen_rep)[1] if all_valid else math.nan,
                "rank_penalized_mean": rank_draws["penalized"].get(agent, none),
                "rank_penalized_sd": rank_pen[1],
                "rank_nonpenalized_mean": rank_draws["nonpenalized"].get(agent, none),
                "rank_nonpenalized_sd": rank_nonpen[1],
            }
        )
    return rows


def group_summaries(
    matrix: RunDraws, column: str, groups: Sequence[str], valid_values: Mapping[str, np.ndarray]
) -> dict[str, dict]:
    """Per group of ``column`` (``groups`` order): the penalised score's mean over repetitions
    (every matrix column) and SD, the valid rate's mean and SD, and each run x column matrix of
    ``valid_values`` averaged within (group, task) cells, then over the group's cells."""
    runs = matrix.units
    reps = runs["rep"].to_numpy()
    scores = penalized(matrix.score, matrix.valid)
    cells = row_groups(runs, [column, "task"])
    cell_group = np.array([k[0] for k in cells])
    cell_values = {name: per_cell(v, list(cells.values())) for name, v in valid_values.items()}
    out = {}
    for group in groups:
        mine = np.flatnonzero((runs[column] == group).to_numpy())
        per_rep = per_repetition(reps, scores, mine)
        rate = mean_sd(per_repetition(reps, matrix.valid[:, :1].astype(float), mine)[:, 0])
        out[group] = {
            "penalized_mean": over_repetitions(per_rep),
            "penalized_sd": mean_sd(per_rep[:, 0])[1],
            "valid_rate_mean": rate[0],
            "valid_rate_sd": rate[1],
        } | {name: mean_over(v, cell_group == group) for name, v in cell_values.items()}
    return out


def _rank_draws(runs: pd.DataFrame, cells: Mapping, scores, valid_scores) -> dict[str, dict]:
    """Per convention, each ranked agent's mean rank over tasks with its interval from the paired
    draws of the per-task means (:func:`~automd_analysis.stats.ranks.mean_rank_interval`; the
    simple baseline is never ranked)."""
    reference = runs["reference"].to_numpy(bool)
    keys = [k for k, rows in cells.items() if not reference[rows].any()]
    groups = [cells[k] for k in keys]
    tasks = [k[1] for k in keys]
    agents = [k[0] for k in keys]
    return {
        "penalized": mean_rank_interval(per_cell(scores, groups), tasks, agents),
        "nonpenalized": mean_rank_interval(per_cell(valid_scores, groups), tasks, agents),
    }


def run_overview(store: ScoreStore) -> pd.DataFrame:
    """Runs, valid runs, runs not scorable here and tasks per experiment and agent.

    Columns: ``experiment``, ``agent``, ``runs`` (every published run: scored or not scorable),
    ``valid``, ``not_scorable`` (``runs.status``: no predictions for the task's test set
    archived; neither valid nor invalid), ``tasks``; sorted by experiment, then agent.
    """
    runs = store.runs.assign(
        valid=store.runs["status"] == "valid", not_scorable=store.runs["status"] == NOT_SCORABLE
    )
    frame = (
        runs.groupby(["experiment", "agent"], sort=True)
        .agg(
            runs=("run_id", "size"),
            valid=("valid", "sum"),
            not_scorable=("not_scorable", "sum"),
            tasks=("task", "nunique"),
        )
        .reset_index()
    )
    return OVERVIEW.frame(frame)


@fill_doc(returns=returns_task_agent_summary("score"))
def scores_by_task(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """Paper Table 12: normalised primary score per task and agent over valid runs.

    ``mean`` and ``sd`` (sample SD, ``ddof=1``; NaN with fewer than two valid runs) of the valid
    runs' normalised scores and their number ``n_valid``. A (task, agent) with runs but no valid one
    has ``mean = sd = NaN`` and ``n_valid = 0``. The baseline's row averages its (five) repetitions.

    {returns}
    """
    return TABLE12.frame(task_agent_summary(store, experiment, "score"))


def invalid_breakdown(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    units: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Invalid selected submissions by agent and reason (paper App. E, "Invalid Submissions").

    Each invalid run is counted once, under its first failing check (``reason_code``), mapped to the
    paper's category by :func:`automd_analysis.reason_codes.paper_category` (which needs the task
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
    if invalid.empty:
        return INVALID.frame()
    invalid["reason_code"] = invalid["reason_code"].fillna("unknown").astype(str)
    unit_of = dict(units or {})
    invalid["category"] = [
        paper_category(code, kind=kind, unit=unit_of.get(task))
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
    return INVALID.frame(counts.reset_index(drop=True))


def coverage(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.DataFrame:
    """Which runs the tables rest on: per (task, agent) ``n_runs``, ``n_valid``,
    ``n_not_scorable``, ``n_skipped`` and ``n_incomplete``.

    ``n_runs`` counts the runs the store holds (scored or not scorable); ``n_valid`` the scored
    ones with a valid selected file (the other scored runs are invalid and count 0 in the
    penalised score). ``n_not_scorable`` counts runs whose archive holds no prediction file for
    the task's test set (``runs.status``): they are in no score table, neither valid nor invalid.
    ``n_skipped`` counts runs of the experiment that the scorer could not read
    (``problems.parquet``, :func:`~automd_analysis.analysis.store.skipped_runs`): they are missing
    from every table (not counted as invalid), so a non-zero value flags an incomplete archive.
    ``n_incomplete`` counts runs whose source lacked a part or stopped inside a stage
    (``runs.incomplete``, set by ``automd import``): they are in the tables as they are.
    Sorted by task, then agent (baseline last); :func:`coverage_by_run` lists the runs.
    """
    runs = store.runs.loc[store.runs["experiment"] == experiment]
    incomplete = runs["incomplete"] if "incomplete" in runs else pd.Series(False, index=runs.index)
    runs = runs.assign(
        valid=runs["status"] == "valid",
        not_scorable=runs["status"] == NOT_SCORABLE,
        incomplete=incomplete.fillna(False).astype(bool),
    )
    counts = runs.groupby(["task", "agent"], sort=True).agg(
        n_runs=("run_id", "size"),
        n_valid=("valid", "sum"),
        n_not_scorable=("not_scorable", "sum"),
        n_incomplete=("incomplete", "sum"),
    )
    skipped = skipped_runs(store, experiment)
    extra = skipped.dropna(subset=["task", "agent"]).groupby(["task", "agent"]).size()
    table = counts.join(extra.rename("n_skipped"), how="outer").fillna(0).astype("int64")
    table = table.reset_index()
    return COVERAGE.frame(_by_task_and_agent(table))


def _by_task_and_agent(table: pd.DataFrame, *also: str) -> pd.DataFrame:
    """Rows sorted by task, then agent (baseline last), then ``also``."""
    order = agent_positions(table["agent"])
    table = table.assign(_order=table["agent"].map(order))
    table = table.sort_values(["task", "_order", *also], kind="mergesort").drop(columns="_order")
    return table.reset_index(drop=True)


def coverage_by_run(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """The runs behind :func:`coverage` that are not simply scored: one row per run of
    ``experiment`` that is not scorable here, was skipped by the scorer, or has a recorded
    problem, with its ``status`` and every ``problems`` code.

    ``status`` is ``runs.status`` (``valid``, ``invalid``, ``not_scorable``) or ``skipped``;
    ``problems`` joins (``, ``, sorted) the codes of ``problems.parquet`` for the run: what
    ``automd import`` recorded (``effect = "recorded at import"``, e.g.
    ``import.predictions_not_bound``), why it is not scorable (``scoring.no_predictions``) or was
    skipped, files and code the scorer could not read. Sorted by task, agent (baseline last),
    repetition.

    Examples
    --------
    A store whose runs are all scored, plus one run of agent ``c`` imported without predictions:

    >>> from automd_analysis.analysis._doc_example import example_store
    >>> store = example_store()[0]
    >>> extra = store.runs.iloc[:1].assign(
    ...     run_id="main/c/clf/rep0", experiment="main", agent="c", status="not_scorable"
    ... )
    >>> store = ScoreStore.from_frames(scores=store.scores, runs=pd.concat([store.runs, extra]))
    >>> coverage_by_run(store)[["task", "agent", "rep", "status"]]
      task agent  rep        status
    0  clf     c    0  not_scorable
    """
    runs = store.runs.loc[store.runs["experiment"] == experiment, ["run_id", "task", "agent",
                                                                  "rep", "status"]]  # fmt: skip
    skipped = skipped_runs(store, experiment).assign(status="skipped")
    rows = pd.concat([runs, skipped[["run_id", "task", "agent", "rep", "status"]]])
    rows = rows.drop_duplicates("run_id")
    problems = store.problems
    codes = pd.Series(dtype=object)
    if problems is not None and len(problems):
        mine = problems.loc[problems["run_id"].isin(set(rows["run_id"])), ["run_id", "code"]]
        codes = mine.dropna().groupby("run_id")["code"].agg(lambda c: ", ".join(sorted(set(c))))
    rows = rows.assign(problems=rows["run_id"].map(codes))
    keep = (rows["status"].isin([NOT_SCORABLE, "skipped"])) | rows["problems"].notna()
    rows = rows.loc[keep].drop(columns="run_id").astype({"rep": "int64"})
    rows["problems"] = rows["problems"].fillna("")
    return COVERAGE_BY_RUN.frame(_by_task_and_agent(rows, "rep"))


def undefined_scores(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """Valid selected submissions whose primary score is undefined, per task, with the reason.

    A valid file can still have no score: AUROC or a concordance index is undefined when the test
    set holds one outcome class, for instance. Such runs count 0 in the penalised scores (paper
    App. E) and are missing from the means of Table 12 (``n_valid`` counts runs with a score).

    Returns
    -------
    DataFrame
        ``task``, ``n_runs`` (valid runs without a score), ``reason`` (the scorer's
        ``metric_warnings``, ``; ``-joined; "the metric is undefined" when it recorded none),
        sorted by task; empty when every valid run has a score.
    """
    scores = store.scores
    rows = scores.loc[
        scores["is_selected"] & (scores["experiment"] == experiment) & scores["valid"]
        & scores["score"].isna()
    ]  # fmt: skip
    warnings = rows.get("metric_warnings")
    out = []
    for task, group in rows.groupby("task", sort=True):
        found = [] if warnings is None else warnings.loc[group.index].dropna().astype(str)
        reason = "; ".join(sorted(set(found))) or "the metric is undefined"
        out.append({"task": str(task), "n_runs": len(group), "reason": reason})
    return pd.DataFrame(out, columns=["task", "n_runs", "reason"])


# Paper names (the notebooks use the descriptive names above).
table2 = agent_summary
table12 = scores_by_task
