"""The working directory of a linear agent (Codex, autoresearch): its scripts, its file times and
the prediction-file snapshots a harness saved in it.

- :func:`scripts` is the code bound to the run's final file: every ``*.py`` below SOURCE
  (``train.py``, ``src/model.py``...), top level first, outside the folders that hold logs,
  snapshots, environments or caches. Symlinks, special files, names that are not plain file names
  and files over the code cap are left out and recorded (``import.code_file_skipped``).
- :func:`times_from_files` gives the run's start and end when no log holds times: the earliest and
  latest modification time of the files the run wrote, at most the run's budget apart (recorded,
  ``import.time_from_mtime``); :func:`times_in_span` keeps a file's time inside the span a log
  proves.
- :func:`linear_steps_from_files` turns ``{step}`` snapshots (found by listing) or a map keyed by
  step numbers into versions ``step-NNNN``.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from automd_analysis.importers._common import (
    ImportOptions,
    clean_text,
    iso,
    mtime_utc,
    too_many_nodes,
)
from automd_analysis.importers._source import SourceDir
from automd_analysis.importers.code_files import MAX_PATH
from automd_analysis.importers.model import ImportedNode
from automd_analysis.importers.predictions import Binding, bind_nodes, scan_steps
from automd_analysis.importers.problems import SourceError, problem

__all__ = [
    "LOOP_LOGS",
    "MAX_SCRIPTS",
    "NOT_CODE_DIRS",
    "SNAPSHOT_DIRS",
    "linear_steps_from_files",
    "run_written_files",
    "scripts",
    "times_from_files",
    "times_in_span",
]

#: Most scripts bound to one version.
MAX_SCRIPTS = 200
#: Folders whose Python files are not the run's scripts (logs, snapshots, environments, caches).
NOT_CODE_DIRS = frozenset(
    {"sessions", "node_predictions", "submission_history", "step_predictions", "logs",
     "__pycache__", "venv", "env", "site-packages", "node_modules", "build", "dist", "data",
     "input", "inputs", "datasets"}
)  # fmt: skip
#: Logs a linear agent's loop writes while it runs (matched whatever their case).
LOOP_LOGS = frozenset({"results.tsv", "run.log", "journal.md"})
#: Folders where a harness keeps the prediction-file snapshots of a linear run.
SNAPSHOT_DIRS = frozenset({"node_predictions", "submission_history", "step_predictions"})
_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]{0,199}$")
_STEP_KEY = re.compile(r"^-?\d{1,15}$")


def scripts(source: SourceDir, problems: list) -> tuple[tuple[str, str], ...]:
    """The run's ``*.py`` files as ``(relative name, text)``, top level first (see the module
    docstring for what is left out)."""
    files, others = _walk(source, problems, skip_dirs=NOT_CODE_DIRS, skip_hidden=True)
    for rel, kind in others:
        if rel.endswith(".py"):
            _skipped(problems, rel, "is a symlink" if kind == "link" else "is not a regular file")
    out, beyond = [], []
    for rel in sorted((f for f in files if f.endswith(".py")), key=lambda f: (f.count("/"), f)):
        if not all(_PART.match(p) for p in rel.split("/")):
            _skipped(problems, rel, "has a name that is not a plain file name")
            continue
        if len(rel.encode()) > MAX_PATH:
            _skipped(problems, rel[:80] + "...", f"has a path longer than {MAX_PATH} bytes")
            continue
        if len(out) >= MAX_SCRIPTS:
            beyond.append(rel)
            continue
        size = source.file_size(rel, 1 << 62, what="script")
        if size > source.limits.code_bytes:
            _skipped(problems, rel, f"has {size} bytes, above the code cap")
            continue
        data = source.read_bytes(rel, source.limits.code_bytes, what="script")
        text = data.decode("utf-8", errors="surrogateescape")
        out.append((rel, clean_text(text, problems, "a script", rel)))
    if beyond:
        _skipped(problems, beyond[0], f"and {len(beyond) - 1} more are beyond the first "
                 f"{MAX_SCRIPTS} scripts")  # fmt: skip
    return tuple(out)


def _walk(source: SourceDir, problems: list, **options):
    """Every file below SOURCE, or only its top level when SOURCE has more entries than a listing
    may visit (recorded)."""
    try:
        return source.walk_files("", what="SOURCE", **options)
    except SourceError as exc:
        if exc.code != "import.too_large":
            raise
    problems.append(
        problem(
            "import.optional_file_skipped",
            f"SOURCE has more than {source.limits.max_entries} entries; only its top level was "
            "looked at for scripts and file times",
            path=".",
            fix="point SOURCE at the run's own directory",
        )
    )
    entries = source.listdir("")
    return ([n for n, k in entries if k == "file"], [(n, k) for n, k in entries
                                                     if k in ("link", "other")])  # fmt: skip


def _skipped(problems: list, rel: str, why: str) -> None:
    problems.append(
        problem(
            "import.code_file_skipped",
            f"script {rel} {why}; it is not archived as code",
            path=rel,
            fix="replace it by a regular file with a plain name if it is part of the run",
        )
    )


def run_written_files(source: SourceDir, problems: list) -> list[str]:
    """The files of SOURCE the run itself wrote while it ran: the loop's logs
    (:data:`LOOP_LOGS`, any case), ``submission.csv``, prediction snapshots
    (:data:`SNAPSHOT_DIRS`) and the scripts; not its inputs (``program.md``, data folders, a
    README)."""
    files, _others = _walk(source, problems, skip_dirs=NOT_CODE_DIRS - SNAPSHOT_DIRS,
                           skip_hidden=True)  # fmt: skip
    return [
        rel
        for rel in files
        if rel.lower() in LOOP_LOGS
        or rel == "submission.csv"
        or rel.split("/", 1)[0] in SNAPSHOT_DIRS
        or rel.endswith(".py")
    ]


def times_from_files(source: SourceDir, problems: list,
                     budget_minutes: float) -> tuple[datetime, datetime]:  # fmt: skip
    """The run's start and end when no log holds times: the earliest and latest modification
    time of the files the run wrote (:func:`run_written_files`; every file of SOURCE when there
    is none), recorded (``import.time_from_mtime``).

    A file's time proves only when it was last written, so the span is bounded by the run's
    budget: files spanning more than ``budget_minutes`` were touched before or after the run
    (a copied or re-packed folder keeps old times), and the start is then the end minus the
    budget (recorded with the span found).
    """
    files = run_written_files(source, problems)
    which = "files the run wrote"
    if not files:
        files, _others = _walk(source, problems)
        which = "files in SOURCE"
    if not files:
        raise SourceError(
            "SOURCE holds no file",
            path=source.root,
            code="import.empty_run",
            fix="point SOURCE at the run's directory",
        )
    stamps = sorted((mtime_utc(source, r), r) for r in files)
    (start, first), (end, last) = stamps[0], stamps[-1]
    msg = (
        f"no timestamped log: the run's start and end are the earliest and latest modification "
        f"times of the {len(files)} {which} ({first}, {last})"
    )
    budget = timedelta(minutes=budget_minutes)
    if len(files) > 1 and (end - start).total_seconds() < 1:
        msg += (
            "; they all carry the same time (a copy or checkout that reset file times), so "
            "they do not time the run"
        )
    if end - start > budget:
        minutes = (end - start).total_seconds() / 60
        msg += (
            f"; they span {minutes:,.0f} min, more than the {budget_minutes:g} min budget, so "
            "they do not time the run (files touched before or after it): the start is taken as "
            "the end minus the budget"
        )
        start = end - budget
    problems.append(
        problem(
            "import.time_from_mtime",
            msg,
            fix="include the session rollouts (sessions/**/rollout-*.jsonl) in SOURCE: they "
            "time the run",
        )
    )
    return start, end


def times_in_span(source: SourceDir, rels: list[str], start: datetime, end: datetime,
                  problems: list) -> dict[str, datetime]:  # fmt: skip
    """Each file's modification time, used as its time only inside the log's span ``[start,
    end]`` (a time outside it becomes the nearest end); recorded (``import.time_from_mtime``)
    when there is any file."""
    out, outside = {}, 0
    for rel in rels:
        when = mtime_utc(source, rel)
        out[rel] = min(max(when, start), end)
        outside += out[rel] != when
    if rels:
        problems.append(
            problem(
                "import.time_from_mtime",
                f"the times of {len(rels)} prediction file(s) are their modification times, "
                f"kept inside the run's span {iso(start)} - {iso(end)}"
                + (
                    f" ({outside} lay outside it and were moved to its nearest end)"
                    if outside
                    else ""
                ),  # fmt: skip
                path=rels[0],
            )
        )
    return out


def linear_steps_from_files(
    source: SourceDir, opts: ImportOptions, start, end, problems: list
) -> tuple[list[ImportedNode], Binding]:
    """Versions of a run whose log has no step list: ``{step}`` files found by listing, or a map
    keyed by step numbers. Each file's time is its modification time (clipped to the run)."""
    spec = opts.predictions
    binding = Binding(description="none" if spec is None else spec.describe())
    if spec is None:
        return [], binding
    if spec.kind == "pattern":
        found = scan_steps(source, spec)
    else:
        keys = sorted(int(k) for k in spec.mapping if _STEP_KEY.match(k))
        sub = bind_nodes(source, spec, [(f"#{k}", k) for k in keys])
        binding.final, binding.problems = sub.final, sub.problems
        found = sorted((int(k[1:]), rel) for k, rel in sub.files.items())
    if len(found) > source.limits.max_nodes:
        raise too_many_nodes(len(found), source.limits.max_nodes, spec.text)
    nodes = []
    times = times_in_span(source, [rel for _step, rel in found], start, end, problems)
    for ordinal, (step, rel) in enumerate(found, start=1):
        created = times[rel]
        vid = f"step-{ordinal:04d}"
        nodes.append(
            ImportedNode(
                vid,
                ordinal,
                log_step=step,
                created_at=created,
                prediction=rel,
                description=f"prediction file {rel}",
            )  # fmt: skip
        )
        binding.files[vid] = rel
    return nodes, binding
