"""The masking-results format: ``masking.parquet`` in the score store, or a user-supplied file.

Masking results are *data*: the report reads them and never re-runs anything to get them. They come
from ``automd masking run ARCHIVE --allow-code-execution`` (:mod:`.step`), or from a masking test
run elsewhere and handed over as CSV/Parquet (``automd regenerate --masking-results FILE``).

One row per tested run (:data:`MASKING_COLUMNS`), sorted by ``run_id``:

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
- ``isolation``: how the re-run was isolated (e.g. ``process+netns`` or ``process``: see
  docs/security.md);
- ``cache_key``: sha256 of everything the result depends on; a later run reuses a row whose key is
  unchanged.

A results file supplied by the user needs only ``run_id, status, flagged, fraction_all_rows,
fraction_last_rows`` (:data:`REQUIRED_COLUMNS`); the other columns are optional and the experiment,
agent, task and repetition are read from ``run_id`` when absent (:func:`read_masking_results` checks
all of it). Masking results never change validity or scores (paper App. E).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from automd_analysis._atomic import atomic_path
from automd_analysis.masking.procedure import MaskingError
from automd_analysis.schema import MASKING_COLUMNS, MASKING_SCHEMA

__all__ = [
    "MASKING_COLUMNS",
    "MASKING_FILE",
    "REQUIRED_COLUMNS",
    "STATUSES",
    "MaskingResultsError",
    "read_masking_results",
    "write_masking_results",
]

#: File name of the results inside the score-store directory.
MASKING_FILE = "masking.parquet"
#: Result statuses, in display order.
STATUSES: tuple[str, ...] = ("violation", "below_threshold", "no_change", "error")

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
    "fraction_last_rows (docs/tables.md, notebook 07); produce them with `automd masking run --allow-code-execution`"
)


class MaskingResultsError(MaskingError):
    """A masking-results file is missing, unreadable or malformed."""


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
    return pa.Table.from_pydict(columns, schema=MASKING_SCHEMA)


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
