"""What a report says about the archive it comes from: the provenance line under every page title,
and the mark of synthetic tasks wherever a task name is shown (tables, figure titles).

The task facts come from the score store (``store.tasks``, column ``synthetic``, published by the
scorer from the task manifests), the description from ``archive.yaml`` (field ``description``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import pandas as pd

from automd_analysis.analysis.store import ScoreStore

__all__ = [
    "SYNTHETIC_FOOTNOTE",
    "SYNTHETIC_MARK",
    "mark_synthetic",
    "mark_synthetic_text",
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
    """The display text of a table with synthetic task names marked: every cell that is a
    synthetic task's id (a ``task`` column, the internal task of Table 5's detail, a task group)
    and every column label that is one; also whether anything was marked (then the caption gets
    the footnote).

    Examples
    --------
    >>> text = pd.DataFrame({"task": ["s_ext", "real"], "internal task": ["s", "real"]})
    >>> marked, any_marked = mark_synthetic(text, ["s", "s_ext"])
    >>> marked.to_dict("list"), any_marked
    ({'task': ['s_ext†', 'real'], 'internal task': ['s†', 'real']}, True)
    """
    names = set(synthetic)
    if not names:
        return text, False
    out = text.copy()
    marked = False
    for column in out.columns:
        values = out[column].astype(str)
        hit = values.isin(names)
        if hit.any():
            out[column] = out[column].astype(object)
            out.loc[hit, column] = values[hit] + SYNTHETIC_MARK
            marked = True
    renamed = {c: f"{c}{SYNTHETIC_MARK}" for c in out.columns if isinstance(c, str) and c in names}
    if renamed:
        out = out.rename(columns=renamed)
        marked = True
    return out, marked


def mark_synthetic_text(text: str, synthetic: Iterable[str]) -> tuple[str, bool]:
    r"""A sentence (Markdown or plain) with every synthetic task's name marked
    :data:`SYNTHETIC_MARK`, and whether anything was marked.

    A name counts where it stands as a word of its own, as written or Markdown-escaped
    (``demo\_sepsis``); not inside a longer name (``demo_sepsis_local``), nor inside a run id
    (``main/codex/demo_sepsis/rep0``), nor where it is already marked.

    Examples
    --------
    >>> mark_synthetic_text("s\\_ext (shifted from s): 90%; run main/a/s/rep0.", ["s", "s_ext"])
    ('s\\_ext† (shifted from s†): 90%; run main/a/s/rep0.', True)
    >>> mark_synthetic_text("real task", ["s"])
    ('real task', False)
    """
    names = sorted(set(synthetic), key=len, reverse=True)
    if not names:
        return text, False
    spelled = {re.escape(n) for n in names} | {re.escape(n.replace("_", "\\_")) for n in names}
    pattern = re.compile(
        rf"(?<![\w/\\])(?:{'|'.join(sorted(spelled, key=len, reverse=True))})"
        rf"(?![\w/\\{SYNTHETIC_MARK}])"
    )
    marked, n = pattern.subn(lambda m: m.group(0) + SYNTHETIC_MARK, text)
    return marked, n > 0
