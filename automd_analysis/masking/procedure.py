"""Masking test of the real-time rule for sequential tasks (paper App. G).

At hour *t* a sequential prediction may use only the patient's observations up to *t* (and what was
learned from the training data). The test removes the end of every test patient's record, re-runs
the code that produced a submission on the shortened file, and compares the alarms
(``PredictedLabel``) at the hours that were kept with the alarms the same code raises on the complete
file. Code that obeys the rule cannot tell the difference; code that looks ahead (a per-patient
maximum over all hours, a backward fill, a whole-record normalisation) changes some alarms.

Procedure (paper App. G):

1. **Masked test file** - one per task, reused across runs. For every patient with *n* hourly rows
   draw ``u ~ Uniform(0.40, 0.90)`` and keep the first ``min(n, max(4, floor(u * n)))`` rows in time
   order (:func:`masking_plan`, :func:`mask_records`, :func:`make_masked_test`).
2. **Re-run** the submission's code on the full and on the masked test features with a re-runner
   ``rerun(run_dir, test_features_csv, out_csv)`` (:func:`run_masking_test`; the toolkit's own
   runs it sandboxed, :mod:`automd_analysis.masking.sandbox`).
3. **Compare** alarms at the retained rows (:func:`compare_alarms`): the fraction of changed alarms
   over all retained rows and over each patient's last retained row. Either fraction above 0.1 %
   flags a violation; both exactly zero is reported as *no change*.

Masking-test results never change validity or scores (paper App. E).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from automd_analysis._atomic import atomic_path
from automd_analysis.errors import AutomdError, MaskingError
from automd_analysis.tasks import Kind, Task, get_task

__all__ = [
    "FLAG_THRESHOLD",
    "MIN_ROWS",
    "U_HIGH",
    "U_LOW",
    "MaskingComparison",
    "MaskingError",
    "compare_alarms",
    "make_masked_test",
    "mask_records",
    "masking_plan",
    "read_predictions_csv",
    "retained_row_counts",
    "run_masking_test",
    "write_csv_atomic",
]

#: Bounds of the per-patient retained fraction u ~ Uniform(U_LOW, U_HIGH) (paper App. G).
U_LOW, U_HIGH = 0.40, 0.90
#: Every patient keeps at least this many rows (or all of them when it has fewer).
MIN_ROWS = 4
#: A changed-alarm fraction strictly above this (0.1 %) on either measure flags a violation.
FLAG_THRESHOLD = 0.001

_MAX_EXAMPLES = 5


# --------------------------------------------------------------------------------------------------
# Step 1: the masked test file
# --------------------------------------------------------------------------------------------------


def retained_row_counts(n_rows, u) -> np.ndarray:
    """Rows each patient keeps: ``min(n, max(4, floor(u * n)))`` (paper App. G).

    Parameters
    ----------
    n_rows : array-like of int
        Number of hourly rows of each patient (>= 1).
    u : array-like of float
        The patient's retained fraction, in ``[0, 1]``.

    Returns
    -------
    ndarray of int64
        Retained rows per patient. A patient with fewer than four rows keeps all of them; otherwise
        at least four, and never more than it has.
    """
    n = np.asarray(n_rows)
    u = np.asarray(u, dtype=np.float64)
    if n.shape != u.shape:
        raise ValueError(f"n_rows and u must have the same shape, got {n.shape} and {u.shape}")
    if n.size and (not np.issubdtype(n.dtype, np.integer) or n.min() < 1):
        raise ValueError("n_rows must be positive integers")
    if u.size and (not np.isfinite(u).all() or u.min() < 0 or u.max() > 1):
        raise ValueError("u must be finite and in [0, 1]")
    n = n.astype(np.int64)
    return np.minimum(n, np.maximum(MIN_ROWS, np.floor(u * n).astype(np.int64)))


def _check_columns(frame: pd.DataFrame, columns: Iterable[str], what: str, path=None) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MaskingError(
            f"{what} lacks column(s) {missing} (has {list(frame.columns)[:12]})",
            path=path,
            location="header",
            code="masking.columns",
            fix="use the task's id columns (manifest submission.id_columns) and PredictedLabel",
        )


def _raise_for_bad_rows(
    bad: np.ndarray, message: str, *, path, code: str, fix: str, values: pd.Series | None = None
) -> None:
    """A :class:`MaskingError` naming the first bad rows (file rows: header = row 1) and, when
    given, their ``values``, if any entry of ``bad`` is true."""
    if bad.any():
        rows = np.flatnonzero(bad)[:_MAX_EXAMPLES]
        raise MaskingError(
            message,
            path=path,
            location="rows " + ", ".join(str(int(r) + 2) for r in rows),
            code=code,
            fix=fix,
            details={} if values is None else {"examples": [str(values.iloc[r]) for r in rows]},
        )


def _refuse_duplicates(dup: pd.Series, message: str, path=None) -> None:
    """``masking.duplicate`` naming the first repeated (patient, hour) rows, if any."""
    _raise_for_bad_rows(dup.to_numpy(), message, path=path, code="masking.duplicate",
                        fix="each patient-hour must appear once")  # fmt: skip


def _numeric_hours(values: pd.Series, what: str, path=None) -> np.ndarray:
    hours = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    _raise_for_bad_rows(
        ~np.isfinite(hours),
        f"{what}: hour column {values.name!r} has non-numeric or missing values",
        path=path,
        code="masking.hour",
        fix="hours must be finite numbers",
        values=values,
    )
    return hours


def _patient_keys(values: pd.Series, what: str, path=None) -> pd.Series:
    ids = values.astype("string")
    missing = ids.isna() | (ids.str.len() == 0)
    _raise_for_bad_rows(
        missing.to_numpy(),
        f"{what}: patient column {values.name!r} has empty values",
        path=path,
        code="masking.patient",
        fix="every row needs a patient id",
    )
    return ids.astype(str)


def masking_plan(
    features: pd.DataFrame, patient_column: str, hour_column: str, seed: int
) -> pd.DataFrame:
    """The per-patient draw of the masking test: ``u`` and the number of retained rows.

    Patients are visited in sorted order of their id (as text), and ``u`` is drawn for each from
    ``numpy.random.default_rng(seed).uniform(0.40, 0.90)``, so the plan depends only on the seed
    and the set of patients (not on the row order of the file).

    Parameters
    ----------
    features : DataFrame
        Test features, one row per patient-hour.
    patient_column, hour_column : str
        The id columns (manifest ``submission.id_columns``).
    seed : int
        Seed of the uniform draws.

    Returns
    -------
    DataFrame
        ``patient`` (str), ``n_rows``, ``u``, ``n_retained`` - one row per patient, sorted by id.

    Raises
    ------
    MaskingError
        Missing columns, empty patient ids, non-numeric hours, or duplicate (patient, hour) rows.
    """
    _check_columns(features, [patient_column, hour_column], "test features")
    patients = _patient_keys(features[patient_column], "test features")
    hours = _numeric_hours(features[hour_column], "test features")
    dup = pd.DataFrame({"p": patients.to_numpy(), "h": hours}).duplicated()
    _refuse_duplicates(dup, "test features have duplicate (patient, hour) rows")
    counts = patients.value_counts(sort=False)
    order = np.array(sorted(counts.index), dtype=object)
    n_rows = counts.loc[order].to_numpy(dtype=np.int64)
    rng = np.random.default_rng(seed)
    u = rng.uniform(U_LOW, U_HIGH, size=len(order))
    return pd.DataFrame(
        {
            "patient": order.astype(str),
            "n_rows": n_rows,
            "u": u,
            "n_retained": retained_row_counts(n_rows, u),
        }
    )


def mask_records(
    features: pd.DataFrame, patient_column: str, hour_column: str, seed: int
) -> pd.DataFrame:
    """Remove the end of each patient's record (paper App. G masking rule).

    Each patient keeps its first ``min(n, max(4, floor(u n)))`` rows in time order (ascending hour;
    see :func:`masking_plan` for the draw of ``u``). Retained rows keep their original column values
    and their original relative order in the file.

    Parameters
    ----------
    features : DataFrame
        Test features, one row per patient-hour; any other columns are carried through unchanged.
    patient_column, hour_column : str
        Patient-id and hour columns.
    seed : int
        Seed of the per-patient draws; the same seed gives the same file.

    Returns
    -------
    DataFrame
        The retained rows (index reset).
    """
    plan = masking_plan(features, patient_column, hour_column, seed)
    patients = features[patient_column].astype("string").astype(str).to_numpy()
    hours = pd.to_numeric(features[hour_column], errors="coerce").to_numpy(dtype=np.float64)
    # 0-based position of each row within its patient's time order (stable on the file order).
    order = pd.DataFrame({"p": patients, "h": hours, "i": np.arange(len(features))})
    order = order.sort_values(["p", "h", "i"], kind="mergesort")
    rank = np.empty(len(features), dtype=np.int64)
    rank[order["i"].to_numpy()] = order.groupby("p", sort=False).cumcount().to_numpy()
    keep_n = pd.Series(plan["n_retained"].to_numpy(), index=plan["patient"].to_numpy())
    keep = rank < keep_n.reindex(patients).to_numpy()
    return features.loc[keep].reset_index(drop=True)


def _sequential_columns(task: Task) -> tuple[str, str]:
    manifest = task.manifest
    if manifest.kind is not Kind.sequential:
        raise MaskingError(
            f"task {task.id!r} is a {manifest.kind.value} task; the masking test applies to "
            "sequential tasks only",
            location="kind",
            code="masking.not_sequential",
            fix="choose a sequential task (hourly predictions and alarms)",
        )
    patient_column, hour_column = manifest.submission.id_columns
    return patient_column, hour_column


def _resolve_task(task: Task | str, data=None, manifests=None) -> Task:
    return get_task(task, data=data, manifests=manifests) if isinstance(task, str) else task


def make_masked_test(
    task: Task | str,
    seed: int,
    *,
    file_key: str = "test_features",
    data=None,
    manifests=None,
) -> pd.DataFrame:
    """Build the masked test-features table of a sequential task (paper App. G).

    Reads the task's test features (checksum-verified; every cell kept as text, so the retained rows
    are written back unchanged) and applies :func:`mask_records` with the manifest's id columns.

    Parameters
    ----------
    task : Task or str
        The task, or its id (resolved with ``data`` / ``manifests``).
    seed : int
        Seed of the per-patient draws.
    file_key : str
        Manifest ``files`` key of the test features (default ``"test_features"``).

    Returns
    -------
    DataFrame
        The retained rows, all columns as strings, in the file's row order.

    Raises
    ------
    MaskingError
        The task is not sequential, lacks the file key, or its file lacks the id columns.
    DataError
        The test file is missing or fails its checksum.
    """
    task = _resolve_task(task, data, manifests)
    patient_column, hour_column = _sequential_columns(task)
    if file_key not in task.manifest.files:
        raise MaskingError(
            f"task {task.id!r} declares no file {file_key!r}",
            location="files",
            code="masking.file_key",
            fix=f"pass one of {sorted(task.manifest.files)} as the test-features file key",
        )
    path = task.verified_path(file_key)
    features = _read_csv_text(path, "test features")
    _check_columns(features, [patient_column, hour_column], "test features", path)
    return mask_records(features, patient_column, hour_column, seed)


# --------------------------------------------------------------------------------------------------
# Step 3: comparing alarms
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MaskingComparison:
    """Result of comparing alarms on the masked file with alarms on the complete file.

    Attributes
    ----------
    n_retained_rows : int
        Patient-hours compared (the rows of the masked predictions).
    n_changed_rows : int
        Retained rows whose alarm differs between the two re-runs.
    changed_fraction_rows : float
        ``n_changed_rows / n_retained_rows``.
    n_patients : int
        Patients with at least one retained row.
    n_changed_last : int
        Patients whose *last retained* row's alarm differs.
    changed_fraction_last : float
        ``n_changed_last / n_patients``.
    threshold : float
        Flagging threshold (paper: 0.001).
    violation : bool
        Either fraction strictly above ``threshold``.
    status : str
        ``"violation"``, ``"no_change"`` (both fractions exactly zero) or ``"below_threshold"``.
    examples : list of dict
        A few changed rows: patient, hour, alarm on the full file, alarm on the masked file.
    n_original_compared, n_changed_vs_original : int or None
        When the archived submission is given: rows compared between it and the full re-run, and
        how many alarms differ (the paper's reproducibility check).
    reproduces_original : bool or None
        ``n_changed_vs_original == 0``, or ``None`` when no original was given.
    """

    n_retained_rows: int
    n_changed_rows: int
    changed_fraction_rows: float
    n_patients: int
    n_changed_last: int
    changed_fraction_last: float
    threshold: float
    violation: bool
    status: str
    examples: list = field(default_factory=list)
    n_original_compared: int | None = None
    n_changed_vs_original: int | None = None
    reproduces_original: bool | None = None

    def to_dict(self) -> dict:
        """Plain-data form (``automd masking compare --json``)."""
        return asdict(self)

    def summary(self) -> str:
        """One human-readable line."""
        text = (
            f"{self.status}: {self.n_changed_rows}/{self.n_retained_rows} retained alarms changed "
            f"({100 * self.changed_fraction_rows:.3f} %), last retained row changed for "
            f"{self.n_changed_last}/{self.n_patients} patients "
            f"({100 * self.changed_fraction_last:.3f} %); threshold {100 * self.threshold:g} %"
        )
        if self.reproduces_original is not None:
            text += (
                "; full re-run reproduces the archived alarms"
                if self.reproduces_original
                else f"; full re-run differs from the archived submission on "
                f"{self.n_changed_vs_original}/{self.n_original_compared} alarms"
            )
        return text


def _alarm_table(
    frame: pd.DataFrame, patient_column: str, hour_column: str, label_column: str, what: str
) -> pd.DataFrame:
    """Validated (patient, hour, alarm) table indexed by the key."""
    path = frame.attrs.get("path")
    _check_columns(frame, [patient_column, hour_column, label_column], what, path)
    patients = _patient_keys(frame[patient_column], what, path)
    hours = _numeric_hours(frame[hour_column], what, path)
    labels = pd.to_numeric(frame[label_column], errors="coerce").to_numpy(dtype=np.float64)
    _raise_for_bad_rows(
        ~np.isin(labels, (0.0, 1.0)),
        f"{what}: {label_column} must be 0 or 1",
        path=path,
        code="masking.label",
        fix="alarms are binary (0 = no alarm, 1 = alarm)",
        values=frame[label_column],
    )
    table = pd.DataFrame({"patient": patients.to_numpy(), "hour": hours, "alarm": labels})
    _refuse_duplicates(
        table.duplicated(["patient", "hour"]), f"{what} has duplicate (patient, hour) rows", path
    )
    table["alarm"] = table["alarm"].astype(np.int8)
    return table.set_index(["patient", "hour"])


def _key_examples(keys: pd.MultiIndex) -> list[dict]:
    return [{"patient": p, "hour": h} for p, h in list(keys[:_MAX_EXAMPLES])]


def compare_alarms(
    full_predictions: pd.DataFrame,
    masked_predictions: pd.DataFrame,
    *,
    patient_column: str,
    hour_column: str,
    label_column: str = "PredictedLabel",
    retained: pd.DataFrame | None = None,
    original: pd.DataFrame | None = None,
    threshold: float = FLAG_THRESHOLD,
) -> MaskingComparison:
    """Compare alarms at retained hours between a full and a masked re-run (paper App. G).

    With R the retained rows (the rows of ``masked_predictions``) and, per patient, its last
    retained row (highest retained hour)::

        changed_fraction_rows = #{r in R : alarm_full(r) != alarm_masked(r)} / |R|
        changed_fraction_last = #{patients whose last retained alarm differs} / #patients

    A violation is flagged when either fraction is strictly above ``threshold`` (0.1 %); both
    fractions equal to zero is reported as ``"no_change"``, anything in between as
    ``"below_threshold"``.

    Parameters
    ----------
    full_predictions, masked_predictions : DataFrame
        Predictions of the same code on the complete and on the masked test features; must have the
        patient, hour and alarm columns. Hours are compared numerically, patient ids as text.
    patient_column, hour_column : str
        Id columns (manifest ``submission.id_columns``).
    label_column : str
        Alarm column (``PredictedLabel``).
    retained : DataFrame, optional
        The masked test features; when given, the masked predictions must cover exactly its
        (patient, hour) rows.
    original : DataFrame, optional
        The archived submission; when given, the full re-run is also compared with it on every row
        they share (a re-run that does not reproduce it is reported, not an error).
    threshold : float
        Flagging threshold in [0, 1).

    Returns
    -------
    MaskingComparison

    Raises
    ------
    MaskingError
        Missing columns, alarms not in {0, 1}, duplicate rows, masked rows absent from the full
        predictions, masked predictions not covering the retained rows, or no retained rows.
    """
    if not (0 <= threshold < 1) or not math.isfinite(threshold):
        raise ValueError(f"threshold must be in [0, 1), got {threshold}")
    full = _alarm_table(full_predictions, patient_column, hour_column, label_column, "full")
    masked = _alarm_table(masked_predictions, patient_column, hour_column, label_column, "masked")
    if len(masked) == 0:
        raise MaskingError(
            "the masked predictions have no rows",
            path=masked_predictions.attrs.get("path"),
            code="masking.empty",
            fix="re-run the submission's code on the masked test file",
        )
    if retained is not None:
        _check_columns(retained, [patient_column, hour_column], "masked test features")
        keys = pd.MultiIndex.from_arrays(
            [
                _patient_keys(retained[patient_column], "masked test features").to_numpy(),
                _numeric_hours(retained[hour_column], "masked test features"),
            ],
            names=["patient", "hour"],
        )
        missing = keys.difference(masked.index)
        extra = masked.index.difference(keys)
        if len(missing) or len(extra):
            raise MaskingError(
                f"the masked predictions do not match the masked test rows ({len(missing)} missing,"
                f" {len(extra)} not in the masked test file)",
                path=masked_predictions.attrs.get("path"),
                code="masking.rows",
                fix="re-run the code on exactly the masked test file",
                details={"missing": _key_examples(missing), "extra": _key_examples(extra)},
            )
    absent = masked.index.difference(full.index)
    if len(absent):
        raise MaskingError(
            f"{len(absent)} masked rows are absent from the full predictions",
            path=full_predictions.attrs.get("path"),
            code="masking.rows",
            fix="both re-runs must predict every retained patient-hour",
            details={"examples": _key_examples(absent)},
        )
    both = masked.join(full, lsuffix="_masked", rsuffix="_full", how="left").sort_index()
    changed = both["alarm_masked"].to_numpy() != both["alarm_full"].to_numpy()
    last = ~both.index.get_level_values("patient").duplicated(keep="last")
    n_rows, n_patients = len(both), int(last.sum())
    n_changed, n_changed_last = int(changed.sum()), int((changed & last).sum())
    frac_rows, frac_last = n_changed / n_rows, n_changed_last / n_patients
    violation = frac_rows > threshold or frac_last > threshold
    if violation:
        status = "violation"
    elif n_changed == 0:
        status = "no_change"
    else:
        status = "below_threshold"
    examples = [
        {"patient": p, "hour": h, "full": int(f), "masked": int(m)}
        for (p, h), f, m in zip(
            both.index[changed][:_MAX_EXAMPLES],
            both["alarm_full"].to_numpy()[changed][:_MAX_EXAMPLES],
            both["alarm_masked"].to_numpy()[changed][:_MAX_EXAMPLES],
            strict=True,
        )
    ]
    n_orig = n_changed_orig = reproduces = None
    if original is not None:
        orig = _alarm_table(original, patient_column, hour_column, label_column, "original")
        shared = full.join(orig, lsuffix="_full", rsuffix="_orig", how="inner")
        n_orig = len(shared)
        n_changed_orig = int((shared["alarm_full"] != shared["alarm_orig"]).sum())
        reproduces = n_changed_orig == 0 and n_orig == len(orig) == len(full)
    return MaskingComparison(
        n_retained_rows=n_rows,
        n_changed_rows=n_changed,
        changed_fraction_rows=frac_rows,
        n_patients=n_patients,
        n_changed_last=n_changed_last,
        changed_fraction_last=frac_last,
        threshold=threshold,
        violation=violation,
        status=status,
        examples=examples,
        n_original_compared=n_orig,
        n_changed_vs_original=n_changed_orig,
        reproduces_original=reproduces,
    )


# --------------------------------------------------------------------------------------------------
# I/O helpers and the whole procedure
# --------------------------------------------------------------------------------------------------


def _read_csv_text(path, what: str) -> pd.DataFrame:
    path = Path(path)
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
    except FileNotFoundError:
        raise MaskingError(
            f"{what} file not found", path=path, code="masking.missing", fix="check the path"
        ) from None
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise MaskingError(
            f"{what} file is not a readable CSV: {exc}",
            path=path,
            code="masking.unreadable",
            fix="pass a comma-separated file with a header row",
        ) from None
    frame.attrs["path"] = str(path)
    return frame


def read_predictions_csv(path, what: str = "predictions") -> pd.DataFrame:
    """Read a prediction (or features) CSV with every cell as text; errors name the file."""
    return _read_csv_text(path, what)


def write_csv_atomic(frame: pd.DataFrame, out) -> Path:
    """Write ``frame`` as CSV (``\\n`` line endings, no index) via a temporary file + ``os.replace``.

    A crash leaves either the previous file or the complete new one, never a partial file.
    """
    out = Path(out)
    with atomic_path(out) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        frame.to_csv(fh, index=False, lineterminator="\n")
    return out


def _safe_name(run_dir: Path) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", "_".join(run_dir.parts[-4:])) or "run"


def run_masking_test(
    run_dirs: Iterable[str | Path],
    task: Task | str,
    seed: int,
    workdir: str | Path,
    *,
    rerun: Callable,
    file_key: str = "test_features",
    threshold: float = FLAG_THRESHOLD,
    data=None,
    manifests=None,
) -> pd.DataFrame:
    """Run the whole masking test for several runs of one sequential task.

    Builds one masked test file for the task (written to ``workdir/<task>_masked_seed<seed>.csv``),
    re-runs each run's code on the full and on the masked test features with
    ``rerun(run_dir, test_features_csv, out_csv)``, and compares the alarms
    (:func:`compare_alarms`, with the run's archived ``submission.csv`` as ``original`` when it
    exists). A run whose re-run or comparison fails gets ``status == "error"`` and the message; the
    other runs are still tested.

    Returns
    -------
    DataFrame
        One row per run: ``run_dir``, ``task``, ``seed``, ``status``, ``violation``, the counts and
        fractions of :class:`MaskingComparison`, ``reproduces_original`` and ``error``.
    """
    task = _resolve_task(task, data, manifests)
    patient_column, hour_column = _sequential_columns(task)
    workdir = Path(workdir)
    masked = make_masked_test(task, seed, file_key=file_key)
    masked_path = write_csv_atomic(masked, workdir / f"{task.id}_masked_seed{seed}.csv")
    full_path = task.verified_path(file_key)
    rows = []
    for run_dir in run_dirs:
        run_dir = Path(run_dir)
        out = workdir / _safe_name(run_dir)
        out.mkdir(parents=True, exist_ok=True)
        row = {"run_dir": str(run_dir), "task": task.id, "seed": seed}
        try:
            pairs = [(full_path, out / "full.csv"), (masked_path, out / "masked.csv")]
            many = getattr(rerun, "many", None)  # one process for both files (the sandbox)
            if many is not None:
                many(run_dir, pairs)
            else:
                for test_csv, out_csv in pairs:
                    rerun(run_dir, test_csv, out_csv)
            original_path = run_dir / "submission.csv"
            result = compare_alarms(
                read_predictions_csv(out / "full.csv", "full re-run predictions"),
                read_predictions_csv(out / "masked.csv", "masked re-run predictions"),
                patient_column=patient_column,
                hour_column=hour_column,
                retained=masked,
                original=(
                    read_predictions_csv(original_path, "archived submission")
                    if original_path.is_file()
                    else None
                ),
                threshold=threshold,
            )
        except AutomdError as exc:
            row.update(status="error", violation=None, error=str(exc))
        except Exception as exc:  # the re-run executes foreign code: isolate each run's failure
            row.update(status="error", violation=None, error=f"{type(exc).__name__}: {exc}")
        else:
            info = result.to_dict()
            info.pop("examples")
            row.update(info, error=None)
        rows.append(row)
    columns = [
        "run_dir",
        "task",
        "seed",
        "status",
        "violation",
        "n_retained_rows",
        "n_changed_rows",
        "changed_fraction_rows",
        "n_patients",
        "n_changed_last",
        "changed_fraction_last",
        "threshold",
        "n_original_compared",
        "n_changed_vs_original",
        "reproduces_original",
        "error",
    ]
    return pd.DataFrame(rows).reindex(columns=columns)
