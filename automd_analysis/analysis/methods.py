"""Modelling methods of valid runs (paper Table 6) and censoring errors (paper Table 17).

Both take the score store and read its flattened code annotations (``annotations.parquet``: run
key + ``field``, ``value`` with one row per list element, ``affected_weight``, ``evidence``) and
the selected rows of ``scores.parquet`` (validity, task kind, normalised score). Codebook:
``docs/archive.md``.

- :func:`method_prevalence` - for each agent, the percentage of its valid, annotated runs whose selected
  submission uses each model family, ensembling scheme, validation design and explicit probability
  calibration; categories overlap (a run can use several model families). Percentages are computed
  per repetition (over the agent's runs with that rep index, across tasks) and reported as mean and
  sample SD over repetitions (paper: "mean +- SD over three repetitions"), plus the pooled
  percentage over all reps.
- :func:`censoring_errors` / :func:`censoring_summary` - valid survival submissions whose code mishandles
  censoring (censored patients treated as deaths or as known survivors, wrong IPCW weights), with
  the ensemble weight of the affected members, and whether the run still beats the task's simple
  baseline (paper section 4.5: all such runs did).

A valid run without any annotation row cannot be classified; it is left out of the denominators and
counted in ``n_unannotated``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from automd_analysis.analysis.catalog.methods_and_development import (
    TABLE6,
    TABLE6_WIDE,
    TABLE17,
    TABLE17_SUMMARY,
)
from automd_analysis.analysis.development import filter_runs
from automd_analysis.analysis.store import ScoreStore
from automd_analysis.precision import sample_sd
from automd_analysis.schema import RUN_KEY
from automd_analysis.version_pairs import as_bool, require_columns

__all__ = [
    "CENSORING_ERRORS",
    "TABLE6_CATEGORIES",
    "censoring_errors",
    "censoring_summary",
    "method_prevalence",
    "method_prevalence_wide",
    "table17",
    "table17_summary",
    "table6",
    "valid_selected_runs",
]

#: Table 6 rows: codebook field -> categories (display order). ``probability_calibration`` counts
#: only the answer "yes" (an explicit calibration step in the submitted pipeline).
TABLE6_CATEGORIES: Mapping[str, tuple[str, ...]] = {
    "model_families": (
        "gbdt",
        "random_forest",
        "linear",
        "neural_net",
        "cox",
        "parametric_survival",
        "knn",
        "other",
    ),
    "ensembling": ("single_model", "seed_fold_average", "model_blend", "stacking"),
    "validation_design": ("single_holdout", "kfold_cv", "repeated_cv", "group_split", "none"),
    "probability_calibration": ("yes",),
}

#: ``censoring_handling`` answers that are errors, with their display labels.
CENSORING_ERRORS: Mapping[str, str] = {
    "censored_as_death": "censored patients treated as deaths",
    "censored_as_survivor": "censored patients treated as known survivors",
    "wrong_ipcw": "incorrect censoring weights (IPCW)",
}


def valid_selected_runs(
    store: ScoreStore, *, experiment: str | None = "main", include_reference: bool = False
) -> pd.DataFrame:
    """Selected rows of valid runs: run key + ``task_kind`` and ``score`` (one row per run)."""
    scores = store.scores
    require_columns(scores, (*RUN_KEY, "is_selected", "valid", "task_kind", "score"),
                    "scores.parquet")  # fmt: skip
    sel = scores[as_bool(scores["is_selected"])]
    sel = filter_runs(sel, experiment, include_reference)
    sel = sel[as_bool(sel["valid"])]
    return sel[[*RUN_KEY, "task_kind", "score"]].drop_duplicates("run_id").sort_values("run_id")


def _annotation_values(annotations: pd.DataFrame) -> pd.DataFrame:
    require_columns(annotations, ("run_id", "field", "value"), "annotations.parquet")
    out = annotations[["run_id", "field", "value"]].copy()
    out["value"] = out["value"].astype("string")
    return out.dropna(subset=["value"])


def method_prevalence(
    store: ScoreStore,
    *,
    experiment: str | None = "main",
    include_reference: bool = False,
) -> pd.DataFrame:
    """Modelling methods in valid runs, per agent (paper Table 6).

    For agent a, repetition k, field f and category c::

        pct(a, k, f, c) = 100 * #{valid annotated runs of a with rep k whose f includes c}
                              / #{valid annotated runs of a with rep k}

    reported as ``pct_mean`` and ``pct_sd`` (sample SD, ddof=1; NaN with one rep) over the reps
    that have at least one valid annotated run, and ``pct_pooled`` over all the agent's valid
    annotated runs. A run counts once per category (categories overlap across a list field).

    Parameters
    ----------
    store : ScoreStore
        Reads ``annotations`` and ``scores`` (selected rows give validity).
    experiment : str or None
        Experiment id (default ``"main"``; ``None`` = all).
    include_reference : bool
        Include the simple-baseline runs (default: no).

    Returns
    -------
    DataFrame
        ``field, category, agent, pct_mean, pct_sd, n_reps, pct_pooled, n_runs_with,
        n_valid_runs, n_unannotated`` - one row per (field, category, agent), every category of
        :data:`TABLE6_CATEGORIES` (0 % rows included) plus any other recorded value, in display
        order.
    """
    valid = valid_selected_runs(store, experiment=experiment, include_reference=include_reference)
    values = _annotation_values(store.annotations)
    annotated_ids = set(values["run_id"])
    valid = valid.assign(annotated=valid["run_id"].isin(annotated_ids))
    runs = valid[valid["annotated"]]
    values = values[values["run_id"].isin(runs["run_id"])]
    rows = []
    for field, categories in TABLE6_CATEGORIES.items():
        fv = values[values["field"] == field].drop_duplicates()
        extra = (
            sorted(set(fv["value"]) - set(categories)) if field != "probability_calibration" else []
        )
        for category in (*categories, *extra):
            having = set(fv.loc[fv["value"] == category, "run_id"])
            for agent, g in valid.groupby("agent", sort=True):
                ga = g[g["annotated"]]
                has = ga["run_id"].isin(having)
                per_rep = has.groupby(ga["rep"]).mean() * 100.0
                n_reps = int(per_rep.size)
                rows.append(
                    {
                        "field": field,
                        "category": category,
                        "agent": agent,
                        "pct_mean": float(per_rep.mean()) if n_reps else float("nan"),
                        "pct_sd": sample_sd(per_rep) if n_reps > 1 else float("nan"),
                        "n_reps": n_reps,
                        "pct_pooled": 100.0 * float(has.mean()) if len(ga) else float("nan"),
                        "n_runs_with": int(has.sum()),
                        "n_valid_runs": len(ga),
                        "n_unannotated": int((~g["annotated"]).sum()),
                    }
                )
    return TABLE6.frame(pd.DataFrame(rows, columns=TABLE6.named))


def method_prevalence_wide(table6: pd.DataFrame, *, keep_empty: bool = False) -> pd.DataFrame:
    """Paper Table 6 layout: one row per (field, category), per agent ``<agent>`` = mean % over
    repetitions and ``<agent>_sd`` = its sample SD.

    Parameters
    ----------
    table6 : DataFrame
        :func:`method_prevalence`.
    keep_empty : bool
        Keep categories no agent uses (default: drop them, as the paper's table does; the long
        table keeps every category).

    Returns
    -------
    DataFrame
        ``field, category, <agent>, <agent>_sd, ...`` in the long table's row order, agents
        alphabetically.
    """
    agents = sorted({str(a) for a in table6["agent"]})
    rows = []
    for (field, category), group in table6.groupby(["field", "category"], sort=False):
        pooled = pd.to_numeric(group["pct_pooled"], errors="coerce")
        if not keep_empty and not (pooled > 0).any():
            continue
        row = {"field": field, "category": category}
        by_agent = group.set_index(group["agent"].astype(str))
        for agent in agents:
            known = agent in by_agent.index
            row[agent] = float(by_agent.at[agent, "pct_mean"]) if known else None
            row[f"{agent}_sd"] = float(by_agent.at[agent, "pct_sd"]) if known else None
        rows.append(row)
    columns = ["field", "category", *[c for a in agents for c in (a, f"{a}_sd")]]
    return TABLE6_WIDE.frame(pd.DataFrame(rows, columns=columns))


def _baseline_scores(store: ScoreStore, experiment: str | None) -> pd.Series:
    """Mean normalised score of the simple-baseline runs per task (valid selected rows)."""
    base = valid_selected_runs(store, experiment=experiment, include_reference=True)
    base = base[as_bool(base["reference"])]
    return pd.to_numeric(base["score"], errors="coerce").groupby(base["task"]).mean()


def censoring_errors(
    store: ScoreStore,
    *,
    experiment: str | None = "main",
) -> pd.DataFrame:
    """Censoring errors in valid survival submissions (paper Table 17), one row per affected run.

    A valid run on a survival task (``task_kind == "survival"``) is affected when its
    ``censoring_handling`` answer is one of :data:`CENSORING_ERRORS`. ``affected_weight`` is the
    annotated share of the submitted ensemble that the error touches (1 for a single model);
    ``label`` renders it the paper's way, ``"censored_as_death (0.50)"``. ``baseline_score`` is the
    mean normalised score of the task's simple-baseline runs and ``exceeds_baseline`` compares the
    run's normalised score with it (``<NA>`` without a baseline).

    Returns
    -------
    DataFrame
        ``run_id, agent, task, rep, error, description, affected_weight, label, score,
        baseline_score, exceeds_baseline`` sorted by agent, task, rep.
    """
    annotations = store.annotations
    require_columns(annotations, ("run_id", "field", "value", "affected_weight"),
                    "annotations.parquet")  # fmt: skip
    valid = valid_selected_runs(store, experiment=experiment)
    survival = valid[valid["task_kind"].astype(str) == "survival"]
    ann = annotations[annotations["field"] == "censoring_handling"]
    ann = ann[ann["run_id"].isin(survival["run_id"])]
    ann = ann[ann["value"].astype(str).isin(list(CENSORING_ERRORS))]
    merged = survival.merge(
        ann[["run_id", "value", "affected_weight"]].drop_duplicates("run_id"), on="run_id"
    )
    baseline = _baseline_scores(store, experiment)
    weight = pd.to_numeric(merged["affected_weight"], errors="coerce")
    score = pd.to_numeric(merged["score"], errors="coerce")
    base = merged["task"].map(baseline).astype(float)
    exceeds = pd.array(score > base, dtype="boolean")
    exceeds[base.isna().to_numpy()] = pd.NA
    out = pd.DataFrame(
        {
            "run_id": merged["run_id"],
            "agent": merged["agent"],
            "task": merged["task"],
            "rep": merged["rep"],
            "error": merged["value"].astype(str),
            "description": merged["value"].astype(str).map(CENSORING_ERRORS),
            "affected_weight": weight,
            "label": [
                f"{v} ({w:.2f})" if np.isfinite(w) else str(v)
                for v, w in zip(merged["value"].astype(str), weight, strict=True)
            ],
            "score": score,
            "baseline_score": base,
            "exceeds_baseline": exceeds,
        }
    )
    return TABLE17.frame(out.sort_values(["agent", "task", "rep"]).reset_index(drop=True))


def censoring_summary(
    store: ScoreStore,
    *,
    experiment: str | None = "main",
) -> pd.DataFrame:
    """Per agent: valid survival runs, runs with a censoring error, counts per error type.

    Returns
    -------
    DataFrame
        ``agent, n_valid_survival, n_with_error, <one column per error type>,
        n_exceeding_baseline``; a final ``"all"`` row pools the agents.
    """
    valid = valid_selected_runs(store, experiment=experiment)
    survival = valid[valid["task_kind"].astype(str) == "survival"]
    detail = censoring_errors(store, experiment=experiment)
    rows = []
    groups = [(a, g) for a, g in survival.groupby("agent", sort=True)] + [("all", survival)]
    for agent, g in groups:
        d = detail if agent == "all" else detail[detail["agent"] == agent]
        row = {"agent": agent, "n_valid_survival": len(g), "n_with_error": len(d)}
        for error in CENSORING_ERRORS:
            row[error] = int((d["error"] == error).sum())
        row["n_exceeding_baseline"] = int(d["exceeds_baseline"].fillna(False).sum())
        rows.append(row)
    return TABLE17_SUMMARY.frame(pd.DataFrame(rows, columns=TABLE17_SUMMARY.named))


# Paper names (the notebooks use the descriptive names above).
table6 = method_prevalence
table17 = censoring_errors
table17_summary = censoring_summary
