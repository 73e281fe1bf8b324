"""Effect of the stated evaluation objective: paper Table 4, Table 15, Table 16 and Figure 4
(paper section 4.3 and App. F.1).

Objective groups on one binary task (UCI Diabetes in the paper):

- **A** - the task's primary metric (AUROC): the *main* experiment's runs on the task (App. F.1
  reuses them), plus any objectives-experiment run whose ``objective`` is null;
- **B** - ``objective: "brier"`` (minimise the Brier score);
- **C** - ``objective: "auroc+ece"`` (maximise AUROC and minimise ECE).

Any other stated objective keeps its own name as its group label. Statistics pool the valid runs of
all agents (never the simple baseline) and report the mean and sample SD (``ddof=1``), and a 95 %
bootstrap interval of the mean from the runs redrawn within every (agent, objective): the unit of
inference is the run, the task and its test set are held fixed (the store keeps test-set
replicates of the score and the ECE only, not of AUROC and Brier, so all three intervals describe
run-to-run randomness alone, and the test patients every objective is scored on are the same).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from automd_analysis.analysis._one_factor import fixed_value, one_factor_runs
from automd_analysis.analysis.calibration_practices import (
    GROUP_AVERAGED_RANKS,
    GROUP_IMBALANCE_NO_RECAL,
    practice_groups,
)
from automd_analysis.analysis.catalog.evaluation_objectives import FIG4, TABLE4, TABLE15, TABLE16
from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    ScoreStore,
    agent_order,
    selected_runs,
)
from automd_analysis.docstrings import EFRON_TIBSHIRANI_1993, fill_doc
from automd_analysis.signatures import parameters_of
from automd_analysis.stats.intervals import best_marks, check_alpha, estimate
from automd_analysis.stats.resample import resample
from automd_analysis.stats.rules import mean_over, mean_sd, row_groups, valid_only

__all__ = [
    "METRICS",
    "OBJECTIVE_LABELS",
    "figure4_data",
    "objective_baseline",
    "objective_intervals",
    "objective_points",
    "objective_practices",
    "objective_runs",
    "objective_summary",
    "objective_summary_by_agent",
    "table15",
    "table16",
    "table4",
]

#: Stated objective (``run.json`` ``objective``) -> group label of the paper.
OBJECTIVE_LABELS: Mapping[str | None, str] = {None: "A", "brier": "B", "auroc+ece": "C"}

#: Metrics reported per objective, in column order.
METRICS: tuple[str, ...] = ("auroc", "brier", "ece")


def _label(objective) -> str:
    if objective is None or (isinstance(objective, float) and objective != objective):
        return OBJECTIVE_LABELS[None]
    return OBJECTIVE_LABELS.get(str(objective), str(objective))


def _objective_order(labels) -> list[str]:
    known = [v for v in OBJECTIVE_LABELS.values() if v in set(labels)]
    return known + sorted(set(labels) - set(known))


def objective_runs(
    store: ScoreStore,
    *,
    task: str | None = None,
    main_experiment: str = DEFAULT_EXPERIMENTS["main"],
    objectives_experiment: str = DEFAULT_EXPERIMENTS["objectives"],
) -> pd.DataFrame:
    """All agent runs of the three objective groups on the objectives task.

    Parameters
    ----------
    task : str, optional
        The task; default: the only task of the objectives experiment.

    Returns
    -------
    DataFrame
        Rows of :func:`~automd_analysis.analysis.store.selected_runs` (agents only, valid or not)
        plus ``objective`` (group label A/B/C) and ``stated_objective`` (the raw value), sorted by
        objective then run_id.
    """
    main, other = one_factor_runs(
        store,
        objectives_experiment,
        role="objectives",
        fixed="task",
        chosen=task,
        main_experiment=main_experiment,
    )
    runs = pd.concat([main.assign(objective=None), other], ignore_index=True)
    runs["stated_objective"] = runs["objective"].astype(object)
    runs["objective"] = runs["stated_objective"].map(_label)
    order = {label: i for i, label in enumerate(_objective_order(runs["objective"]))}
    runs["_order"] = runs["objective"].map(order)
    runs = runs.sort_values(["_order", "run_id"], kind="mergesort").drop(columns="_order")
    return runs.reset_index(drop=True)


def _metric_summary(runs: pd.DataFrame) -> dict:
    valid = runs.loc[runs["valid"]]
    out = {"n_runs": len(runs), "n_valid": int(runs["valid"].sum())}
    for metric in METRICS:
        mean, sd = mean_sd(valid[metric])
        out[f"{metric}_mean"] = mean
        out[f"{metric}_sd"] = sd
    return out


@fill_doc(efron_tibshirani_1993=EFRON_TIBSHIRANI_1993)
def objective_intervals(
    runs: pd.DataFrame,
    by: Sequence[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
    tag: str,
) -> dict[tuple, dict[str, tuple[float, float]]]:
    """Bootstrap interval of each metric's mean over the valid runs of every group ``by``.

    Draw b redraws the runs of every (agent, objective) (:func:`~automd_analysis.stats.resample.
    resample`, seeded by ``(seed, tag)``: validity, and residuals around each cell's mean widened
    for the few runs per cell) and the group mean is taken over the drawn valid slots
    (:func:`~automd_analysis.stats.rules.valid_only`); the interval is that of
    :func:`~automd_analysis.stats.intervals.estimate`. The task and its test set are fixed.

    .. math:: \\bar m_g = \\frac{1}{|V_g|} \\sum_{r \\in V_g} m_r, \\qquad
              [\\hat q_{\\alpha/2}, \\hat q_{1-\\alpha/2}] \\text{ of } \\bar m_g^{*}

    Parameters
    ----------
    runs : DataFrame
        :func:`objective_runs` rows.
    by : sequence of str
        The group columns (``["objective"]`` for Table 4, ``["agent", "objective"]`` for Table 15).
    n_boot : int, default 1000
    seed : int, default 0
    alpha : float, default 0.05
    tag : str
        Names the table (its own reproducible draws).

    Returns
    -------
    dict
        group key tuple -> metric -> ``(ci_low, ci_high)``.

    See Also
    --------
    automd_analysis.stats.intervals.estimate

    References
    ----------
    {efron_tibshirani_1993}

    Examples
    --------
    >>> runs = pd.DataFrame({"agent": "a", "objective": ["A", "A", "C", "C"],
    ...     "valid": [True, True, True, False], "auroc": [0.6, 0.7, 0.65, 0.9],
    ...     "brier": 0.2, "ece": [0.2, 0.1, 0.05, 0.5]})
    >>> ci = objective_intervals(runs, ["objective"], n_boot=200, tag="doc")
    >>> low, high = ci[("A",)]["ece"]  # two runs, 0.2 and 0.1: t with one degree of freedom
    >>> bool(0.0 <= low < 0.1 and 0.2 < high <= 1.0), ci[("C",)]["ece"]
    (True, (0.05, 0.05))
    """
    check_alpha(alpha)
    return {
        key: {metric: estimate(d, alpha, (0.0, 1.0))[1:] for metric, d in metrics.items()}
        for key, metrics in _mean_distributions(runs, by, n_boot, seed, tag).items()
    }


def _mean_distributions(runs, by, n_boot, seed, tag) -> dict[tuple, dict[str, np.ndarray]]:
    """Group key -> metric -> the (1 + B,) means of :func:`objective_intervals`."""
    runs = runs.reset_index(drop=True)
    draws = resample(runs, ("agent", "objective"), n_boot=n_boot, seed=seed, tag=tag)
    values = {
        m: valid_only(draws.values(pd.to_numeric(runs[m]).to_numpy(dtype=float)), draws.valid)
        for m in METRICS
    }
    out: dict[tuple, dict[str, np.ndarray]] = {}
    for key, rows in row_groups(runs, list(by)).items():
        out[key] = {metric: mean_over(values[metric], rows) for metric in METRICS}
    return out


def _with_intervals(summary: dict, intervals: Mapping[str, tuple[float, float]]) -> dict:
    for metric in METRICS:
        summary[f"{metric}_mean_ci_low"], summary[f"{metric}_mean_ci_high"] = intervals[metric]
    return summary


def _objective_rows(runs, by, n_boot, seed, alpha, tag) -> tuple[list[dict], dict]:
    """Tables 4 and 15: one row per group ``by`` with runs (agents in report order, objectives
    in label order), its metric summaries and their intervals; and the groups' mean draws."""
    means = _mean_distributions(runs, by, n_boot, seed, tag)
    orders = {"agent": agent_order(runs["agent"]), "objective": _objective_order(runs["objective"])}
    rows = []
    for key in itertools.product(*(orders[column] for column in by)):
        mine = runs[np.logical_and.reduce([runs[c] == v for c, v in zip(by, key, strict=True)])]
        if len(mine):
            row = {"task": _task_of(runs), **dict(zip(by, key, strict=True))}
            row |= _metric_summary(mine)
            ci = {m: estimate(d, alpha, (0.0, 1.0))[1:] for m, d in means[key].items()}
            rows.append(_with_intervals(row, ci))
    return rows, means


def objective_summary(
    store: ScoreStore,
    *,
    task: str | None = None,
    main_experiment: str = DEFAULT_EXPERIMENTS["main"],
    objectives_experiment: str = DEFAULT_EXPERIMENTS["objectives"],
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Paper Table 4: AUROC, Brier and ECE per objective, pooled over valid runs of all agents.

    Columns: ``task``, ``objective``, ``n_runs``, ``n_valid``, ``auroc_mean``, ``auroc_sd``,
    ``brier_mean``, ``brier_sd``, ``ece_mean``, ``ece_sd`` (sample SD; NaN metrics are skipped),
    then the 95 % interval of each mean (``auroc_mean_ci_low``, ``auroc_mean_ci_high``, ...;
    :func:`objective_intervals`). ``task``, ``main_experiment`` and ``objectives_experiment`` go
    to :func:`objective_runs`; ``n_boot``, ``seed`` and ``alpha`` to :func:`objective_intervals`.
    """
    runs = objective_runs(
        store,
        task=task,
        main_experiment=main_experiment,
        objectives_experiment=objectives_experiment,
    )
    alpha = check_alpha(alpha)
    rows, means = _objective_rows(runs, ["objective"], n_boot, seed, alpha, "table4_objectives")
    objectives = [row["objective"] for row in rows]
    for column, direction in TABLE4.best.items():
        metric = column.removesuffix("_mean")
        # the observed means of the distributions are the table's: mean over the valid runs
        marks = best_marks([means[(o,)][metric] for o in objectives], direction, alpha=alpha)
        for row, mark in zip(rows, marks, strict=True):
            row[f"{column}_best"] = mark
    return TABLE4.frame(pd.DataFrame(rows, columns=TABLE4.named))


def _task_of(runs: pd.DataFrame) -> str | None:
    return str(runs["task"].iloc[0]) if len(runs) else None


@parameters_of(objective_summary)
def objective_summary_by_agent(
    store, *, task, main_experiment, objectives_experiment, n_boot, seed, alpha
) -> pd.DataFrame:
    """Paper Table 15: Table 4's statistics and intervals by agent and objective (valid runs of
    each agent; the interval redraws the agent's runs under the objective)."""
    runs = objective_runs(
        store,
        task=task,
        main_experiment=main_experiment,
        objectives_experiment=objectives_experiment,
    )
    tag = "table15_objectives_by_agent"
    rows, _ = _objective_rows(runs, ["agent", "objective"], n_boot, seed, check_alpha(alpha), tag)
    return TABLE15.frame(pd.DataFrame(rows, columns=TABLE15.named))


def _runs_and_practices(store, task, main_experiment, objectives_experiment):
    """:func:`objective_runs` and the practice groups of both experiments' runs, by run id."""
    runs = objective_runs(
        store,
        task=task,
        main_experiment=main_experiment,
        objectives_experiment=objectives_experiment,
    )
    groups = practice_groups(store, [main_experiment, objectives_experiment])
    return runs, groups.set_index("run_id")


@parameters_of(objective_runs)
def objective_points(store, *, task, main_experiment, objectives_experiment) -> pd.DataFrame:
    """Figure 4 points: every valid agent run with a finite ECE, its objective and practice group.

    Columns: ``objective``, ``agent``, ``run_id``, ``auroc``, ``ece``, ``group`` (calibration
    practice group of :func:`~automd_analysis.analysis.calibration_practices.practice_groups`), plus the raw
    annotations ``averaged_ranks``, ``imbalance_handling``, ``recalibration``,
    ``probability_calibration``.
    """
    runs, groups = _runs_and_practices(store, task, main_experiment, objectives_experiment)
    points = runs.loc[runs["run_id"].isin(groups.index)].copy()
    extra = ["averaged_ranks", "imbalance_handling", "recalibration", "probability_calibration"]
    for column in ["group", *extra]:
        points[column] = points["run_id"].map(groups[column])
    return FIG4.frame(points[FIG4.named].reset_index(drop=True))


@parameters_of(objective_runs)
def objective_practices(store, *, task, main_experiment, objectives_experiment) -> pd.DataFrame:
    """Paper Table 16: modelling practices per objective (counts among valid runs).

    Columns: ``objective``, ``n_valid``, ``averaged_ranks`` (``averaged_ranks_as_probabilities ==
    "yes"``), ``imbalance_without_recalibration`` (class weighting/resampling with
    ``recalibration_after_imbalance == "no"``; runs with averaged ranks are *not* excluded here, as
    the two are counted separately and "categories can overlap"), ``explicit_calibration``
    (``probability_calibration == "yes"``), ``n_unannotated`` (valid runs without annotations).
    """
    runs, groups = _runs_and_practices(store, task, main_experiment, objectives_experiment)
    valid = runs.loc[runs["valid"]]
    rows = []
    for objective in _objective_order(runs["objective"]):
        ids = valid.loc[valid["objective"] == objective, "run_id"]
        mine = groups.reindex(ids[ids.isin(groups.index)])
        imbalance = mine["imbalance_handling"].map(
            lambda v: v is not None and v not in {"none", "na"}
        )
        rows.append(
            {
                "objective": objective,
                "n_valid": len(ids),
                GROUP_AVERAGED_RANKS: int((mine["averaged_ranks"] == "yes").sum()),
                GROUP_IMBALANCE_NO_RECAL: int((imbalance & (mine["recalibration"] == "no")).sum()),
                "explicit_calibration": int((mine["probability_calibration"] == "yes").sum()),
                "n_unannotated": int((mine["group"] == "unannotated").sum())
                + int((~ids.isin(groups.index)).sum()),
            }
        )
    return TABLE16.frame(pd.DataFrame(rows, columns=TABLE16.named))


@parameters_of(objective_runs)
def objective_baseline(store, *, task, main_experiment, objectives_experiment) -> pd.DataFrame:
    """The simple baseline on the objectives task (Figure 4's dashed lines).

    Mean over the baseline's valid repetitions in the main experiment: one row with ``n_valid``,
    ``auroc``, ``brier``, ``ece`` (NaN when the task has no baseline run).
    """
    task = fixed_value(store, objectives_experiment, role="objectives", fixed="task", chosen=task)
    runs = selected_runs(store, main_experiment)
    ref = runs.loc[runs["reference"] & runs["valid"] & (runs["task"] == task)]
    row = {"task": task, "n_valid": len(ref)}
    row.update({m: mean_sd(ref[m])[0] for m in METRICS})
    return pd.DataFrame([row], columns=["task", "n_valid", *METRICS])


# Paper names (the notebooks use the descriptive names above).
table4 = objective_summary
table15 = objective_summary_by_agent
table16 = objective_practices
figure4_data = objective_points
