"""What a scripted agent may see of a task: its *public* files, and a summary of them.

The harness works like an agent dropped into a task directory: it reads ``train.csv``,
``test_features.csv``, the survival time grid and the submission schema declared by the manifest,
and never opens a file whose manifest role is ``hidden`` (:func:`public_path` refuses it).
:class:`TaskProfile` is the agent's "first look at the data" - column types, missingness, event
rate - from which menus fill in concrete column names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from automd_analysis.errors import DataError, ManifestError
from automd_analysis.tasks import Task

#: Manifest file keys the harness looks for, in order of preference.
TRAIN_KEYS = ("train",)
TEST_KEYS = ("test_features", "test")

#: Column-name hints for the exploratory age/sex subgroup checks (case-insensitive).
AGE_NAMES = ("age",)
SEX_NAMES = ("sex", "gender")


def public_path(task: Task, key: str) -> Path:
    """Path of a *public* file of ``task``, checksum-verified.

    Raises
    ------
    DataError
        If the file is declared hidden (agents never see hidden labels), missing or modified.
    """
    spec = task.manifest.files.get(key)
    if spec is None:
        raise ManifestError(
            f"task {task.id!r} declares no file {key!r}",
            location=f"files.{key}",
            code="manifest.invalid",
            fix="add the file to the manifest",
        )
    if spec.role != "public":
        raise DataError(
            f"task {task.id!r}: file {key!r} is hidden; the agent harness may only read public files",
            path=task.path(key),
            code="harness.hidden_file",
            fix="this is a bug in the harness: report it",
        )
    return task.verified_path(key)


def _find_key(task: Task, candidates: tuple[str, ...], what: str) -> str:
    for key in candidates:
        if key in task.manifest.files:
            return key
    raise ManifestError(
        f"task {task.id!r} has no {what} file (looked for keys {list(candidates)})",
        location="files",
        code="manifest.invalid",
        fix=f"declare the {what} file under one of the keys {list(candidates)}",
    )


@dataclass(frozen=True)
class TaskProfile:
    """The public facts about a task that the harness renders into scripts.

    Attributes
    ----------
    task_id, kind, metric : str
    task_dir : Path
        Directory of ``train.csv``; the generated scripts read files relative to it.
    train_file, test_file, grid_file : str
        File names relative to ``task_dir`` (``grid_file`` is None unless survival).
    id_columns : list of str
        Submission id column(s) (sequential: patient id, hour).
    probability_column, label_column : str or None
        Submission columns (``label_column`` for min(Se, PPV) and sequential tasks).
    duration_column, event_column, label_column_train : str or None
        Outcome columns of ``train.csv``.
    features : list of str
        Columns of the test features minus the id column(s) (sequential: the hour stays a feature).
    numeric_features, categorical_features : list of str
    missing_share : dict
        Column -> share of missing training values (only columns with any missing).
    event_rate : float
        Share of positive rows (classification/sequential) or of events (survival).
    n_train, n_test : int
    hourly_columns : list of str
        Sequential: measured columns ordered by how often they are observed (most first).
    site_column : str or None
        Sequential: a non-numeric column whose test rows all share one value (the hospital).
    target_site : str or None
        That test value, when some *training* rows have it too (local target-site labels).
    age_column, sex_column : str or None
        Columns for the exploratory subgroup checks, when the features have them.
    """

    task_id: str
    kind: str
    metric: str
    validation: str
    shift: str
    task_dir: Path
    train_file: str
    test_file: str
    grid_file: str | None
    id_columns: list[str]
    probability_column: str | None
    label_column: str | None
    duration_column: str | None
    event_column: str | None
    label_column_train: str | None
    features: list[str]
    numeric_features: list[str]
    categorical_features: list[str]
    missing_share: dict[str, float]
    event_rate: float
    n_train: int
    n_test: int
    hourly_columns: list[str] = field(default_factory=list)
    site_column: str | None = None
    target_site: str | None = None
    age_column: str | None = None
    sex_column: str | None = None
    ehr: bool = False

    @property
    def has_missing(self) -> bool:
        return bool(self.missing_share)

    @property
    def patient_column(self) -> str:
        return self.id_columns[0]

    @property
    def hour_column(self) -> str | None:
        return self.id_columns[1] if len(self.id_columns) > 1 else None


def _relative(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        raise DataError(
            "public task files must live in one directory tree",
            path=path,
            code="harness.layout",
            fix=f"place it under {base}",
        ) from None


def _hint(columns: list[str], names: tuple[str, ...]) -> str | None:
    for col in columns:
        if col.lower() in names:
            return col
    return None


def load_profile(task: Task) -> TaskProfile:
    """Read the public files of ``task`` and summarise them (never touches hidden files)."""
    m = task.manifest
    train_path = public_path(task, _find_key(task, TRAIN_KEYS, "training"))
    test_path = public_path(task, _find_key(task, TEST_KEYS, "test-features"))
    task_dir = train_path.parent
    grid_file = None
    if m.kind.value == "survival":
        grid_file = _relative(public_path(task, m.submission.time_grid), task_dir)
    train = pd.read_csv(train_path)
    test = pd.read_csv(test_path, nrows=2000)
    id_cols = list(m.submission.id_columns)
    features = [c for c in test.columns if c not in id_cols]
    if m.kind.value == "sequential":
        features = [c for c in test.columns if c != id_cols[0]]
    missing = [c for c in features if c not in train.columns]
    if missing:
        raise DataError(
            f"task {task.id!r}: test feature columns {missing} are not in the training file",
            path=train_path,
            location="header",
            code="harness.layout",
            fix="the training file must contain every test feature column",
        )
    numeric = [c for c in features if pd.api.types.is_numeric_dtype(train[c])]
    categorical = [c for c in features if c not in numeric]
    share = train[features].isna().mean()
    missing_share = {c: round(float(v), 6) for c, v in share.items() if v > 0}
    duration = event = label = None
    if m.kind.value == "survival":
        duration, event = m.labels.duration, m.labels.event
        event_rate = float(train[event].mean())
    else:
        label = m.labels.label
        event_rate = float(train[label].mean())
    for col in [c for c in (duration, event, label) if c]:
        if col not in train.columns:
            raise DataError(
                f"task {task.id!r}: outcome column {col!r} is not in the training file",
                path=train_path,
                location="header",
                code="harness.layout",
                fix="the training file must carry the outcome under the manifest's label names",
            )
    hourly, site, target_site = [], None, None
    if m.kind.value == "sequential":
        candidates = [c for c in numeric if c != id_cols[1]]
        observed = train[candidates].notna().mean()
        within = train.groupby(id_cols[0])[candidates].nunique().gt(1).mean()
        varying = [c for c in candidates if within[c] > 0.2]
        hourly = sorted(varying, key=lambda c: (-round(float(observed[c]), 6), c))
        full_test = pd.read_csv(test_path, usecols=categorical) if categorical else None
        for col in categorical:
            values = full_test[col].dropna().astype(str).unique()
            if len(values) == 1:
                site = col
                if (train[col].astype(str) == values[0]).any():
                    target_site = str(values[0])
                break
    with open(test_path, "rb") as fh:
        n_test = sum(1 for _ in fh) - 1
    return TaskProfile(
        task_id=task.id,
        kind=m.kind.value,
        metric=m.metric.value,
        validation=m.validation,
        shift=m.shift,
        task_dir=task_dir,
        train_file=_relative(train_path, task_dir),
        test_file=_relative(test_path, task_dir),
        grid_file=grid_file,
        id_columns=id_cols,
        probability_column=m.submission.probability_column,
        label_column=m.submission.label_column,
        duration_column=duration,
        event_column=event,
        label_column_train=label,
        features=features,
        numeric_features=numeric,
        categorical_features=categorical,
        missing_share=missing_share,
        event_rate=round(event_rate, 6),
        n_train=len(train),
        n_test=n_test,
        hourly_columns=hourly,
        site_column=site,
        target_site=target_site,
        age_column=_hint(features, AGE_NAMES),
        sex_column=_hint(features, SEX_NAMES),
        ehr=bool(m.paper.get("ehr", False)),
    )
