"""Autoresearch (keep/revert loop) work directory → :class:`~.model.ImportedRun`.

SOURCE is the loop's work directory: the final ``submission.csv``, the agent's free-text
``journal.md`` (the Auto-MD-bench program) and/or a karpathy-style ``results.tsv`` (tab-separated,
header ``commit<TAB><metric><TAB>memory_gb<TAB>status<TAB>description``, ``status`` one of
``keep``, ``discard``, ``crash``; or its variant with a ``git_commit`` column and the statuses
``ok``, ``failed``, ``partial``: :data:`STATUSES`), and optionally the Codex session rollouts under
``sessions/**/rollout-*.jsonl`` (times, LLM, tokens; see :mod:`.rollouts`). ``journal.md`` is free
text and is copied, not parsed; the log files are found whatever their case (``PROGRAM.md``).
Without a rollout, the run's times are the files' modification times. The code bound to the final
file is every script in SOURCE (``train.py``, ``src/...``).

Steps are the rows of ``results.tsv`` (``{step}`` = the 1-based row number, ``{node_id}`` =
``step-NNNN``); a ``crash`` row is a failed step. Selection is :func:`~.selection.final_file`.
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace

from automd_analysis.importers._common import (
    ImportOptions,
    final_default,
    finite_or_none,
    first_line,
    malformed,
    require_task,
    symlinked_dir,
    too_many_nodes,
)
from automd_analysis.importers._source import SourceDir
from automd_analysis.importers.codex import assemble_rollout_run
from automd_analysis.importers.model import ImportedNode, ImportedRun, Metric
from automd_analysis.importers.predictions import Binding, bind_nodes
from automd_analysis.importers.problems import SourceError
from automd_analysis.importers.rollouts import read_rollouts
from automd_analysis.importers.workdir import times_from_files, times_in_span

__all__ = ["parse_results_tsv", "read_autoresearch"]

#: The loop's own files copied under ``logs/`` (matched whatever their case).
LOG_FILES = ("results.tsv", "journal.md", "program.md", "run.log")


def log_files(source: SourceDir) -> dict[str, str]:
    """``{lower-case name: name in SOURCE}`` of the top-level log files (``PROGRAM.md`` too); one
    that is a symlink (``import.unsafe_path``) or not a regular file, such as a FIFO
    (``import.not_a_file``, never opened), is refused."""
    out = {}
    for name, kind in source.listdir(""):
        if name.lower() not in LOG_FILES:
            continue
        if kind == "link":
            raise symlinked_dir(name, "log file")
        if kind != "file":
            raise SourceError(
                f"log file {name!r} is not a regular file (a FIFO, device, socket or folder)",
                path=name,
                code="import.not_a_file",
                fix="replace it by a regular file (a copy of the log)",
            )
        out.setdefault(name.lower(), name)
    return out


#: ``results.tsv`` statuses -> whether the experiment ran to a result (``ok`` in ``run.json``) and
#: whether its metric column holds that result. karpathy/autoresearch's ``program.md``: ``keep``
#: (improved, kept), ``discard`` (ran, not better, reverted) and ``crash`` (did not run; the metric
#: is a ``0.000000`` placeholder). Its ``git_commit`` variant: ``ok`` (ran), ``failed`` (did not run;
#: placeholder) and ``partial`` (stopped before it finished, e.g. at the time limit: its number is
#: not a finished validation result, so the step is not ok, as AIDE marks a timed-out node buggy;
#: the number is kept as reported).
STATUSES: dict[str, tuple[bool, bool]] = {
    "keep": (True, True),
    "discard": (True, True),
    "crash": (False, False),
    "ok": (True, True),
    "failed": (False, False),
    "partial": (False, True),
}
#: Names of the column holding the experiment's git commit.
COMMIT_COLUMNS = ("commit", "git_commit")
#: Columns that are not the metric (the metric is the first column not named here).
NOT_METRIC = frozenset({*COMMIT_COLUMNS, "memory_gb", "status", "description"})
#: Metric cells that mean "no value" (a failed row may leave the cell empty).
_EMPTY = frozenset({"", "-", "na", "n/a", "none", "null"})


def _columns(header: list[str], where: str) -> tuple[int, int, int, int | None]:
    """Indices of the commit, metric, status and (optional) description columns."""
    commit = next((i for i, h in enumerate(header) if h in COMMIT_COLUMNS), None)
    metric = next((i for i, h in enumerate(header) if h not in NOT_METRIC), None)
    if commit is None or "status" not in header or metric is None:
        raise malformed(
            "results.tsv header must name a commit column ('commit' or 'git_commit'), a metric "
            f"column and 'status'; it is {header!r}",
            where,
            "row 1",
        )
    desc = header.index("description") if "description" in header else None
    return commit, metric, header.index("status"), desc


def _metric(cell: str, name: str, loc: str, where: str, problems: list) -> float | None:
    if cell.strip().lower() in _EMPTY:
        return None
    try:
        return finite_or_none(float(cell), problems, f"{name} of {loc}", where)
    except ValueError:
        raise malformed(f"{name} {cell!r} is not a number", where, loc) from None


def parse_results_tsv(text: str, where: str, problems: list) -> list[ImportedNode]:
    """Rows of an autoresearch ``results.tsv`` as linear steps.

    Parameters
    ----------
    text : str
    where : str
    problems : list

    Returns
    -------
    list of ImportedNode
        ``step-NNNN`` per row (1-based); ``metric.kind`` is the metric column's name and the
        direction is unknown (the file does not say). A row's status decides (:data:`STATUSES`):
        ``keep``, ``discard``, ``ok`` are ok steps with their metric; ``crash``, ``failed`` are
        buggy with no metric (the cell is a placeholder); ``partial`` is buggy with its metric as
        reported.

    Raises
    ------
    SourceError
        ``import.malformed`` (no commit/metric/``status`` column, a row with the wrong number of
        fields, an unknown status, a metric that is not a number).

    See Also
    --------
    read_autoresearch

    References
    ----------
    karpathy/autoresearch ``program.md`` (MIT): the ``results.tsv`` protocol.

    Examples
    --------
    >>> tsv = "commit\\troc_auc\\tmemory_gb\\tstatus\\tdescription\\n"
    >>> tsv += "a1b2c3d\\t0.786\\t5.3\\tkeep\\tbaseline\\nb2c3d4e\\t0.000\\t0.0\\tcrash\\tOOM\\n"
    >>> [(n.node_id, n.buggy, n.metric.value) for n in parse_results_tsv(tsv, "r.tsv", [])]
    [('step-0001', False, 0.786), ('step-0002', True, None)]
    >>> tsv = "git_commit\\tval_auc\\tstatus\\n1a2b3c4\\t0.81\\tok\\n2b3c4d5\\t0.77\\tpartial\\n"
    >>> [(n.buggy, n.metric.value) for n in parse_results_tsv(tsv, "r.tsv", [])]
    [(False, 0.81), (True, 0.77)]
    """
    try:
        rows = [r for r in csv.reader(io.StringIO(text), delimiter="\t")
                if r and any(c.strip() for c in r)]  # fmt: skip
    except csv.Error as exc:
        raise malformed(f"results.tsv is not tab-separated text: {exc}", where) from None
    if not rows:
        raise malformed("results.tsv is empty", where)
    header = [h.strip() for h in rows[0]]
    header[0] = header[0].lstrip("\ufeff")
    i_commit, i_metric, i_status, i_desc = _columns([h.lower() for h in header], where)
    metric_name = header[i_metric]
    out = []
    for n, row in enumerate(rows[1:], start=1):
        loc = f"row {n + 1}"
        if len(row) != len(header):
            raise malformed(f"row has {len(row)} fields, the header {len(header)}", where, loc)
        status = row[i_status].strip().lower()
        if status not in STATUSES:
            raise malformed(f"status {row[i_status]!r} is not one of {', '.join(STATUSES)}",
                            where, loc)  # fmt: skip
        ran, has_value = STATUSES[status]
        value = _metric(row[i_metric], metric_name, loc, where, problems) if has_value else None
        desc = f"{row[i_commit].strip()} {status.upper()}"
        if i_desc is not None:
            desc += f": {first_line(row[i_desc])}"
        out.append(
            ImportedNode(
                f"step-{n:04d}",
                n,
                log_step=n,
                buggy=not ran,
                metric=Metric(value, None, metric_name),
                description=desc,
            )
        )
    return out


def read_autoresearch(source: SourceDir, opts: ImportOptions) -> list[ImportedRun]:
    """Import an autoresearch work directory (one linear run, selection ``final_file``).

    Parameters
    ----------
    source : SourceDir
        The work directory: ``submission.csv``, ``journal.md`` and/or ``results.tsv``,
        optional ``sessions/**/rollout-*.jsonl``.
    opts : ImportOptions

    Returns
    -------
    list of ImportedRun
        The one run of the work directory.

    Raises
    ------
    SourceError
        ``import.journal_missing`` (neither ``journal.md``, ``results.tsv`` nor a rollout),
        ``import.malformed``, ``import.llm_unknown``...

    See Also
    --------
    automd_analysis.importers.codex.read_codex

    References
    ----------
    Auto-MD-bench App. C (Autoresearch protocol); karpathy/autoresearch ``program.md``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "journal.md").write_text("step 1: baseline, KEEP\\n")
    >>> _ = (d / "submission.csv").write_text("id,p\\n1,0.5\\n")
    >>> (run,) = read_autoresearch(SourceDir(d), ImportOptions(agent="ar", task="t", llm="m"))
    >>> run.search, run.selected_version
    ('linear', 'final')
    """
    task = require_task(opts)
    problems: list = []
    summary = read_rollouts(source, opts, problems)
    logs = log_files(source)
    tsv = logs.get("results.tsv")
    if not (tsv or "journal.md" in logs or summary.first is not None):
        raise SourceError(
            "looked for journal.md, results.tsv and session rollouts "
            "(sessions/**/rollout-*.jsonl) in SOURCE and found none",
            path=source.root,
            code="import.journal_missing",
            fix="SOURCE must be the loop's work directory (docs/importing.md)",
        )
    final_rel = final_default(source, Binding(), ("submission.csv",))
    if summary.first is not None:
        start, end = summary.first, summary.last
    else:
        start, end = times_from_files(source, problems, opts.budget_minutes)
    nodes = binding = None  # the linear steps of the files, unless results.tsv lists them
    if tsv:
        data = source.read_bytes(tsv, source.limits.log_bytes, what="results.tsv")
        if data.count(b"\n") > min(source.limits.max_lines, source.limits.max_nodes + 1):
            raise too_many_nodes(data.count(b"\n"), source.limits.max_nodes, tsv)
        text = source.read_text(tsv, source.limits.log_bytes, what="results.tsv")
        nodes = parse_results_tsv(text, tsv, problems)
        binding = bind_nodes(source, opts.predictions, [(n.node_id, n.log_step) for n in nodes])
        times = times_in_span(source, sorted(set(binding.files.values())), start, end, problems)
        nodes = [
            replace(n, prediction=rel, created_at=times[rel])
            if (rel := binding.files.get(n.node_id)) is not None
            else n
            for n in nodes
        ]
    run = assemble_rollout_run(
        "autoresearch",
        source,
        opts,
        task,
        summary,
        nodes=nodes,
        binding=binding,
        final_rel=final_rel,
        times=(start, end),
        problems=problems,
        tokens_from="the autoresearch logs",
        other_logs={name: name for name in logs.values()},
        steps_in_run_json=bool(nodes) and bool(tsv),
    )
    return [run]
