"""The user's own metrics by agent and task class, with two-stage intervals (table
``extra_metrics_by_agent``; docs/extending.md).

For a user metric m, ``value(a, class)`` = mean over the class's tasks of the mean of m over agent
a's valid runs on the task (runs where m could not be computed are left out, like invalid runs;
tasks without such a run are left out), ``all`` weighting every task equally - the rule of the ECE
tables (Table 3). Its interval is the two-stage bootstrap of Table 3: in iteration b the runs of
every (agent, task) cell are redrawn with replacement and each drawn run contributes m on test
resample b, read from the store's per-run replicates (computed on the same resample weights as the
built-in metrics, so agents on a task are compared on the same patients).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    TASK_CLASSES,
    ScoreStore,
    agent_order,
    selected_runs,
)
from automd_analysis.analysis.two_stage import draw_runs, mean_over_slots, nanmean, stage_two
from automd_analysis.metrics import percentile_interval

__all__ = ["EXTRA_METRIC_COLUMNS", "extra_metrics_by_agent"]

_GROUPS = (*TASK_CLASSES, "all")
#: Columns of :func:`extra_metrics_by_agent`.
EXTRA_METRIC_COLUMNS: tuple[str, ...] = (
    "metric",
    "higher_is_better",
    "agent",
    "n_runs",
    *(f"{g}{suffix}" for g in _GROUPS for suffix in ("", "_ci_low", "_ci_high")),
)


def _metric_runs(runs: pd.DataFrame, rows: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """The runs of the metric's task kinds with ``usable`` (valid and a value) and ``value``, and
    the run x replicate matrix (NaN where unusable)."""
    kinds = set(rows["task_kind"])
    out = runs.loc[runs["task_kind"].isin(kinds)].reset_index(drop=True)
    by_run = rows.set_index("run_id")
    value = out["run_id"].map(by_run["value"]).astype(float)
    out["value"] = value
    out["usable"] = out["valid"].astype(bool) & value.notna().to_numpy()
    lengths = {len(r) for r in rows["replicates"]}
    n_rep = max(lengths) if lengths else 0
    matrix = np.full((len(out), max(n_rep, 1)), np.nan)
    for i, run_id in enumerate(out["run_id"]):
        if out.at[i, "usable"] and len(by_run.at[run_id, "replicates"]) == n_rep:
            matrix[i, :n_rep] = np.asarray(by_run.at[run_id, "replicates"], dtype=float)
    return out, (matrix if n_rep else np.empty((len(out), 0)))


def _class_means(runs: pd.DataFrame, values: np.ndarray, usable: np.ndarray) -> dict:
    """{agent: {group: (B,) means}} for values of shape (B, n_runs)."""
    cells = runs.groupby(["agent", "task"], sort=True).groups
    slots = [np.asarray(v) for v in cells.values()]
    per_cell = mean_over_slots(np.where(usable, values, np.nan), slots)
    kind_of = runs.drop_duplicates("task").set_index("task")["task_kind"]
    cell_agent = np.array([k[0] for k in cells])
    cell_kind = np.array([kind_of[k[1]] for k in cells])
    out = {}
    for agent in agent_order(runs["agent"]):
        out[agent] = {}
        for group in _GROUPS:
            mask = cell_agent == agent
            if group != "all":
                mask &= cell_kind == group
            out[agent][group] = (
                nanmean(per_cell[:, mask], axis=1) if mask.any() else np.full(len(values), np.nan)
            )
    return out


def extra_metrics_by_agent(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    n_boot: int | None = None,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Each user metric's mean per agent and task class, with two-stage bootstrap intervals.

    .. math:: \\bar m(a, C) = \\frac{1}{|T_{a,C}|} \\sum_{t \\in T_{a,C}}
              \\frac{1}{|V_{a,t}|} \\sum_{r \\in V_{a,t}} m_r

    with V_{a,t} agent a's valid runs on task t where m has a value and T_{a,C} the tasks of class
    C that have one (``all``: every task); intervals as in the module docstring.

    Parameters
    ----------
    store : ScoreStore
    experiment : str
        Experiment id (default: the main experiment).
    n_boot : int, optional
        Two-stage iterations (default: the stored replicates per run).
    alpha : float, default 0.05
        1 - confidence level.
    seed : int, default 0
        Seed of the stage-1 draws (of the runs).

    Returns
    -------
    DataFrame
        Columns :data:`EXTRA_METRIC_COLUMNS`: ``metric``, ``higher_is_better``, ``agent``,
        ``n_runs`` (runs with a value), then per class ``survival``, ``classification``,
        ``sequential`` and ``all`` the mean with ``_ci_low``/``_ci_high``; NaN for classes the
        metric does not score. Empty when the store has no user metric.

    See Also
    --------
    automd_analysis.analysis.uncertainty.table3_intervals : the same intervals for the ECE.

    References
    ----------
    Davison, A. C., Hinkley, D. V. (1997). Bootstrap Methods and their Application, sec. 3.8.
    Cambridge University Press.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> extra_metrics_by_agent(example_store()[0]).empty  # scored without --metric
    True
    """
    extra = store.extra_metrics
    if extra is None or extra.empty:
        return pd.DataFrame(columns=list(EXTRA_METRIC_COLUMNS))
    runs = selected_runs(store, experiment)
    out = []
    for name, rows in extra.groupby("metric", sort=True):
        mine, matrix = _metric_runs(runs, rows)
        usable = mine["usable"].to_numpy(bool)
        point = _class_means(mine, mine["value"].to_numpy()[None, :], usable[None, :])
        n_rep = matrix.shape[1]
        iterations = None
        if n_rep:
            b = n_rep if n_boot is None else int(n_boot)
            draws = draw_runs(mine, ("agent", "task"), b, seed, f"extra_metrics:{name}")
            drawn = stage_two(matrix, draws)
            iterations = _class_means(mine, drawn, usable[draws])
        higher = bool(rows["higher_is_better"].iloc[0])
        for agent in point:
            row = {
                "metric": name,
                "higher_is_better": higher,
                "agent": agent,
                "n_runs": int(usable[mine["agent"].to_numpy() == agent].sum()),
            }
            for group in _GROUPS:
                low, high = (
                    percentile_interval(iterations[agent][group], alpha)
                    if iterations is not None
                    else (math.nan, math.nan)
                )
                row |= {
                    group: float(point[agent][group][0]),
                    f"{group}_ci_low": low,
                    f"{group}_ci_high": high,
                }
            out.append(row)
    return pd.DataFrame(out, columns=list(EXTRA_METRIC_COLUMNS))
