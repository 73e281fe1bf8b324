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

import math

import numpy as np
import pandas as pd

from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    ScoreStore,
    agent_order,
    mean_sd,
    selected_runs,
)

__all__ = [
    "TABLE5_COLUMNS",
    "external_pairs",
    "external_ratios",
    "external_ratios_detail",
    "table5",
    "table5_detail",
]

TABLE5_COLUMNS: tuple[str, ...] = ("agent", "task", "internal_task", "score", "ratio")


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


def external_ratios_detail(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """Table 5 with its supporting counts.

    Columns: :data:`TABLE5_COLUMNS` plus ``score_sd`` (sample SD of the valid external scores),
    ``n_valid`` (valid external runs; the paper marks one-valid-run cells), ``n_pairs`` (usable
    pairs behind an agent's ratio; for the baseline the number of valid external runs) and
    ``internal_score`` (mean valid score on the internal counterpart).

    Baseline ratio: ``mean valid external score / mean valid internal score`` (NaN when either mean
    is undefined or the internal mean is not positive).
    """
    pairs = external_pairs(store, experiment)
    runs = selected_runs(store, experiment)
    rows = []
    for (task, internal_task), per_task in pairs.groupby(["task", "internal_task"], sort=True):
        for agent in agent_order(per_task["agent"]):
            mine = per_task.loc[per_task["agent"] == agent]
            score, score_sd = mean_sd(mine["score_external"])
            n_valid = int(mine["score_external"].notna().sum())
            internal = runs.loc[
                (runs["agent"] == agent) & (runs["task"] == internal_task) & runs["valid"], "score"
            ]
            internal_score = mean_sd(internal)[0]
            if bool(mine["reference"].any()):
                ok = np.isfinite(score) and np.isfinite(internal_score) and internal_score > 0
                ratio = score / internal_score if ok else math.nan
                n_pairs = n_valid
            else:
                ratio = mean_sd(mine.loc[mine["usable"], "ratio"])[0]
                n_pairs = int(mine["usable"].sum())
            rows.append(
                (
                    agent,
                    task,
                    internal_task,
                    score,
                    ratio,
                    score_sd,
                    n_valid,
                    n_pairs,
                    internal_score,
                )
            )
    columns = [*TABLE5_COLUMNS, "score_sd", "n_valid", "n_pairs", "internal_score"]
    out = pd.DataFrame(rows, columns=columns)
    return out.astype({"n_valid": "int64", "n_pairs": "int64"})


def external_ratios(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """Paper Table 5: mean external score and ratio to the internal counterpart.

    See the module docstring for the rules and :func:`external_ratios_detail` for the counts.

    Returns
    -------
    DataFrame with columns :data:`TABLE5_COLUMNS` (``agent``, ``task``, ``internal_task``,
    ``score``, ``ratio``), sorted by task then agent (baseline last).
    """
    return external_ratios_detail(store, experiment)[list(TABLE5_COLUMNS)]


# Paper names (the notebooks use the descriptive names above).
table5 = external_ratios
table5_detail = external_ratios_detail
