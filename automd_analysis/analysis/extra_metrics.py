"""The user's own metrics by agent and task class, with two-stage intervals (table
``extra_metrics_by_agent``; docs/extending.md).

For a user metric m, ``value(a, class)`` = mean over the class's tasks of the mean of m over agent
a's valid runs on the task (runs where m could not be computed are left out, like invalid runs;
tasks without such a run are left out), ``all`` weighting every task equally - the rule of the ECE
tables (Table 3, :mod:`~automd_analysis.stats.rules`). Point value and interval come from
one run x replicate matrix (column 0 the observed values, column b the two-stage bootstrap
iteration b, as :class:`~automd_analysis.stats.resample.RunDraws`): the runs of every
(agent, task) cell are redrawn with replacement and each drawn run contributes m on test resample
b, read from the store's per-run replicates (computed on the same resample weights as the built-in
metrics, so agents on a task are compared on the same patients).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from automd_analysis.analysis.catalog.primary_scores import EXTRA_METRICS, TASK_GROUPS
from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    ScoreStore,
    agent_order,
    selected_runs,
)
from automd_analysis.stats.intervals import check_alpha, summarise
from automd_analysis.stats.resample import resample
from automd_analysis.stats.rules import mean_over, per_cell, row_groups, valid_only

__all__ = ["extra_metrics_by_agent"]

_GROUPS = TASK_GROUPS


def _matrix(runs: pd.DataFrame, rows: pd.DataFrame, n_boot, seed: int, name: str):
    """The runs of the metric's task kinds and the metric's run x (1 + B) matrix (NaN where the
    drawn run is invalid or has no value)."""
    mine = runs.loc[runs["task_kind"].isin(set(rows["task_kind"]))].reset_index(drop=True)
    by_run = rows.set_index("run_id")
    observed = mine["run_id"].map(by_run["value"]).astype(float).to_numpy()
    usable = mine["valid"].to_numpy(bool) & np.isfinite(observed)
    lengths = {len(r) for r in rows["replicates"]}
    n_rep = max(lengths) if lengths else 0
    stored = np.full((len(mine), max(n_rep, 1)), np.nan)
    for i, run_id in enumerate(mine["run_id"]):
        if usable[i] and len(by_run.at[run_id, "replicates"]) == n_rep:
            stored[i, :n_rep] = np.asarray(by_run.at[run_id, "replicates"], dtype=float)
    b = 0 if not (n_rep and len(mine)) else (n_rep if n_boot is None else int(n_boot))
    units = mine.assign(valid=usable)
    draws = resample(units, ("agent", "task"), n_boot=b, seed=seed, tag=f"extra_metrics:{name}")
    values = draws.values(observed, stored[:, :n_rep] if n_rep else None)
    return mine, usable, valid_only(values, draws.valid)


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
        The columns of its declaration (``catalog.primary_scores.EXTRA_METRICS``): ``metric``, ``higher_is_better``, ``agent``,
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
        return EXTRA_METRICS.frame()
    alpha = check_alpha(alpha)
    runs = selected_runs(store, experiment)
    out = []
    for name, rows in extra.groupby("metric", sort=True):
        mine, usable, values = _matrix(runs, rows, n_boot, seed, name)
        cells = row_groups(mine, ("agent", "task"))
        cell_values = per_cell(values, list(cells.values()))
        kind_of = mine.drop_duplicates("task").set_index("task")["task_kind"]
        cell_agent = np.array([k[0] for k in cells])
        cell_kind = np.array([kind_of[k[1]] for k in cells])
        for agent in agent_order(mine["agent"]):
            row = {
                "metric": name,
                "higher_is_better": bool(rows["higher_is_better"].iloc[0]),
                "agent": agent,
                "n_runs": int(usable[mine["agent"].to_numpy() == agent].sum()),
            }
            for group in TASK_GROUPS:
                mask = (cell_agent == agent) & ((cell_kind == group) | (group == "all"))
                row[group] = mean_over(cell_values, mask)
            out.append(row)
    return EXTRA_METRICS.frame(summarise(out, EXTRA_METRICS.intervals, alpha))
