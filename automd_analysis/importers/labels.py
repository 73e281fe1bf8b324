"""Free-text labels from agent logs (AI-Scientist-v2 sub-stage names): shown as they are, never
used as archive paths unchecked.

AI-Scientist-v2 lets its LLM name every sub-stage after the first
(``stage_2_baseline_tuning_2_Hyperparameter Fine-Tuning``), so a sub-stage folder's name is free
text: spaces, punctuation, any script. The importer reads the folder under its own name (through
:class:`~._source.SourceDir`, which refuses what could leave SOURCE), keeps the name as a *label*
(:func:`display_label`: one printable line, written to ``meta.json`` ``stage`` and ``journal.md``)
and copies the folder's logs under a *safe* archive folder (:func:`safe_folder_names`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from automd_analysis.archive.safe import NAME_PATTERN
from automd_analysis.importers.text import REPLACEMENT, repair_text

__all__ = ["MAX_FOLDER", "display_label", "safe_folder_names"]

#: Longest archive folder name made from a label (bytes; file systems allow 255).
MAX_FOLDER = 200
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")


def display_label(text: str) -> str:
    """``text`` as one printable line: lone surrogates and control characters become U+FFFD.

    >>> display_label("stage_2_baseline_tuning_2_Hyperparameter Fine-Tuning")
    'stage_2_baseline_tuning_2_Hyperparameter Fine-Tuning'
    >>> display_label("a\\nb\\udcff")
    'a\ufffdb\ufffd'
    """
    repaired = repair_text(text)[0]
    return "".join(c if c.isprintable() or c == " " else REPLACEMENT for c in repaired)


def _digest(label: str) -> str:
    return hashlib.sha256(label.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def _safe_folder(label: str) -> str:
    """``label`` itself when it is a safe archive name, else its safe spelling plus a digest."""
    if NAME_PATTERN.match(label) and len(label.encode()) <= MAX_FOLDER:
        return label
    stem = _UNSAFE.sub("_", label).lstrip("_.-")[: MAX_FOLDER - 9] or "label"
    return f"{stem}-{_digest(label)}"


def safe_folder_names(labels: Iterable[str]) -> dict[str, str]:
    """A distinct archive folder name for every label.

    Parameters
    ----------
    labels : iterable of str
        Free-text names (sub-stage folder names as the agent wrote them).

    Returns
    -------
    dict
        ``label -> folder``: the label itself when it matches the archive's name pattern
        ``^[A-Za-z0-9][A-Za-z0-9_.\\-]*$`` (at most 200 bytes); otherwise the label with every
        other character replaced by ``_`` (leading ``_.-`` dropped, cut to 191 characters), then
        ``-`` and the first 8 hex digits of the label's SHA-256. Should two labels still meet
        (a label spelled like another's safe form), the later one in sorted order gets ``-2``,
        ``-3``, ... appended, so folders never clash.

    See Also
    --------
    display_label

    References
    ----------
    docs/archive.md (names); POSIX ``NAME_MAX`` (255 bytes per path component).

    Examples
    --------
    >>> names = safe_folder_names(["stage_1_a_1_b", "stage_2_c_2_Fine Tuning"])
    >>> names["stage_1_a_1_b"]
    'stage_1_a_1_b'
    >>> names["stage_2_c_2_Fine Tuning"].startswith("stage_2_c_2_Fine_Tuning-")
    True
    """
    out: dict[str, str] = {}
    taken: set[str] = set()
    ordered = sorted(set(labels), key=lambda s: (_safe_folder(s) != s, s))  # safe names first
    for label in ordered:
        folder, n = _safe_folder(label), 1
        while folder in taken:
            n += 1
            folder = f"{_safe_folder(label)[: MAX_FOLDER - 8]}-{n}"
        taken.add(folder)
        out[label] = folder
    return out
