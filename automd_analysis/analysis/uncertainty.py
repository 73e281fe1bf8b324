"""Intervals on every aggregate, paired agent comparisons, a power table and their wording.

Inputs: the score store (as for the table functions) plus the tidy per-run bootstrap replicates
(``run_id, replicate, score, ece``; :func:`automd_analysis.scoring.replicates.replicates_frame`).
Every interval comes from the two-stage bootstrap of :mod:`automd_analysis.analysis.two_stage`
(repetitions within task, then the shared test-patient resample of each drawn run) and is the
percentile interval of the B iteration values. The functions return the *extra* columns, keyed like
the existing tables (:func:`attach_intervals` joins them without touching the existing columns):

==========================  =================================  ====================================
function                    key                                columns
==========================  =================================  ====================================
:func:`table2_intervals`    ``agent``                          ``penalized_ci_low/high``,
                                                               ``nonpenalized_ci_low/high``
:func:`table3_intervals`    ``agent``                          ``<class>_ci_low/high``,
                                                               ``all_ci_low/high``
:func:`table5_intervals`    ``agent, task, internal_task``     ``score_ci_low/high``,
                                                               ``ratio_ci_low/high``
:func:`table7_intervals`    ``llm``                            ``penalized_ci_low/high``,
                                                               ``ece_ci_low/high``
==========================  =================================  ====================================

:func:`pairwise_comparisons` compares every pair of agents on the primary score and on ECE:
the mean per-task difference with its two-stage interval (tasks fixed: "on these tasks"), and a
paired sign-flip test across tasks with Holm's correction over the pairs (tasks as the units:
"across tasks"). :func:`power_table` says how many repetitions would make each observed difference
significant, and :func:`comparison_sentences` words the comparisons for the "At a glance" lines.
"""

from __future__ import annotations

import html
import itertools
import math
import re
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import ndtri

from automd_analysis.analysis.llm import llm_runs
from automd_analysis.analysis.paired_tests import holm_adjust, sign_flip_test
from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    TASK_CLASSES,
    ScoreStore,
    agent_order,
    selected_runs,
)
from automd_analysis.analysis.two_stage import (
    draw_runs,
    mean_over_slots,
    nanmean,
    penalized_by_group,
    replicate_matrix,
    stage_two,
)
from automd_analysis.precision import comparable

__all__ = [
    "MEASURES",
    "PAIRWISE_COLUMNS",
    "POWER_COLUMNS",
    "attach_intervals",
    "comparison_sentence",
    "comparison_sentences",
    "pairwise_comparisons",
    "power_table",
    "table2_intervals",
    "table3_intervals",
    "table5_intervals",
    "table7_intervals",
]

#: Measures compared by :func:`pairwise_comparisons`: name -> (value column, higher is better).
MEASURES: dict[str, tuple[str, bool]] = {"score": ("penalized", True), "ece": ("ece", False)}

PAIRWISE_COLUMNS: tuple[str, ...] = (
    "agent_a",
    "agent_b",
    "measure",
    "diff_mean",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "n_tasks",
    "tasks_a_better",
)
POWER_COLUMNS: tuple[str, ...] = (
    "agent_a",
    "agent_b",
    "measure",
    "diff_mean",
    "n_tasks",
    "reps_observed",
    "se_observed",
    "se_test_set",
    "sd_one_repetition",
    "reps_needed",
    "reachable",
)


# --------------------------------------------------------------------------------------------------
# shared plumbing


def _interval(values: np.ndarray, alpha: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if finite.size < 2:
        return math.nan, math.nan
    low, high = np.quantile(finite, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def _check_alpha(alpha: float) -> float:
    value = float(alpha)
    if not 0.0 < value < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}.")
    return value


def _n_boot(n_boot: int | None, n_replicates: int) -> int:
    if n_boot is None:
        return n_replicates
    if isinstance(n_boot, bool) or int(n_boot) != n_boot or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}.")
    return int(n_boot)


class _Iterations:
    """Runs of one analysis with their two-stage iteration values (B x n_runs matrices)."""

    def __init__(self, runs, replicates, cells, n_boot, seed, tag):
        self.runs = runs.reset_index(drop=True)
        matrix = replicate_matrix(self.runs, replicates)
        self.n_boot = _n_boot(n_boot, matrix.n_replicates)
        self.draws = draw_runs(self.runs, cells, self.n_boot, seed, tag)
        valid = self.runs["valid"].to_numpy(bool)
        self.valid = valid[self.draws]
        self.score = stage_two(matrix.score, self.draws)
        self.ece = stage_two(matrix.ece, self.draws)
        self.matrix = matrix

    def slots(self, columns: Sequence[str]) -> dict[tuple, np.ndarray]:
        groups = self.runs.groupby(list(columns), sort=True).groups
        return {k if isinstance(k, tuple) else (k,): np.asarray(v) for k, v in groups.items()}


def _valid_values(values: np.ndarray, valid: np.ndarray) -> np.ndarray:
    return np.where(valid & np.isfinite(values), values, np.nan)


def attach_intervals(table: pd.DataFrame, intervals: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the interval columns appended, matched on the key columns they share.

    The existing columns and row order of ``table`` are unchanged; rows without an interval get
    NaN.

    See Also
    --------
    table2_intervals, table3_intervals, table5_intervals, table7_intervals : the interval columns.

    Examples
    --------
    >>> t2 = pd.DataFrame({"agent": ["a", "b"], "penalized_mean": [0.5, 0.4]})
    >>> ci = pd.DataFrame({"agent": ["b"], "penalized_ci_low": [0.3], "penalized_ci_high": [0.5]})
    >>> attach_intervals(t2, ci).columns.tolist()
    ['agent', 'penalized_mean', 'penalized_ci_low', 'penalized_ci_high']
    """
    keys = [c for c in intervals.columns if c in table.columns]
    extra = [c for c in intervals.columns if c not in keys]
    merged = table.merge(intervals, on=keys, how="left", validate="one_to_one")
    return merged[[*table.columns, *extra]]


def _intervals_frame(keys, key_columns, iterations, alpha) -> pd.DataFrame:
    """One row per key: the key columns, then ``<name>_ci_low/high`` of each iteration array."""
    rows = []
    for key, arrays in zip(keys, iterations, strict=True):
        row = list(key)
        for values in arrays.values():
            row += _interval(values, alpha)
        rows.append(row)
    names = list(iterations[0]) if iterations else []
    columns = [*key_columns] + [f"{n}_ci_{s}" for n in names for s in ("low", "high")]
    return pd.DataFrame(rows, columns=columns)


# --------------------------------------------------------------------------------------------------
# Tables 2, 3, 5, 7


def table2_intervals(
    store: ScoreStore,
    replicates: pd.DataFrame,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    n_boot: int | None = None,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Two-stage bootstrap intervals of Table 2's penalised and non-penalised means.

    In iteration b every (agent, task) cell's runs are redrawn with replacement and each drawn run
    contributes its score on test resample b; then, exactly as :func:`~automd_analysis.analysis.
    primary.table2`,

    .. math:: P_b = \\frac{1}{K} \\sum_k \\frac{1}{|T_k|} \\sum_{t \\in T_k} s'^{(b)}_{t,k}, \\qquad
              N_b = \\frac{1}{|T|} \\sum_t \\overline{s^{(b)}_t}

    (s' = 0 for an invalid run; the non-penalised mean averages the valid drawn runs within a task,
    then the tasks with one). The interval is the percentile interval of P_b (resp. N_b).

    Parameters
    ----------
    store : ScoreStore
    replicates : DataFrame
        ``run_id, replicate, score, ece`` for (at least) every valid run of ``experiment``.
    experiment : str
    n_boot : int, optional
        Iterations B (default: the number of stored replicates R; iteration b reads replicate
        b mod R).
    alpha : float, default 0.05
    seed : int, default 0
        Seed of the repetition draws.

    Returns
    -------
    DataFrame
        ``agent, penalized_ci_low, penalized_ci_high, nonpenalized_ci_low, nonpenalized_ci_high``,
        agents in the order of Table 2.

    Raises
    ------
    ScoreStoreError
        A valid run has no replicates, or the replicates table is malformed.

    See Also
    --------
    automd_analysis.analysis.primary.table2 : the point estimates.
    attach_intervals : join the columns to Table 2.

    References
    ----------
    Davison, A. C., Hinkley, D. V. (1997). Bootstrap Methods and their Application, sec. 3.8.
    Cambridge University Press.

    Examples
    --------
    >>> from automd_analysis.analysis import primary
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> store, replicates = example_store()
    >>> table = attach_intervals(primary.table2(store), table2_intervals(store, replicates))
    >>> row = table.set_index("agent").loc["a"]
    >>> bool(row["penalized_ci_low"] < row["penalized_mean"] < row["penalized_ci_high"])
    True
    """
    alpha = _check_alpha(alpha)
    keys, iterations = _table2_iterations(store, replicates, experiment, n_boot, seed)
    return _intervals_frame(keys, ["agent"], iterations, alpha)


def _table2_iterations(store, replicates, experiment, n_boot, seed):
    """([(agent,)], [{"penalized": (B,), "nonpenalized": (B,)}]) of the iterations."""
    runs = selected_runs(store, experiment)
    it = _Iterations(runs, replicates, ("agent", "task"), n_boot, seed, "table2")
    pen = penalized_by_group(it.runs, "agent", it.score, it.valid)
    nonpen_cells = it.slots(("agent", "task"))
    per_cell = mean_over_slots(_valid_values(it.score, it.valid), list(nonpen_cells.values()))
    cell_agent = np.array([k[0] for k in nonpen_cells])
    keys, iterations = [], []
    for agent in agent_order(it.runs["agent"]):
        nonpen = nanmean(per_cell[:, cell_agent == agent], axis=1)
        keys.append((agent,))
        iterations.append({"penalized": pen[agent], "nonpenalized": nonpen})
    return keys, iterations


def _ece_cells(it: _Iterations, group: str) -> tuple[np.ndarray, list[tuple]]:
    cells = it.slots((group, "task"))
    per_cell = mean_over_slots(_valid_values(it.ece, it.valid), list(cells.values()))
    return per_cell, list(cells)


def table3_intervals(
    store: ScoreStore,
    replicates: pd.DataFrame,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    n_boot: int | None = None,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Two-stage bootstrap intervals of Table 3's ECE means (per task class and over all tasks).

    In iteration b, with the (agent, task) cells redrawn and each drawn run's ECE on test resample
    b, ECE(a, class) = mean over the class's tasks of (mean ECE of a's valid drawn runs on the
    task), tasks without a valid drawn run left out, as
    :func:`~automd_analysis.analysis.calibration_practices.ece_by_task_class`; ``all`` weights every task equally.

    Parameters
    ----------
    store, replicates, experiment, n_boot, alpha, seed
        As :func:`table2_intervals`.

    Returns
    -------
    DataFrame
        ``agent`` and ``<class>_ci_low``, ``<class>_ci_high`` for ``survival``,
        ``classification``, ``sequential`` and ``all``.

    See Also
    --------
    automd_analysis.analysis.calibration_practices.ece_by_task_class : the point estimates.

    References
    ----------
    Efron, B., Tibshirani, R. (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> store, replicates = example_store()
    >>> ci = table3_intervals(store, replicates)
    >>> ci.columns.tolist()[:3]
    ['agent', 'survival_ci_low', 'survival_ci_high']
    >>> bool((ci["all_ci_low"] <= ci["all_ci_high"]).all())
    True
    """
    alpha = _check_alpha(alpha)
    keys, iterations = _table3_iterations(store, replicates, experiment, n_boot, seed)
    return _intervals_frame(keys, ["agent"], iterations, alpha)


def _table3_iterations(store, replicates, experiment, n_boot, seed):
    """([(agent,)], [{class: (B,), ..., "all": (B,)}]) of the iterations."""
    runs = selected_runs(store, experiment)
    it = _Iterations(runs, replicates, ("agent", "task"), n_boot, seed, "table3")
    per_cell, cells = _ece_cells(it, "agent")
    kinds = it.runs.drop_duplicates("task").set_index("task")["task_kind"]
    cell_agent = np.array([k[0] for k in cells])
    cell_kind = np.array([kinds[k[1]] for k in cells])
    keys, iterations = [], []
    for agent in agent_order(it.runs["agent"]):
        values = {}
        for kind in (*TASK_CLASSES, "all"):
            mask = cell_agent == agent
            if kind != "all":
                mask &= cell_kind == kind
            values[kind] = nanmean(per_cell[:, mask], axis=1)
        keys.append((agent,))
        iterations.append(values)
    return keys, iterations


def table5_intervals(
    store: ScoreStore,
    replicates: pd.DataFrame,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    n_boot: int | None = None,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Two-stage bootstrap intervals of Table 5's external scores and external/internal ratios.

    Agents: the units are the (external run, internal run of the same repetition) pairs of an
    (agent, external task); iteration b redraws the pairs with replacement and reads both runs'
    scores on their tasks' test resamples b. ``score`` = mean of the valid external scores;
    ``ratio`` = mean over the usable pairs (both valid, internal score > 0) of external / internal,
    as :func:`~automd_analysis.analysis.shift.table5`. Simple baseline: its external and internal
    runs are redrawn separately (its ratio is mean external / mean internal, which pairs nothing).

    Parameters
    ----------
    store, replicates, experiment, n_boot, alpha, seed
        As :func:`table2_intervals`.

    Returns
    -------
    DataFrame
        ``agent, task, internal_task, score_ci_low, score_ci_high, ratio_ci_low, ratio_ci_high``
        sorted by task, then agent (baseline last).

    See Also
    --------
    automd_analysis.analysis.shift.table5 : the point estimates.

    References
    ----------
    Efron, B., Tibshirani, R. (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> store, replicates = example_store()
    >>> table5_intervals(store, replicates)[["agent", "task", "internal_task"]].values.tolist()
    [['a', 'clf_ext', 'clf'], ['b', 'clf_ext', 'clf'], ['baseline', 'clf_ext', 'clf']]
    """
    alpha = _check_alpha(alpha)
    keys, iterations = _table5_iterations(store, replicates, experiment, n_boot, seed)
    if not keys:
        columns = ["agent", "task", "internal_task"] + [
            f"{n}_ci_{s}" for n in ("score", "ratio") for s in ("low", "high")
        ]
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    return _intervals_frame(keys, ["agent", "task", "internal_task"], iterations, alpha)


def _table5_iterations(store, replicates, experiment, n_boot, seed):
    """([(agent, task, internal_task)], [{"score": (B,), "ratio": (B,)}]) of the iterations."""
    runs = selected_runs(store, experiment).reset_index(drop=True)
    ext_mask = (runs["validation"] == "external") & runs["internal_counterpart"].notna()
    if not ext_mask.any():
        return [], []
    it = _Iterations(runs, replicates, ("agent", "task"), n_boot, seed, "table5")
    # the internal run of each external run (same agent and repetition), or -1
    row_of = {
        (a, t, r): i
        for i, (a, t, r) in enumerate(zip(runs["agent"], runs["task"], runs["rep"], strict=True))
    }
    partner = np.array(
        [
            row_of.get((a, c, r), -1) if e else -1
            for a, c, r, e in zip(
                runs["agent"], runs["internal_counterpart"], runs["rep"], ext_mask, strict=True
            )
        ]
    )
    valid = runs["valid"].to_numpy(bool)
    score_mat = it.matrix.score
    keys, iterations = [], []
    for (task, internal_task), group in runs.loc[ext_mask].groupby(
        ["task", "internal_counterpart"], sort=True
    ):
        for agent in agent_order(group["agent"]):
            ext_rows = group.index[group["agent"] == agent].to_numpy()
            ext_draws = it.draws[:, ext_rows]  # stage 1 of the external cell
            s_ext = _drawn_valid_scores(score_mat, valid, ext_draws)
            v_ext = np.isfinite(s_ext)
            score_b = nanmean(s_ext, axis=1)
            if bool(runs.loc[ext_rows, "reference"].any()):
                int_rows = np.flatnonzero(
                    (runs["agent"] == agent).to_numpy() & (runs["task"] == internal_task).to_numpy()
                )
                s_int = _drawn_valid_scores(score_mat, valid, it.draws[:, int_rows])
                int_mean = nanmean(s_int, axis=1)
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio_b = np.where(int_mean > 0, score_b / int_mean, np.nan)
            else:
                part = partner[ext_draws]  # internal run paired with each drawn external run
                has = part >= 0
                paired = _drawn_valid_scores(score_mat, valid, np.where(has, part, 0))
                s_int = np.where(has, paired, np.nan)
                usable = v_ext & np.isfinite(s_int) & (np.nan_to_num(s_int) > 0)
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio_b = nanmean(np.where(usable, s_ext / s_int, np.nan), axis=1)
            keys.append((agent, task, internal_task))
            iterations.append({"score": score_b, "ratio": ratio_b})
    return keys, iterations


def _drawn_valid_scores(score_mat: np.ndarray, valid: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """(B, k) scores of the drawn runs ``draws`` on test resample b (row b; replicate b mod R),
    NaN where the drawn run is invalid or has no finite score."""
    cols = np.arange(draws.shape[0]) % score_mat.shape[1]
    drawn = score_mat[draws, cols[:, None]]
    return np.where(valid[draws] & np.isfinite(drawn), drawn, np.nan)


def table7_intervals(
    store: ScoreStore,
    replicates: pd.DataFrame,
    *,
    agent: str | None = None,
    main_experiment: str = DEFAULT_EXPERIMENTS["main"],
    llm_experiment: str = DEFAULT_EXPERIMENTS["llm"],
    n_boot: int | None = None,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Two-stage bootstrap intervals of Table 7's penalised score and ECE per LLM.

    The runs are those of :func:`~automd_analysis.analysis.llm.llm_runs`; the cells are (LLM,
    task). Per iteration: penalised score = mean over repetitions of the mean over tasks (invalid
    = 0); ECE = valid drawn runs averaged within task, then tasks equally (the rules of
    :func:`~automd_analysis.analysis.llm.table7`).

    Parameters
    ----------
    store, replicates, n_boot, alpha, seed
        As :func:`table2_intervals`.
    agent, main_experiment, llm_experiment
        As :func:`~automd_analysis.analysis.llm.llm_runs`.

    Returns
    -------
    DataFrame
        ``llm, penalized_ci_low, penalized_ci_high, ece_ci_low, ece_ci_high`` (LLMs sorted).

    See Also
    --------
    automd_analysis.analysis.llm.table7 : the point estimates.

    References
    ----------
    Efron, B., Tibshirani, R. (1993). An Introduction to the Bootstrap. Chapman & Hall.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> store, replicates = example_store()
    >>> table7_intervals(store, replicates)["llm"].tolist()
    ['llm-1', 'llm-2']
    """
    alpha = _check_alpha(alpha)
    runs = llm_runs(
        store, agent=agent, main_experiment=main_experiment, llm_experiment=llm_experiment
    )
    keys, iterations = _table7_iterations(runs, replicates, n_boot, seed)
    return _intervals_frame(keys, ["llm"], iterations, alpha)


def _table7_iterations(runs, replicates, n_boot, seed):
    """([(llm,)], [{"penalized": (B,), "ece": (B,)}]) of the iterations over ``llm_runs``."""
    it = _Iterations(runs, replicates, ("llm", "task"), n_boot, seed, "table7")
    pen = penalized_by_group(it.runs, "llm", it.score, it.valid)
    per_cell, cells = _ece_cells(it, "llm")
    cell_llm = np.array([k[0] for k in cells])
    keys, iterations = [], []
    for llm in sorted(pen):
        keys.append((llm,))
        iterations.append(
            {"penalized": pen[llm], "ece": nanmean(per_cell[:, cell_llm == llm], axis=1)}
        )
    return keys, iterations


# --------------------------------------------------------------------------------------------------
# pairwise comparisons and power


def _task_values(runs: pd.DataFrame, values: np.ndarray, valid: np.ndarray, measure: str):
    """Per (agent, task) mean of the measure for every row of ``values`` -> (B, cells), keys."""
    if measure == "score":
        per_run = np.where(valid & np.isfinite(values), values, 0.0)  # penalised
    else:
        per_run = _valid_values(values, valid)
    groups = runs.groupby(["agent", "task"], sort=True).groups
    keys = list(groups)
    return mean_over_slots(per_run, [np.asarray(v) for v in groups.values()]), keys


def _compared_runs(store: ScoreStore, experiment: str, agents: Sequence[str] | None):
    """The selected runs of ``experiment``, only those of ``agents`` when given."""
    runs = selected_runs(store, experiment)
    if agents is not None:
        runs = runs.loc[runs["agent"].isin(set(agents))]
    return runs


def _observed_task_values(runs: pd.DataFrame, measure: str) -> pd.DataFrame:
    """(task x agent) table of the observed per-task means (penalised score / valid ECE), to 12
    significant digits, so that means equal in exact arithmetic give a difference of exactly 0."""
    values = runs["penalized"] if measure == "score" else runs["ece"].where(runs["valid"])
    frame = runs.assign(_v=values.to_numpy(float))
    return comparable(frame.groupby(["task", "agent"], sort=True)["_v"].mean().unstack("agent"))


def pairwise_comparisons(
    store: ScoreStore,
    replicates: pd.DataFrame,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    agents: Sequence[str] | None = None,
    n_boot: int | None = None,
    alpha: float = 0.05,
    seed: int = 0,
) -> pd.DataFrame:
    """Paired comparison of every pair of agents on the primary score and on ECE.

    Per task t, A_t is agent A's mean over its runs of the penalised normalised score (measure
    ``score``; invalid = 0) or of the valid runs' ECE (measure ``ece``). Over the T tasks where
    both agents have a value, d_t = A_t - B_t and

    - ``diff_mean`` = (1/T) Σ_t d_t; ``ci_low``/``ci_high``: its two-stage percentile interval
      (both agents' runs redrawn within each task, and in iteration b both read test resample b of
      the task: the patients are shared, so the interval is paired). It treats the tasks as fixed.
    - ``p_value``: two-sided sign-flip randomisation test of the d_t
      (:func:`~automd_analysis.analysis.paired_tests.sign_flip_test`): tasks are the units, so it
      asks whether A beats B across tasks; ``p_holm``: Holm-adjusted over the pairs of the same
      measure.
    - ``n_tasks`` = T; ``tasks_a_better`` = tasks where A is strictly better (higher score, lower
      ECE).

    Parameters
    ----------
    store, replicates, experiment, n_boot, alpha, seed
        As :func:`table2_intervals` (``alpha`` sets the interval level).
    agents : sequence of str, optional
        Agents to compare (default: every agent of the experiment, the simple baseline included).

    Returns
    -------
    DataFrame with columns :data:`PAIRWISE_COLUMNS`: one row per unordered pair (A before B in
    display order) and measure, score rows first.

    See Also
    --------
    power_table : repetitions needed per pair.
    comparison_sentences : the rows in words.

    References
    ----------
    Fisher, R. A. (1935). The Design of Experiments. Oliver & Boyd.
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal
    of Statistics 6(2), 65-70.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> store, replicates = example_store()
    >>> pw = pairwise_comparisons(store, replicates)
    >>> pw.loc[0, ["agent_a", "agent_b", "measure"]].tolist()
    ['a', 'b', 'score']
    >>> int(pw.loc[0, "n_tasks"]), int(pw.loc[0, "tasks_a_better"])
    (3, 3)
    >>> float(pw.loc[0, "p_value"])  # 3 tasks, all in a's favour: 2 of 8 sign patterns
    0.25
    """
    alpha = _check_alpha(alpha)
    runs = _compared_runs(store, experiment, agents)
    it = _Iterations(runs, replicates, ("agent", "task"), n_boot, seed, "pairwise")
    rows = []
    for measure, pairs in _pairwise_iterations(it).items():
        higher_better = MEASURES[measure][1]
        block = []
        for a, b, d, diff_b in pairs:
            low, high = _interval(diff_b, alpha)
            better = int(np.sum(d > 0)) if higher_better else int(np.sum(d < 0))
            block.append(
                [a, b, measure, float(d.mean()) if d.size else math.nan, low, high,
                 sign_flip_test(d) if d.size else math.nan, math.nan, int(d.size), better]
            )  # fmt: skip
        p_holm = holm_adjust([r[6] for r in block]) if block else []
        for r, p in zip(block, p_holm, strict=True):
            r[7] = float(p)
        rows += block
    out = pd.DataFrame(rows, columns=list(PAIRWISE_COLUMNS))
    return out.astype({"n_tasks": "int64", "tasks_a_better": "int64"})


def _pairwise_iterations(it: _Iterations) -> dict[str, list]:
    """Per measure: (agent_a, agent_b, observed per-task differences, iteration mean differences)."""
    names = agent_order(it.runs["agent"])
    out = {}
    for measure in MEASURES:
        observed = _observed_task_values(it.runs, measure)
        values = it.score if measure == "score" else it.ece
        per_cell, keys = _task_values(it.runs, values, it.valid, measure)
        col = {k: j for j, k in enumerate(keys)}
        pairs = []
        for a, b in itertools.combinations(names, 2):
            both = observed[[a, b]].dropna()
            d = (both[a] - both[b]).to_numpy(float)
            ja = [col[(a, t)] for t in both.index]
            jb = [col[(b, t)] for t in both.index]
            if len(both):
                diff_b = nanmean(per_cell[:, ja] - per_cell[:, jb], axis=1)
            else:
                diff_b = np.full(it.n_boot, np.nan)
            pairs.append((a, b, d, diff_b))
        out[measure] = pairs
    return out


def power_table(
    store: ScoreStore,
    replicates: pd.DataFrame,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    agents: Sequence[str] | None = None,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Repetitions per agent and task at which each observed difference would be significant.

    For a pair (A, B) and a measure, over the T tasks where both have a value, the mean difference
    D = (1/T) Σ_t d_t is estimated with variance

    .. math:: V(K) = \\frac{1}{T^2} \\sum_t \\frac{s^2_{A,t} + s^2_{B,t}}{K} + V_{test}

    where s²_{X,t} is the sample variance (``ddof=1``) of X's per-run values on task t (the
    observed run-to-run variance) and V_test the variance of D over the shared test resamples with
    the observed runs fixed (test-set sampling, which more repetitions on the same test sets do not
    reduce; paired, so noise common to both agents cancels). With z = Φ⁻¹(1 - α/2), D is
    significant at K repetitions when D² >= z² V(K), i.e.

    .. math:: K_{needed} = \\Bigl\\lceil \\frac{z^2 S}{D^2 - z^2 V_{test}} \\Bigr\\rceil,
              \\quad S = \\frac{1}{T^2} \\sum_t (s^2_{A,t} + s^2_{B,t})

    (at least 2, the fewest runs with a standard deviation). When D² <= z² V_test no number of
    repetitions suffices on these test sets (``reachable = False``, ``reps_needed`` NaN). This is
    the "on these tasks" question (tasks fixed), a normal approximation; the across-task test of
    :func:`pairwise_comparisons` additionally needs enough tasks (at least 6 for p < 0.05).

    Parameters
    ----------
    store, replicates, experiment
        As :func:`table2_intervals`.
    agents : sequence of str, optional
    alpha : float, default 0.05

    Returns
    -------
    DataFrame with columns :data:`POWER_COLUMNS`: ``reps_observed`` (fewest runs of either agent
    on a common task), ``se_observed`` = sqrt(V) with the observed run counts, ``se_test_set`` =
    sqrt(V_test), ``sd_one_repetition`` = sqrt(S) (the standard error of D with one run each,
    without the test-set part).

    See Also
    --------
    pairwise_comparisons : the observed differences and tests.

    References
    ----------
    Cohen, J. (1988). Statistical Power Analysis for the Behavioral Sciences, 2nd ed., ch. 2.
    Lawrence Erlbaum.

    Examples
    --------
    >>> from automd_analysis.analysis._doc_example import example_store
    >>> store, replicates = example_store()
    >>> power = power_table(store, replicates).set_index(["agent_a", "agent_b", "measure"])
    >>> int(power.loc[("a", "baseline", "score"), "reps_needed"])
    2
    """
    alpha = _check_alpha(alpha)
    runs = _compared_runs(store, experiment, agents).reset_index(drop=True)
    matrix = replicate_matrix(runs, replicates)
    z = float(ndtri(1 - alpha / 2))
    names = agent_order(runs["agent"])
    valid = runs["valid"].to_numpy(bool)
    rows = []
    for measure in MEASURES:
        observed = _observed_task_values(runs, measure)
        if measure == "score":
            per_run = runs["penalized"].to_numpy(float)
            reps = np.where(valid[:, None] & np.isfinite(matrix.score), matrix.score, 0.0)
        else:
            per_run = runs["ece"].where(runs["valid"]).to_numpy(float)
            reps = np.where(valid[:, None], matrix.ece, np.nan)
        frame = runs.assign(_v=comparable(per_run))
        stats = frame.groupby(["task", "agent"], sort=True)["_v"].agg(["var", "count"])
        # test-set part: each (agent, task) mean over its runs, per stored replicate
        cells = frame.groupby(["agent", "task"], sort=True).groups
        cell_reps = {k: comparable(nanmean(reps[np.asarray(v)], axis=0)) for k, v in cells.items()}
        for a, b in itertools.combinations(names, 2):
            both = observed[[a, b]].dropna()
            tasks = list(both.index)
            t_count = len(tasks)
            if t_count == 0:
                rows.append(
                    [a, b, measure, math.nan, 0, 0, math.nan, math.nan, math.nan, math.nan, False]
                )
                continue
            d_mean = float((both[a] - both[b]).mean())
            var_a = np.array([stats.loc[(t, a), "var"] for t in tasks], dtype=float)
            var_b = np.array([stats.loc[(t, b), "var"] for t in tasks], dtype=float)
            k_a = np.array([stats.loc[(t, a), "count"] for t in tasks], dtype=float)
            k_b = np.array([stats.loc[(t, b), "count"] for t in tasks], dtype=float)
            per_task = var_a + var_b
            s_one = float(nanmean(per_task, axis=0)) / t_count  # tasks without a variance: average
            rep_part = float(nanmean(var_a / k_a + var_b / k_b, axis=0)) / t_count
            diff_reps = np.mean([cell_reps[(a, t)] - cell_reps[(b, t)] for t in tasks], axis=0)
            finite = diff_reps[np.isfinite(diff_reps)]
            v_test = float(np.var(finite, ddof=1)) if finite.size > 1 else math.nan
            se_obs = math.sqrt(rep_part + v_test) if math.isfinite(rep_part + v_test) else math.nan
            margin = d_mean**2 - z**2 * v_test
            reachable = bool(math.isfinite(margin) and margin > 0 and math.isfinite(s_one))
            needed = float(max(2, math.ceil(z**2 * s_one / margin))) if reachable else math.nan
            reps_obs = int(min(k_a.min(), k_b.min()))
            rows.append(
                [a, b, measure, d_mean, t_count, reps_obs, se_obs,
                 math.sqrt(v_test) if math.isfinite(v_test) else math.nan,
                 math.sqrt(s_one) if math.isfinite(s_one) else math.nan, needed, reachable]
            )  # fmt: skip
    out = pd.DataFrame(rows, columns=list(POWER_COLUMNS))
    return out.astype({"n_tasks": "int64", "reps_observed": "int64", "reachable": bool})


# --------------------------------------------------------------------------------------------------
# wording

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_MEASURE_WORDS = {"score": "the primary score", "ece": "calibration (ECE)"}


def _name(value: object) -> str:
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(value), quote=True))


def _num(value: float, signed: bool = False) -> str:
    if value is None or not math.isfinite(value):
        return "n/a"
    text = f"{value:+.3f}" if signed else f"{value:.3f}"
    return text.replace("-0.000", "0.000").replace("+0.000", "0.000")


def comparison_sentence(row, alpha: float = 0.05, level: float = 0.95) -> str:
    """One "At a glance" sentence for a row of :func:`pairwise_comparisons`.

    A difference is stated only when the Holm-adjusted p-value is below ``alpha``; otherwise the
    sentence says that the data cannot separate the agents, and, when the number of tasks makes
    p < alpha unattainable for the sign-flip test, says so.

    See Also
    --------
    pairwise_comparisons : the rows.
    automd_analysis.analysis.paired_tests.min_attainable_p : why few tasks cannot reach p < alpha.

    Examples
    --------
    >>> row = {"agent_a": "codex", "agent_b": "aide", "measure": "score", "diff_mean": 0.043,
    ...        "ci_low": 0.012, "ci_high": 0.071, "p_value": 0.004, "p_holm": 0.012,
    ...        "n_tasks": 15, "tasks_a_better": 12}
    >>> comparison_sentence(row)
    'codex scores higher than aide on the primary score: mean difference +0.043 (95% CI 0.012 to 0.071), better on 12 of 15 tasks, Holm-adjusted p = 0.012.'
    >>> comparison_sentence({**row, "p_holm": 0.4, "n_tasks": 3, "tasks_a_better": 2})
    'The data cannot separate codex and aide on the primary score: mean difference +0.043 (95% CI 0.012 to 0.071), Holm-adjusted p = 0.400; with 3 tasks no paired test across tasks can reach p < 0.05.'
    """
    a, b = _name(row["agent_a"]), _name(row["agent_b"])
    measure = row["measure"]
    words = _MEASURE_WORDS.get(measure, _name(measure))
    n_tasks = int(row["n_tasks"])
    ci = f"{round(100 * level)}% CI {_num(row['ci_low'])} to {_num(row['ci_high'])}"
    diff = f"mean difference {_num(row['diff_mean'], signed=True)} ({ci})"
    p_holm = row["p_holm"]
    if p_holm is not None and math.isfinite(p_holm) and p_holm < alpha:
        a_better = (row["diff_mean"] > 0) == (measure != "ece")
        better, worse = (a, b) if a_better else (b, a)
        n_better = int(row["tasks_a_better"]) if a_better else n_tasks - int(row["tasks_a_better"])
        verb = "scores higher than" if measure != "ece" else "is better calibrated than"
        return (
            f"{better} {verb} {worse} on {words}: {diff}, better on {n_better} of {n_tasks} "
            f"tasks, Holm-adjusted p = {_num(p_holm)}."
        )
    text = (
        f"The data cannot separate {a} and {b} on {words}: {diff}, Holm-adjusted p = {_num(p_holm)}"
    )
    if n_tasks == 0:
        return f"The data cannot separate {a} and {b} on {words}: they share no task."
    if 2.0 / 2.0**n_tasks >= alpha:
        text += f"; with {n_tasks} tasks no paired test across tasks can reach p < {alpha:g}"
    return text + "."


def comparison_sentences(
    pairwise: pd.DataFrame, measure: str = "score", alpha: float = 0.05, level: float = 0.95
) -> list[str]:
    """:func:`comparison_sentence` for every pair of one measure, significant pairs first.

    See Also
    --------
    comparison_sentence : one row.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame([{"agent_a": "a", "agent_b": "b", "measure": "ece", "diff_mean": -0.02,
    ...     "ci_low": -0.03, "ci_high": -0.01, "p_value": 0.001, "p_holm": 0.002, "n_tasks": 15,
    ...     "tasks_a_better": 13}])
    >>> comparison_sentences(rows, "ece")[0].startswith("a is better calibrated than b")
    True
    """
    mine = pairwise.loc[pairwise["measure"] == measure]
    significant = mine["p_holm"].fillna(1.0) < alpha
    ordered = pd.concat([mine.loc[significant], mine.loc[~significant]])
    return [comparison_sentence(r, alpha, level) for r in ordered.to_dict("records")]
