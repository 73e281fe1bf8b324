"""Compare two runs of the pipeline: score stores and published tables, file by file.

Usage (from the repository root, in the project's venv)::

    .venv/bin/python tools/compare_outputs.py BEFORE AFTER [--digits 12] [--json]

BEFORE and AFTER are each a report folder (``reports/``: its ``tables/`` are compared), a score
store folder (``scores/demo``: every ``*.parquet`` is compared) or a folder holding both
(``--store scores/demo --tables reports/tables`` relative to it; the default looks for
``scores/*/`` and ``reports/tables``).

Every file is first compared byte for byte. A file that differs is compared value by value:
Parquet tables by column (dtype, then cells; floats exactly and at ``--digits`` significant
digits), CSV tables as text cells, floats also at ``--digits`` significant digits. The summary
says how many files are identical, how many differ only beyond ``--digits`` digits, and lists
every file with a real difference with its first differing cells. Exit 0 when every file is
identical or equal at ``--digits`` digits, 1 otherwise.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
from pathlib import Path

import pandas as pd


def _round(value, digits: int):
    if isinstance(value, float) and math.isfinite(value) and value != 0:
        return float(f"%.{digits}g" % value)
    return 0.0 if value == 0 and isinstance(value, float) else value


def _cells(frame: pd.DataFrame, digits: int) -> list[list]:
    return [[_round(v, digits) for v in row] for row in frame.itertuples(index=False)]


def _csv(path: Path) -> pd.DataFrame:
    text = path.read_text()
    frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
    return frame.apply(lambda col: col.map(_as_number))


def _as_number(text: str):
    try:
        return float(text) if any(c in text for c in ".eE") or text.lstrip("-").isdigit() else text
    except ValueError:
        return text


def _frames(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path) if path.suffix == ".parquet" else _csv(path)


def compare_file(a: Path, b: Path, digits: int) -> dict:
    """``{"status": "identical" | "equal_at_digits" | "different", "detail": [...]}``."""
    if a.read_bytes() == b.read_bytes():
        return {"status": "identical", "detail": []}
    if a.suffix not in (".parquet", ".csv"):
        return {"status": "different", "detail": ["bytes differ (not a table)"]}
    fa, fb = _frames(a), _frames(b)
    detail = []
    if list(fa.columns) != list(fb.columns):
        gone = [c for c in fa.columns if c not in fb.columns]
        new = [c for c in fb.columns if c not in fa.columns]
        return {"status": "different", "detail": [f"columns: removed {gone}, added {new}"]}
    if len(fa) != len(fb):
        return {"status": "different", "detail": [f"rows: {len(fa)} -> {len(fb)}"]}
    if a.suffix == ".parquet":
        dtypes = [c for c in fa.columns if str(fa[c].dtype) != str(fb[c].dtype)]
        if dtypes:
            detail.append(f"dtypes differ: {dtypes}")
    ca, cb = _cells(fa, digits), _cells(fb, digits)
    for i, (ra, rb) in enumerate(zip(ca, cb, strict=True)):
        for column, x, y in zip(fa.columns, ra, rb, strict=True):
            same = x == y or (pd.isna(x) is True and pd.isna(y) is True)  # NaN/NaT/None alike
            if not same:
                detail.append(f"row {i} {column}: {x!r} -> {y!r}")
                if len(detail) >= 5:
                    return {"status": "different", "detail": detail}
    return {"status": "different" if detail else "equal_at_digits", "detail": detail}


def _files(root: Path) -> dict[str, Path]:
    out = {}
    for pattern in ("scores/*/*.parquet", "scores/*/masking.parquet", "reports/tables/*",
                    "tables/*", "*.parquet"):  # fmt: skip
        for path in sorted(root.glob(pattern)):
            if path.is_file():
                out[str(path.relative_to(root))] = path
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--digits", type=int, default=12)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    before, after = _files(args.before), _files(args.after)
    result = {"only_before": sorted(set(before) - set(after)),
              "only_after": sorted(set(after) - set(before)), "files": {}}  # fmt: skip
    for name in sorted(set(before) & set(after)):
        result["files"][name] = compare_file(before[name], after[name], args.digits)
    counts = {s: sum(r["status"] == s for r in result["files"].values())
              for s in ("identical", "equal_at_digits", "different")}  # fmt: skip
    if args.json:
        print(json.dumps({**result, "counts": counts}, indent=1))
    else:
        print(f"{len(result['files'])} files in both: {counts['identical']} identical, "
              f"{counts['equal_at_digits']} equal at {args.digits} significant digits, "
              f"{counts['different']} different")  # fmt: skip
        for key in ("only_before", "only_after"):
            for name in result[key]:
                print(f"  {key.replace('_', ' ')}: {name}")
        for name, r in result["files"].items():
            if r["status"] == "different":
                print(f"  different: {name}")
                for line in r["detail"]:
                    print(f"      {line}")
    real = counts["different"] or result["only_before"] or result["only_after"]
    return 1 if real else 0


if __name__ == "__main__":
    sys.exit(main())
