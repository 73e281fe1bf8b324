"""Subgroup performance: paper Table 14, the full subgroup results and subgroup checks
(section 4.4, App. F).

Subgroup scores come from ``subgroups.parquet`` (selected valid submissions: AUROC for
classification tasks, plain Antolini C^td for survival tasks; a group is ``eligible`` with at least
50 observations and both classes for AUROC, 80 for C^td). Sequential tasks and tasks whose manifest
declares no subgroup columns have no rows and therefore drop out.

For a run and an attribute (age, sex, race) with at least two eligible groups:
``gap = max_g score_g - min_g score_g`` and the *lowest group* is the argmin (ties: the
alphabetically first group). The simple baseline's subgroup scores are first averaged over its
repetitions, per group; its lowest group and gap come from those averages.

Intervals of the mean gaps (``gap_mean_ci_low``, ``gap_mean_ci_high``) come from the two-stage bootstrap of
:mod:`automd_analysis.stats.resample`: in iteration b the runs of every (agent, task) are
redrawn (the baseline's repetitions of every task), and each drawn run brings its gap on test
resample b - the gap recomputed from its groups' scores on the run's resample b restricted to each
group (``subgroup_replicates.parquet``), the same patients for every run of the task.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from automd_analysis.analysis.catalog.subgroups import CHECKS, RESULTS, TABLE14
from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    ScoreStore,
    agent_order,
    agent_positions,
    run_answers,
    selected_runs,
)
from automd_analysis.errors import ScoreStoreError
from automd_analysis.precision import comparable
from automd_analysis.stats.intervals import check_alpha, estimate
from automd_analysis.stats.resample import REPLICATES_FIX, resample
from automd_analysis.stats.rules import mean_over, mean_sd, nanmean

__all__ = [
    "ALL_AGENTS",
    "group_label",
    "run_gaps",
    "subgroup_checks",
    "subgroup_gaps",
    "subgroup_table",
    "table14",
]

#: Agent label of rows that pool every (non-baseline) agent.
ALL_AGENTS = "(all agents)"

_INTERVAL = re.compile(r"\s*[\[(][^\[\]()]*[\])]\s*$")


def group_label(group: str) -> str:
    """Group name without its trailing numeric interval: ``"age T3 [70, 90)"`` -> ``"age T3"``.

    Age tertiles are cut per test set, so their intervals differ between tasks; the label without
    the interval is what can be compared across tasks (e.g. "the oldest tertile").
    """
    stripped = _INTERVAL.sub("", str(group))
    return stripped or str(group)


def _eligible_rows(store: ScoreStore, experiment: str) -> pd.DataFrame:
    runs = selected_runs(store, experiment)
    valid = runs.loc[runs["valid"], ["run_id", "agent", "task", "rep", "reference"]]
    sub = store.subgroups
    sub = sub.loc[sub["eligible"] & np.isfinite(sub["score_raw"].to_numpy(float))]
    sub = sub[["run_id", "attribute", "group", "n", "score_raw"]].merge(
        valid, on="run_id", how="inner"
    )
    return sub


def _lowest(scores: pd.Series) -> tuple[str, str, float]:
    """(lowest group, highest group, gap) of one run/attribute; ties resolved alphabetically."""
    ordered = comparable(scores.sort_index(kind="mergesort"))
    low = ordered.idxmin()
    high = ordered.idxmax()
    return str(low), str(high), float(ordered.max() - ordered.min())


def run_gaps(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.DataFrame:
    """Per valid run and attribute with >= 2 eligible groups: gap and lowest/highest group.

    Returns
    -------
    DataFrame
        ``run_id``, ``agent``, ``reference``, ``task``, ``rep``, ``attribute``, ``n_groups``,
        ``lowest_group``, ``highest_group``, ``gap``; sorted by task, attribute, run_id. Baseline
        repetitions appear individually here (Table 14 uses their averaged scores instead).
    """
    sub = _eligible_rows(store, experiment)
    keys = ["run_id", "attribute"]
    sub = sub.assign(n_groups=sub.groupby(keys)["group"].transform("size"))
    sub = sub.loc[sub["n_groups"] >= 2]
    # lowest: smallest score, ties -> alphabetically first group; highest: largest score, same
    sub = sub.assign(_cmp=comparable(sub["score_raw"]))
    low = sub.sort_values([*keys, "_cmp", "group"], kind="mergesort")
    low = low.drop_duplicates(keys, keep="first").set_index(keys)
    high = sub.assign(_neg=-sub["_cmp"]).sort_values([*keys, "_neg", "group"], kind="mergesort")
    high = high.drop_duplicates(keys, keep="first").set_index(keys)
    out = low[["agent", "reference", "task", "rep", "n_groups"]].copy()
    out["lowest_group"] = low["group"]
    out["highest_group"] = high["group"].reindex(out.index)
    out["gap"] = high["score_raw"].reindex(out.index) - low["score_raw"]
    out = out.reset_index()
    columns = [
        "run_id",
        "agent",
        "reference",
        "task",
        "rep",
        "attribute",
        "n_groups",
        "lowest_group",
        "highest_group",
        "gap",
    ]
    out = out[columns].astype({"rep": "int64", "n_groups": "int64", "reference": bool})
    return out.sort_values(["task", "attribute", "run_id"], kind="mergesort").reset_index(drop=True)


def _baseline_reference(sub: pd.DataFrame) -> pd.DataFrame:
    """Per (task, attribute): the baseline's averaged group scores -> lowest group and gap."""
    ref = sub.loc[sub["reference"]]
    means = ref.groupby(["task", "attribute", "group"], sort=True)["score_raw"].mean()
    rows = []
    for (task, attribute), scores in means.groupby(level=["task", "attribute"], sort=True):
        scores = scores.droplevel(["task", "attribute"])
        if len(scores) < 2:
            continue
        low, high, gap = _lowest(scores)
        rows.append((task, attribute, low, high, gap))
    return pd.DataFrame(rows, columns=["task", "attribute", "lowest_group", "highest_group", "gap"])


def _mode(labels: list[str]) -> tuple[str | None, float]:
    if not labels:
        return None, math.nan
    counts = pd.Series(labels).value_counts()
    best = sorted(counts.index[counts == counts.max()])[0]
    return best, float(counts[best]) / len(labels)


def _group_replicates(store: ScoreStore) -> tuple[dict[tuple, np.ndarray], int]:
    """``(run_id, attribute, group) -> replicates`` and their number R (0 without any)."""
    table = store.subgroup_replicates
    if table is None or table.empty:
        return {}, 0
    out = {}
    for run_id, attribute, group, values in table[
        ["run_id", "attribute", "group", "replicates"]
    ].itertuples(index=False):
        out[(str(run_id), str(attribute), str(group))] = np.array(
            [math.nan if v is None else v for v in values], dtype=np.float64
        )
    sizes = sorted({len(v) for v in out.values()})
    if len(sizes) > 1:
        raise ScoreStoreError(
            "subgroup replicates have different lengths "
            f"({', '.join(map(str, sizes))}); re-score every run with the same --bootstrap N",
            path="subgroup_replicates",
            fix=REPLICATES_FIX,
            code="store.replicates_malformed",
        )
    return out, sizes[0]


def _group_scores(sub: pd.DataFrame, key: tuple, reps: dict, n_rep: int) -> dict[str, np.ndarray]:
    """Group -> (1 + R,) scores of one run and attribute: observed, then its replicates (NaN
    where the store has none)."""
    run_id, attribute = key
    mine = sub.loc[(sub["run_id"] == run_id) & (sub["attribute"] == attribute)]
    out = {}
    for group, score in zip(mine["group"], mine["score_raw"], strict=True):
        stored = reps.get((run_id, attribute, str(group)), np.full(n_rep, np.nan))
        out[str(group)] = np.concatenate([[float(score)], stored])
    return out


def _spread(scores: np.ndarray) -> np.ndarray:
    """max - min over groups (rows) for every column; NaN where fewer than two are defined."""
    finite = np.isfinite(scores)
    with np.errstate(invalid="ignore"):
        high = np.where(finite, scores, -np.inf).max(axis=0)
        low = np.where(finite, scores, np.inf).min(axis=0)
    return np.where(finite.sum(axis=0) >= 2, high - low, np.nan)


def _agent_gap_draws(
    agents: pd.DataFrame, sub: pd.DataFrame, reps: dict, n_rep: int, seed: int
) -> np.ndarray:
    """(n, 1 + R): column 0 each row's gap, column b the gap of the run drawn into the row's slot
    (its (agent, task, attribute) redrawn) on test resample b."""
    rows = agents.reset_index(drop=True)
    if n_rep == 0 or rows.empty:
        return rows["gap"].to_numpy(float)[:, None]
    per_run = np.vstack(
        [
            _spread(np.vstack(list(_group_scores(sub, key, reps, n_rep).values())))
            for key in zip(rows["run_id"], rows["attribute"], strict=True)
        ]
    )
    draws = resample(
        rows[["run_agent", "task", "attribute"]], ("run_agent", "task", "attribute"),
        n_boot=n_rep, seed=seed, tag="table14_agents", model_validity=False,
    )  # fmt: skip
    return draws.values(rows["gap"].to_numpy(float), per_run[:, 1:])


def _baseline_gap_draws(
    sub: pd.DataFrame, reps: dict, n_rep: int, seed: int
) -> dict[tuple[str, str], np.ndarray]:
    """(task, attribute) -> (R,) baseline gaps: its repetitions redrawn within the task, each
    group's scores on resample b averaged over the drawn repetitions, then max - min."""
    ref = sub.loc[sub["reference"]]
    if n_rep == 0 or ref.empty:
        return {}
    runs = ref.drop_duplicates("run_id")[["run_id", "task"]].sort_values("run_id")
    runs = runs.reset_index(drop=True)
    draws = resample(
        runs, ("task",), n_boot=n_rep, seed=seed, tag="table14_baseline", model_validity=False
    ).source[:, 1:]
    out = {}
    for (task, attribute), mine in ref.groupby(["task", "attribute"], sort=True):
        slots = np.flatnonzero((runs["task"] == task).to_numpy())
        groups = sorted(set(mine["group"].astype(str)))
        scores = np.full((len(runs), len(groups), n_rep), np.nan)
        for i in slots:
            run_scores = _group_scores(sub, (runs.at[i, "run_id"], attribute), reps, n_rep)
            for j, group in enumerate(groups):
                if group in run_scores:
                    scores[i, j] = run_scores[group][1:]
        drawn = scores[draws[slots], :, np.arange(n_rep)[None, :]]  # (slots, R, groups)
        finite = np.isfinite(drawn)
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(finite, drawn, 0.0).sum(axis=0) / finite.sum(axis=0)  # (R, groups)
        out[(str(task), str(attribute))] = _spread(means.T)
    return out


def subgroup_gaps(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    task_groups: Mapping[str, str] | None = None,
    by_agent: bool = True,
    seed: int = 0,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Paper Table 14: subgroup performance gaps by task group, attribute and agent.

    For the valid runs of each (task group, attribute, agent):

    - ``gap_mean`` / ``gap_sd`` - mean / sample SD of the per-run gap (highest - lowest eligible
      group score);
    - ``lowest_group`` - the most frequent lowest group (label without the age interval, see
      :func:`group_label`; ties: alphabetical) and ``lowest_share`` its share of the runs;
    - ``same_lowest_share`` - share of runs whose lowest group equals the baseline's lowest group
      on the same task (baseline scores averaged over its repetitions); computed over the
      ``n_compared`` runs whose task has a baseline reference, NaN when there is none.

    The baseline's own row (agent ``baseline``) uses its averaged subgroup scores: one gap per task,
    averaged over the tasks of the group (``n_runs`` = number of tasks), and NaN
    ``same_lowest_share``.

    Parameters
    ----------
    task_groups : mapping task -> label, optional
        Pool tasks into groups (e.g. the four ICU mortality tasks); default: each task alone.
        Tasks not in the mapping form their own group.
    by_agent : bool
        ``False`` pools all non-baseline agents into one row labelled :data:`ALL_AGENTS`.
    seed : int, default 0
        Seeds the redrawn runs of the intervals.
    alpha : float, default 0.05

    Returns
    -------
    DataFrame
        ``task_group``, ``attribute``, ``agent``, ``n_runs``, ``gap_mean``, ``gap_sd``,
        ``lowest_group``, ``lowest_share``, ``same_lowest_share``, ``n_compared``, ``gap_mean_ci_low``,
        ``gap_mean_ci_high`` (the 95 % two-stage interval of ``gap_mean``: runs redrawn within every
        (agent, task), each drawn run's gap on test resample b of ``subgroup_replicates``; the
        baseline's repetitions redrawn within each task and its group scores averaged over them;
        NaN for a store without subgroup replicates).
    """
    check_alpha(alpha)
    sub = _eligible_rows(store, experiment)
    gaps = run_gaps(store, experiment)
    reference = _baseline_reference(sub)
    reps, n_rep = _group_replicates(store)
    mapping = dict(task_groups or {})
    gaps["task_group"] = gaps["task"].map(lambda t: mapping.get(t, t))
    reference["task_group"] = reference["task"].map(lambda t: mapping.get(t, t))
    ref_lowest = reference.set_index(["task", "attribute"])["lowest_group"]
    agents = gaps.loc[~gaps["reference"]].reset_index(drop=True)
    agents["run_agent"] = agents["agent"]
    agent_draws = _agent_gap_draws(agents, sub, reps, n_rep, seed)
    baseline_draws = _baseline_gap_draws(sub, reps, n_rep, seed)
    if not by_agent:
        agents["agent"] = ALL_AGENTS
    rows = []
    keys = sorted(
        set(zip(agents["task_group"], agents["attribute"], strict=True))
        | set(zip(reference["task_group"], reference["attribute"], strict=True))
    )
    for task_group, attribute in keys:
        mine = agents.loc[(agents["task_group"] == task_group) & (agents["attribute"] == attribute)]
        for agent in agent_order(mine["agent"]):
            runs = mine.loc[mine["agent"] == agent]
            gap_mean, gap_sd = mean_sd(runs["gap"])
            lowest, share = _mode([group_label(g) for g in runs["lowest_group"]])
            base = [ref_lowest.get((t, attribute)) for t in runs["task"]]
            compared = [(low, b) for low, b in zip(runs["lowest_group"], base, strict=True) if b]
            same = sum(low == b for low, b in compared) / len(compared) if compared else math.nan
            ci = estimate(mean_over(agent_draws, runs.index.to_numpy()), alpha, (0.0, 1.0))[1:]
            rows.append(
                (
                    task_group,
                    attribute,
                    agent,
                    len(runs),
                    gap_mean,
                    gap_sd,
                    lowest,
                    share,
                    same,
                    len(compared),
                    *ci,
                )
            )
        ref = reference.loc[
            (reference["task_group"] == task_group) & (reference["attribute"] == attribute)
        ]
        if len(ref):
            gap_mean, gap_sd = mean_sd(ref["gap"])
            lowest, share = _mode([group_label(g) for g in ref["lowest_group"]])
            baseline = str(sub.loc[sub["reference"], "agent"].iloc[0])
            drawn = [baseline_draws.get((t, attribute)) for t in ref["task"]]
            ci = (math.nan, math.nan)
            if drawn and all(d is not None for d in drawn):
                over_tasks = nanmean(np.vstack(drawn), axis=0)
                ci = estimate(np.concatenate([[gap_mean], over_tasks]), alpha, (0.0, 1.0))[1:]
            rows.append(
                (
                    task_group,
                    attribute,
                    baseline,
                    len(ref),
                    gap_mean,
                    gap_sd,
                    lowest,
                    share,
                    math.nan,
                    0,
                    *ci,
                )
            )
    return TABLE14.frame(pd.DataFrame(rows, columns=TABLE14.named))


def subgroup_table(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """Full subgroup results: every task, attribute, group and agent.

    Over the agent's valid runs that have a row for the group: ``n_runs`` (runs with the group),
    ``n_eligible`` (runs where it was eligible), ``mean`` / ``sd`` (sample SD) of the eligible
    scores, ``n_mean`` (mean group size). Sorted by task, attribute, group, then agent order.
    """
    runs = selected_runs(store, experiment)
    valid = runs.loc[runs["valid"], ["run_id", "agent", "task"]]
    sub = store.subgroups[["run_id", "attribute", "group", "n", "score_raw", "eligible"]].merge(
        valid, on="run_id", how="inner"
    )
    rows = []
    order = agent_positions(sub["agent"])
    for (task, attribute, group, agent), rows_g in sub.groupby(
        ["task", "attribute", "group", "agent"], sort=True
    ):
        eligible = rows_g.loc[rows_g["eligible"], "score_raw"]
        mean, sd = mean_sd(eligible)
        rows.append(
            (
                task,
                attribute,
                group,
                agent,
                len(rows_g),
                int(rows_g["eligible"].sum()),
                mean,
                sd,
                float(pd.to_numeric(rows_g["n"]).mean()),
            )
        )
    out = pd.DataFrame(rows, columns=RESULTS.named)
    out["_order"] = out["agent"].map(order)
    out = out.sort_values(["task", "attribute", "group", "_order"], kind="mergesort")
    return RESULTS.frame(out.drop(columns="_order").reset_index(drop=True))


def subgroup_checks(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """How many valid runs checked performance by subgroup (annotation ``subgroup_checks``).

    Per agent (and a pooled :data:`ALL_AGENTS` row): ``n_valid`` valid runs, ``n_answered`` with an
    answer, ``n_checked`` answered ``yes``, ``percent`` = 100 * n_checked / n_answered.
    """
    runs = selected_runs(store, experiment, include_reference=False)
    runs = runs.loc[runs["valid"]]
    values = run_answers(store, runs["run_id"], ["subgroup_checks"])["subgroup_checks"]
    rows = []
    groups = [(a, runs["agent"] == a) for a in agent_order(runs["agent"])]
    groups.append((ALL_AGENTS, pd.Series(True, index=runs.index)))
    for agent, mask in groups:
        answered = mask & values.notna()
        checked = int((answered & (values == "yes")).sum())
        n_answered = int(answered.sum())
        percent = 100.0 * checked / n_answered if n_answered else math.nan
        rows.append((agent, int(mask.sum()), n_answered, checked, percent))
    return CHECKS.frame(pd.DataFrame(rows, columns=CHECKS.named))


# Paper names (the notebooks use the descriptive names above).
table14 = subgroup_gaps
