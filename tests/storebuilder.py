"""Hand-built score stores for the analysis/report tests.

A test lists runs with the few numbers it cares about (validity, normalised score, ECE, ...);
:func:`build_store` fills in every other column of ``docs/score_store.md`` with neutral values and
returns a checked :class:`~automd_analysis.analysis.store.ScoreStore`. :func:`write_store` writes the
tables as Parquet, exactly as ``automd score`` lays them out, for tests that go through
:func:`~automd_analysis.analysis.store.load_store`.

Imported by the test modules as ``import storebuilder`` (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from automd_analysis.analysis.store import ScoreStore
from automd_analysis.schema import RUN_KEY

NAN = math.nan

#: Task metadata used when a run does not override it.
TASKS: dict[str, dict] = {
    "surv_a": {"task_kind": "survival", "metric": "ctd_adj_antolini", "null_score": 0.5},
    "surv_b": {"task_kind": "survival", "metric": "ctd_adj_antolini", "null_score": 0.5},
    "surv_a_ext": {
        "task_kind": "survival",
        "metric": "ctd_adj_antolini",
        "null_score": 0.5,
        "validation": "external",
        "shift": "cohort",
        "internal_counterpart": "surv_a",
    },
    "surv_b_later": {
        "task_kind": "survival",
        "metric": "ctd_adj_antolini",
        "null_score": 0.5,
        "validation": "external",
        "shift": "period",
        "internal_counterpart": "surv_b",
    },
    "clf_a": {"task_kind": "classification", "metric": "auroc", "null_score": 0.5},
    "clf_b": {"task_kind": "classification", "metric": "auroc", "null_score": 0.5},
    "clf_b_ext": {
        "task_kind": "classification",
        "metric": "auroc",
        "null_score": 0.5,
        "validation": "external",
        "shift": "hospital",
        "internal_counterpart": "clf_b",
    },
    "seq_a": {"task_kind": "sequential", "metric": "utility_2019", "null_score": 0.0},
    "seq_a_ext": {
        "task_kind": "sequential",
        "metric": "utility_2019",
        "null_score": 0.0,
        "validation": "external",
        "shift": "hospital",
        "internal_counterpart": "seq_a",
    },
}


def run(
    agent: str,
    task: str,
    rep: int,
    *,
    valid: bool = True,
    score: float = 0.5,
    ece: float = 0.05,
    auroc: float = NAN,
    brier: float = NAN,
    experiment: str = "main",
    llm: str | None = "llm-default",
    reason_code: str | None = None,
    objective: str | None = None,
    tokens: float | None = None,
    reference: bool | None = None,
    annotations: dict | None = None,
    incomplete: bool = False,
    scorable: bool = True,
) -> dict:
    """One run's selected submission (a dict consumed by :func:`build_store`); with
    ``scorable=False`` a run without predictions (``runs.status = "not_scorable"``, no ``scores``
    row)."""
    return {
        "agent": agent,
        "task": task,
        "rep": rep,
        "valid": valid,
        "score": score,
        "ece": ece,
        "auroc": auroc,
        "brier": brier,
        "experiment": experiment,
        "llm": llm,
        "reason_code": reason_code if reason_code or valid else "columns.missing",
        "objective": objective,
        "tokens": tokens,
        "reference": (agent == "baseline") if reference is None else reference,
        "annotations": annotations or {},
        "incomplete": incomplete,
        "scorable": scorable,
    }


def run_id(spec: dict) -> str:
    return f"{spec['experiment']}/{spec['agent']}/{spec['task']}/rep{spec['rep']}"


def _key(spec: dict) -> dict:
    return {
        "run_id": run_id(spec),
        "experiment": spec["experiment"],
        "agent": spec["agent"],
        "llm": spec["llm"],
        "task": spec["task"],
        "rep": spec["rep"],
        "reference": spec["reference"],
    }


def _task_meta(task: str) -> dict:
    meta = {
        "task_kind": "classification",
        "metric": "auroc",
        "null_score": 0.5,
        "validation": "internal",
        "shift": "none",
        "internal_counterpart": None,
    }
    meta.update(TASKS.get(task, {}))
    return meta


def subgroup(
    agent: str,
    task: str,
    rep: int,
    attribute: str,
    group: str,
    score_raw: float,
    *,
    eligible: bool = True,
    n: int = 100,
    experiment: str = "main",
    llm: str | None = "llm-default",
) -> dict:
    """One ``subgroups.parquet`` row."""
    spec = {
        "agent": agent,
        "task": task,
        "rep": rep,
        "experiment": experiment,
        "llm": llm,
        "reference": agent == "baseline",
    }
    return {
        **_key(spec),
        "attribute": attribute,
        "group": group,
        "n": n,
        "n_events": n // 4,
        "score_raw": score_raw,
        "eligible": eligible,
        "reason": None if eligible else "too_small",
    }


def calibration_bin(
    agent: str,
    task: str,
    rep: int,
    bin: int,
    n: int,
    mean_pred: float,
    observed: float,
    *,
    kind: str = "binary",
    quantile: float = NAN,
    time: float = NAN,
    kept: bool = True,
    experiment: str = "main",
    llm: str | None = "llm-default",
) -> dict:
    """One ``calibration_bins.parquet`` row (binary bins get lo/hi from the bin index)."""
    spec = {
        "agent": agent,
        "task": task,
        "rep": rep,
        "experiment": experiment,
        "llm": llm,
        "reference": agent == "baseline",
    }
    binary = kind == "binary"
    return {
        **_key(spec),
        "kind": kind,
        "quantile": quantile,
        "time": time,
        "bin": bin,
        "lo": bin / 10 if binary else NAN,
        "hi": (bin + 1) / 10 if binary else NAN,
        "n": n,
        "mean_pred": mean_pred,
        "observed": observed,
        "kept": kept,
        "weight": NAN,
    }


def frames(
    runs: list[dict],
    *,
    subgroups: list[dict] | None = None,
    calibration_bins: list[dict] | None = None,
) -> dict[str, pd.DataFrame]:
    """The score-store tables (all documented columns) for the given runs."""
    score_rows, run_rows, reason_rows, ann_rows = [], [], [], []
    for spec in runs:
        key = _key(spec)
        meta = _task_meta(spec["task"])
        valid = bool(spec["valid"])
        scorable = spec.get("scorable", True)
        status = ("valid" if valid else "invalid") if scorable else "not_scorable"
        score_rows.append(
            {
                **key,
                "version": "selected",
                "is_selected": True,
                "source_version": "v0001",
                "task_kind": meta["task_kind"],
                "metric": meta["metric"],
                "validation": meta["validation"],
                "shift": meta["shift"],
                "internal_counterpart": meta["internal_counterpart"],
                "shared_test_set": spec["task"],
                "step": pd.NA,
                "parent": None,
                "created_at": pd.NaT,
                "elapsed_min": NAN,
                "reported_val": NAN,
                "valid": valid,
                "reason_code": None if valid else spec["reason_code"],
                "reason_codes": None if valid else spec["reason_code"],
                "reason_message": None if valid else f"failed: {spec['reason_code']}",
                "raw": spec["score"] if valid else NAN,
                "null_score": meta["null_score"],
                "score": spec["score"] if valid else NAN,
                "auroc": spec["auroc"] if valid else NAN,
                "ece": spec["ece"] if valid else NAN,
                "brier": spec["brier"] if valid else NAN,
                "n": 100,
                "n_rows": 100,
                "n_events": 25,
                "submission_sha256": "0" * 64,
                "cache_key": "1" * 64,
                "scorer_version": "0.1.0",
            }
        )
        score_columns = list(score_rows[-1])
        if not scorable:
            score_rows.pop()
        tokens = spec["tokens"]
        run_rows.append(
            {
                **key,
                "search": "linear",
                "objective": spec["objective"],
                "started_at": pd.Timestamp("2026-01-01T00:00:00Z"),
                "ended_at": pd.Timestamp("2026-01-01T06:00:00Z"),
                "run_minutes": 360.0,
                "budget_minutes": 720.0,
                "ended_before_budget": True,
                "tokens_prompt": NAN if tokens is None else tokens * 0.9,
                "tokens_completion": NAN if tokens is None else tokens * 0.1,
                "tokens_total": NAN if tokens is None else float(tokens),
                "tokens_simulated": True,
                "selection_rule": "final",
                "selected_version": "v0001",
                "reported_val_score": NAN,
                "n_versions": 1 if scorable else 0,
                "has_submission": scorable,
                "incomplete": spec.get("incomplete", False),
                "status": status,
                "task_kind": meta["task_kind"],
                "metric": meta["metric"],
                "validation": meta["validation"],
                "shift": meta["shift"],
                "internal_counterpart": meta["internal_counterpart"],
                "shared_test_set": spec["task"],
                "n_steps": 1,
                "n_steps_ok": 1,
            }
        )
        if not valid and scorable:
            reason_rows.append(
                {
                    **key,
                    "version": "selected",
                    "code": spec["reason_code"],
                    "message": f"failed: {spec['reason_code']}",
                    "examples": "[]",
                }
            )
        for field_name, value in spec["annotations"].items():
            values = value if isinstance(value, list) else [value]
            for item in values:
                ann_rows.append(
                    {
                        **key,
                        "field": field_name,
                        "value": item,
                        "affected_weight": NAN,
                        "evidence": "",
                    }
                )
    key_cols = list(RUN_KEY)

    def table(rows: list[dict], extra: list[str]) -> pd.DataFrame:
        frame = pd.DataFrame(rows, columns=key_cols + extra)
        return frame.astype({"rep": "int64", "reference": bool}) if len(frame) else frame

    return {
        "scores": pd.DataFrame(score_rows, columns=score_columns if runs else None),
        "runs": pd.DataFrame(run_rows),
        "reasons": table(reason_rows, ["version", "code", "message", "examples"]),
        "annotations": table(ann_rows, ["field", "value", "affected_weight", "evidence"]),
        "pairs": table([], ["earlier", "later", "change", "affects_predictions"]),
        "subgroups": table(
            subgroups or [],
            ["attribute", "group", "n", "n_events", "score_raw", "eligible", "reason"],
        ),
        "calibration_bins": table(
            calibration_bins or [],
            [
                "kind",
                "quantile",
                "time",
                "bin",
                "lo",
                "hi",
                "n",
                "mean_pred",
                "observed",
                "kept",
                "weight",
            ],
        ),
    }


def build_store(runs: list[dict], **kwargs) -> ScoreStore:
    """A checked in-memory store for ``runs`` (see :func:`frames` for the keyword arguments)."""
    return ScoreStore.from_frames(**frames(runs, **kwargs))


def code_frames(code: dict[str, dict[str, str]], keys: pd.DataFrame) -> tuple[pd.DataFrame, ...]:
    """``code`` and ``code_texts`` tables for ``{run_id: {version: text}}`` (``keys``: the run key
    columns indexed by ``run_id``), as the scorer publishes them."""
    import hashlib

    rows, texts = [], {}
    for run_id, versions in code.items():
        for version, text in versions.items():
            sha = hashlib.sha256(text.encode()).hexdigest()
            texts[sha] = text
            rows.append({**keys.loc[run_id].to_dict(), "run_id": run_id, "version": version,
                         "n_files": 1, "code_sha256": sha})  # fmt: skip
    code_table = pd.DataFrame(rows, columns=[*RUN_KEY, "version", "n_files", "code_sha256"])
    text_table = pd.DataFrame(
        {"code_sha256": list(texts), "text": list(texts.values())}, columns=["code_sha256", "text"]
    )
    return code_table, text_table


def loose_store(
    scores: pd.DataFrame,
    runs: pd.DataFrame | None = None,
    *,
    code: dict[str, dict[str, str]] | None = None,
    **tables: pd.DataFrame | None,
) -> ScoreStore:
    """A checked store from the few columns a test sets: the other columns the loader requires
    are added as nulls, run-key columns of the other tables are looked up in ``scores`` by
    ``run_id`` (placeholders for run ids it does not have), ``runs`` defaults to the run keys of
    ``scores`` and ``code`` gives each version's code text (:func:`code_frames`)."""
    import numpy as np
    import pyarrow as pa

    from automd_analysis.schema import REQUIRED_COLUMNS, SCHEMAS, key_columns

    keys = scores.drop_duplicates("run_id")[list(RUN_KEY)].set_index("run_id")
    frames = {"scores": scores, "runs": keys.reset_index() if runs is None else runs, **tables}
    if code is not None:
        frames["code"], frames["code_texts"] = code_frames(code, keys)
    placeholder = {"experiment": "main", "agent": "x", "llm": None, "task": "t", "rep": 0,
                   "reference": False}  # fmt: skip
    out = {}
    for name, frame in frames.items():
        if frame is None:
            out[name] = None
            continue
        frame = frame.copy()
        if key_columns(name) == RUN_KEY:
            for column in RUN_KEY[1:]:
                if column not in frame:
                    known = frame["run_id"].map(keys[column])
                    frame[column] = known.where(known.notna(), placeholder[column])
        for column in REQUIRED_COLUMNS[name]:
            if column not in frame:
                numeric = pa.types.is_floating(SCHEMAS[name].field(column).type)
                frame[column] = np.nan if numeric else None
        out[name] = frame
    return ScoreStore.from_frames(**out)


def write_store(runs: list[dict], directory: str | Path, **kwargs) -> Path:
    """Write the store's Parquet tables + ``store.json`` into ``directory``; return it."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in frames(runs, **kwargs).items():
        frame.to_parquet(out / f"{name}.parquet", index=False)
    (out / "store.json").write_text(
        json.dumps({"schema_version": 1, "scorer_version": "0.1.0", "archive": "hand-built"})
    )
    return out


_PRACTICE_ANSWERS = {
    "averaged_ranks": {
        "averaged_ranks_as_probabilities": "yes",
        "class_imbalance_handling": "none",
        "recalibration_after_imbalance": "na",
        "probability_calibration": "no",
    },
    "imbalance": {
        "averaged_ranks_as_probabilities": "no",
        "class_imbalance_handling": "class_weight",
        "recalibration_after_imbalance": "no",
        "probability_calibration": "no",
    },
    "recalibrated": {
        "averaged_ranks_as_probabilities": "no",
        "class_imbalance_handling": "oversampling",
        "recalibration_after_imbalance": "yes",
        "probability_calibration": "yes",
    },
    "plain": {
        "averaged_ranks_as_probabilities": "no",
        "class_imbalance_handling": "none",
        "recalibration_after_imbalance": "na",
        "probability_calibration": "no",
    },
}


def complete_runs(seed: int = 0, agents=("aide", "codex", "scientist")) -> dict:
    """A small store exercising every analysis: main (agents x every task of TASKS x 3 reps + baseline x 5),
    objectives (B, C on ``clf_a``), llm (one agent, two more LLMs), subgroups and bins.

    Values are drawn from a seeded generator; returns ``{"runs", "subgroups", "calibration_bins"}``
    for :func:`build_store` / :func:`write_store`.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    tasks = sorted(TASKS)
    runs, subs, bins = [], [], []

    def practice_for(task: str, rep: int, agent: str) -> dict:
        kind = _task_meta(task)["task_kind"]
        if kind == "survival":
            answers = dict(_PRACTICE_ANSWERS["plain"], class_imbalance_handling="na")
            answers["censoring_handling"] = "censored_as_death" if rep == 2 else "correct"
        else:
            name = ("averaged_ranks", "imbalance", "recalibrated", "plain")[
                (rep + len(agent) + len(task)) % 4
            ]
            answers = dict(_PRACTICE_ANSWERS[name])
        answers["subgroup_checks"] = "yes" if (rep == 0 and agent == agents[0]) else "no"
        answers["missingness_features"] = "yes" if kind != "survival" else "na"
        answers["model_families"] = ["gbdt", "linear"] if rep % 2 else ["gbdt"]
        return answers

    def add_subgroups(agent: str, task: str, rep: int, experiment: str = "main") -> None:
        if _task_meta(task)["task_kind"] == "sequential":
            return
        base = float(rng.uniform(0.6, 0.8))
        for i, group in enumerate(("age T1 [18, 50)", "age T2 [50, 70)", "age T3 [70, 99]")):
            subs.append(
                subgroup(
                    agent,
                    task,
                    rep,
                    "age",
                    group,
                    base - 0.03 * i + rng.normal(0, 0.005),
                    experiment=experiment,
                )
            )
        for group in ("female", "male"):
            subs.append(
                subgroup(
                    agent,
                    task,
                    rep,
                    "sex",
                    group,
                    base + rng.normal(0, 0.02),
                    experiment=experiment,
                )
            )

    def add_bins(agent: str, task: str, rep: int) -> None:
        if _task_meta(task)["task_kind"] == "survival":
            for q in (0.25, 0.5, 0.75):
                for b in range(10):
                    pred = 0.95 - 0.08 * b
                    bins.append(
                        calibration_bin(
                            agent,
                            task,
                            rep,
                            b,
                            20,
                            pred,
                            pred - rng.uniform(0, 0.1),
                            kind="survival",
                            quantile=q,
                            time=100 * q,
                        )
                    )
        else:
            for b in range(10):
                n = int(rng.integers(0, 40))
                pred = (b + 0.5) / 10 if n else NAN
                obs = float(np.clip(pred - 0.05, 0, 1)) if n else NAN
                bins.append(calibration_bin(agent, task, rep, b, n, pred, obs))

    for agent in agents:
        for task in tasks:
            for rep in range(3):
                valid = not (agent == agents[-1] and rep == 1 and task.startswith("s"))
                score = float(np.clip(rng.normal(0.5, 0.1), 0, 1))
                runs.append(
                    run(
                        agent,
                        task,
                        rep,
                        valid=valid,
                        score=score,
                        ece=float(rng.uniform(0.01, 0.3)),
                        auroc=0.5 + score / 2,
                        brier=float(rng.uniform(0.05, 0.2)),
                        tokens=float(rng.integers(1e5, 5e6)),
                        reason_code=None if valid else "rows.missing",
                        annotations=practice_for(task, rep, agent),
                    )
                )
                if valid:
                    add_subgroups(agent, task, rep)
                    add_bins(agent, task, rep)
    for task in tasks:
        for rep in range(5):
            score = float(np.clip(rng.normal(0.48, 0.05), 0, 1))
            runs.append(
                run(
                    "baseline",
                    task,
                    rep,
                    score=score,
                    ece=float(rng.uniform(0.005, 0.04)),
                    auroc=0.5 + score / 2,
                    brier=float(rng.uniform(0.05, 0.2)),
                )
            )
            add_subgroups("baseline", task, rep)
            add_bins("baseline", task, rep)
    # B and C share the experiment and the task, so their repetitions are numbered 0-2 and 3-5.
    for offset, objective in ((0, "brier"), (3, "auroc+ece")):
        name = "recalibrated"
        for agent in agents:
            for rep in range(offset, offset + 3):
                runs.append(
                    run(
                        agent,
                        "clf_a",
                        rep,
                        experiment="objectives",
                        objective=objective,
                        score=float(rng.uniform(0.3, 0.4)),
                        ece=float(rng.uniform(0.005, 0.05)),
                        auroc=float(rng.uniform(0.65, 0.7)),
                        brier=float(rng.uniform(0.08, 0.1)),
                        annotations=_PRACTICE_ANSWERS[name],
                    )
                )
    # The run path has no LLM level: two LLMs of one agent use repetitions 0-2 and 3-5.
    for offset, llm_name in ((0, "llm-two"), (3, "llm-three")):
        for task in tasks:
            for rep in range(offset, offset + 3):
                runs.append(
                    run(
                        agents[1],
                        task,
                        rep,
                        experiment="llm",
                        llm=llm_name,
                        score=float(rng.uniform(0.4, 0.6)),
                        ece=float(rng.uniform(0.01, 0.1)),
                        tokens=float(rng.integers(1e5, 5e6)),
                    )
                )
    return {"runs": runs, "subgroups": subs, "calibration_bins": bins}
