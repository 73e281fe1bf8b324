"""Tiny deterministic score stores for the docstring examples (not used by any analysis): one with
bootstrap replicates, for the tables with intervals, and three plain runs (:func:`three_run_store`).

Two agents (``a``, ``b``) and the simple baseline, three repetitions each (baseline: two), on a
classification task ``clf``, its external validation ``clf_ext`` and a survival task ``surv``;
agent ``b``'s repetition 2 on ``surv`` is invalid. The main experiment plus an ``llm`` experiment
in which agent ``a`` ran with a second LLM. Every valid run has 40 replicates: its score and ECE
plus deterministic noise shared by all runs on the task (the same test resample moves every run on
it the same way, as real shared resamples do).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from automd_analysis.analysis.store import ScoreStore

__all__ = ["example_store", "example_store_with_replicates", "three_run_store"]

_TASKS = {
    "clf": ("classification", "internal", None),
    "clf_ext": ("classification", "external", "clf"),
    "surv": ("survival", "internal", None),
}


def example_store() -> tuple[ScoreStore, pd.DataFrame]:
    """(store, replicates) of the module docstring."""
    rng = np.random.default_rng(20)
    task_noise = {t: rng.normal(0.0, 0.02, 40) for t in _TASKS}
    level = {"a": 0.62, "b": 0.55, "baseline": 0.50}
    scores, runs, reps = [], [], []
    plan = [("main", "a", "llm-1"), ("main", "b", "llm-1"), ("main", "baseline", None)]
    plan.append(("llm", "a", "llm-2"))
    for experiment, agent, llm in plan:
        for task, (kind, validation, counterpart) in _TASKS.items():
            for rep in range(2 if agent == "baseline" else 3):
                run_id = f"{experiment}/{agent}/{task}/rep{rep}"
                valid = not (agent == "b" and task == "surv" and rep == 2)
                base = level[agent] - (0.05 if validation == "external" else 0.0)
                base += 0.03 if llm == "llm-2" else 0.0
                score = float(np.clip(base + rng.normal(0, 0.03), 0, 1))
                ece = float(np.clip(0.08 - base / 10 + rng.normal(0, 0.01), 0, 1))
                key = {
                    "run_id": run_id,
                    "experiment": experiment,
                    "agent": agent,
                    "llm": llm,
                    "task": task,
                    "rep": rep,
                    "reference": agent == "baseline",
                }
                scores.append(
                    key
                    | {
                        "version": "selected",
                        "is_selected": True,
                        "task_kind": kind,
                        "validation": validation,
                        "shift": "hospital" if validation == "external" else "none",
                        "internal_counterpart": counterpart,
                        "valid": valid,
                        "reason_code": None if valid else "rows.missing",
                        "raw": score if valid else np.nan,
                        "score": score if valid else np.nan,
                        "auroc": np.nan,
                        "ece": ece if valid else np.nan,
                        "brier": np.nan,
                    }
                )
                runs.append(key | {"objective": None, "tokens_total": 1e6})
                if valid:
                    noise = task_noise[task] + rng.normal(0, 0.005, 40)
                    reps.append(
                        pd.DataFrame(
                            {
                                "run_id": run_id,
                                "replicate": np.arange(40),
                                "score": np.clip(score + noise, 0, 1),
                                "ece": np.clip(ece + noise / 4, 0, 1),
                            }
                        )
                    )
    store = ScoreStore.from_frames(scores=pd.DataFrame(scores), runs=pd.DataFrame(runs))
    return store, pd.concat(reps, ignore_index=True)


def example_store_with_replicates() -> ScoreStore:
    """The store of :func:`example_store` with its replicates attached (``store.replicates``)."""
    store, replicates = example_store()
    return ScoreStore.from_frames(scores=store.scores, runs=store.runs, replicates=replicates)


def three_run_store(annotation_comparison: pd.DataFrame | None = None, **run_columns) -> ScoreStore:
    """A store of three valid runs of agent ``a`` on a classification task ``t``, its runs table
    with ``run_columns`` added."""
    key = {"experiment": "main", "agent": "a", "llm": None, "task": "t", "reference": False}
    scores = pd.DataFrame(
        [
            key
            | {
                "run_id": f"main/a/t/rep{i}",
                "rep": i,
                "version": "v",
                "is_selected": True,
                "task_kind": "classification",
                "validation": "internal",
                "shift": "none",
                "internal_counterpart": None,
                "valid": True,
                "reason_code": None,
                "raw": 0.7,
                "score": 0.4,
                "auroc": 0.7,
                "ece": 0.1,
                "brier": 0.2,
            }
            for i in range(3)
        ]
    )
    columns = ["run_id", "experiment", "agent", "llm", "task", "rep", "reference"]
    runs = scores[columns].assign(objective=None, tokens_total=None, **run_columns)
    return ScoreStore.from_frames(
        scores=scores, runs=runs, annotation_comparison=annotation_comparison
    )
