"""Tiny SYNTHETIC tasks of every format, for fast smoke tests of the harness and the baselines.

:func:`make_toy_tasks` writes, under a directory, a data root (``tasks/<id>/`` public files and
``labels/<id>/`` hidden labels, the demo layout) and a manifest directory (``origin: fixture``,
sha256 pinned), for five tasks: survival (C^td), classification (AUROC), classification with a
binary label (min(Se, PPV)), and an internal and an external ("local labels") two-hospital hourly
task. Sizes are a few hundred units so an agent run takes seconds. Nothing here is patient data.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

TOY_TASKS = ("toy_survival", "toy_auroc", "toy_label", "toy_hourly", "toy_hourly_local")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _csv(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False, lineterminator="\n", float_format="%.6g")


def _tabular(rng: np.random.Generator, n: int) -> pd.DataFrame:
    age = rng.normal(62, 12, n).round(1)
    x = rng.normal(size=(n, 3))
    frame = pd.DataFrame(
        {
            "age": age,
            "sex": rng.choice(["female", "male"], n),
            "lab_a": (x[:, 0] * 2 + 10).round(3),
            "lab_b": np.exp(x[:, 1]).round(3),
            "score": x[:, 2].round(3),
            "ward": rng.choice(["icu", "med", "surg"], n, p=[0.3, 0.5, 0.2]),
        }
    )
    frame.loc[rng.random(n) < 0.15, "lab_a"] = np.nan
    return frame


def _risk(frame: pd.DataFrame) -> np.ndarray:
    lab_a = frame["lab_a"].fillna(10.0)
    return (
        0.04 * (frame["age"] - 62)
        + 0.5 * (lab_a - 10) / 2
        + 0.6 * frame["score"]
        + 0.4 * (frame["ward"] == "icu")
    ).to_numpy()


def _grid(durations: np.ndarray, events: np.ndarray) -> np.ndarray:
    times = durations[events == 1]
    q = np.unique(np.quantile(times, np.linspace(0, 1, 100)).round(4))
    return np.unique(np.concatenate([[0.0], q]))


def _hourly(rng: np.random.Generator, n: int, hospital: str, start: int) -> pd.DataFrame:
    rows = []
    for i in range(n):
        pid = f"{hospital.lower()}{start + i:04d}"
        hours = int(rng.integers(10, 30))
        septic = rng.random() < (0.25 if hospital == "A" else 0.18)
        onset = int(rng.integers(8, hours + 4)) if septic else None
        age = float(rng.normal(60 if hospital == "A" else 52, 12))
        base_hr = rng.normal(85, 8) + (3 if hospital == "B" else 0)
        for h in range(1, hours + 1):
            drift = 0.0 if onset is None else max(0.0, 1 - (onset - h) / 8.0)
            hr = base_hr + 25 * drift + rng.normal(0, 4)
            mapv = 80 - 15 * drift + rng.normal(0, 4)
            temp = 37 + 1.2 * drift + rng.normal(0, 0.3)
            lact = 1.5 + 3 * drift + rng.normal(0, 0.4)
            rows.append(
                {
                    "patient_id": pid,
                    "ICULOS": h,
                    "hospital": hospital,
                    "HR": round(hr, 1) if rng.random() < 0.9 else np.nan,
                    "MAP": round(mapv, 1) if rng.random() < 0.85 else np.nan,
                    "Temp": round(temp, 2) if rng.random() < 0.4 else np.nan,
                    "Lactate": round(lact, 2) if rng.random() < 0.15 else np.nan,
                    "Age": round(age, 1),
                    "SepsisLabel": int(onset is not None and h >= onset - 6),
                }
            )
    return pd.DataFrame(rows)


def _manifest(task_id: str, kind: str, metric: str, files: dict, **extra) -> dict:
    doc = {
        "id": task_id,
        "title": f"Toy {kind} task ({task_id}, synthetic)",
        "origin": "fixture",
        "kind": kind,
        "outcome": "synthetic outcome",
        "validation": "internal",
        "shift": "none",
        "internal_counterpart": None,
        "shared_test_set": task_id,
        "metric": metric,
        "null_score": 0.5 if metric in ("auroc", "ctd_adj_antolini") else 0.0,
        "synthetic": True,
        "files": files,
        "source": {
            "name": "toy generator",
            "citation": "automd_demo.harness.toy",
            "access": "synthetic",
        },  # fmt: skip
        "subgroups": {},
    }
    doc.update(extra)
    return doc


def _files(root: Path, task_id: str, public: dict[str, str]) -> dict:
    out = {}
    for key, name in public.items():
        path = root / "tasks" / task_id / name
        out[key] = {"path": f"tasks/{task_id}/{name}", "role": "public", "sha256": _sha(path)}
    lab = root / "labels" / task_id / "test_labels.csv"
    out["labels"] = {"path": f"labels/{task_id}/test_labels.csv", "role": "hidden",
                     "sha256": _sha(lab)}  # fmt: skip
    return out


def make_toy_tasks(directory: str | Path, seed: int = 7) -> tuple[Path, Path]:
    """Write the toy tasks; return ``(data_root, manifest_dir)``."""
    directory = Path(directory)
    root, man = directory / "data", directory / "manifests"
    man.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    manifests = {}

    # survival
    n_tr, n_te = 360, 120
    frame = _tabular(rng, n_tr + n_te)
    t_event = rng.exponential(20 * np.exp(-_risk(frame)))
    t_cens = rng.uniform(5, 60, len(frame))
    frame["duration"] = np.minimum(t_event, t_cens).round(3) + 0.001
    frame["event"] = (t_event <= t_cens).astype(int)
    frame.insert(0, "patient_id", [f"s{i:04d}" for i in range(len(frame))])
    tid = "toy_survival"
    train, test = frame.iloc[:n_tr], frame.iloc[n_tr:]
    _csv(train, root / "tasks" / tid / "train.csv")
    _csv(test.drop(columns=["duration", "event"]), root / "tasks" / tid / "test_features.csv")
    grid = _grid(train["duration"].to_numpy(), train["event"].to_numpy())
    _csv(pd.DataFrame({"time": grid}), root / "tasks" / tid / "time_grid.csv")
    _csv(test[["patient_id", "duration", "event", "age", "sex"]], root / "labels" / tid / "test_labels.csv")  # fmt: skip
    files = _files(root, tid, {"train": "train.csv", "test_features": "test_features.csv",
                               "time_grid": "time_grid.csv"})  # fmt: skip
    manifests[tid] = _manifest(
        tid, "survival", "ctd_adj_antolini", files,
        sizes={"train": n_tr, "test": n_te, "unit": "patients"}, time_unit="days",
        submission={"id_columns": ["patient_id"], "probability_column": None,
                    "time_grid": "time_grid"},
        labels={"file": "labels", "id_columns": ["patient_id"], "duration": "duration",
                "event": "event"},
    )  # fmt: skip

    # classification (AUROC) and with a binary label (min(Se, PPV))
    for tid, metric, label_col in (
        ("toy_auroc", "auroc", None),
        ("toy_label", "min_se_ppv", "PredictedLabel"),
    ):
        n_tr, n_te = 500, 160
        frame = _tabular(rng, n_tr + n_te)
        p = 1 / (1 + np.exp(-(_risk(frame) - 1.2)))
        frame["outcome"] = (rng.random(len(frame)) < p).astype(int)
        frame.insert(0, "patient_id", [f"{tid[4]}{i:04d}" for i in range(len(frame))])
        train, test = frame.iloc[:n_tr], frame.iloc[n_tr:]
        _csv(train, root / "tasks" / tid / "train.csv")
        _csv(test.drop(columns=["outcome"]), root / "tasks" / tid / "test_features.csv")
        _csv(test[["patient_id", "outcome", "age", "sex"]], root / "labels" / tid / "test_labels.csv")  # fmt: skip
        files = _files(root, tid, {"train": "train.csv", "test_features": "test_features.csv"})
        manifests[tid] = _manifest(
            tid, "classification", metric, files,
            sizes={"train": n_tr, "test": n_te, "unit": "patients"},
            submission={"id_columns": ["patient_id"], "probability_column": "PredictedProbability",
                        "label_column": label_col},
            labels={"file": "labels", "id_columns": ["patient_id"], "label": "outcome"},
        )  # fmt: skip

    # hourly: internal (both hospitals) and external with local target-hospital labels
    a_train = _hourly(rng, 110, "A", 0)
    b_pool = _hourly(rng, 70, "B", 0)
    a_test = _hourly(rng, 30, "A", 500)
    b_ids = sorted(b_pool["patient_id"].unique())
    b_test = b_pool[b_pool["patient_id"].isin(b_ids[:35])]
    b_train = b_pool[b_pool["patient_id"].isin(b_ids[35:])]
    for tid, train, test in (
        ("toy_hourly", pd.concat([a_train, b_train]), pd.concat([a_test, b_test])),
        (
            "toy_hourly_local",
            pd.concat([a_train, b_train[b_train["patient_id"].isin(b_ids[35:55])]]),
            b_test,
        ),  # fmt: skip
    ):
        _csv(train, root / "tasks" / tid / "train.csv")
        _csv(test.drop(columns=["SepsisLabel"]), root / "tasks" / tid / "test_features.csv")
        _csv(test[["patient_id", "ICULOS", "SepsisLabel"]], root / "labels" / tid / "test_labels.csv")  # fmt: skip
        files = _files(root, tid, {"train": "train.csv", "test_features": "test_features.csv"})
        extra = {}
        if tid == "toy_hourly_local":
            extra = {"validation": "external", "shift": "hospital",
                     "internal_counterpart": "toy_hourly"}  # fmt: skip
        manifests[tid] = _manifest(
            tid, "sequential", "utility_2019", files,
            sizes={"train": int(train["patient_id"].nunique()),
                   "test": int(test["patient_id"].nunique()), "unit": "patients",
                   "test_rows": len(test)},
            submission={"id_columns": ["patient_id", "ICULOS"],
                        "probability_column": "PredictedProbability",
                        "label_column": "PredictedLabel"},
            labels={"file": "labels", "id_columns": ["patient_id", "ICULOS"],
                    "label": "SepsisLabel"},
            time_unit="hours", paper={"ehr": True}, **extra,
        )  # fmt: skip
    for tid, doc in manifests.items():
        (man / f"{tid}.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    return root, man
