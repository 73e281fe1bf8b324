"""Check a submission file for this task before you submit it.

Usage:  python validate.py submission.csv [--json]

Exit status 0 if the file is valid, 1 if not (the reasons are printed), 2 on a usage error.
Needs only pandas. It applies the same checks, with the same reason codes, as the benchmark's
scorer (automd-analysis `validate_submission`): exactly the required columns and test identifiers,
no duplicates, probabilities finite in [0, 1], labels in {0, 1}, survival curves in [0, 1] and
non-increasing along the time grid. It does not compute any score.
"""

import csv
import json
import os
import re
import stat
import sys

import numpy as np
import pandas as pd

CONFIG = {}  # @@CONFIG@@ (filled in when the task is built)

NA_STRINGS = {
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
}  # fmt: skip
NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
ORDER = [
    "file.missing", "file.not_regular", "file.outside_root", "file.unreadable", "file.empty",
    "file.too_large", "file.binary", "file.encoding", "csv.malformed", "csv.ragged",
    "columns.duplicate", "columns.missing", "columns.extra", "columns.grid_missing",
    "columns.grid_extra", "columns.grid_duplicate", "ids.missing", "ids.extra", "ids.duplicate",
    "rows.missing", "rows.extra", "rows.duplicate", "values.missing", "values.non_numeric",
    "values.non_finite", "probability.out_of_range", "label.not_binary",
    "survival.out_of_range", "survival.increasing",
]  # fmt: skip
MAX_EXAMPLES = 5


def here(name):
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), name)


def canonical_hour(text):
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    if "_" in str(text) or not str(text).isascii():
        return None
    if not np.isfinite(value) or value != int(value):
        return None
    return str(int(value))


def expected_keys():
    """Test identifiers (sequential: patient id + hour) from test_features.csv."""
    ids = pd.read_csv(
        here(CONFIG["test_file"]),
        usecols=CONFIG["id_columns"],
        dtype=str,
        keep_default_na=False,
        encoding="utf-8-sig",
    )[CONFIG["id_columns"]]
    if CONFIG["kind"] == "sequential":
        hours = ids.iloc[:, 1].map(canonical_hour)
        keys = ids.iloc[:, 0] + "\x1f" + hours
        return list(dict.fromkeys(keys)), ids
    keys = ids.iloc[:, 0]
    for col in ids.columns[1:]:
        keys = keys + "\x1f" + ids[col]
    return list(keys), ids


def time_grid():
    cells = pd.read_csv(here(CONFIG["grid_file"]), dtype=str, keep_default_na=False)["time"]
    return parse_floats(cells.to_numpy())


class Report:
    def __init__(self):
        self.counts = {}
        self.examples = {}

    def add(self, code, n=1, examples=()):
        self.counts[code] = self.counts.get(code, 0) + n
        ex = self.examples.setdefault(code, [])
        ex.extend(list(examples)[: MAX_EXAMPLES - len(ex)])


def bad_number_code(raw, value):
    if np.isinf(value) or raw.lower().lstrip("+-") in {"inf", "infinity", "nan"}:
        return "values.non_finite"
    if raw in NA_STRINGS:
        return "values.missing"
    return "values.non_numeric"


def parse_floats(cells):
    """Exact (correctly rounded) float parsing, as Python's float(); non-numbers become NaN."""
    arr = np.asarray(cells, dtype=object)
    try:
        values = arr.astype(np.float64)
    except (ValueError, TypeError):
        values = np.array([float_or_nan(x) for x in arr], dtype=np.float64)
    joined = "".join(map(str, arr))
    if "_" in joined or not joined.isascii():
        values[np.array(["_" in str(x) or not str(x).isascii() for x in arr], dtype=bool)] = np.nan
    return values


def float_or_nan(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return float("nan")


def parse(report, cells, lines, column, ok):
    values = parse_floats(cells)
    for i in np.flatnonzero(~np.isfinite(values) & ok):
        raw = str(cells[i]).strip()
        report.add(bad_number_code(raw, values[i]), 1, [{"line": int(lines[i]), "column": column}])
    return values


def check(path):
    report = Report()
    kind = CONFIG["kind"]
    id_cols = CONFIG["id_columns"]
    sequential = kind == "sequential"
    prefix = "rows" if sequential else "ids"
    if not os.path.lexists(path):
        report.add("file.missing")
        return report
    try:
        mode = os.stat(path).st_mode
    except OSError:
        report.add("file.missing")
        return report
    if not stat.S_ISREG(mode):
        report.add("file.not_regular")
        return report
    keys, _ = expected_keys()
    key_pos = {k: i for i, k in enumerate(keys)}
    grid = time_grid() if kind == "survival" else None
    n_cols = len(id_cols) + (len(grid) if grid is not None else 1 + bool(CONFIG["label_column"]))
    limit = CONFIG.get("max_bytes") or (16 << 20) + len(keys) * (64 * n_cols + 64)
    if os.path.getsize(path) > limit:
        report.add("file.too_large")
        return report
    with open(path, "rb") as fh:
        head = fh.read(1 << 16)
    if os.path.getsize(path) <= len(head) and not head.removeprefix(b"\xef\xbb\xbf").strip(
        b" \t\r\n"
    ):
        report.add("file.empty")
        return report
    if b"\x00" in head:
        report.add("file.binary")
        return report

    rows, lines, header = [], [], None
    complete = True
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, strict=True)
        try:
            header = next(reader, None)
            while header is not None and len(header) == 0:
                header = next(reader, None)
            if header is None:
                report.add("file.empty")
                return report
            for row in reader:
                if row:
                    rows.append(row)
                    lines.append(reader.line_num)
        except UnicodeDecodeError:
            report.add("file.encoding")
            complete = False
        except csv.Error:
            report.add("csv.malformed")
            complete = False
    if not header:  # the error came before a header row was read
        return report

    # Columns.
    counts = {}
    for c in header:
        counts[c] = counts.get(c, 0) + 1
    dups = [c for c, k in counts.items() if k > 1]
    if dups:
        report.add("columns.duplicate", len(dups), [{"column": c} for c in dups])
    first = {}
    for pos, c in enumerate(header):
        first.setdefault(c, pos)
    missing_ids = [c for c in id_cols if c not in first]
    pred = {}
    grid_pos = []
    if kind == "survival":
        lookup = {float(t): k for k, t in enumerate(grid)}
        grid_pos = [-1] * len(grid)
        extra, dup = [], []
        for c, pos in first.items():
            if c in id_cols:
                continue
            text = c.strip()
            k = lookup.get(float(text)) if NUMBER.match(text) else None
            if k is None:
                extra.append(c)
            elif grid_pos[k] >= 0:
                dup.append(c)
            else:
                grid_pos[k] = pos
        if extra:
            report.add("columns.grid_extra", len(extra), [{"column": c} for c in extra])
        if dup:
            report.add("columns.grid_duplicate", len(dup), [{"column": c} for c in dup])
        gaps = [k for k, p in enumerate(grid_pos) if p < 0]
        if gaps:
            report.add(
                "columns.grid_missing", len(gaps), [{"grid_time": repr(grid[k])} for k in gaps]
            )
        if missing_ids:
            report.add("columns.missing", len(missing_ids), [{"column": c} for c in missing_ids])
    else:
        wanted = [CONFIG["probability_column"]] + (
            [CONFIG["label_column"]] if CONFIG["label_column"] else []
        )
        missing = missing_ids + [c for c in wanted if c not in first]
        if missing:
            report.add("columns.missing", len(missing), [{"column": c} for c in missing])
        extra = [c for c in first if c not in set(id_cols) | set(wanted)]
        if extra:
            report.add("columns.extra", len(extra), [{"column": c} for c in extra])
        pred = {c: first[c] for c in wanted if c in first}
    can_match = not missing_ids
    if not rows:
        if complete and can_match and keys:
            report.add(f"{prefix}.missing", len(keys))
        return report

    ncols = len(header)
    lengths = np.array([len(r) for r in rows])
    ragged = lengths != ncols
    if ragged.any():
        report.add(
            "csv.ragged", int(ragged.sum()), [{"line": lines[i]} for i in np.flatnonzero(ragged)]
        )
        rows = [r if len(r) == ncols else (r + [""] * ncols)[:ncols] for r in rows]
    cells = np.array(rows, dtype=object).reshape(len(rows), ncols)
    lines = np.asarray(lines)
    ok = ~ragged

    # Identifiers.
    if can_match:
        id_cells = cells[:, [first[c] for c in id_cols]]
        if sequential:
            row_keys = []
            for p, h in id_cells:
                ch = canonical_hour(h)
                row_keys.append(f"{p}\x1f{ch}" if ch is not None else f"{p}\x1e{h}")
        else:
            row_keys = ["\x1f".join(map(str, r)) for r in id_cells]
        seen = set()
        extra_seen = set()
        for i, k in enumerate(row_keys):
            if k not in key_pos:
                report.add(f"{prefix}.extra", 1, [{"line": int(lines[i])}])
                if k in extra_seen:
                    report.add(f"{prefix}.duplicate", 1, [{"line": int(lines[i])}])
                elif len(extra_seen) < 100_000:
                    extra_seen.add(k)
            elif k in seen:
                report.add(f"{prefix}.duplicate", 1, [{"line": int(lines[i])}])
            else:
                seen.add(k)

    # Values.
    if kind == "survival":
        present = [(k, p) for k, p in enumerate(grid_pos) if p >= 0]
        if present:
            mat = np.column_stack(
                [parse(report, cells[:, p], lines, repr(grid[k]), ok) for k, p in present]
            )
            finite = np.isfinite(mat) & ok[:, None]
            out = finite & ((mat < 0) | (mat > 1))
            if out.any():
                report.add("survival.out_of_range", int(out.any(axis=1).sum()))
            if mat.shape[1] > 1:
                rise = (np.diff(mat, axis=1) > 0) & finite.all(axis=1)[:, None]
                if rise.any():
                    report.add("survival.increasing", int(rise.any(axis=1).sum()))
    else:
        for column, code in (
            (CONFIG["probability_column"], "probability.out_of_range"),
            (CONFIG["label_column"], "label.not_binary"),
        ):
            if not column or column not in pred:
                continue
            values = parse(report, cells[:, pred[column]], lines, column, ok)
            finite = np.isfinite(values) & ok
            if code == "probability.out_of_range":
                bad = finite & ((values < 0) | (values > 1))
            else:
                bad = finite & ~np.isin(values, (0.0, 1.0))
            if bad.any():
                report.add(
                    code, int(bad.sum()), [{"line": int(lines[i])} for i in np.flatnonzero(bad)]
                )

    if complete and can_match and len(seen) < len(keys):
        report.add(f"{prefix}.missing", len(keys) - len(seen))
    return report


def main(argv):
    args = [a for a in argv if a != "--json"]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    report = check(args[0])
    codes = sorted(report.counts, key=ORDER.index)
    if "--json" in argv:
        payload = {
            "valid": not codes,
            "reasons": [
                {"code": c, "count": report.counts[c], "examples": report.examples[c]}
                for c in codes
            ],
        }
        print(json.dumps(payload))
    elif codes:
        print(f"INVALID: {args[0]}")
        for c in codes:
            print(f"  {c}: {report.counts[c]} (e.g. {report.examples[c][:3]})")
    else:
        print(f"valid: {args[0]}")
    return 1 if codes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
