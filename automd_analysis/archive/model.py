"""The archive's typed, read-only data model: :class:`ArchiveMeta`, :class:`Run`, :class:`Version`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from automd_analysis.archive.safe import MAX_TEXT_BYTES, read_bounded, resolve_inside
from automd_analysis.codebook import Annotations
from automd_analysis.tasks import ProcessTask

__all__ = ["ArchiveMeta", "Run", "Step", "Version"]


@dataclass(frozen=True)
class ArchiveMeta:
    """``archive.yaml``.

    Attributes
    ----------
    name, description : str
    experiments : dict
        Experiment id -> description.
    roles : dict
        Analysis role (``main``, ``objectives``, ``llm``) -> experiment id; defaults to the role
        names themselves.
    provenance : dict
        Free-form build information. The toolkit never acts on it (in particular, it never decides
        whether archived code may run).
    reference_agents : tuple of str
        Agents whose runs may be marked ``reference: true`` (never ranked): ``archive.yaml``
        ``reference_agents``, default ``("baseline",)``.
    process_tasks : dict
        Task id -> :class:`~automd_analysis.tasks.ProcessTask`: the process-only tasks the
        archive declares (``archive.yaml`` ``process_tasks``; runs with nothing to score).
    """

    name: str
    description: str
    experiments: dict[str, str]
    roles: dict[str, str]
    provenance: dict[str, Any]
    reference_agents: tuple[str, ...] = ("baseline",)
    process_tasks: dict[str, ProcessTask] = field(default_factory=dict)


@dataclass(frozen=True)
class Version:
    """One archived prediction file of a run (``versions/<version_id>/``).

    ``submission_path`` is ``None`` when the directory has no ``submission.csv``. When the file is
    present but may not be read (a symlink leaving the archive, not a regular file),
    ``submission_path`` is ``None`` and ``submission_issue`` holds the error code.
    """

    version_id: str
    dir: Path
    submission_path: Path | None
    created_at: datetime
    step: int
    parent: str | None
    node: str | None
    reported_val_score: float | None
    faulty: bool
    code_files: tuple[str, ...]
    tokens: int | None
    stage: str | None
    submission_issue: str | None = None


@dataclass(frozen=True)
class Step:
    """One development step of ``run.json`` ``steps`` (FML-bench process metrics).

    ``node``/``parent`` (optional) record the search tree of tree agents, including nodes that
    saved no prediction file, so analyses can walk to the nearest archived ancestor.
    """

    step: int
    ok: bool
    reported_val_score: float | None
    created_at: datetime | None
    version: str | None
    node: str | None = None
    parent: str | None = None


@dataclass(frozen=True)
class Run:
    """One (experiment, agent, LLM, task, repetition) of an archive.

    Timestamps are aware UTC datetimes. ``versions`` are sorted by ``(created_at, version_id)``.
    ``steps`` is ``None`` when ``run.json`` has no ``steps`` list (the versions are then the
    steps). ``annotations`` is ``None`` when the run has no ``annotations.json`` or when it failed
    validation (the error is then in :attr:`Archive.problems`). ``submission_path`` /
    ``submission_issue`` follow :class:`Version`. ``incomplete`` marks a run whose source lacked
    a part or stopped inside a stage (``run.json`` ``incomplete``, written by ``automd import``).
    """

    run_id: str
    dir: Path
    archive_root: Path
    experiment: str
    agent: str
    llm: str
    task: str
    rep: int
    reference: bool
    search: str
    objective: str | None
    started_at: datetime
    ended_at: datetime
    budget_minutes: float
    tokens: dict[str, Any] | None
    selection_rule: str
    selected_version: str | None
    reported_val_score: float | None
    steps: tuple[Step, ...] | None
    submission_path: Path | None
    versions: tuple[Version, ...]
    annotations: Annotations | None = None
    submission_issue: str | None = None
    notes: str | None = None
    incomplete: bool = False

    @property
    def key(self) -> tuple[str, str, str, int]:
        """``(experiment, agent, task, rep)``: the sort order of runs."""
        return (self.experiment, self.agent, self.task, self.rep)

    def version(self, version_id: str) -> Version:
        """The version called ``version_id`` (:class:`KeyError` if there is none)."""
        for v in self.versions:
            if v.version_id == version_id:
                return v
        raise KeyError(version_id)

    def read_text(self, rel_path: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
        """Read a run-relative text file (code, ``journal.md``, logs) safely.

        Parameters
        ----------
        rel_path : str
            ``/``-separated path relative to the run directory, without ``..``.
        max_bytes : int, default 1 MiB
            Larger files are refused.

        Returns
        -------
        str
            The text, decoded as UTF-8 with undecodable bytes replaced (U+FFFD).

        Raises
        ------
        ArchiveError
            ``archive.unsafe_path`` (absolute, ``..``, or resolving outside the run directory),
            ``archive.file_missing``, ``archive.not_a_file`` or ``archive.too_large``.
        """
        path = resolve_inside(self.dir, rel_path, base=self.dir, what="file")
        return read_bounded(path, max_bytes, self.archive_root).decode("utf-8", errors="replace")
