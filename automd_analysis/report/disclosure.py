"""Small-cell suppression of published tables and figures (statistical disclosure control).

Reports built from credentialed data (MIMIC-IV, eICU) or data under a data-use agreement (SEER)
get shared; their data-use terms forbid publishing counts of very few patients, which can
identify them. A task manifest records its access terms (``source.access``); for tasks whose
access is ``credentialed`` or ``dua``, every count of patients, patient-hours or events below a
threshold is hidden before a table is exported or displayed:

- a count column (:data:`COUNT_COLUMNS` of the table) shows ``<11`` instead of the number;
- rows that *describe* a small group - a reliability bin, a subgroup - are withheld altogether
  (:data:`WITHHOLD_BELOW`), because their mean prediction and observed rate describe those few
  patients too; figures drawn from these tables then leave them out.

The threshold defaults to 11 (the common cell-size convention: publish nothing below 11). It is
changed with ``automd regenerate --min-cell N``: an explicit N applies to *every* task, public ones
included (so a public demo shows what a credentialed report would look like); ``0`` disables
suppression. The policy in force is stated on the report index. Agent-level counts (runs, tasks,
versions) are not patient counts and are never suppressed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "COUNT_COLUMNS",
    "DEFAULT_MIN_CELL",
    "RESTRICTED_ACCESS",
    "WITHHOLD_BELOW",
    "DisclosurePolicy",
    "disclosure_policy",
    "report_disclosure",
]

#: The common minimum cell size.
DEFAULT_MIN_CELL = 11
#: Manifest ``source.access`` values whose data may not be published at the patient level.
RESTRICTED_ACCESS = frozenset({"credentialed", "dua"})
#: Per exported table: columns holding counts of patients, patient-hours or events.
COUNT_COLUMNS: Mapping[str, tuple[str, ...]] = {
    "reliability_bins": ("n",),
    "subgroup_results": ("n_mean",),
    "masking_runs": ("n_retained_rows", "n_changed_rows", "n_patients", "n_changed_last"),
}
#: Per exported table: rows are withheld when this count column is below the threshold.
WITHHOLD_BELOW: Mapping[str, str] = {"reliability_bins": "n", "subgroup_results": "n_mean"}
#: Column names that hold patient-level counts in any table.
_GENERIC_COUNTS = ("n_patients", "n_events", "n_patient_hours")


@dataclass(frozen=True)
class DisclosurePolicy:
    """Which tasks' counts are suppressed, and below which value.

    Attributes
    ----------
    min_cell : int
        Counts ``< min_cell`` are hidden; ``0`` disables suppression.
    tasks : frozenset of str or None
        Tasks the policy applies to; ``None`` means every task.
    """

    min_cell: int = DEFAULT_MIN_CELL
    tasks: frozenset[str] | None = frozenset()

    @property
    def active(self) -> bool:
        """Whether anything can be suppressed at all."""
        return self.min_cell > 0 and (self.tasks is None or bool(self.tasks))

    @property
    def label(self) -> str:
        """How a hidden count is shown (``<11``)."""
        return f"<{self.min_cell}"

    def describe(self) -> str:
        """One line for the report index."""
        if self.min_cell <= 0:
            return "small-cell suppression: off (--min-cell 0)"
        scope = (
            "every task"
            if self.tasks is None
            else "credentialed / data-use-agreement tasks ("
            + (", ".join(sorted(self.tasks)) if self.tasks else "none in this archive")
            + ")"
        )
        return (
            f"small-cell suppression: patient and event counts below {self.min_cell} are shown "
            f"as {self.label} and such bins and subgroups withheld, for {scope}"
        )

    def _rows(self, frame: pd.DataFrame) -> np.ndarray:
        if self.tasks is None or "task" not in frame.columns:
            return np.full(len(frame), self.tasks is None or bool(self.tasks))
        return frame["task"].astype(str).isin(self.tasks).to_numpy()

    def apply(self, frame: pd.DataFrame, name: str) -> pd.DataFrame:
        """``frame`` as it may be published under table name ``name`` (a copy when changed).

        Rows of restricted tasks whose :data:`WITHHOLD_BELOW` count is below ``min_cell`` are
        dropped; remaining counts below it in :data:`COUNT_COLUMNS` (and generic patient-count
        columns) become the text ``<min_cell>``.

        Examples
        --------
        >>> frame = pd.DataFrame({"task": ["a", "a", "b"], "n_patients": [3, 40, 5]})
        >>> DisclosurePolicy(11, frozenset({"a"})).apply(frame, "any")["n_patients"].tolist()
        ['<11', 40, 5]
        """
        if not self.active or frame.empty:
            return frame
        restricted = self._rows(frame)
        out = frame
        withhold = WITHHOLD_BELOW.get(name)
        if withhold in frame.columns:
            small = pd.to_numeric(frame[withhold], errors="coerce").to_numpy(dtype=float)
            drop = restricted & np.isfinite(small) & (small < self.min_cell)
            if drop.any():
                out = frame.loc[~drop].reset_index(drop=True)
                restricted = restricted[~drop]
        columns = [c for c in (*COUNT_COLUMNS.get(name, ()), *_GENERIC_COUNTS) if c in out.columns]
        for column in dict.fromkeys(columns):
            values = pd.to_numeric(out[column], errors="coerce").to_numpy(dtype=float)
            small = restricted & np.isfinite(values) & (values < self.min_cell)
            if small.any():
                out = out.copy() if out is frame else out
                cells = out[column].astype(object)
                cells[small] = self.label
                out[column] = cells
        return out


def disclosure_policy(
    min_cell: int | None, task_access: Mapping[str, str | None], tasks: Iterable[str] = ()
) -> DisclosurePolicy:
    """The policy of a report.

    Parameters
    ----------
    min_cell : int or None
        ``None``: the default threshold for restricted tasks only; an int: that threshold for
        every task (``0`` disables suppression).
    task_access : mapping
        Task id -> manifest ``source.access``.
    tasks : iterable of str
        Tasks in the report (restricted ones among them are listed on the index).

    Examples
    --------
    >>> disclosure_policy(None, {"mimic": "credentialed", "demo": "public"}, ["mimic", "demo"]).tasks
    frozenset({'mimic'})
    >>> disclosure_policy(5, {}, ["demo"]).tasks is None
    True
    """
    if min_cell is not None:
        return DisclosurePolicy(int(min_cell), None)
    restricted = {
        t for t in tasks if str(task_access.get(t) or "").strip().lower() in RESTRICTED_ACCESS
    }
    return DisclosurePolicy(DEFAULT_MIN_CELL, frozenset(restricted))


def report_disclosure(store, min_cell: int | None) -> DisclosurePolicy:
    """The small-cell policy of a report on ``store`` (task access terms from its ``tasks``
    table). A task without recorded access terms counts as restricted (the safe side)."""
    from automd_analysis.analysis.store import task_access

    tasks = sorted(set(store.runs["task"].astype(str)))
    access = task_access(store)
    return disclosure_policy(min_cell, {t: access.get(t, "credentialed") for t in tasks}, tasks)
