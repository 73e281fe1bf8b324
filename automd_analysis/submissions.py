"""Read and validate a submission file against a task (paper App. E; ``docs/tasks.md``).

Contract (used by ``scoring``; keep these names):

- :func:`validate_submission` ``(task, path, labels=None) -> ValidationResult`` never raises for a
  bad *submission*: every problem becomes a :class:`Reason` with a stable ``code``. It raises
  :class:`~automd_analysis.errors.DataError` only when the *task's own* data is missing or corrupt.
- On success, ``ValidationResult.predictions`` holds arrays **aligned to the row order of the hidden
  labels** (:func:`automd_analysis.tasks.load_labels`), so scoring never re-joins.

The file is read as UTF-8 text (a byte-order mark is dropped) by Python's :mod:`csv` reader in
strict mode, in batches of rows, so memory stays bounded by the test set rather than the file.
Quoted cells, CRLF line endings and blank lines are handled as that reader handles them. Reason
codes and their meaning are listed in :data:`~automd_analysis.reason_codes.REASON_CODES`;
:func:`~automd_analysis.reason_codes.paper_category` maps them to the categories of the paper's
invalid-submission breakdown (App. E).
"""

from __future__ import annotations

import csv
import hashlib
import os
import re
import stat
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from automd_analysis.reason_codes import (  # noqa: F401  (part of this module's contract)
    PAPER_CATEGORIES,
    REASON_CODES,
    paper_category,
)
from automd_analysis.tasks import (
    NA_STRINGS,
    Kind,
    Task,
    TaskLabels,
    load_labels,
    parse_floats,
    read_time_grid,
)

#: Examples kept per reason (offending rows / columns).
MAX_EXAMPLES = 5
#: Cells parsed per batch by the strict path (rows per batch = this / columns, at least 1,000):
#: about 100 MB of peak memory whatever the width of the file.
CHUNK_CELLS = 500_000
#: Longest example value echoed back (submissions are untrusted input).
_MAX_ECHO = 60
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_SNIFF_BYTES = 1 << 16


@dataclass(frozen=True)
class Reason:
    """One failed check: stable machine code, human message and a few offending rows/columns.

    ``count`` is how many rows / cells / columns failed the check (``examples`` holds at most
    :data:`MAX_EXAMPLES` of them); it is not part of the ``--json`` payload.
    """

    code: str
    message: str
    examples: list = field(default_factory=list)
    count: int = 1

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, "examples": list(self.examples)}


@dataclass(frozen=True)
class AlignedPredictions:
    """Validated predictions, aligned to the hidden-label row order.

    Attributes
    ----------
    probability : ndarray of float64, shape (n,) or None
        ``PredictedProbability`` (classification, sequential).
    label : ndarray of int8, shape (n,) or None
        ``PredictedLabel`` when the task requires it.
    surv : ndarray of float64, shape (n, G) or None
        Survival curves on the task grid (survival).
    time_grid : ndarray of float64, shape (G,) or None
    """

    probability: np.ndarray | None = None
    label: np.ndarray | None = None
    surv: np.ndarray | None = None
    time_grid: np.ndarray | None = None


@dataclass(frozen=True)
class ValidationResult:
    valid: bool
    reasons: list[Reason]
    predictions: AlignedPredictions | None
    sha256: str | None
    n_rows: int = 0

    def to_dict(self) -> dict:
        """The ``automd validate --json`` payload."""
        return {"valid": self.valid, "reasons": [r.to_dict() for r in self.reasons]}

    @property
    def codes(self) -> list[str]:
        """Reason codes in check order (the first is the score store's ``reason_code``)."""
        return [r.code for r in self.reasons]


# --------------------------------------------------------------------------------------------
# Validation


def default_max_bytes(n_rows: int, n_columns: int) -> int:
    """Default size limit of a submission: 16 MiB + 64 bytes per expected cell and row.

    A float written with full precision takes at most ~25 characters, so honest files stay far
    below this; the limit only stops pathological files before any parsing.
    """
    return (16 << 20) + n_rows * (64 * n_columns + 64)


def size_reason(
    task: Task, size: int, labels: TaskLabels | None = None, *, max_bytes: int | None = None
) -> Reason | None:
    """The ``file.too_large`` reason for a file of ``size`` bytes, or ``None`` if it may be read.

    The limit is ``max_bytes``, else the manifest's ``submission.max_bytes``, else
    :func:`default_max_bytes` for the task's test set. Checked before a file is hashed or parsed,
    so a huge (or sparse) file costs one ``stat``.
    """
    if labels is None:
        labels = load_labels(task)
    m = task.manifest
    if m.kind is Kind.survival:
        grid = labels.time_grid if labels.time_grid is not None else read_time_grid(task)[0]
        n_cols = len(m.submission.id_columns) + len(grid)
    else:
        n_cols = len(m.submission.id_columns) + 1 + (m.submission.label_column is not None)
    limit = max_bytes or m.submission.max_bytes or default_max_bytes(len(labels.ids), n_cols)
    if size <= limit:
        return None
    return Reason(
        "file.too_large",
        f"the file is {size:,} bytes, over the limit of {limit:,} bytes for this "
        f"task ({len(labels.ids):,} rows x {n_cols} columns expected)",
        [{"bytes": size, "limit": limit}],
    )


def validate_submission(
    task: Task,
    path: str | os.PathLike,
    labels: TaskLabels | None = None,
    *,
    root: str | os.PathLike | None = None,
    max_bytes: int | None = None,
    chunk_rows: int | None = None,
    engine: str = "auto",
) -> ValidationResult:
    """Check a submission file against a task and align its predictions to the hidden labels.

    Implements the validity rule of paper App. E (``docs/tasks.md``): exactly the required
    columns and test identifiers (sequential: patient-hours), no duplicates, probabilities finite
    in [0, 1], binary labels in {0, 1}, survival curves in [0, 1] and non-increasing along the
    grid. Rows may come in any order; survival columns in any order. A survival header matches a
    grid time when it is a plain decimal number whose float value equals the grid value exactly
    (``"12.5"`` and ``"12.50"`` both match grid time 12.5; ``"12.4999"`` does not).

    Parameters
    ----------
    task : Task
        The task (manifest bound to a data root).
    path : path-like
        The submission CSV.
    labels : TaskLabels, optional
        Pre-loaded hidden labels (scoring loads them once per task); loaded if omitted.
    root : path-like, optional
        If given, the file must resolve (following symlinks) inside this directory.
    max_bytes : int, optional
        Size limit; default ``submission.max_bytes`` of the manifest, else
        :func:`default_max_bytes` for the test set.
    chunk_rows : int, optional
        Rows parsed per batch by the strict path (memory bound); default
        ``max(1000, CHUNK_CELLS // columns)``. Results do not depend on it.
    engine : {"auto", "python"}
        ``"python"`` reads every file with the strict :mod:`csv` path, which defines the
        semantics and produces the reasons. ``"auto"`` (default) first tries a fast reader
        (pyarrow's streaming CSV reader, whose float parsing is correctly rounded like Python's
        ``float``) on files without quote characters and with a perfect header; it only ever
        confirms validity. At the first problem of any kind it stops and the file goes through
        the strict path, so verdicts, reasons and values are identical (tested).

    Returns
    -------
    ValidationResult
        ``valid`` with aligned predictions, or the failed checks as :class:`Reason` s in check
        order (file, CSV, columns, identifiers, values, ranges, monotonicity). Never raises for a
        bad submission.

    Raises
    ------
    DataError
        Only if the task's own data (labels, time grid) is missing, modified or malformed.
    """
    path = Path(path)
    reason = _check_path(path, root)
    if reason is not None:
        return ValidationResult(False, [reason], None, None)
    if labels is None:
        labels = load_labels(task)
    m = task.manifest
    grid = None
    if m.kind is Kind.survival:
        grid = labels.time_grid if labels.time_grid is not None else read_time_grid(task)[0]
    try:
        size = path.stat().st_size
        too_large = size_reason(task, size, labels, max_bytes=max_bytes)
        if too_large is not None:
            return ValidationResult(False, [too_large], None, None)
        digest, has_quote = _scan(path)
        with open(path, "rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError as exc:
        return ValidationResult(
            False, [Reason("file.unreadable", f"cannot read the file: {exc.strerror}")], None, None
        )
    if size <= len(head) and not head.removeprefix(b"\xef\xbb\xbf").strip(b" \t\r\n"):
        return ValidationResult(
            False, [Reason("file.empty", "the file is empty (no header row)")], None, digest
        )
    if b"\x00" in head:
        offset = head.index(b"\x00")
        return ValidationResult(
            False,
            [
                Reason(
                    "file.binary",
                    "the file contains NUL bytes: it is binary (or UTF-16), not a UTF-8 CSV",
                    [{"byte_offset": offset}],
                )
            ],
            None,
            digest,
        )
    if engine not in ("auto", "python"):
        raise ValueError(f"engine must be 'auto' or 'python', got {engine!r}")
    if engine == "auto" and not has_quote:
        fast = _fast_validate(task, labels, grid, path)
        if fast is not None:
            preds, n_rows = fast
            return ValidationResult(True, [], preds, digest, n_rows)
    checker = _Checker(task, labels, grid, path)
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            checker.run(csv.reader(fh, strict=True), chunk_rows)
    except OSError as exc:
        checker.fail("file.unreadable", f"cannot read the file: {exc.strerror}")
    return checker.result(digest)


def _scan(path: Path, block: int = 1 << 20) -> tuple[str, bool]:
    """sha256 of the file and whether it contains a double-quote byte, in one pass."""
    h = hashlib.sha256()
    has_quote = False
    with open(path, "rb") as fh:
        while chunk := fh.read(block):
            h.update(chunk)
            has_quote = has_quote or b'"' in chunk
    return h.hexdigest(), has_quote


@dataclass
class _LabelKeys:
    """Lookup structures for the test keys of one TaskLabels (built once, cached)."""

    index: pd.Index  # "id" or "patient\x1fhour" strings, label order
    first_values: object = None  # the distinct first-column values (object array)
    int_keys_sorted: np.ndarray | None = None  # sequential: code * 2**32 + hour, sorted
    int_order: np.ndarray | None = None  # label row of each sorted key
    arrow_values: object = None  # first_values as a pyarrow string array (built once, on use)
    row_firsts: object = None  # the first id column of every label row (object array)
    row_hours: np.ndarray | None = None  # sequential: the hour of every label row
    arrow_rows: object = None  # row_firsts as a pyarrow string array (built once, on use)

    def value_set(self, pa):
        """``first_values`` as a pyarrow string array, for ``pyarrow.compute.index_in``."""
        if self.arrow_values is None:
            self.arrow_values = pa.array(self.first_values, type=pa.string())
        return self.arrow_values

    def row_ids(self, pa):
        """``row_firsts`` as a pyarrow string array (label order)."""
        if self.arrow_rows is None:
            self.arrow_rows = pa.array(self.row_firsts, type=pa.string())
        return self.arrow_rows


_KEYS_CACHE: dict[int, tuple[weakref.ref, _LabelKeys]] = {}


def _label_keys(labels: TaskLabels, sequential: bool) -> _LabelKeys:
    hit = _KEYS_CACHE.get(id(labels))
    if hit is not None and hit[0]() is labels:
        return hit[1]
    ids = labels.ids
    first = ids.iloc[:, 0].astype(str)
    keys = first
    for col in ids.columns[1:]:
        keys = keys + "\x1f" + ids[col].astype(str)
    out = _LabelKeys(pd.Index(keys.to_numpy(dtype=object)))
    if sequential:
        codes, uniques = pd.factorize(first)
        out.first_values = np.asarray(uniques, dtype=object)
        int_keys = codes.astype(np.int64) * (1 << 32) + ids.iloc[:, 1].astype(np.int64).to_numpy()
        out.int_order = np.argsort(int_keys, kind="stable")
        out.int_keys_sorted = int_keys[out.int_order]
        out.row_hours = ids.iloc[:, 1].astype(np.int64).to_numpy()
    else:
        out.first_values = first.to_numpy(dtype=object)
    out.row_firsts = first.to_numpy(dtype=object)
    _KEYS_CACHE[id(labels)] = (
        weakref.ref(labels, lambda _r, k=id(labels): _KEYS_CACHE.pop(k, None)),
        out,
    )
    return out


def canonical_hours(texts: np.ndarray) -> np.ndarray:
    """Vectorised :func:`automd_analysis.tasks.canonical_hour` (object array; None if not
    an integer)."""
    values = parse_floats(texts)
    integral = np.isfinite(values) & (values == np.trunc(values))
    small = integral & (np.abs(values) < 2**53)
    out = np.full(len(values), None, dtype=object)
    if small.any():
        out[small] = values[small].astype(np.int64).astype(str).astype(object)
    for i in np.flatnonzero(integral & ~small):
        out[i] = str(int(values[i]))
    return out


def _positions(labels: TaskLabels, sequential: bool, id_cells: np.ndarray):
    """Label position of each row's key (-1 if not a test key), and a key-text function.

    Patient ids are looked up with pyarrow's hash join (``index_in``) and, for sequential
    tasks, combined with the canonical hour into an integer key found by binary search.
    ``key(i)`` gives row ``i``'s key text (used to find repeated unknown keys).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    lk = _label_keys(labels, sequential)
    n = len(labels.ids)
    first = id_cells[:, 0]
    codes = pc.index_in(pa.array(first.tolist(), type=pa.string()), value_set=lk.value_set(pa))
    codes = codes.to_numpy(zero_copy_only=False)
    codes = np.where(np.isnan(codes), -1, codes).astype(np.int64)
    if sequential:
        raw = id_cells[:, 1]
        canon = canonical_hours(raw)
        ok = (codes >= 0) & np.array([c is not None and len(c) < 11 for c in canon], dtype=bool)
        pos = np.full(len(first), -1, dtype=np.int64)
        if ok.any():
            hours = np.array([int(c) for c in canon[ok]], dtype=np.int64)
            k = codes[ok] * (1 << 32) + hours
            valid_hour = (hours >= 0) & (hours < (1 << 32))
            i = np.searchsorted(lk.int_keys_sorted, k)
            i_clip = np.minimum(i, n - 1)
            hit = valid_hour & (i < n) & (lk.int_keys_sorted[i_clip] == k)
            sub = np.full(len(k), -1, dtype=np.int64)
            sub[hit] = lk.int_order[i_clip[hit]]
            pos[ok] = sub

        def key(i: int) -> str:
            h = canon[i]
            return f"{first[i]}\x1f{h}" if h is not None else f"{first[i]}\x1e{raw[i]}"

        return pos, key
    if id_cells.shape[1] == 1:
        return codes, lambda i: str(first[i])
    joined = ["\x1f".join(map(str, r)) for r in id_cells]  # pragma: no cover - 2 id columns
    pos = lk.index.get_indexer(pd.Index(joined, dtype=object))  # pragma: no cover
    return pos, lambda i: joined[i]  # pragma: no cover


def _rows_in_label_order(pa, pc, keys: _LabelKeys, cols: list, sequential: bool, start: int):
    """Whether a batch's rows are the test keys of label rows ``start, start + 1, ...`` in that
    order (how most submissions are written): then those are their positions, with no lookup."""
    m = len(cols[0])
    if len(cols) != (2 if sequential else 1) or start + m > len(keys.row_firsts):
        return False
    if not pc.all(pc.equal(cols[0], keys.row_ids(pa).slice(start, m))).as_py():
        return False
    if sequential:  # the same test as the lookup's: a whole number equal to the label's hour
        return bool(np.array_equal(cols[1].to_numpy(zero_copy_only=False),
                                   keys.row_hours[start : start + m]))  # fmt: skip
    return True


def _fast_positions(pa, pc, keys: _LabelKeys, cols: list, sequential: bool, n: int):
    """Label positions of a batch's rows, or None if any row is not a test key."""
    value_set = keys.value_set(pa)
    if sequential:
        hour = cols[1].to_numpy(zero_copy_only=False)
        if not (np.isfinite(hour).all() and (hour >= 0).all() and (hour < 2**31).all()):
            return None
        if (hour != np.floor(hour)).any():
            return None
        codes = pc.index_in(cols[0], value_set=value_set)
        if codes.null_count:
            return None
        k = codes.to_numpy().astype(np.int64) * (1 << 32) + hour.astype(np.int64)
        i = np.searchsorted(keys.int_keys_sorted, k)
        if (i >= n).any() or (keys.int_keys_sorted[np.minimum(i, n - 1)] != k).any():
            return None
        return keys.int_order[i]
    if len(cols) == 1:
        pos = pc.index_in(cols[0], value_set=value_set)
        if pos.null_count:
            return None
        return pos.to_numpy().astype(np.int64)
    joined = pd.Series(cols[0].to_numpy(zero_copy_only=False), dtype=object)  # pragma: no cover
    for extra in cols[1:]:  # pragma: no cover - no task has two non-hour id columns
        joined = joined + "\x1f" + pd.Series(extra.to_numpy(zero_copy_only=False), dtype=object)
    pos = keys.index.get_indexer(pd.Index(joined.to_numpy(dtype=object)))  # pragma: no cover
    return None if (pos < 0).any() else pos  # pragma: no cover


#: Bytes of CSV per batch of the fast reader: a block that stays in the processor's cache while
#: pyarrow splits it into fields and converts them is parsed about twice as fast as a 16 MB one
#: (docs/performance.md, "Scoring at paper scale").
_FAST_BLOCK_BYTES = 1 << 20


def _arrow_csv_options(pa, pacsv, ck: _Checker, ncols: int):
    """pyarrow's read, parse and convert options of the fast reader: ids as strings (a
    sequential task's hour as a number), every other column a float, no quotes in values, no
    nulls."""
    names = [f"c{i}" for i in range(ncols)]
    types = {name: pa.float64() for name in names}
    id_pos = ck.id_pos
    for k, pos in enumerate(id_pos):
        if not (ck.sequential and k == 1):
            types[names[pos]] = pa.string()
    read_opts = pacsv.ReadOptions(
        column_names=names, skip_rows=1, use_threads=False, block_size=_FAST_BLOCK_BYTES
    )
    parse_opts = pacsv.ParseOptions(
        delimiter=",",
        quote_char='"',
        double_quote=True,
        escape_char=False,
        newlines_in_values=False,
        ignore_empty_lines=True,
    )
    conv_opts = pacsv.ConvertOptions(
        column_types=types,
        null_values=[],
        true_values=[],
        false_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        check_utf8=True,
    )
    return read_opts, parse_opts, conv_opts


def _fast_validate(task: Task, labels: TaskLabels, grid, path: Path):
    """Confirm a well-formed file quickly; ``None`` means "use the strict path".

    Returns ``(AlignedPredictions, n_rows)`` only when the header is exactly right on line 1
    and pyarrow reads every row (no quotes, no nulls, every number parsed) with all checks
    passing. Anything else - an exception, a missing/extra/duplicate id, a value out of range -
    returns None without a verdict: the strict path then decides and explains.
    """
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.csv as pacsv
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        return None
    ck = _Checker(task, labels, grid, path)
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            reader = csv.reader(fh, strict=True)
            header = next(reader, None)
            if not header or reader.line_num != 1:
                return None
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    if not ck.header(header) or ck.tallies:
        return None
    read_opts, parse_opts, conv_opts = _arrow_csv_options(pa, pacsv, ck, len(header))
    n = ck.n
    keys = _label_keys(labels, ck.sequential)
    seen = np.zeros(n, dtype=bool)
    prob = np.full(n, np.nan) if ck.sub.probability_column in ck.pred_pos else None
    label = np.full(n, np.nan) if ck.sub.label_column in ck.pred_pos else None
    surv = ck.surv
    n_rows = 0
    try:
        with pacsv.open_csv(
            path, read_options=read_opts, parse_options=parse_opts, convert_options=conv_opts
        ) as stream:
            for batch in stream:
                start, n_rows = n_rows, n_rows + batch.num_rows
                if batch.num_rows == 0:
                    continue
                cols = [batch.column(p) for p in ck.id_pos]
                in_order = _rows_in_label_order(pa, pc, keys, cols, ck.sequential, start)
                if in_order:
                    pos = np.arange(start, n_rows)  # distinct by construction
                    if seen[start:n_rows].any():
                        return None
                else:
                    pos = _fast_positions(pa, pc, keys, cols, ck.sequential, n)
                    if pos is None or seen[pos].any():
                        return None
                    if len(pos) > 1 and np.bincount(pos, minlength=n).max() > 1:
                        return None
                seen[pos] = True
                if surv is not None:  # in label order: straight into place, no scatter
                    mat = surv[start:n_rows] if in_order else np.empty((len(pos), surv.shape[1]))
                    columns = [batch.column(p).to_numpy(zero_copy_only=False) for p in ck.grid_pos]
                    np.stack(columns, axis=1, out=mat)
                    if not ((mat >= 0) & (mat <= 1)).all():  # NaN and infinities fail too
                        return None
                    if (mat[:, 1:] > mat[:, :-1]).any():  # a curve increases
                        return None
                    if not in_order:
                        surv[pos] = mat
                if prob is not None:
                    v = batch.column(ck.pred_pos[ck.sub.probability_column]).to_numpy()
                    if not np.isfinite(v).all() or (v < 0).any() or (v > 1).any():
                        return None
                    prob[pos] = v
                if label is not None:
                    v = batch.column(ck.pred_pos[ck.sub.label_column]).to_numpy()
                    if not np.isin(v, (0.0, 1.0)).all():
                        return None
                    label[pos] = v
    except (pa.ArrowException, OSError, ValueError):
        return None
    if not seen.all():
        return None
    preds = AlignedPredictions(
        probability=prob,
        label=None if label is None else label.astype(np.int8),
        surv=surv,
        time_grid=None if grid is None else np.asarray(grid, dtype=np.float64),
    )
    return preds, n_rows


def _check_path(path: Path, root: str | os.PathLike | None) -> Reason | None:
    try:
        if not os.path.lexists(path):
            return Reason("file.missing", "the submission file does not exist", [str(path)[-200:]])
        resolved = path.resolve(strict=True)
    except FileNotFoundError:
        return Reason("file.missing", "the path is a broken symlink", [str(path)[-200:]])
    except (OSError, RuntimeError) as exc:  # loops, permission errors
        return Reason("file.unreadable", f"cannot resolve the path: {exc}")
    if root is not None:
        root_resolved = Path(root).resolve()
        if not resolved.is_relative_to(root_resolved):
            return Reason(
                "file.outside_root",
                "the path resolves outside the allowed directory",
                [{"resolved": str(resolved)[-200:], "root": str(root_resolved)[-200:]}],
            )
    try:
        mode = resolved.stat().st_mode
    except OSError as exc:
        return Reason("file.unreadable", f"cannot stat the file: {exc.strerror}")
    if not stat.S_ISREG(mode):
        what = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        return Reason("file.not_regular", f"the path is {what}")
    return None


def _bad_number_code(raw: str, value: float) -> str:
    """Classify a cell that did not parse to a finite number."""
    if np.isinf(value) or raw.lower().lstrip("+-") in {"inf", "infinity", "nan"}:
        return "values.non_finite"
    if raw in NA_STRINGS:
        return "values.missing"
    return "values.non_numeric"


def _first_invalid_utf8(path: Path, block: int = 1 << 16) -> dict:
    """Line (1-based) and byte offset of the first byte that is not valid UTF-8."""
    import codecs

    decoder = codecs.getincrementaldecoder("utf-8")()
    offset, line = 0, 1
    with open(path, "rb") as fh:
        while chunk := fh.read(block):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                good = chunk[: max(exc.start, 0)]
                return {"line": line + good.count(b"\n"), "byte_offset": offset + exc.start}
            line += chunk.count(b"\n")
            offset += len(chunk)
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return {"line": line, "byte_offset": offset}
    return {"line": line, "byte_offset": offset}  # pragma: no cover - only called on error


def _echo(value: object) -> str:
    text = str(value)
    return text if len(text) <= _MAX_ECHO else text[: _MAX_ECHO - 3] + "..."


class _Tally:
    """Count of one failed check plus its first few examples."""

    __slots__ = ("count", "examples")

    def __init__(self) -> None:
        self.count = 0
        self.examples: list = []

    def add(self, n: int, examples: list) -> None:
        self.count += n
        room = MAX_EXAMPLES - len(self.examples)
        if room > 0:
            self.examples.extend(examples[:room])


class _Checker:
    """Streaming state of one validation: header, id matching, value checks, aligned arrays."""

    def __init__(self, task: Task, labels: TaskLabels, grid, path: Path) -> None:
        m = task.manifest
        self.path = path
        self.kind = m.kind
        self.unit = m.sizes.unit
        self.sub = m.submission
        self.labels = labels
        self.grid = grid
        self.id_cols = list(m.submission.id_columns)
        self.sequential = m.kind is Kind.sequential
        self.n = len(labels.ids)
        self.seen = np.zeros(self.n, dtype=bool)
        self.tallies: dict[str, _Tally] = {}
        self.messages: dict[str, str] = {}
        self.complete = True  # False once reading stopped early (parse/encoding error)
        self.n_rows = 0
        self.extra_seen: set[str] = set()
        self.pred_pos: dict[str, int] = {}
        self.grid_pos: list[int] = []  # header position of each grid column, grid order
        self.prob = self.label = self.surv = None

    @property
    def key_index(self) -> pd.Index:
        """Test keys (id, or patient id + hour) in label order, as a hashed index."""
        return _label_keys(self.labels, self.sequential).index

    # -- bookkeeping --------------------------------------------------------------------
    def tally(self, code: str, n: int = 1, examples: list | None = None) -> None:
        self.tallies.setdefault(code, _Tally()).add(n, examples or [])

    def fail(self, code: str, message: str, examples: list | None = None) -> None:
        self.tally(code, 1, examples)
        self.messages[code] = message
        self.complete = False

    # -- header ---------------------------------------------------------------------------
    def header(self, columns: list[str]) -> bool:
        """Check the header; return False when no row can be matched (id column missing)."""
        counts: dict[str, int] = {}
        for c in columns:
            counts[c] = counts.get(c, 0) + 1
        dups = [c for c, k in counts.items() if k > 1]
        if dups:
            self.tally("columns.duplicate", len(dups), [{"column": _echo(c)} for c in dups])
        first = {}
        for pos, c in enumerate(columns):
            first.setdefault(c, pos)
        missing_ids = [c for c in self.id_cols if c not in first]
        self.id_pos = [first[c] for c in self.id_cols if c in first]
        if self.kind is Kind.survival:
            self._survival_header(columns, first)
        else:
            wanted = [self.sub.probability_column]
            if self.sub.label_column:
                wanted.append(self.sub.label_column)
            missing = missing_ids + [c for c in wanted if c not in first]
            if missing:
                self.tally("columns.missing", len(missing), [{"column": c} for c in missing])
            extra = [c for c in first if c not in {*self.id_cols, *wanted}]
            if extra:
                self.tally("columns.extra", len(extra), [{"column": _echo(c)} for c in extra])
            self.pred_pos = {c: first[c] for c in wanted if c in first}
        if missing_ids and self.kind is Kind.survival:
            self.tally("columns.missing", len(missing_ids), [{"column": c} for c in missing_ids])
        return not missing_ids

    def _survival_header(self, columns: list[str], first: dict[str, int]) -> None:
        grid = self.grid
        lookup = {float(t): k for k, t in enumerate(grid)}
        grid_pos = [-1] * len(grid)
        extra, dup = [], []
        for c, pos in first.items():
            if c in self.id_cols:
                continue
            text = c.strip()
            k = lookup.get(float(text)) if _NUMBER.match(text) else None
            if k is None:
                extra.append(c)
            elif grid_pos[k] >= 0:
                dup.append(c)
            else:
                grid_pos[k] = pos
        if extra:
            self.tally("columns.grid_extra", len(extra), [{"column": _echo(c)} for c in extra])
        if dup:
            self.tally("columns.grid_duplicate", len(dup), [{"column": _echo(c)} for c in dup])
        missing = [k for k, p in enumerate(grid_pos) if p < 0]
        if missing:
            self.tally(
                "columns.grid_missing",
                len(missing),
                [{"grid_time": repr(float(grid[k]))} for k in missing],
            )
        self.grid_pos = grid_pos
        self.surv = np.full((self.n, len(grid)), np.nan)

    # -- rows ---------------------------------------------------------------------------------
    def run(self, reader, chunk_rows: int | None) -> None:
        """Read the header and every row; rows read before a parse error are still checked."""
        batch: list[list[str]] = []
        lines: list[int] = []
        started = False
        can_match = False
        try:
            header = next(reader, None)
            while header is not None and len(header) == 0:  # leading blank lines
                header = next(reader, None)
            if header is None:
                self.fail("file.empty", "the file has no header row")
                return
            self.ncols = len(header)
            if chunk_rows is None:
                chunk_rows = max(1_000, CHUNK_CELLS // max(1, self.ncols))
            can_match = self.header(header)
            if self.sub.probability_column in self.pred_pos:
                self.prob = np.full(self.n, np.nan)
            if self.sub.label_column in self.pred_pos:
                self.label = np.full(self.n, np.nan)
            started = True
            for row in reader:
                if not row:
                    continue
                batch.append(row)
                lines.append(reader.line_num)
                if len(batch) >= chunk_rows:
                    self.batch(batch, lines, can_match)
                    batch, lines = [], []
        except UnicodeDecodeError as exc:
            self.fail(
                "file.encoding",
                "the file is not valid UTF-8 text",
                [{**_first_invalid_utf8(self.path), "detail": _echo(exc.reason)}],
            )
        except csv.Error as exc:
            self.fail(
                "csv.malformed",
                f"the CSV cannot be parsed: {_echo(exc)}",
                [{"line": reader.line_num, "detail": _echo(exc)}],
            )
        if started and batch:
            self.batch(batch, lines, can_match)
        if not can_match:
            self.complete = False

    def batch(self, rows: list[list[str]], lines: list[int], can_match: bool) -> None:
        self.n_rows += len(rows)
        ncols = self.ncols
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        ragged = lengths != ncols
        if ragged.any():
            bad = np.flatnonzero(ragged)
            self.tally(
                "csv.ragged",
                len(bad),
                [{"line": lines[i], "fields": int(lengths[i]), "expected": ncols} for i in bad],
            )
            rows = [r if len(r) == ncols else (r + [""] * ncols)[:ncols] for r in rows]
        cells = np.array(rows, dtype=object).reshape(len(rows), ncols)
        line_arr = np.asarray(lines)
        pos = self._match(cells, line_arr) if can_match else None
        ok_rows = ~ragged
        if self.kind is Kind.survival:
            self._survival_values(cells, line_arr, pos, ok_rows)
        else:
            self._binary_values(cells, line_arr, pos, ok_rows)

    def _match(self, cells: np.ndarray, lines: np.ndarray) -> np.ndarray:
        """Positions of each row in the label order (-1: not a test id; -2: duplicate)."""
        id_cells = cells[:, self.id_pos]
        pos, keys = _positions(self.labels, self.sequential, id_cells)
        prefix = "rows" if self.sequential else "ids"
        extra = np.flatnonzero(pos < 0)
        dups: list[int] = []
        if len(extra):
            self.tally(
                f"{prefix}.extra",
                len(extra),
                [
                    {"line": int(lines[i]), **self._id_example(id_cells[i])}
                    for i in extra[:MAX_EXAMPLES]
                ],
            )
            for i in extra:
                k = keys(int(i))
                if k in self.extra_seen:
                    dups.append(int(i))
                elif len(self.extra_seen) < 100_000:
                    self.extra_seen.add(k)
        known = np.flatnonzero(pos >= 0)
        if len(known):
            p = pos[known]
            first_in_batch = ~pd.Series(p).duplicated().to_numpy()
            is_dup = self.seen[p] | ~first_in_batch
            dup_rows = known[is_dup]
            dups.extend(int(i) for i in dup_rows)
            pos[dup_rows] = -2
            self.seen[p[~is_dup]] = True
        if dups:
            dups.sort()  # file order, whatever the batching
            self.tally(
                f"{prefix}.duplicate",
                len(dups),
                [
                    {"line": int(lines[i]), **self._id_example(id_cells[i])}
                    for i in dups[:MAX_EXAMPLES]
                ],
            )
        return pos

    def _id_example(self, row) -> dict:
        return {c: _echo(v) for c, v in zip(self.id_cols, row, strict=True)}

    def _parse_block(self, cells, lines, names: list[str], positions: list[int], ok):
        """Numbers of the value columns (one block, row-major); tallies bad cells in file order.

        Empty / NA, non-numeric and non-finite cells are tallied row by row, then by column
        position, so the kept examples do not depend on the batch size.
        """
        block = cells[:, positions]
        values = parse_floats(block)
        bad = ~np.isfinite(values) & ok[:, None]
        if bad.any():
            order = np.argsort(positions, kind="stable")  # header order within a row
            rows, cols = np.nonzero(bad[:, order])
            for i, j in zip(rows, order[cols], strict=True):
                raw = str(block[i, j]).strip()
                example = {"line": int(lines[i]), "column": names[j], "value": _echo(raw)}
                self.tally(_bad_number_code(raw, values[i, j]), 1, [example])
        return values

    def _binary_values(self, cells, lines, pos, ok) -> None:
        targets = [
            (column, target)
            for column, target in (
                (self.sub.probability_column, "prob"),
                (self.sub.label_column, "label"),
            )
            if column is not None and column in self.pred_pos
        ]
        if not targets:
            return
        names = [c for c, _ in targets]
        block = self._parse_block(cells, lines, names, [self.pred_pos[c] for c in names], ok)
        for j, (column, target) in enumerate(targets):
            values = block[:, j]
            col = self.pred_pos[column]
            finite = np.isfinite(values) & ok
            if target == "prob":
                bad = finite & ((values < 0) | (values > 1))
                code = "probability.out_of_range"
            else:
                bad = finite & ~np.isin(values, (0.0, 1.0))
                code = "label.not_binary"
            if bad.any():
                idx = np.flatnonzero(bad)
                self.tally(
                    code,
                    len(idx),
                    [
                        {"line": int(lines[i]), "column": column, "value": _echo(cells[i, col])}
                        for i in idx[:MAX_EXAMPLES]
                    ],
                )
            if pos is not None:
                keep = pos >= 0
                getattr(self, target)[pos[keep]] = values[keep]

    def _survival_values(self, cells, lines, pos, ok) -> None:
        present = [(k, p) for k, p in enumerate(self.grid_pos) if p >= 0]
        if not present:
            return
        names = [repr(float(self.grid[k])) for k, _ in present]
        mat = self._parse_block(cells, lines, names, [p for _, p in present], ok)
        finite = np.isfinite(mat) & ok[:, None]
        out = finite & ((mat < 0) | (mat > 1))
        if out.any():
            r, c = np.nonzero(out)
            self.tally(
                "survival.out_of_range",
                int(out.any(axis=1).sum()),
                [
                    {
                        "line": int(lines[i]),
                        "column": repr(float(self.grid[present[j][0]])),
                        "value": float(mat[i, j]),
                    }
                    for i, j in zip(r[:MAX_EXAMPLES], c[:MAX_EXAMPLES], strict=True)
                ],
            )
        rows_ok = finite.all(axis=1)
        if mat.shape[1] > 1:
            rise = (np.diff(mat, axis=1) > 0) & rows_ok[:, None]
            if rise.any():
                r, c = np.nonzero(rise)
                _, first = np.unique(r, return_index=True)
                self.tally(
                    "survival.increasing",
                    len(first),
                    [
                        {
                            "line": int(lines[r[f]]),
                            "from_time": float(self.grid[present[c[f]][0]]),
                            "to_time": float(self.grid[present[c[f] + 1][0]]),
                            "values": [float(mat[r[f], c[f]]), float(mat[r[f], c[f] + 1])],
                        }
                        for f in first
                    ],
                )
        if pos is not None:
            keep = np.flatnonzero(pos >= 0)
            cols = [k for k, _ in present]
            self.surv[np.ix_(pos[keep], cols)] = mat[keep]

    # -- verdict ----------------------------------------------------------------------------
    def result(self, digest: str) -> ValidationResult:
        if self.complete and not self.seen.all():
            missing = np.flatnonzero(~self.seen)
            prefix = "rows" if self.sequential else "ids"
            ex = [
                {c: str(v) for c, v in zip(self.id_cols, self.labels.ids.iloc[i], strict=True)}
                for i in missing[:MAX_EXAMPLES]
            ]
            self.tally(f"{prefix}.missing", len(missing), ex)
        reasons = [
            Reason(
                code, self.messages.get(code) or self._message(code, t.count), t.examples, t.count
            )
            for code, t in sorted(self.tallies.items(), key=lambda kv: _ORDER[kv[0]])
        ]
        if reasons:
            return ValidationResult(False, reasons, None, digest, self.n_rows)
        preds = AlignedPredictions(
            probability=self.prob,
            label=None if self.label is None else self.label.astype(np.int8),
            surv=self.surv,
            time_grid=None if self.grid is None else np.asarray(self.grid, dtype=np.float64),
        )
        return ValidationResult(True, [], preds, digest, self.n_rows)

    def _message(self, code: str, n: int) -> str:
        unit = "patient-hour" if self.sequential else self.unit.removesuffix("s")
        grid_size = 0 if self.grid is None else len(self.grid)
        templates = {
            "csv.ragged": ("row has", "rows have", "a different number of fields than the header"),
            "columns.duplicate": ("column name appears", "column names appear", "more than once"),
            "columns.missing": ("required column is", "required columns are", "missing"),
            "columns.extra": ("column is", "columns are", "not part of the submission format"),
            "columns.grid_missing": (
                f"of {grid_size} time-grid points has",
                f"of {grid_size} time-grid points have",
                "no survival column (headers must be the grid times as written in time_grid.csv)",
            ),
            "columns.grid_extra": (
                "survival column header is",
                "survival column headers are",
                "not a time-grid point",
            ),
            "columns.grid_duplicate": (
                "survival column header repeats",
                "survival column headers repeat",
                "a grid time",
            ),
            "ids.missing": (
                f"of {self.n:,} test {unit}s is",
                f"of {self.n:,} test {unit}s are",
                "missing",
            ),
            "ids.extra": (
                f"row has an identifier that is not a test {unit}",
                f"rows have identifiers that are not test {unit}s",
                "",
            ),
            "ids.duplicate": ("row repeats", "rows repeat", "an identifier"),
            "rows.missing": (
                f"of {self.n:,} test patient-hours is",
                f"of {self.n:,} test patient-hours are",
                "missing",
            ),
            "rows.extra": ("row is not a test patient-hour", "rows are not test patient-hours", ""),
            "rows.duplicate": ("row repeats", "rows repeat", "a patient-hour"),
            "values.missing": ("prediction cell is", "prediction cells are", "empty or NA"),
            "values.non_numeric": ("prediction cell is", "prediction cells are", "not a number"),
            "values.non_finite": ("prediction cell is", "prediction cells are", "NaN or infinite"),
            "probability.out_of_range": ("probability is", "probabilities are", "outside [0, 1]"),
            "label.not_binary": ("predicted label is", "predicted labels are", "not 0 or 1"),
            "survival.out_of_range": (
                "survival curve has",
                "survival curves have",
                "values outside [0, 1]",
            ),
            "survival.increasing": (
                "survival curve increases",
                "survival curves increase",
                "along the time grid",
            ),
        }
        if code not in templates:
            return REASON_CODES.get(code, code)
        one, many, rest = templates[code]
        return f"{n:,} {one if n == 1 else many} {rest}".rstrip()


_ORDER = {code: i for i, code in enumerate(REASON_CODES)}
