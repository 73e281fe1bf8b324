"""Scan published tables for an estimate outside its own interval and for a p-value that
disagrees with its interval, driven by the table declarations (a new table is scanned as soon
as it is declared).

- every declared interval (``Table.intervals_in``: ``X`` with ``X_ci_low``/``X_ci_high``, the
  bare ``ci_low``/``ci_high`` of ``diff_mean``/``estimate``/``value``, per-agent columns) must
  contain its estimate: ``low <= X <= high`` at 12 significant digits
  (:func:`automd_analysis.precision.comparable`) wherever all three are finite;
- in a table with ``p_value`` beside its one estimate's bare ``ci_low``/``ci_high`` (the
  pairwise comparisons), "p < 0.05" must equal "the 95 % interval excludes 0" on every row.

Used by ``tests/test_published_intervals.py``; ``python tests/interval_scan.py TABLES_DIR`` scans
a report's ``tables/`` folder and prints every violation (exit status 1 when there is one).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from automd_analysis.analysis import catalog
from automd_analysis.precision import comparable

ALPHA = 0.05


def scan_frame(name: str, frame: pd.DataFrame) -> list[str]:
    """Violations in one published table (empty for a table the catalog does not declare)."""
    declared = catalog.table(name)
    if declared is None:
        return []
    found = []
    for column, (low, high) in declared.intervals_in(frame).items():
        if column not in frame.columns:
            continue
        if not {low, high} <= set(frame.columns):
            found.append(f"{name}: {column} without its interval columns {low}, {high}")
            continue
        x, lo, hi = (
            comparable(pd.to_numeric(frame[c], errors="coerce")) for c in (column, low, high)
        )
        finite = np.isfinite(x) & np.isfinite(lo) & np.isfinite(hi)
        outside = finite & ((x < lo) | (x > hi))
        for i in np.flatnonzero(outside.to_numpy()):
            found.append(
                f"{name} row {i}: {column} = {x.iloc[i]:.12g} outside "
                f"[{lo.iloc[i]:.12g}, {hi.iloc[i]:.12g}]"
            )
    bare = declared.intervals.get("diff_mean") or declared.intervals.get("estimate")
    if bare == ("ci_low", "ci_high") and "p_value" in frame.columns:
        p = pd.to_numeric(frame["p_value"], errors="coerce")
        lo = pd.to_numeric(frame["ci_low"], errors="coerce")
        hi = pd.to_numeric(frame["ci_high"], errors="coerce")
        finite = np.isfinite(p) & np.isfinite(lo) & np.isfinite(hi)
        disagree = finite & ((p < ALPHA) != ((lo > 0) | (hi < 0)))
        for i in np.flatnonzero(disagree.to_numpy()):
            found.append(
                f"{name} row {i}: p_value = {p.iloc[i]:.12g} but interval "
                f"[{lo.iloc[i]:.12g}, {hi.iloc[i]:.12g}]"
            )
    return found


def scan_tables(tables_dir: str | Path) -> list[str]:
    """:func:`scan_frame` of every ``<name>.csv`` in ``tables_dir``."""
    found = []
    for path in sorted(Path(tables_dir).glob("*.csv")):
        frame = pd.read_csv(path, keep_default_na=False, na_values=[""])
        found += scan_frame(path.stem, frame)
    return found


if __name__ == "__main__":
    problems = scan_tables(sys.argv[1])
    print("\n".join(problems) or "no violations")
    sys.exit(1 if problems else 0)
