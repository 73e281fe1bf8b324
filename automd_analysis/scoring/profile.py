"""Where a scoring's CPU time went: per task and kind of work (the scoring profile).

Every worker measures the CPU seconds of its process (:func:`time.process_time`) per kind of work
while it scores a file (:data:`WORK_KINDS`) and returns them with the file's result.
:class:`ScoringProfile` adds them up per task; :func:`~automd_analysis.scoring.engine.score_archive`
writes the profile of the files it scored, with the wall and CPU time of its own phases, to
``<store>/scoring_profile.json``, beside the cache and outside the published generations: it is a
diagnostic, not part of the store (the tables and ``store.json`` do not change). An unchanged
re-run scores nothing, so its profile has no tasks. ``docs/performance.md`` shows the table of a
paper-scale run.

A kernel that evaluates a metric on the observed data and on every resample in one call
(:class:`~automd_analysis.scoring.metrics_for.SubmissionEvaluation`,
:func:`~automd_analysis.scoring.subgroup_scores.subgroup_scores`) is counted once, under
``replicates`` or ``subgroup_replicates`` when it has resamples (the observed value is one of its
B + 1 evaluations), else under ``point_metrics`` or ``subgroup_scores``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from automd_analysis._atomic import write_text_atomic
from automd_analysis.errors import ScoreStoreError

__all__ = ["PROFILE_FILE", "WORK_KINDS", "ScoringProfile", "cpu_clock", "read_profile"]

#: The profile of the last scoring, in the store directory (not in a generation).
PROFILE_FILE = "scoring_profile.json"

#: The kinds of work one file's scoring is divided into, in the order they run (the columns of
#: the profile table in ``docs/performance.md``). ``labels``: loading a task's hidden labels
#: (counted with the first file of a chunk that needed them).
WORK_KINDS = (
    "labels",
    "validation",
    "resample_weights",
    "replicates",
    "point_metrics",
    "subgroup_scores",
    "subgroup_replicates",
    "calibration_bins",
    "calibration_measures",
    "calibration_curve",
    "extra_metrics",
    "cache_write",
)


@contextmanager
def cpu_clock(work: dict[str, float] | None, kind: str) -> Iterator[None]:
    """Add the CPU seconds this process spends inside the block to ``work[kind]``.

    Parameters
    ----------
    work : dict or None
        Kind of work -> CPU seconds, updated in place; ``None``: nothing is measured.
    kind : str
        One of :data:`WORK_KINDS`.

    Examples
    --------
    >>> work = {}
    >>> with cpu_clock(work, "validation"):
    ...     _ = sum(range(1000))
    >>> list(work), work["validation"] >= 0
    (['validation'], True)
    """
    if work is None:
        yield
        return
    start = time.process_time()
    try:
        yield
    finally:
        work[kind] = work.get(kind, 0.0) + time.process_time() - start


@dataclass
class ScoringProfile:
    """CPU seconds per task and kind of work, and the files scored per task.

    Attributes
    ----------
    cpu : dict
        task id -> kind of work -> CPU seconds of the worker processes.
    files : dict
        task id -> ``{"scored": n, "selected": n}`` (files scored; of them, scored with the
        details of a selected submission).

    Examples
    --------
    >>> p = ScoringProfile()
    >>> p.add("t", {"validation": 0.5, "replicates": 2.0}, selected=True)
    >>> p.add("t", {"validation": 0.25}, selected=False)
    >>> p.cpu["t"]["validation"], p.files["t"]
    (0.75, {'scored': 2, 'selected': 1})
    >>> p.total()
    2.75
    """

    cpu: dict[str, dict[str, float]] = field(default_factory=dict)
    files: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, task: str, cpu: dict[str, float], selected: bool) -> None:
        """Count one scored file of ``task`` with its CPU seconds per kind of work."""
        into = self.cpu.setdefault(task, {})
        for kind, seconds in cpu.items():
            into[kind] = into.get(kind, 0.0) + float(seconds)
        counts = self.files.setdefault(task, {"scored": 0, "selected": 0})
        counts["scored"] += 1
        counts["selected"] += int(bool(selected))

    def total(self) -> float:
        """CPU seconds of every task and kind."""
        return sum(sum(kinds.values()) for kinds in self.cpu.values())

    def to_dict(self, **extra) -> dict:
        """JSON-ready form, tasks sorted, after the ``extra`` fields (e.g. the phases' times)."""
        return {
            **extra,
            "cpu_seconds": {t: dict(sorted(self.cpu[t].items())) for t in sorted(self.cpu)},
            "files": {t: self.files[t] for t in sorted(self.files)},
        }

    def write(self, out_dir: str | Path, **extra) -> Path:
        """Write :meth:`to_dict` to ``out_dir / PROFILE_FILE`` (atomically)."""
        text = json.dumps(self.to_dict(**extra), indent=1) + "\n"
        return write_text_atomic(Path(out_dir) / PROFILE_FILE, text)


def read_profile(out_dir: str | Path) -> dict:
    """The profile of the last scoring into the store at ``out_dir`` (``{}`` when there is none).

    Raises
    ------
    ScoreStoreError
        ``store.profile_unreadable``: the file is not JSON (the next scoring rewrites it).

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = ScoringProfile().write(d, phases_wall_s={"plan": 1.0})
    ...     read_profile(d)["phases_wall_s"]
    {'plan': 1.0}
    """
    path = Path(out_dir) / PROFILE_FILE
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ScoreStoreError(
            f"the scoring profile is not readable JSON ({exc})",
            path=path,
            code="store.profile_unreadable",
            fix="delete the file or score again (automd score rewrites it)",
        ) from None
