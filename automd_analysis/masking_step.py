"""The masking step of the report pipeline: the real-time-rule test (paper App. G) on an archive.

The test re-runs the code behind a selected sequential submission on a masked test file
(:mod:`automd_analysis.masking`). Archive code is untrusted and this toolkit never executes it, so
only runs whose model the toolkit can rebuild itself are tested: those of archives written by
``automd demo archive``, whose harness re-renders each script from its stored configuration and
refuses any script that differs from the archived one
(:func:`automd_demo.harness.rerun.rerun_submission`). For any other archive the results
have to be produced elsewhere (a sandbox that may run the agents' code) and handed to notebook 07
as a file in the format below.

**Which runs** (paper section 4.2 and App. G): valid selected submissions of the main experiment
on sequential tasks, by tree-search agents (AIDE- and AI-Scientist-like, ``runs.search ==
"tree"``) unless ``agents`` names the agents to test. Validity comes from the score store, so the
archive must be scored first.

**Results** go to ``<score store>/masking.parquet`` (:data:`MASKING_FILE`), one row per tested run
(:data:`MASKING_COLUMNS`), sorted by ``run_id``:

- run key (``run_id, experiment, agent, llm, task, rep, reference``) and ``search``;
- ``seed`` (of the masked file) and ``threshold`` (0.001);
- ``status``: ``violation`` | ``below_threshold`` | ``no_change`` | ``error`` (the re-run or the
  comparison failed; ``reason`` says why) and ``flagged`` (``status == "violation"``; null for
  errors);
- ``fraction_all_rows`` / ``fraction_last_rows``: changed alarms over all retained rows / over each
  patient's last retained row, with the counts behind them (``n_retained_rows``,
  ``n_changed_rows``, ``n_patients``, ``n_changed_last``);
- ``reproduces_original`` / ``n_changed_vs_original``: whether the re-run on the complete test file
  gives the archived alarms (the paper's reproducibility check);
- ``cache_key``: sha256 of everything the result depends on (run record, selected code and
  submission, task content, seed, threshold, toolkit version). A later step reuses a row whose key
  is unchanged, so an unchanged archive is not re-run.

A results file supplied by the user (CSV or Parquet) needs only ``run_id, status, flagged,
fraction_all_rows, fraction_last_rows`` (:data:`REQUIRED_COLUMNS`); the other columns are optional
and the experiment, agent, task and repetition are read from ``run_id`` when absent
(:func:`read_masking_results` checks all of it). Masking results never change validity or scores
(paper App. E).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from automd_analysis._atomic import atomic_path
from automd_analysis._version import __version__
from automd_analysis.errors import AutomdError
from automd_analysis.masking import FLAG_THRESHOLD, MaskingError, run_masking_test

__all__ = [
    "MASKING_COLUMNS",
    "MASKING_FILE",
    "REQUIRED_COLUMNS",
    "RERUNNABLE_BUILDERS",
    "SCHEMA",
    "STATUSES",
    "MaskingResultsError",
    "MaskingStepSummary",
    "agents_option",
    "eligible_runs",
    "is_rerunnable",
    "mask_task_runs",
    "read_masking_results",
    "run_cache_key",
    "run_masking_step",
    "write_masking_results",
]

#: File name of the results inside the score-store directory.
MASKING_FILE = "masking.parquet"
#: ``archive.yaml`` ``provenance.built_by`` values whose runs this toolkit can re-run.
RERUNNABLE_BUILDERS: frozenset[str] = frozenset({"automd demo archive"})
#: Result statuses, in display order.
STATUSES: tuple[str, ...] = ("violation", "below_threshold", "no_change", "error")

#: Columns of ``masking.parquet`` and their Arrow types (every column nullable except the key).
MASKING_COLUMNS: Mapping[str, pa.DataType] = {
    "run_id": pa.string(),
    "experiment": pa.string(),
    "agent": pa.string(),
    "llm": pa.string(),
    "task": pa.string(),
    "rep": pa.int64(),
    "reference": pa.bool_(),
    "search": pa.string(),
    "seed": pa.int64(),
    "status": pa.string(),
    "flagged": pa.bool_(),
    "fraction_all_rows": pa.float64(),
    "fraction_last_rows": pa.float64(),
    "n_retained_rows": pa.int64(),
    "n_changed_rows": pa.int64(),
    "n_patients": pa.int64(),
    "n_changed_last": pa.int64(),
    "threshold": pa.float64(),
    "reproduces_original": pa.bool_(),
    "n_changed_vs_original": pa.int64(),
    "reason": pa.string(),
    "cache_key": pa.string(),
}
SCHEMA = pa.schema(
    [
        pa.field(name, dtype, nullable=name not in ("run_id", "status"))
        for name, dtype in MASKING_COLUMNS.items()
    ]
)
#: Columns a user-supplied results file must have.
REQUIRED_COLUMNS: tuple[str, ...] = (
    "run_id",
    "status",
    "flagged",
    "fraction_all_rows",
    "fraction_last_rows",
)

_RUN_ID = re.compile(r"^([^/]+)/([^/]+)/([^/]+)/rep(\d+)$")
_INT_COLUMNS = ("rep", "seed", "n_retained_rows", "n_changed_rows", "n_patients", "n_changed_last",
                "n_changed_vs_original")  # fmt: skip
_BOOL_COLUMNS = ("reference", "flagged", "reproduces_original")
_FLOAT_COLUMNS = ("fraction_all_rows", "fraction_last_rows", "threshold")
_FORMAT_FIX = (
    "masking results need the columns run_id, status, flagged, fraction_all_rows and "
    "fraction_last_rows (docs/tables.md, notebook 07); produce them with `automd masking run`"
)


class MaskingResultsError(MaskingError):
    """A masking-results file is missing, unreadable or malformed."""


# --------------------------------------------------------------------------------------------------
# which runs
# --------------------------------------------------------------------------------------------------


def is_rerunnable(provenance: Mapping | None) -> bool:
    """Whether an archive's runs can be re-run by this toolkit: ``archive.yaml`` says it was built
    by one of :data:`RERUNNABLE_BUILDERS` (``provenance.built_by``)."""
    return isinstance(provenance, Mapping) and provenance.get("built_by") in RERUNNABLE_BUILDERS


def eligible_runs(
    store,
    *,
    experiment: str = "main",
    agents: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Runs the masking test applies to (paper App. G), from a loaded score store.

    A run is eligible when it belongs to ``experiment``, is not a simple-baseline run, is on a
    sequential task (``task_kind == "sequential"``) and its selected submission is valid; and its
    agent is in ``agents`` or, when ``agents`` is ``None``, it searched a tree
    (``runs.search == "tree"``: the AIDE- and AI-Scientist-like agents the paper tests).

    Returns
    -------
    DataFrame
        Run key + ``search``, ``selected_version``, ``submission_sha256``, sorted by ``run_id``.
    """
    runs, scores = store.runs, store.scores
    selected = scores[scores["is_selected"].astype(bool)].set_index("run_id")
    keep = (runs["experiment"] == experiment) & ~runs["reference"].astype(bool)
    keep &= runs["task_kind"].astype(str) == "sequential"
    keep &= runs["run_id"].map(selected["valid"]).fillna(False).astype(bool)
    if agents is None:
        keep &= runs["search"].astype(str) == "tree"
    else:
        keep &= runs["agent"].isin(list(agents))
    out = runs.loc[keep, ["run_id", "experiment", "agent", "llm", "task", "rep", "reference",
                          "search", "selected_version"]].copy()  # fmt: skip
    out["submission_sha256"] = out["run_id"].map(selected["submission_sha256"])
    return out.sort_values("run_id", kind="mergesort").reset_index(drop=True)


# --------------------------------------------------------------------------------------------------
# cache key
# --------------------------------------------------------------------------------------------------


def _file_digest(path: Path, root: Path) -> str:
    from automd_analysis.archive._safe import read_bounded

    return hashlib.sha256(read_bounded(path, 64 << 20, root)).hexdigest()


def run_cache_key(
    run_dir: str | Path,
    selected_version: str | None,
    submission_sha256: str | None,
    task_hash: str | None,
    seed: int,
    threshold: float,
) -> str:
    """sha256 of what a run's masking result depends on.

    ``run.json``, every file under ``code/<selected_version>/`` (relative path + content hash, in
    sorted order), the selected submission's hash, the task's content hash (manifest + pinned
    files: ``store.json`` ``tasks``), the seed, the threshold and the toolkit version. Files are
    read through the archive's bounded, inside-the-run reader.

    Raises
    ------
    ArchiveError
        A file is missing, too large or resolves outside the run directory.
    """
    run_dir = Path(run_dir)
    parts: list[object] = [
        "automd-masking-v1",
        __version__,
        _file_digest(run_dir / "run.json", run_dir),
        submission_sha256,
        task_hash,
        int(seed),
        repr(float(threshold)),
    ]
    if selected_version:
        code_dir = run_dir / "code" / selected_version
        if code_dir.is_dir():
            for path in sorted(p for p in code_dir.rglob("*") if p.is_file()):
                rel = path.relative_to(run_dir).as_posix()
                parts.append([rel, _file_digest(path, run_dir)])
    text = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------------
# reading and writing results
# --------------------------------------------------------------------------------------------------


def _table(frame: pd.DataFrame) -> pa.Table:
    columns = {}
    for name, dtype in MASKING_COLUMNS.items():
        values = frame[name].tolist() if name in frame else [None] * len(frame)
        clean = []
        for value in values:
            if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
                clean.append(None if dtype != pa.float64() else float("nan"))
            elif dtype == pa.int64():
                clean.append(int(value))
            elif dtype == pa.bool_():
                clean.append(bool(value))
            elif dtype == pa.float64():
                clean.append(float(value))
            else:
                clean.append(str(value))
        columns[name] = pa.array(clean, type=dtype)
    return pa.Table.from_pydict(columns, schema=SCHEMA)


def write_masking_results(frame: pd.DataFrame, path: str | Path) -> Path:
    """Write results (columns of :data:`MASKING_COLUMNS`; missing ones null) as Parquet.

    Rows are sorted by ``run_id``; the file is written to a temporary name and renamed, so a crash
    never leaves a partial file and the same rows always give the same bytes.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = frame.sort_values("run_id", kind="mergesort") if len(frame) else frame
    table = _table(frame.reset_index(drop=True))
    with atomic_path(path, prefix=".tmp-") as tmp:
        pq.write_table(table, tmp, compression="zstd", version="2.6")
    return path


def _bad(path: Path, message: str, location: str | None = None, **details) -> MaskingResultsError:
    return MaskingResultsError(
        message,
        path=path,
        location=location,
        code="masking.results_invalid",
        fix=_FORMAT_FIX,
        details=details,
    )


def _rows(mask: np.ndarray) -> str:
    """``rows 2, 5`` (1-based file lines, header = line 1) of the first offending rows."""
    return "rows " + ", ".join(str(int(i) + 2) for i in np.flatnonzero(mask)[:5])


def _as_bool(series: pd.Series, name: str, path: Path) -> pd.Series:
    mapping = {"true": True, "false": False, "1": True, "0": False, "": None}
    if series.dtype == bool:
        return series.astype("boolean")
    text = series.map(lambda v: None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else str(v).strip().lower())  # fmt: skip
    bad = text.notna() & ~text.isin(list(mapping))
    if bad.any():
        raise _bad(path, f"column {name!r} must hold true/false", _rows(bad.to_numpy()))
    return text.map(lambda v: None if v is None else mapping[v]).astype("boolean")


def _as_number(series: pd.Series, name: str, path: Path, integer: bool) -> pd.Series:
    if pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
        values = pd.to_numeric(series, errors="coerce")  # Parquet: keep every bit of the value
        bad = values.notna() & (values % 1 != 0) if integer else values.isna() & False
        if bad.any():
            raise _bad(path, f"column {name!r} must hold integers", _rows(bad.to_numpy()))
        return values.astype("Int64") if integer else values.astype(float)
    text = series.astype("string").str.strip()
    text = text.mask(text.str.lower() == "nan", "")  # "nan" (pandas' float text) = empty

    def parse(value) -> float:
        # Python's float is correctly rounded (pandas' text parser can be one ulp off)
        if value is pd.NA or value == "":
            return math.nan
        try:
            number = float(value)
        except ValueError:
            return math.nan
        return number if math.isfinite(number) else math.nan

    values = pd.Series([parse(v) for v in text], index=series.index, dtype=float)
    bad = text.notna() & (text != "") & values.isna()
    if integer:
        bad |= values.notna() & ((values % 1) != 0)
    if bad.any():
        kind = "integers" if integer else "numbers"
        raise _bad(path, f"column {name!r} must hold {kind}", _rows(bad.to_numpy()))
    return values.astype("Int64") if integer else values.astype(float)


def read_masking_results(path: str | Path, *, missing_ok: bool = False) -> pd.DataFrame | None:
    """Read and check masking results (``masking.parquet`` or a user-supplied ``.csv``).

    Checks: the :data:`REQUIRED_COLUMNS` are present; ``run_id`` is unique and of the form
    ``<experiment>/<agent>/<task>/rep<k>``, and agrees with the ``experiment``, ``agent``, ``task``
    and ``rep`` columns when they are given (they are filled from it otherwise); ``status`` is one
    of :data:`STATUSES`; ``flagged`` is true exactly for ``violation`` and empty only for
    ``error``; the fractions lie in [0, 1] (empty only for ``error``); counts are non-negative
    integers. In CSV text an empty field (or ``nan``) is a missing value. Unknown extra columns
    are kept.

    Parameters
    ----------
    path : path
        ``.parquet`` or ``.csv`` (UTF-8, header row; booleans ``true``/``false``).
    missing_ok : bool
        Return ``None`` instead of raising when the file does not exist.

    Returns
    -------
    DataFrame or None
        Every column of :data:`MASKING_COLUMNS` (missing optional ones null), sorted by ``run_id``.

    Raises
    ------
    MaskingResultsError
        ``masking.results_missing`` / ``masking.results_invalid``, naming the file, the column and
        the offending rows.
    """
    path = Path(path)
    if not path.is_file():
        if missing_ok and not path.exists():
            return None
        raise MaskingResultsError(
            "masking results file not found",
            path=path,
            code="masking.results_missing",
            fix="run `automd masking run ARCHIVE` (demo archives) or pass the results file of "
            "a masking test run elsewhere",
        )
    try:
        if path.suffix.lower() == ".csv":
            frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False)
        else:
            frame = pd.read_parquet(path)
    except Exception as exc:  # pandas/pyarrow raise many unrelated types for unreadable files
        raise _bad(path, f"cannot read the masking results: {type(exc).__name__}: {exc}") from None
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise _bad(path, f"missing column(s) {missing}", "header")
    frame = frame.reset_index(drop=True)
    run_ids = frame["run_id"].astype("string")
    parsed = run_ids.str.extract(_RUN_ID)
    bad = parsed[0].isna().to_numpy()
    if bad.any():
        raise _bad(path, "run_id must look like <experiment>/<agent>/<task>/rep<k>", _rows(bad))
    dup = run_ids.duplicated().to_numpy()
    if dup.any():
        raise _bad(path, "run_id must be unique", _rows(dup))
    out = pd.DataFrame({"run_id": run_ids.astype(str)})
    derived = {"experiment": parsed[0], "agent": parsed[1], "task": parsed[2],
               "rep": parsed[3].astype(int)}  # fmt: skip
    for name, values in derived.items():
        if name in frame.columns:
            given = frame[name].astype(str).str.strip()
            differs = (given != values.astype(str)).to_numpy()
            if differs.any():
                raise _bad(path, f"column {name!r} disagrees with run_id", _rows(differs))
        out[name] = values.to_numpy()
    out["rep"] = out["rep"].astype("Int64")
    for name in MASKING_COLUMNS:
        if name in out.columns:
            continue
        if name not in frame.columns:
            out[name] = pd.Series([pd.NA] * len(frame), dtype="object")
            continue
        if name in _BOOL_COLUMNS:
            out[name] = _as_bool(frame[name], name, path)
        elif name in _INT_COLUMNS:
            out[name] = _as_number(frame[name], name, path, integer=True)
        elif name in _FLOAT_COLUMNS:
            out[name] = _as_number(frame[name], name, path, integer=False)
        else:
            text = frame[name].astype("string")
            out[name] = text.where(text.notna() & (text != ""), None).astype(object)
    for name in _FLOAT_COLUMNS:
        out[name] = pd.to_numeric(out[name], errors="coerce").astype(float)
    for name in _INT_COLUMNS:
        out[name] = pd.array(pd.to_numeric(out[name], errors="coerce"), dtype="Int64")
    for name in _BOOL_COLUMNS:
        out[name] = out[name].astype("boolean")
    status = out["status"].astype("string")
    bad = (~status.isin(list(STATUSES))).fillna(True).to_numpy()
    if bad.any():
        raise _bad(path, f"status must be one of {list(STATUSES)}", _rows(bad))
    is_error = (status == "error").to_numpy(dtype=bool)
    flagged = out["flagged"]
    wrong = np.where(
        is_error,
        flagged.notna().to_numpy() & flagged.fillna(False).to_numpy(dtype=bool),
        flagged.isna().to_numpy() | (flagged.fillna(False).to_numpy(dtype=bool)
                                     != (status == "violation").to_numpy(dtype=bool)),
    )  # fmt: skip
    if wrong.any():
        raise _bad(path, "flagged must be true exactly when status is 'violation' (empty or "
                   "false for 'error')", _rows(wrong))  # fmt: skip
    for name in ("fraction_all_rows", "fraction_last_rows"):
        values = out[name].to_numpy(dtype=float)
        bad = (~is_error & ~np.isfinite(values)) | (np.isfinite(values) & ((values < 0) | (values > 1)))  # fmt: skip
        if bad.any():
            raise _bad(path, f"{name} must be a fraction in [0, 1] (empty only for errors)",
                       _rows(bad))  # fmt: skip
    for name in _INT_COLUMNS:
        negative = (out[name].fillna(0) < 0).to_numpy(dtype=bool)
        if negative.any():
            raise _bad(path, f"column {name!r} must not be negative", _rows(negative))
    extra = [c for c in frame.columns if c not in out.columns]
    for name in extra:
        out[name] = frame[name].to_numpy()
    out = out[[*MASKING_COLUMNS, *extra]]
    return out.sort_values("run_id", kind="mergesort").reset_index(drop=True)


# --------------------------------------------------------------------------------------------------
# running the test
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MaskingStepSummary:
    """What :func:`run_masking_step` did.

    Attributes
    ----------
    path : Path
        The results file written.
    n_eligible : int
        Eligible runs (one result row each).
    n_rerun, n_cached : int
        Runs re-run now / results reused from the previous file (unchanged cache key).
    n_flagged, n_errors : int
        Rows flagged as violations / rows whose re-run or comparison failed.
    """

    path: Path
    n_eligible: int
    n_rerun: int
    n_cached: int
    n_flagged: int
    n_errors: int

    def describe(self) -> str:
        """One line for the command line and the report index (no timing, no cache counts)."""
        return (
            f"masking test of the real-time rule (paper App. G): {self.n_eligible} eligible "
            f"run(s), {self.n_flagged} flagged, {self.n_errors} could not be tested"
        )


def _result_row(run: Mapping, seed: int, threshold: float, raw: Mapping | None, error: str | None):
    row = {name: run.get(name) for name in ("run_id", "experiment", "agent", "llm", "task", "rep",
                                            "reference", "search")}  # fmt: skip
    row.update(seed=int(seed), threshold=float(threshold), cache_key=run.get("cache_key"))
    if raw is None or raw.get("status") == "error":
        row.update(status="error", flagged=None, reason=error or (raw or {}).get("error"))
        return row
    row.update(
        status=raw["status"],
        flagged=bool(raw["violation"]),
        fraction_all_rows=raw["changed_fraction_rows"],
        fraction_last_rows=raw["changed_fraction_last"],
        n_retained_rows=raw["n_retained_rows"],
        n_changed_rows=raw["n_changed_rows"],
        n_patients=raw["n_patients"],
        n_changed_last=raw["n_changed_last"],
        reproduces_original=raw.get("reproduces_original"),
        n_changed_vs_original=raw.get("n_changed_vs_original"),
        reason=None,
    )
    return row


def _clean(value):
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def mask_task_runs(
    task_id: str,
    runs: Sequence[Mapping],
    archive: str | Path,
    *,
    seed: int,
    threshold: float = FLAG_THRESHOLD,
    data: str | Path | None = None,
    manifests: str | Path | None = None,
    rerun: Callable | None = None,
) -> list[dict]:
    """Masking-test the given runs of one task; one result row per run (never raises for a run).

    ``rerun(run_dir, test_features_csv, out_csv)`` re-fits a run's model on a test file; default:
    the demo harness's ``rerun_submission`` with ``data`` and ``manifests``. A task whose manifest
    or data cannot be used gives ``status == "error"`` rows naming the problem.
    """
    archive = Path(archive)
    if rerun is None:
        from automd_demo.harness.rerun import rerun_submission

        def rerun(run_dir, test_csv, out_csv):
            return rerun_submission(run_dir, test_csv, out_csv, data=data, manifests=manifests)

    dirs = {str(archive / run["run_id"]): run for run in runs}
    try:
        with tempfile.TemporaryDirectory(prefix="automd-masking-") as work:
            table = run_masking_test(list(dirs), task_id, seed, work, rerun=rerun,
                                     threshold=threshold, data=data, manifests=manifests)  # fmt: skip
    except AutomdError as exc:
        return [_result_row(run, seed, threshold, None, str(exc)) for run in runs]
    rows = []
    for record in table.to_dict("records"):
        record = {k: _clean(v) for k, v in record.items()}
        rows.append(_result_row(dirs[record["run_dir"]], seed, threshold, record, None))
    return rows


def _task_job(args: tuple) -> list[dict]:
    task_id, runs, archive, seed, threshold, data, manifests = args
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - scikit-learn depends on threadpoolctl
        return mask_task_runs(task_id, runs, archive, seed=seed, threshold=threshold, data=data,
                              manifests=manifests)  # fmt: skip
    with threadpool_limits(1):  # one BLAS/OpenMP thread per worker process
        return mask_task_runs(task_id, runs, archive, seed=seed, threshold=threshold, data=data,
                              manifests=manifests)  # fmt: skip


def _previous(path: Path) -> dict[str, dict]:
    """Rows of an earlier results file by cache key (an unreadable file counts as absent)."""
    try:
        frame = read_masking_results(path, missing_ok=True)
    except MaskingResultsError:
        return {}
    if frame is None:
        return {}
    rows = {}
    for record in frame.to_dict("records"):
        key = _clean(record.get("cache_key"))
        if key:
            rows[key] = {k: _clean(v) for k, v in record.items() if k in MASKING_COLUMNS}
    return rows


def run_masking_step(
    archive: str | Path,
    store,
    scores_dir: str | Path,
    *,
    seed: int = 0,
    experiment: str = "main",
    agents: Sequence[str] | None = None,
    threshold: float = FLAG_THRESHOLD,
    data: str | Path | None = None,
    manifests: str | Path | None = None,
    jobs: int = 1,
    force: bool = False,
    rerun: Callable | None = None,
    progress: bool = False,
) -> MaskingStepSummary:
    """Masking-test every eligible run of an archive and write ``<scores_dir>/masking.parquet``.

    Parameters
    ----------
    archive : path
        The runs archive (its runs are re-run with ``rerun``).
    store : ScoreStore
        The archive's loaded score store (validity, task kinds, search types, content hashes).
    scores_dir : path
        Where :data:`MASKING_FILE` is written (normally the score store's directory).
    seed : int
        Seed of the masked test file (one file per task, shared by its runs).
    experiment : str
        Experiment whose runs are tested (the archive's main role).
    agents : sequence of str, optional
        Agents to test; default: the tree-search agents (:func:`eligible_runs`).
    threshold : float
        Flagging threshold (paper: 0.1 %).
    data, manifests : path, optional
        Task data root and manifests for the re-runs.
    jobs : int
        Tasks tested in parallel (worker processes; only with the default ``rerun``).
    force : bool
        Re-run every run even when its cached result is current.
    rerun : callable, optional
        ``rerun(run_dir, test_features_csv, out_csv)``; default: the demo harness's
        ``rerun_submission``.
    progress : bool
        Show a progress bar over runs.

    Returns
    -------
    MaskingStepSummary
    """
    if jobs < 1:
        raise AutomdError(f"--jobs must be at least 1, got {jobs}", code="usage", fix="--jobs 1")
    archive = Path(archive)
    path = Path(scores_dir) / MASKING_FILE
    runs = eligible_runs(store, experiment=experiment, agents=agents)
    task_hashes = (store.meta or {}).get("tasks", {})
    previous = {} if force else _previous(path)
    rows, todo = [], {}
    for run in runs.to_dict("records"):
        run = {k: _clean(v) for k, v in run.items()}
        try:
            run["cache_key"] = run_cache_key(archive / run["run_id"], run.get("selected_version"),
                                             run.get("submission_sha256"),
                                             task_hashes.get(run["task"]), seed, threshold)  # fmt: skip
        except AutomdError as exc:
            rows.append(_result_row(run, seed, threshold, None, str(exc)))
            continue
        cached = previous.get(run["cache_key"])
        if cached is not None and cached.get("run_id") == run["run_id"]:
            rows.append(cached)
            continue
        todo.setdefault(run["task"], []).append(run)
    n_cached = len(rows)
    from tqdm.auto import tqdm

    bar = tqdm(total=sum(map(len, todo.values())), desc="masking test", unit="run",
               disable=not progress)  # fmt: skip
    try:
        args = [(task, task_runs, str(archive), seed, threshold,
                 None if data is None else str(data),
                 None if manifests is None else str(manifests))
                for task, task_runs in sorted(todo.items())]  # fmt: skip
        if jobs > 1 and rerun is None and len(args) > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(max_workers=min(jobs, len(args)), mp_context=ctx) as pool:
                for result in pool.map(_task_job, args):
                    rows.extend(result)
                    bar.update(len(result))
        else:
            for task, task_runs, *_ in args:
                result = mask_task_runs(task, task_runs, archive, seed=seed, threshold=threshold,
                                        data=data, manifests=manifests, rerun=rerun)  # fmt: skip
                rows.extend(result)
                bar.update(len(result))
    finally:
        bar.close()
    frame = pd.DataFrame(rows, columns=list(MASKING_COLUMNS))
    write_masking_results(frame, path)
    status = frame["status"].astype(str)
    return MaskingStepSummary(
        path=path,
        n_eligible=len(frame),
        n_rerun=len(frame) - n_cached,
        n_cached=n_cached,
        n_flagged=int((status == "violation").sum()),
        n_errors=int((status == "error").sum()),
    )


def agents_option(values: Iterable[str] | None) -> list[str] | None:
    """``--agents a --agents b`` or ``--agents a,b`` -> sorted unique names; empty -> ``None``."""
    names = sorted({v.strip() for item in values or () for v in str(item).split(",") if v.strip()})
    return names or None
