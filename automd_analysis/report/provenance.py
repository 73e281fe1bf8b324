"""What a report says about the archive it comes from: the provenance line under every page title,
and the mark of synthetic tasks wherever a task name is shown (tables, figure titles).

The task facts come from the score store (``store.tasks``, column ``synthetic``, published by the
scorer from the task manifests), the description from ``archive.yaml`` (field ``description``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import pandas as pd

from automd_analysis.analysis.store import ScoreStore

__all__ = [
    "SYNTHETIC_FOOTNOTE",
    "SYNTHETIC_MARK",
    "mark_synthetic",
    "provenance_line",
    "synthetic_tasks",
    "task_label",
]

#: The mark after a synthetic task's name on the report's pages (declared once; its footnote is
#: :data:`SYNTHETIC_FOOTNOTE`).
SYNTHETIC_MARK = "\u2020"
SYNTHETIC_FOOTNOTE = f"{SYNTHETIC_MARK} synthetic task: generated data, not patients."


def synthetic_tasks(store: ScoreStore) -> list[str]:
    """The tasks the score store marks synthetic (``tasks.synthetic``, from their manifests)."""
    tasks = store.tasks
    if tasks is None or tasks.empty or "synthetic" not in tasks:
        return []
    return sorted(str(t) for t in tasks.loc[tasks["synthetic"].fillna(False).astype(bool), "task"])


def provenance_line(description: str, synthetic: Sequence[str]) -> str:
    """The one line every page shows under its title: what the archive is (``archive.yaml``
    ``description``) and which of its tasks are synthetic (marked :data:`SYNTHETIC_MARK`)."""
    text = " ".join(description.split()) or "This archive's archive.yaml has no description."
    if synthetic:
        names = ", ".join(f"{t}{SYNTHETIC_MARK}" for t in synthetic)
        text += f" Synthetic tasks: {names}."
    return text


def task_label(task: str, synthetic: Iterable[str]) -> str:
    """``task`` as shown on a page: with :data:`SYNTHETIC_MARK` when it is synthetic."""
    return f"{task}{SYNTHETIC_MARK}" if task in set(synthetic) else task


def mark_synthetic(text: pd.DataFrame, synthetic: Sequence[str]) -> tuple[pd.DataFrame, bool]:
    """The display text of a table with synthetic task names marked, in a ``task`` column and in
    column labels; also whether anything was marked (then the caption gets the footnote)."""
    names = set(synthetic)
    if not names:
        return text, False
    out = text.copy()
    marked = False
    if "task" in out.columns:
        hit = out["task"].astype(str).isin(names)
        if hit.any():
            out.loc[hit, "task"] = out.loc[hit, "task"].astype(str) + SYNTHETIC_MARK
            marked = True
    renamed = {c: f"{c}{SYNTHETIC_MARK}" for c in out.columns if isinstance(c, str) and c in names}
    if renamed:
        out = out.rename(columns=renamed)
        marked = True
    return out, marked
