"""The common intermediate every format importer produces and the writer consumes.

Pure data, no I/O: an :class:`ImportedRun` holds the run's metadata and its
:class:`ImportedNode` list (one per development step or search-tree node, with parent, stage,
buggy flag, the reported validation metric and its direction, code, the bound prediction file,
time and tokens), the chosen :class:`~automd_analysis.importers.selection.Selection`, the raw logs
to copy and the problems recorded while reading.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from automd_analysis.errors import AutomdError
from automd_analysis.importers.selection import Selection
from automd_analysis.tasks import ProcessTask

__all__ = [
    "EARLIEST",
    "FINAL_VERSION",
    "LATEST",
    "ImportedNode",
    "ImportedRun",
    "Metric",
    "TokenCount",
    "utc_from_epoch",
]

#: Version id of the run's final file when it matches no bound per-node/step file.
FINAL_VERSION = "final"
#: Times an archive holds lie in [EARLIEST, LATEST) (docs/archive.md).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(2200, 1, 1, tzinfo=UTC)

TokenSource = Literal["agent_log", "user_file", "harness"]


def utc_from_epoch(seconds: float) -> datetime:
    """An aware UTC datetime from epoch seconds (AIDE/AI-Scientist ``ctime``).

    Parameters
    ----------
    seconds : float
        Seconds since 1970-01-01T00:00:00Z (``time.time()``).

    Returns
    -------
    datetime
        Timezone-aware, UTC.

    See Also
    --------
    datetime.datetime.fromtimestamp

    References
    ----------
    AIDE ``aide/journal.py``: ``Node.ctime = time.time()``.

    Examples
    --------
    >>> utc_from_epoch(0).isoformat()
    '1970-01-01T00:00:00+00:00'
    """
    return datetime.fromtimestamp(float(seconds), UTC)


@dataclass(frozen=True)
class Metric:
    """A reported validation metric: value, direction and type.

    ``kind`` names the metric's type (``"scalar"`` for AIDE's float; the metric names for
    AI-Scientist-v2's structured metric); values of different kinds or directions are
    incomparable.
    """

    value: float | None = None
    maximize: bool | None = None
    kind: str = "scalar"


@dataclass(frozen=True)
class TokenCount:
    """Token usage of a run and where the count came from."""

    prompt: int
    completion: int
    total: int
    source: TokenSource

    def counts(self) -> dict[str, int]:
        """The three counts as a JSON object (``prompt``, ``completion``, ``total``)."""
        return {"prompt": self.prompt, "completion": self.completion, "total": self.total}


@dataclass(frozen=True)
class ImportedNode:
    """One development step / search-tree node of an imported run.

    Attributes
    ----------
    node_id : str
        The agent's node id (AIDE, AI-Scientist-v2) or ``step-NNNN`` (linear formats); also the
        version id when the node has a bound prediction file.
    ordinal : int
        1-based position in creation order (``run.json`` ``steps[].step``).
    log_step : int or None
        The step number exactly as the agent's log writes it (the ``{step}`` placeholder).
    parent : str or None
        The agent's own parent node.
    stage : str or None
        AIDE ``draft``/``improve``/``debug``; AI-Scientist-v2 sub-stage directory name.
    buggy : bool
        The agent marked the node buggy (a version of it is ``faulty``).
    metric : Metric
    created_at : datetime or None
        When the node's prediction file was written (aware).
    code : tuple of (str, str)
        ``(relative file name, text)`` of the code the node ran.
    prediction : str or None
        SOURCE-relative path of the bound prediction file.
    tokens : int or None
        Tokens spent on this step, when the log records them.
    description : str
        One line for ``journal.md`` (the plan or the step's description).
    is_step : bool
        Whether the node is a development step (``run.json`` ``steps``); AI-Scientist-v2 seed
        aggregation nodes are not.
    """

    node_id: str
    ordinal: int
    log_step: int | None = None
    parent: str | None = None
    stage: str | None = None
    buggy: bool = False
    metric: Metric = field(default_factory=Metric)
    created_at: datetime | None = None
    code: tuple[tuple[str, str], ...] = ()
    prediction: str | None = None
    tokens: int | None = None
    description: str = ""
    is_step: bool = True


@dataclass
class ImportedRun:
    """One run read from an agent's output, ready for :func:`~.writer.write_runs`.

    ``selected_version`` is a node id, :data:`FINAL_VERSION` or ``None`` (no submission: the run
    is invalid). ``raw_logs`` maps archive paths (below ``logs/``) to SOURCE-relative paths, copied
    unparsed; ``log_texts`` holds logs read from outside SOURCE (``--rollout``), written as read;
    ``log_folders`` names the SOURCE folders whose logs go under another archive folder (a
    free-text name that is not a safe archive name, :mod:`.labels`).
    ``final_file`` is the SOURCE-relative final submission, ``final_code`` the code bound to it
    (the agent's own best solution, or the scripts beside the file) and ``final_code_note`` says
    where that code came from. ``problems`` are recorded (non-fatal) problems; a ``run.incomplete``
    among them makes the run :attr:`incomplete`. ``process_task`` declares the run's task as
    process-only (no manifest, nothing to score; ``archive.yaml`` ``process_tasks``).
    """

    format: str
    source: Path
    source_name: str
    experiment: str
    agent: str
    task: str
    rep: int
    llm: str
    search: Literal["linear", "tree"]
    started_at: datetime
    ended_at: datetime
    budget_minutes: float
    nodes: list[ImportedNode]
    selection: Selection
    selected_version: str | None
    reported_val_score: float | None
    tokens: TokenCount | None = None
    final_file: str | None = None
    final_created_at: datetime | None = None
    final_code: tuple[tuple[str, str], ...] = ()
    final_code_note: str = ""
    raw_logs: dict[str, str] = field(default_factory=dict)
    log_texts: dict[str, str] = field(default_factory=dict)
    log_folders: dict[str, str] = field(default_factory=dict)
    binding: str = "none"
    problems: list[AutomdError] = field(default_factory=list)
    steps_in_run_json: bool = True
    process_task: ProcessTask | None = None

    @property
    def run_id(self) -> str:
        """``<experiment>/<agent>/<task>/rep<k>``."""
        return f"{self.experiment}/{self.agent}/{self.task}/rep{self.rep}"

    @property
    def incomplete(self) -> bool:
        """Part of the run is missing or unreadable, or the run stopped inside a stage."""
        return any(p.code == "run.incomplete" for p in self.problems)

    @property
    def steps(self) -> int | None:
        """How many development steps ``run.json`` ``steps`` lists (``None``: no step list)."""
        if not (self.steps_in_run_json and self.nodes):
            return None
        return sum(n.is_step for n in self.nodes)

    @property
    def versions(self) -> list[ImportedNode]:
        """Nodes with a bound prediction file, in creation order; every node for a run of a
        process-only task (a version is then a step's code, without a prediction file)."""
        return [n for n in self.nodes if n.prediction is not None or self.process_task is not None]
