"""Paired agent comparisons, a power table and their wording (notebooks 01 and 02).

:func:`pairwise_comparisons` compares every pair of agents on the primary score and on ECE:
the mean per-task difference with its two-stage interval (tasks fixed: "on these tasks"), and a
paired sign-flip test across tasks with Holm's correction over the pairs (tasks as the units:
"across tasks"). :func:`power_table` says how many repetitions would make each observed difference
significant, and :func:`comparison_sentences` words the comparisons for the "At a glance" lines.

Both read the score store and its bootstrap replicates (``store.replicates``): the differences
and their intervals come from one run x replicate matrix
(:func:`~automd_analysis.stats.resample.run_draws`: column 0 the observed runs, the other
columns the two-stage draws, both agents of a pair on the same resampled patients), aggregated
with the rules of :mod:`automd_analysis.stats.rules`. A store without replicates gives both
tables with their columns and no rows.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.special import ndtri

from automd_analysis.analysis._docstrings import EXAMPLE_STORE, RAISES_AS_AGENT_SUMMARY
from automd_analysis.analysis.catalog.primary_scores import PAIRWISE, POWER
from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    ScoreStore,
    agent_order,
    selected_runs,
)
from automd_analysis.docstrings import fill_doc
from automd_analysis.precision import comparable
from automd_analysis.stats import wording
from automd_analysis.stats.intervals import check_alpha, estimate, p_value
from automd_analysis.stats.multiplicity import holm_adjust
from automd_analysis.stats.paired import sign_flip_test
from automd_analysis.stats.resample import (
    RunDraws,
    has_replicates,
    replicate_matrix,
    run_draws,
)
from automd_analysis.stats.rules import (
    mean_over,
    nanmean,
    penalized,
    per_cell,
    row_groups,
    valid_only,
)

__all__ = [
    "MEASURES",
    "across_tasks_clause",
    "comparison_sentence",
    "comparison_sentences",
    "pairwise_comparisons",
    "power_table",
]

# the sentences of these tables are said in one place, the statistics layer's wording
across_tasks_clause = wording.across_tasks_clause
comparison_sentence = wording.comparison_sentence
comparison_sentences = wording.comparison_sentences

#: Measures compared by :func:`pairwise_comparisons`: name -> higher is better.
MEASURES: dict[str, bool] = {"score": True, "ece": False}


#: The ``store`` input of the pairwise tests and the power table.
_STORE_WITH_REPLICATES = """
store : ScoreStore
    With bootstrap replicates (without: the columns and no rows).
"""


def _run_values(values: np.ndarray, valid: np.ndarray, measure: str) -> np.ndarray:
    """Per-run values of a measure: the penalised score (invalid = 0), or the valid runs' ECE."""
    return penalized(values, valid) if measure == "score" else valid_only(values, valid)


def _compared_runs(store: ScoreStore, experiment: str, agents: Sequence[str] | None):
    """The selected runs of ``experiment``, only those of ``agents`` when given."""
    runs = selected_runs(store, experiment)
    if agents is not None:
        runs = runs.loc[runs["agent"].isin(set(agents))]
    return runs.reset_index(drop=True)


def _task_table(runs: pd.DataFrame, cell_values: np.ndarray, cells) -> pd.DataFrame:
    """(task x agent) table of per-cell values, to 12 significant digits, so that means equal in
    exact arithmetic give a difference of exactly 0."""
    index = pd.MultiIndex.from_tuples(list(cells), names=["agent", "task"])
    series = pd.Series(cell_values, index=index)
    return comparable(series.unstack("agent").sort_index())


@fill_doc(
    raises_as_agent_summary=RAISES_AS_AGENT_SUMMARY,
    example_store=EXAMPLE_STORE,
    store_with_replicates=_STORE_WITH_REPLICATES,
)
def pairwise_comparisons(
    store: ScoreStore,
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

    Two questions, each with its own columns:

    *On these T tasks* (the primary comparison: tasks fixed, runs and test patients resampled):

    - ``diff_mean`` = (1/T) Σ_t d_t; ``ci_low``/``ci_high``: its two-stage percentile interval
      (both agents' runs redrawn within each task, and in iteration b both read test resample b of
      the task: the patients are shared, so the interval is paired).
    - ``p_value``: the test inversion of that interval
      (:func:`~automd_analysis.stats.intervals.p_value`, same replicates), so
      ``p_value < alpha`` exactly when the interval excludes 0; ``p_holm``: Holm-adjusted over
      the pairs of the same measure (one family per measure).

    *Across tasks* (does it generalise to other tasks? tasks as the units):

    - ``tasks_p_value``: two-sided sign-flip randomisation test of the d_t
      (:func:`~automd_analysis.stats.paired.sign_flip_test`); ``tasks_p_holm``:
      Holm-adjusted over the pairs of the same measure.
    - ``n_tasks`` = T; ``tasks_a_better`` = tasks where A is strictly better (higher score, lower
      ECE).

    Parameters
    ----------
    {store_with_replicates}
    experiment, n_boot, alpha, seed
        As :func:`~automd_analysis.analysis.primary.agent_summary`.
    agents : sequence of str, optional
        Agents to compare (default: every agent of the experiment, the simple baseline included).

    Returns
    -------
    DataFrame ``agent_a, agent_b, measure, diff_mean, ci_low, ci_high, p_value, p_holm, n_tasks,
    tasks_a_better, tasks_p_value, tasks_p_holm``: one row per unordered pair (A before B in display order) and measure, score
    rows first.

    {raises_as_agent_summary}

    See Also
    --------
    power_table : repetitions needed per pair.
    comparison_sentences : the rows in words.

    References
    ----------
    Fisher, R. A. (1935). The Design of Experiments. Oliver & Boyd.
    Efron, B., Tibshirani, R. (1993). An Introduction to the Bootstrap, sec. 15.4. Chapman & Hall.
    Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scandinavian Journal
    of Statistics 6(2), 65-70.

    {example_store}
    >>> pw = pairwise_comparisons(example_store_with_replicates())
    >>> pw.loc[0, ["agent_a", "agent_b", "measure"]].tolist()
    ['a', 'b', 'score']
    >>> int(pw.loc[0, "n_tasks"]), int(pw.loc[0, "tasks_a_better"])
    (3, 3)
    >>> float(pw.loc[0, "tasks_p_value"])  # 3 tasks, all in a's favour: 2 of 8 sign patterns
    0.25
    >>> bool(pw.loc[0, "p_value"] < 0.05) == bool(pw.loc[0, "ci_low"] > 0 or pw.loc[0, "ci_high"] < 0)
    True
    """
    alpha = check_alpha(alpha)
    if not has_replicates(store):
        return PAIRWISE.frame()
    runs = _compared_runs(store, experiment, agents)
    matrix = run_draws(
        runs, store.replicates, ("agent", "task"), n_boot=n_boot, seed=seed, tag="pairwise"
    )
    rows = []
    for measure, pairs in _pairwise_distributions(matrix).items():
        higher_better = MEASURES[measure]
        block = []
        for a, b, d, diff_b in pairs:
            low, high = estimate(diff_b, alpha, (-1.0, 1.0))[1:]
            better = int(np.sum(d > 0)) if higher_better else int(np.sum(d < 0))
            block.append(
                [a, b, measure, float(d.mean()) if d.size else math.nan, low, high,
                 p_value(diff_b, alpha), math.nan, int(d.size), better,
                 sign_flip_test(d) if d.size else math.nan, math.nan]
            )  # fmt: skip
        for p_col, holm_col in ((6, 7), (10, 11)):
            adjusted = holm_adjust([r[p_col] for r in block]) if block else []
            for r, p in zip(block, adjusted, strict=True):
                r[holm_col] = float(p)
        rows += block
    return PAIRWISE.frame(pd.DataFrame(rows, columns=PAIRWISE.named))


def _pairwise_distributions(matrix: RunDraws) -> dict[str, list]:
    """Per measure: (agent_a, agent_b, observed per-task differences, mean difference in every
    column of the matrix)."""
    names = agent_order(matrix.units["agent"])
    cells = row_groups(matrix.units, ["agent", "task"])
    col = {k: j for j, k in enumerate(cells)}
    out = {}
    for measure in MEASURES:
        values = matrix.score if measure == "score" else matrix.ece
        task_values = per_cell(_run_values(values, matrix.valid, measure), list(cells.values()))
        # observed values to 12 digits: tied agents differ by exactly 0, not by an ulp whose sign
        # would decide the p-value
        task_values[:, 0] = comparable(task_values[:, 0])
        observed = _task_table(matrix.units, task_values[:, 0], cells)
        pairs = []
        for a, b in itertools.combinations(names, 2):
            both = observed[[a, b]].dropna()
            d = (both[a] - both[b]).to_numpy(float)
            ja = [col[(a, t)] for t in both.index]
            jb = [col[(b, t)] for t in both.index]
            if len(both):
                diff_b = mean_over(task_values[ja] - task_values[jb], slice(None))
            else:
                diff_b = np.full(matrix.n_boot + 1, np.nan)
            pairs.append((a, b, d, diff_b))
        out[measure] = pairs
    return out


@fill_doc(example_store=EXAMPLE_STORE, store_with_replicates=_STORE_WITH_REPLICATES)
def power_table(
    store: ScoreStore,
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
    {store_with_replicates}
    experiment : str
    agents : sequence of str, optional
    alpha : float, default 0.05

    Returns
    -------
    DataFrame ``agent_a, agent_b, measure, diff_mean, n_tasks, reps_observed, se_observed,
    se_test_set, sd_one_repetition, reps_needed, reachable``: ``reps_observed`` (fewest runs of either agent
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

    {example_store}
    >>> power = power_table(example_store_with_replicates())
    >>> power = power.set_index(["agent_a", "agent_b", "measure"])
    >>> int(power.loc[("a", "baseline", "score"), "reps_needed"])
    2
    """
    alpha = check_alpha(alpha)
    if not has_replicates(store):
        return POWER.frame()
    runs = _compared_runs(store, experiment, agents)
    matrix = replicate_matrix(runs, store.replicates)
    z = float(ndtri(1 - alpha / 2))
    names = agent_order(runs["agent"])
    valid = runs["valid"].to_numpy(bool)
    rows = []
    for measure in MEASURES:
        column = "score" if measure == "score" else "ece"
        per_run = _run_values(runs[column].to_numpy(float), valid, measure)
        stored = matrix.score if measure == "score" else matrix.ece
        reps = _run_values(stored, valid[:, None], measure)
        observed = _observed_task_values(runs, per_run)
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
    return POWER.frame(pd.DataFrame(rows, columns=POWER.named))


def _observed_task_values(runs: pd.DataFrame, per_run: np.ndarray) -> pd.DataFrame:
    """(task x agent) table of the observed per-task means of ``per_run``, to 12 significant
    digits."""
    frame = runs.assign(_v=per_run)
    return comparable(frame.groupby(["task", "agent"], sort=True)["_v"].mean().unstack("agent"))
