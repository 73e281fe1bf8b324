"""Write the demo tasks under a data root, byte-identically on every build (``automd demo data``).

Layout (paths are declared in each ``data_manifests/demo_*.yaml``)::

    <root>/tasks/<task_id>/description.md       what the agent gets
                          /train.csv
                          /test_features.csv
                          /sample_submission.csv  valid null predictions
                          /time_grid.csv          survival only
                          /validate.py            standalone format checker (pandas only)
    <root>/labels/<task_id>/test_labels.csv      hidden: test outcomes + subgroup attributes

Every CSV is UTF-8 without BOM, ``\\n`` line endings, columns in a fixed order, floats written as
Python's shortest round-trip ``repr`` and missing values as empty cells, so a rebuild gives the
same bytes and the sha256 pinned in the manifests. Files are written atomically (temporary file
+ ``os.replace``).
"""

from __future__ import annotations

import contextlib
import hashlib
import pprint
import string
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from automd_analysis._atomic import write_bytes_atomic
from automd_analysis.errors import DataError
from automd_analysis.submissions import default_max_bytes
from automd_analysis.tasks import (
    Kind,
    Metric,
    Task,
    TaskManifest,
    data_root,
    file_statuses,
    format_grid_time,
    load_manifests,
    manifest_dir,
    task_status,
    write_manifest_hashes,
)
from automd_demo.recipes import TaskTables, build_tables

#: File keys a demo manifest declares, and which are required per kind.
PUBLIC_KEYS = ("description", "train", "test_features", "sample_submission", "validate")
GRID_KEY = "time_grid"
LABELS_KEY = "labels"


def csv_bytes(df: pd.DataFrame) -> bytes:
    """Canonical CSV bytes of a table (see the module docstring)."""
    return df.to_csv(index=False, lineterminator="\n", na_rep="").encode("utf-8")


def grid_bytes(grid: np.ndarray) -> bytes:
    """``time_grid.csv``: one column ``time``, values as :func:`format_grid_time`."""
    return ("time\n" + "".join(f"{format_grid_time(t)}\n" for t in grid)).encode("utf-8")


def _template(name: str) -> str:
    return (resources.files("automd_demo") / "templates" / name).read_text("utf-8")


_METRIC_TEXT = {
    Metric.ctd_adj_antolini: (
        "Time-dependent concordance C^td (Antolini et al., with pycox's `adj_antolini` handling "
        "of tied times): the share of comparable patient pairs whose predicted curves, read at "
        "the earlier patient's event time, order them correctly. 0.5 is chance; the normalised "
        "score is (C^td - 0.5) / 0.5, clipped to [0, 1]."
    ),
    Metric.auroc: (
        "Area under the ROC curve of `PredictedProbability`. 0.5 is chance; the normalised score "
        "is (AUROC - 0.5) / 0.5, clipped to [0, 1]. Calibration (ECE) and subgroup performance "
        "are also reported, but do not change the primary score."
    ),
    Metric.min_se_ppv: (
        "min(Se, PPV) of the binary `PredictedLabel` (PhysioNet/CinC 2012 event-1 score): the "
        "smaller of sensitivity and positive predictive value. `PredictedProbability` is used for "
        "calibration and subgroup AUROC, not for the primary score."
    ),
    Metric.utility_2019: (
        "PhysioNet/CinC 2019 normalised utility of the hourly alarms `PredictedLabel`: early "
        "alarms (from 12 h before onset up to 3 h after) earn credit, missed sepsis is penalised, "
        "false alarms cost a little; 1 = optimal alarms, 0 = never alarming (negative scores are "
        "clipped to 0 in the tables). `PredictedProbability` is used for calibration."
    ),
}


def _features_text(df: pd.DataFrame, exclude: list[str]) -> tuple[int, str]:
    cols = [c for c in df.columns if c not in exclude]
    parts = []
    for c in cols:
        kind = "number" if pd.api.types.is_numeric_dtype(df[c]) else "text"
        missing = " with missing values" if df[c].isna().any() else ""
        parts.append(f"`{c}` ({kind}{missing})")
    return len(cols), ", ".join(parts)


def render_description(
    manifest: TaskManifest, tables: TaskTables, shared_with: list[str] | None = None
) -> str:
    """``description.md`` of a demo task: target, metric, files, submission format, rules.

    ``shared_with`` lists the other tasks that test on the same patients.
    """
    m = manifest
    f = tables.facts
    sub = m.submission
    ids = sub.id_columns
    unit = "patient-hour" if m.kind is Kind.sequential else m.sizes.unit.removesuffix("s")
    outcome_cols = [c for c in (m.labels.duration, m.labels.event, m.labels.label) if c]
    n_features, features = _features_text(tables.train, [*ids, *outcome_cols])
    if m.kind is Kind.survival:
        target = (
            f"{m.description}\n\nFor every test patient, predict the survival curve S(t) = "
            f"P(no {m.outcome.lower()} by time t) at each time of `time_grid.csv` "
            f"({len(tables.time_grid)} times, in {m.time_unit}). In `train.csv`, "
            f"`{m.labels.duration}` is the follow-up time ({m.time_unit}) and `{m.labels.event}` "
            f"is 1 if the event was observed, 0 if the patient was censored."
        )
        fmt = (
            f"`{ids[0]}` plus one column per grid time, headed by the time exactly as written in "
            "`time_grid.csv` (e.g. write `str(t)` for each value `t` read from it). Values are "
            "survival probabilities in [0, 1] and must not increase from one grid time to the "
            "next. One row per test patient."
        )
        sample = "the training Kaplan-Meier curve for every patient (valid, uninformative)"
        grid_row = (
            "| `time_grid.csv` | the times (column `time`) at which curves are required: unique "
            "quantiles of the training event times, plus 0 |\n"
        )
    elif m.kind is Kind.classification:
        target = (
            f"{m.description}\n\nFor every test {unit}, predict the probability of the outcome "
            f"`{m.labels.label}` (1 = {m.outcome.lower()}, 0 = not)."
        )
        cols = [f"`{ids[0]}`", f"`{sub.probability_column}` (probability in [0, 1])"]
        if sub.label_column:
            cols.append(f"`{sub.label_column}` (your binary decision, 0 or 1)")
        fmt = "Exactly the columns " + ", ".join(cols) + f"; one row per test {unit}."
        sample = "the training prevalence as probability" + (
            ", label 0 (valid, uninformative)" if sub.label_column else " (valid, uninformative)"
        )
        grid_row = ""
    else:
        target = (
            f"{m.description}\n\nFor every hour of every test ICU stay, predict the probability "
            f"that `{m.labels.label}` is 1 and raise an alarm (`{sub.label_column}` = 1) or not. "
            f"`{m.labels.label}` is 1 from 6 hours before sepsis onset onwards."
        )
        fmt = (
            f"Exactly the columns `{ids[0]}`, `{ids[1]}`, `{sub.probability_column}` (probability "
            f"in [0, 1]) and `{sub.label_column}` (alarm, 0 or 1); one row per test patient-hour "
            f"of `test_features.csv` (key: `{ids[0]}` + `{ids[1]}`)."
        )
        sample = "the training prevalence of the hourly label, no alarms (valid, uninformative)"
        grid_row = ""
    where = {"hospital": "hospital", "period": "period", "cohort": "cohort"}.get(m.shift, "")
    if m.validation == "external":
        validation_note = (
            f"**External validation ({m.shift} shift).** The test patients come from a different "
            f"{where} than most or all of the training data. The internal-validation "
            f"counterpart of this task is `{m.internal_counterpart}`."
        )
    else:
        validation_note = (
            "**Internal validation.** The test patients are a random held-out sample of the "
            "same population as the training data."
        )
    if shared_with:
        validation_note += " The same test patients are used by " + ", ".join(
            f"`{t}`" for t in sorted(shared_with)
        )
        validation_note += "."
    extra_rules = ""
    if m.kind is Kind.sequential:
        extra_rules = (
            "- Real-time rule: the prediction for hour t of a patient may use only that "
            "patient's rows up to and including hour t (never later hours).\n"
        )
    if m.synthetic:
        data_note = (
            "> **Synthetic data.** These hourly ICU records are simulated "
            "(`automd_analysis.demo.sequential_synth`); they imitate the structure of the "
            "PhysioNet/CinC 2019 sepsis challenge data but describe no real patient.\n"
        )
    else:
        data_note = f"> Real data: {m.source.name} ({m.source.citation}).\n"
    sizes = f"{f['n_train']:,} {m.sizes.unit}"
    if f.get("extra_train"):
        sizes += f" + {f['extra_train']:,} labelled target-hospital patients"
    if m.kind is Kind.sequential:
        sizes += f", {f['train_rows']:,} patient-hours"
    train_desc = f"training data with outcomes ({sizes})"
    test_rows = f", {f['test_rows']:,} patient-hours" if m.kind is Kind.sequential else ""
    test_desc = f"test inputs without outcomes ({f['n_test']:,} {m.sizes.unit}{test_rows})"
    return string.Template(_template("description.md")).substitute(
        title=m.title,
        data_note=data_note,
        target=target,
        validation_note=validation_note,
        metric=_METRIC_TEXT[m.metric],
        train_desc=train_desc,
        test_desc=test_desc,
        sample_desc=sample,
        grid_row=grid_row,
        n_features=n_features,
        features=features,
        format=fmt,
        unit_noun=unit,
        extra_rules=extra_rules,
    )


def render_validator(manifest: TaskManifest, tables: TaskTables) -> str:
    """``validate.py``: the pandas-only checker with this task's configuration filled in."""
    sub = manifest.submission
    n_cols = len(sub.id_columns) + (
        len(tables.time_grid)
        if manifest.kind is Kind.survival
        else 1 + (sub.label_column is not None)
    )
    config = {
        "task": manifest.id,
        "kind": manifest.kind.value,
        "id_columns": list(sub.id_columns),
        "probability_column": sub.probability_column
        if manifest.kind is not Kind.survival
        else None,
        "label_column": sub.label_column,
        "test_file": Path(manifest.files["test_features"].path).name,
        "grid_file": Path(manifest.files[GRID_KEY].path).name
        if manifest.kind is Kind.survival
        else None,
        "max_bytes": sub.max_bytes or default_max_bytes(len(tables.labels), n_cols),
    }
    text = _template("validate_template.py")
    marker = "CONFIG = {}  # @@CONFIG@@ (filled in when the task is built)"
    if marker not in text:  # pragma: no cover - template integrity
        raise RuntimeError("validate template lost its CONFIG marker")
    return text.replace(marker, "CONFIG = " + pprint.pformat(config, sort_dicts=False, width=96))


def task_file_contents(
    manifest: TaskManifest, others: dict[str, TaskManifest] | None = None
) -> dict[str, bytes]:
    """Bytes of every file of a demo task, keyed by manifest file key.

    ``others`` (all demo manifests) lets the description name the tasks sharing the test set.
    """
    tables = build_tables(manifest)
    shared_with = [
        k
        for k, o in (others or {}).items()
        if k != manifest.id and o.shared_test_set == manifest.shared_test_set
    ]
    contents = {
        "train": csv_bytes(tables.train),
        "test_features": csv_bytes(tables.test_features),
        "sample_submission": csv_bytes(tables.sample_submission),
        LABELS_KEY: csv_bytes(tables.labels),
        "description": render_description(manifest, tables, shared_with).encode("utf-8"),
        "validate": render_validator(manifest, tables).encode("utf-8"),
    }
    if manifest.kind is Kind.survival:
        contents[GRID_KEY] = grid_bytes(tables.time_grid)
    declared = set(manifest.files)
    if declared != set(contents):
        raise DataError(
            f"task {manifest.id!r}: manifest files {sorted(declared)} do not match what the "
            f"recipe writes {sorted(contents)}",
            location="files",
            code="manifest.invalid",
            fix="declare exactly these file keys in the manifest",
        )
    return contents


@dataclass(frozen=True)
class BuiltFile:
    """One written file and whether it matches the manifest's pinned sha256."""

    task: str
    key: str
    path: Path
    sha256: str
    expected: str | None

    @property
    def matches(self) -> bool:
        return self.sha256 == self.expected


def demo_manifests(manifests: str | Path | None = None) -> dict[str, TaskManifest]:
    """Manifests with ``origin: demo`` (and a build recipe), by task id."""
    return {k: m for k, m in load_manifests(manifests).items() if m.origin == "demo" and m.build}


def build_demo_data(
    root: str | Path | None = None,
    manifests: str | Path | None = None,
    tasks: list[str] | None = None,
    progress=None,
) -> list[BuiltFile]:
    """Build the demo tasks under ``root`` (default :func:`~automd_analysis.tasks.data_root`).

    Parameters
    ----------
    root : path, optional
    manifests : path, optional
        Manifest directory (default :func:`~automd_analysis.tasks.manifest_dir`).
    tasks : list of str, optional
        Only these demo task ids (default: all).
    progress : callable, optional
        Called with each task id before it is built.

    Returns
    -------
    list of BuiltFile
        Every written file with its sha256 and the manifest's; the caller decides what a
        mismatch means (:func:`ensure_demo_data` raises, ``automd demo data --repin`` re-pins).
    """
    root = data_root(root)
    found = demo_manifests(manifests)
    wanted = sorted(found) if tasks is None else tasks
    unknown = sorted(set(wanted) - set(found))
    if unknown:
        raise DataError(
            f"not demo tasks: {unknown} (demo tasks: {sorted(found)})",
            code="task.unknown",
            fix="run `automd tasks` to list the tasks",
        )
    out = []
    for task_id in wanted:
        if progress is not None:
            progress(task_id)
        manifest = found[task_id]
        task = Task(manifest, root)
        for key, data in task_file_contents(manifest, found).items():
            path = task.path(key)
            write_bytes_atomic(path, data)
            out.append(
                BuiltFile(task_id, key, path, _sha256_bytes(data), manifest.files[key].sha256)
            )
    return out


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def repin_demo_manifests(built: list[BuiltFile], manifests: str | Path | None = None) -> list[str]:
    """Write the built files' sha256 into their demo manifests; returns the changed task ids."""
    directory = manifest_dir(manifests)
    changed = []
    by_task: dict[str, dict[str, str]] = {}
    for b in built:
        by_task.setdefault(b.task, {})[b.key] = b.sha256
    for task_id, hashes in sorted(by_task.items()):
        if any(b.sha256 != b.expected for b in built if b.task == task_id):
            write_manifest_hashes(directory / f"{task_id}.yaml", hashes)
            changed.append(task_id)
    return changed


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    """Exclusive lock on ``root`` (several test workers may ask for the same data at once)."""
    root.mkdir(parents=True, exist_ok=True)
    lock_path = root / ".automd-demo.lock"
    with open(lock_path, "a+") as fh:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - non-POSIX: no lock
            yield
            return
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_demo_data(root: str | Path | None = None, manifests: str | Path | None = None) -> Path:
    """Make sure every demo task is present under ``root`` with its pinned sha256; build if not.

    Safe to call from several processes at once (a file lock serialises the build); cheap when
    the data is already there (only hashing). Use it from test fixtures and notebooks.

    Raises
    ------
    DataError
        ``checksum.mismatch`` if a fresh build does not reproduce the pinned bytes (the
        environment differs from the one the manifests were pinned with).
    """
    root = data_root(root)
    with _locked(root):
        found = demo_manifests(manifests)
        stale = [
            task_id
            for task_id, m in found.items()
            if task_status(file_statuses(Task(m, root))) != "present"
        ]
        if stale:
            built = build_demo_data(root, manifests, stale)
            bad = [b for b in built if not b.matches]
            if bad:
                raise DataError(
                    f"the demo build does not reproduce the pinned sha256 of {len(bad)} files "
                    f"(first: {bad[0].task}/{bad[0].key})",
                    path=bad[0].path,
                    code="checksum.mismatch",
                    fix="check the SurvSet/numpy/pandas versions, or re-pin deliberately with "
                    "`automd demo data --repin`",
                )
    return root
