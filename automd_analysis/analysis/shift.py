"""Performance under population shift: paper Table 5 (section 4.4, App. E).

For each external-validation task (``validation == "external"``, with an ``internal_counterpart``)
and each agent:

- ``score`` - mean normalised score of the agent's valid runs on the external task;
- ``ratio`` - for an agent, the mean over repetition indices k of
  ``s_ext(k) / s_int(k)``, taken over the pairs where both runs are valid and ``s_int(k) > 0``
  (the same repetition index on the internal counterpart);
  for the simple baseline, ``mean_k s_ext(k) / mean_k s_int(k)`` over its (five) valid repetitions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from automd_analysis.analysis._docstrings import (
    AS_AGENT_SUMMARY,
    bootstrap_references,
)
from automd_analysis.analysis.catalog.population_shift import TABLE5, TABLE5_DETAIL
from automd_analysis.analysis.primary import agent_summary
from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    ScoreStore,
    agent_order,
    selected_runs,
)
from automd_analysis.docstrings import fill_doc
from automd_analysis.signatures import parameters_of
from automd_analysis.stats.intervals import check_alpha, summarise
from automd_analysis.stats.resample import RunDraws, resample, run_draws
from automd_analysis.stats.rules import mean_over, mean_sd, valid_only

__all__ = [
    "external_pairs",
    "external_ratios",
    "external_ratios_detail",
    "table5",
    "table5_detail",
]

#: Cells of the resampler: an agent's runs on one task (for the ratios, its (external run,
#: internal partner of the same repetition) pairs).
_CELLS = ("agent", "task")


def external_pairs(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """Every (external run, internal run) pair of the same agent and repetition index.

    Returns
    -------
    DataFrame
        ``agent``, ``reference``, ``task``, ``internal_task``, ``rep``, ``score_external``,
        ``score_internal`` (NaN for an invalid or missing run), ``usable`` (both valid and
        ``score_internal > 0``) and ``ratio`` (``score_external / score_internal`` when usable, else
        NaN). External runs without a counterpart run keep ``score_internal = NaN``.
    """
    runs = selected_runs(store, experiment)
    external = runs.loc[
        (runs["validation"] == "external") & runs["internal_counterpart"].notna(),
        ["agent", "reference", "task", "internal_counterpart", "rep", "valid", "score"],
    ].rename(columns={"internal_counterpart": "internal_task", "score": "score_external"})
    internal = runs[["agent", "task", "rep", "valid", "score"]].rename(
        columns={"task": "internal_task", "valid": "valid_internal", "score": "score_internal"}
    )
    pairs = external.merge(internal, on=["agent", "internal_task", "rep"], how="left")
    valid_int = pairs["valid_internal"].astype("boolean").fillna(False).astype(bool)
    s_int = pairs["score_internal"].to_numpy(float)
    s_ext = pairs["score_external"].to_numpy(float)
    usable = (
        pairs["valid"].to_numpy(bool)
        & valid_int.to_numpy()
        & np.isfinite(s_ext)
        & np.isfinite(s_int)
        & (np.nan_to_num(s_int, nan=0.0) > 0)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(usable, s_ext / np.where(usable, s_int, 1.0), np.nan)
    pairs["usable"] = usable
    pairs["ratio"] = ratio
    pairs["score_internal"] = pairs["score_internal"].where(valid_int)
    columns = [
        "agent",
        "reference",
        "task",
        "internal_task",
        "rep",
        "score_external",
        "score_internal",
        "usable",
        "ratio",
    ]
    return (
        pairs[columns]
        .sort_values(["task", "agent", "rep"], kind="mergesort")
        .reset_index(drop=True)
    )


def _matrix(store: ScoreStore, experiment: str, *, seed: int, n_boot, draws: bool) -> RunDraws:
    runs = selected_runs(store, experiment).reset_index(drop=True)
    replicates = store.replicates if draws else None
    return run_draws(
        runs, replicates, _CELLS, n_boot=n_boot, seed=seed, tag="table5", model_validity=False
    )


def _partners(runs: pd.DataFrame) -> np.ndarray:
    """The internal run (same agent and repetition) of every external run, else -1."""
    external = (runs["validation"] == "external") & runs["internal_counterpart"].notna()
    row_of = {
        (a, t, r): i
        for i, (a, t, r) in enumerate(zip(runs["agent"], runs["task"], runs["rep"], strict=True))
    }
    return np.array(
        [
            row_of.get((a, c, r), -1) if e else -1
            for a, c, r, e in zip(
                runs["agent"], runs["internal_counterpart"], runs["rep"], external, strict=True
            )
        ],
        dtype=np.int64,
    )


def _pair_ratios(matrix: RunDraws, seed: int) -> np.ndarray:
    """Every agent's (external run, internal partner) pair as one unit of the resampler: its ratio
    s_ext / s_int (usable pairs: both valid, s_int > 0) in every column, NaN elsewhere."""
    runs = matrix.units
    partner = _partners(runs)
    has = (partner >= 0) & ~runs["reference"].to_numpy(bool)
    valid = runs["valid"].to_numpy(bool)
    other = np.where(has, partner, 0)

    def ratio(ext: np.ndarray, internal: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(np.nan_to_num(internal) > 0, ext / internal, np.nan)

    score = runs["score"].to_numpy(float)
    usable = has & valid & valid[other]
    observed = np.where(usable, ratio(score, score[other]), np.nan)
    pairs = runs.assign(valid=usable & np.isfinite(observed))
    stored = matrix.stored("score")
    reps = None if stored is None else ratio(stored, stored[other])
    draws = resample(
        pairs, _CELLS, n_boot=matrix.n_boot, seed=seed, tag="table5_pairs", model_validity=False
    )
    return draws.values(observed, reps)


def _table5_rows(matrix: RunDraws, seed: int = 0) -> list[dict]:
    """Table 5's rows with their supporting counts; ``score`` and ``ratio`` in every column."""
    runs = matrix.units
    external = (runs["validation"] == "external") & runs["internal_counterpart"].notna()
    scores = valid_only(matrix.score, matrix.valid)
    ratios = _pair_ratios(matrix, seed)
    rows = []
    for (task, internal_task), group in runs.loc[external].groupby(
        ["task", "internal_counterpart"], sort=True
    ):
        for agent in agent_order(group["agent"]):
            ext_rows = group.index[group["agent"] == agent].to_numpy()
            score = mean_over(scores, ext_rows)
            int_rows = np.flatnonzero(
                (runs["agent"] == agent).to_numpy() & (runs["task"] == internal_task).to_numpy()
            )
            internal = mean_over(scores, int_rows)
            if bool(runs.loc[ext_rows, "reference"].any()):
                # the simple baseline pairs nothing: mean external / mean internal score
                with np.errstate(invalid="ignore", divide="ignore"):
                    ratio = np.where(internal > 0, score / internal, np.nan)
                n_pairs = int(np.isfinite(scores[ext_rows, 0]).sum())
            else:
                ratio = mean_over(ratios, ext_rows)
                n_pairs = int(np.isfinite(ratios[ext_rows, 0]).sum())
            rows.append(
                {
                    "agent": agent,
                    "task": task,
                    "internal_task": internal_task,
                    "score": score,
                    "ratio": ratio,
                    "score_sd": mean_sd(scores[ext_rows, 0])[1],
                    "n_valid": int(np.isfinite(scores[ext_rows, 0]).sum()),
                    "n_pairs": n_pairs,
                    "internal_score": internal[0],
                }
            )
    return rows


def external_ratios_detail(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """Table 5 with its supporting counts.

    Columns: ``agent``, ``task``, ``internal_task``, ``score``, ``ratio`` (as
    :func:`external_ratios`) plus ``score_sd`` (sample SD of the valid external scores),
    ``n_valid`` (valid external runs; the paper marks one-valid-run cells), ``n_pairs`` (usable
    pairs behind an agent's ratio; for the baseline the number of valid external runs) and
    ``internal_score`` (mean valid score on the internal counterpart).

    Baseline ratio: ``mean valid external score / mean valid internal score`` (NaN when either mean
    is undefined or the internal mean is not positive).
    """
    rows = _table5_rows(_matrix(store, experiment, seed=0, n_boot=None, draws=False))
    point = [{**row, "score": row["score"][0], "ratio": row["ratio"][0]} for row in rows]
    return TABLE5_DETAIL.frame([{k: row[k] for k in TABLE5_DETAIL.named} for row in point])


@fill_doc(references=bootstrap_references("Table 5"), **AS_AGENT_SUMMARY)
@parameters_of(agent_summary)
def external_ratios(store, experiment, *, alpha, seed, n_boot) -> pd.DataFrame:
    """Paper Table 5: mean external score and ratio to the internal counterpart, with intervals.

    ``score`` and ``ratio`` follow the module docstring (:func:`external_ratios_detail` has the
    counts); ``score_ci_low/high`` and ``ratio_ci_low/high`` are their 1 - ``alpha`` percentile
    intervals over the B columns of the two-stage bootstrap
    (:func:`~automd_analysis.stats.resample.resample`, validity held fixed): an agent's (external
    run, internal run of the same repetition) pairs are the units redrawn within each task, both
    runs of a pair reading their tasks' test resample b,

    .. math:: ratio_b = \\operatorname{mean}_{usable\\ drawn\\ pairs} s^{(b)}_{ext} / s^{(b)}_{int}

    while the simple baseline's external and internal runs are redrawn separately (its ratio is a
    ratio of means). Empty intervals without replicates.

    {parameters_as_agent_summary}

    Returns
    -------
    DataFrame
        ``agent, task, internal_task, score, ratio, score_ci_low, score_ci_high, ratio_ci_low,
        ratio_ci_high``, sorted by task then agent (baseline last).

    {raises_as_agent_summary}

    See Also
    --------
    external_pairs : the (external, internal) run pairs.
    automd_analysis.stats.rules : the aggregation rules.

    {references}

    {example_store}
    >>> table = external_ratios(example_store_with_replicates())
    >>> table[["agent", "task", "internal_task"]].values.tolist()
    [['a', 'clf_ext', 'clf'], ['b', 'clf_ext', 'clf'], ['baseline', 'clf_ext', 'clf']]
    >>> bool((table["ratio_ci_low"] <= table["ratio_ci_high"]).all())
    True
    """
    alpha = check_alpha(alpha)
    rows = _table5_rows(_matrix(store, experiment, seed=seed, n_boot=n_boot, draws=True), seed)
    bounds = {"score": (0.0, 1.0), "ratio": (0.0, np.inf)}
    rows = summarise(rows, TABLE5.intervals, alpha, bounds=bounds, **TABLE5.best_marks(rows))
    return TABLE5.frame([{k: row[k] for k in TABLE5.named} for row in rows])


# Paper names (the notebooks use the descriptive names above).
table5 = external_ratios
table5_detail = external_ratios_detail
