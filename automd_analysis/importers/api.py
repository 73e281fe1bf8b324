"""``import_source``: read an agent's output with one format importer and write the archive run(s)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from automd_analysis.archive import NAME_PATTERN
from automd_analysis.archive.safe import MAX_INT
from automd_analysis.docstrings import docs_reference, fill_doc
from automd_analysis.errors import AutomdError
from automd_analysis.importers._common import ImportOptions
from automd_analysis.importers._source import SourceDir, parse_json
from automd_analysis.importers.locate import nearby_logs
from automd_analysis.importers.model import ImportedRun, TokenCount
from automd_analysis.importers.packed import is_packed, unpacked
from automd_analysis.importers.predictions import read_user_json
from automd_analysis.importers.problems import SourceError, problem
from automd_analysis.importers.writer import WrittenRun, write_runs

__all__ = ["FORMATS", "ImportReport", "import_source", "read_tokens_file"]


def _formats() -> dict[str, Callable[[SourceDir, ImportOptions], list[ImportedRun]]]:
    from automd_analysis.importers.aide import read_aide
    from automd_analysis.importers.aiscientist_v2 import read_aiscientist_v2
    from automd_analysis.importers.autoresearch import read_autoresearch
    from automd_analysis.importers.codex import read_codex
    from automd_analysis.importers.fmlbench import read_fmlbench
    from automd_analysis.importers.mlebench import read_mlebench

    return {
        "aide": read_aide,
        "aiscientist-v2": read_aiscientist_v2,
        "codex": read_codex,
        "autoresearch": read_autoresearch,
        "fmlbench": read_fmlbench,
        "mlebench": read_mlebench,
    }


#: Format names accepted by ``automd import``.
FORMATS = ("aide", "aiscientist-v2", "codex", "autoresearch", "fmlbench", "mlebench")


@fill_doc(references=docs_reference("importing.md", "Tokens"))
def read_tokens_file(path: str | Path, *, max_bytes: int = 1 << 20) -> TokenCount:
    """Parse ``--tokens FILE``: ``{"prompt": int, "completion": int, "total": int}``.

    An optional ``"source"`` key may say ``"user_file"`` (default) or ``"harness"``.

    Parameters
    ----------
    path : str or Path
    max_bytes : int

    Returns
    -------
    TokenCount

    Raises
    ------
    SourceError
        ``import.tokens_invalid``: missing file, not JSON, other keys, non-integer or negative
        counts, ``total < max(prompt, completion)``.

    See Also
    --------
    import_source

    {references}

    Examples
    --------
    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "tokens.json"
    >>> _ = p.write_text('{"prompt": 1200, "completion": 300, "total": 1500}')
    >>> read_tokens_file(p)
    TokenCount(prompt=1200, completion=300, total=1500, source='user_file')
    """
    path = Path(path)
    raw = read_user_json(path, max_bytes, lambda msg: _tokens_error(f"--tokens file: {msg}", path))
    return parse_tokens(raw, path)


def _tokens_error(msg: str, path) -> SourceError:
    fix = 'write {"prompt": int, "completion": int, "total": int} (docs/importing.md)'
    return SourceError(msg, path=path, code="import.tokens_invalid", fix=fix)


def parse_tokens(raw: object, path) -> TokenCount:
    """A parsed tokens object as :class:`TokenCount` (``import.tokens_invalid`` naming ``path``:
    other keys, counts that are not integers in [0, 2**53), ``total < max(prompt,
    completion)``)."""

    def bad(msg: str) -> SourceError:
        return _tokens_error(msg, path)

    if not isinstance(raw, dict):
        raise bad("--tokens file must hold a JSON object")
    extra = set(raw) - {"prompt", "completion", "total", "source"}
    if extra:
        shown = [k[:40] for k in sorted(extra)[:5]]
        raise bad(f"--tokens file has unknown keys {shown}")
    counts = {}
    for key in ("prompt", "completion", "total"):
        v = raw.get(key)
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_INT:
            raise bad(f"--tokens {key!r} must be an integer in [0, 2**53 - 1], not {v!r}")
        counts[key] = v
    if counts["total"] < max(counts["prompt"], counts["completion"]):
        raise bad("--tokens 'total' is smaller than 'prompt' or 'completion'")
    src = raw.get("source", "user_file")
    if src not in ("user_file", "harness"):
        raise bad(f"--tokens 'source' must be 'user_file' or 'harness', not {src!r}")
    return TokenCount(counts["prompt"], counts["completion"], counts["total"], src)


def _check_tasks(runs: list[ImportedRun], manifests: Path | None, data: Path | None) -> None:
    """Unknown tasks are fatal when a manifest directory is available; headers are checked
    against the task's submission columns when its data is available (recorded problems)."""
    from automd_analysis.tasks import (
        Task,
        data_root,
        load_manifest,
        manifest_dir,
        read_time_grid,
        unknown_task_fix,
    )

    runs = [r for r in runs if r.process_task is None]  # process-only: no manifest, no file
    if not runs:
        return
    directory = manifest_dir(manifests)
    if not directory.is_dir():
        if manifests is not None:
            raise SourceError(
                "manifest directory not found",
                path=directory,
                code="import.task_unknown",
                fix="pass --manifests DIR (the task manifests the archive will be scored with)",
            )
        return
    known = {}
    for task in sorted({r.task for r in runs}):
        if not NAME_PATTERN.match(task):
            raise SourceError(
                f"task name {task!r} is not allowed",
                code="import.options_invalid",
                fix=f"task ids match {NAME_PATTERN.pattern}",
            )
        path = directory / f"{task}.yaml"
        if not path.is_file():
            names = sorted(p.stem for p in directory.glob("*.yaml"))
            raise SourceError(
                f"task {task!r} is not among the manifests",
                path=directory,
                code="import.task_unknown",
                fix=f"pass --task with a manifest's id: {unknown_task_fix(task, names, directory)}",
            )
        known[task] = load_manifest(path)
    for run in runs:
        m = known[run.task]
        expected = list(m.submission.id_columns)
        try:
            if m.submission.time_grid is not None:
                expected += read_time_grid(Task(m, data_root(data)))[1]
            else:
                expected += [c for c in (m.submission.probability_column,
                                         m.submission.label_column) if c]  # fmt: skip
        except AutomdError:
            continue  # data not available: scoring reports it
        _check_headers(run, expected)


def _check_headers(run: ImportedRun, expected: list[str]) -> None:
    source = SourceDir(run.source)
    files = [(n.node_id, n.prediction) for n in run.versions]
    if run.final_file is not None:
        files.append(("final", run.final_file))
    bad = []
    for node_id, rel in files:
        head = source.read_head(rel, 1 << 16, source.limits.prediction_bytes,
                                what="prediction file")  # fmt: skip
        line = head.split(b"\n", 1)[0].decode("utf-8", errors="replace").strip().lstrip("\ufeff")
        cols = [c.strip().strip('"') for c in line.split(",")]
        if sorted(cols) != sorted(expected):
            bad.append(node_id)
    if bad:
        run.problems.append(
            problem(
                "import.prediction_header",
                f"{len(bad)} bound file(s) do not have the task's submission columns "
                f"(first: {bad[0]}); they will be scored as invalid",
                fix="check the --predictions binding",
            )
        )


@dataclass
class ImportReport:
    """What one ``automd import`` did (see :meth:`to_dict` for the ``--json`` form)."""

    format: str
    source: Path
    archive: Path
    runs: list[ImportedRun]
    written: list[WrittenRun] = field(default_factory=list)

    def to_dict(self) -> dict:
        """Plain data: format, source, archive and one entry per run."""
        written = {w.run_id: w for w in self.written}
        out = []
        for r in self.runs:
            w = written.get(r.run_id)
            out.append(
                {
                    "run_id": r.run_id,
                    "path": None if w is None else str(w.path),
                    "replaced": False if w is None else w.replaced,
                    "task": r.task,
                    "rep": r.rep,
                    "llm": r.llm,
                    "search": r.search,
                    "started_at": r.started_at.isoformat(),
                    "ended_at": r.ended_at.isoformat(),
                    "nodes": len(r.nodes),
                    "steps": r.steps,
                    "versions": [v.node_id for v in r.versions]
                    + (["final"] if r.final_file is not None else []),
                    "files_bound": sum(v.prediction is not None for v in r.versions),
                    "process_task": None
                    if r.process_task is None
                    else r.process_task.model_dump(mode="json"),
                    "binding": r.binding,
                    "selection": {
                        "rule": r.selection.rule,
                        "selected_version": r.selected_version,
                        "reasons": list(r.selection.reasons),
                    },
                    "reported_val_score": r.reported_val_score,
                    "tokens": None if r.tokens is None else r.tokens.counts(),
                    "tokens_source": None if r.tokens is None else r.tokens.source,
                    "incomplete": r.incomplete,
                    "problems": [p.to_dict() for p in r.problems],
                }
            )
        return {
            "ok": True,
            "format": self.format,
            "source": str(self.source),
            "archive": str(self.archive),
            "runs": out,
        }


def _with_hint(exc: SourceError, fmt: str, source: SourceDir,
               packed: tuple[Path, str] | None = None) -> SourceError:  # fmt: skip
    """``import.journal_missing`` naming the directory one level off that holds the log; for a
    packed SOURCE (``packed`` = the file and SOURCE's member path in it), the folders inside the
    file, by their member paths (the unpacked copy is gone when the error is read)."""
    mark, found = nearby_logs(fmt, source.root, above=packed is None)
    if not found:
        return exc
    if packed is not None:
        file, member = packed
        names = [f"{member}/{p.name}" if member else p.name for p in found]
        shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
        return SourceError(
            f"{exc.message}; {len(names)} folder(s) inside {file.name} hold {mark}: {shown}",
            path=file,
            location=exc.location,
            code=exc.code,
            fix=f"extract {file} and pass its folder {names[0]} as SOURCE (or pack that folder "
            "alone)"
            if len(names) == 1
            else f"extract {file} and pass one of those folders as SOURCE, or import them all "
            "with --layout (docs/importing.md)",
            details={**exc.details, "packed_file": str(file), "log_directories": names},
        )
    if found[0] == source.root.parent:
        hint, fix = f"the folder one level above SOURCE holds {mark}: {found[0]}", found[0]
    else:
        names = ", ".join(p.name for p in found[:5]) + (" ..." if len(found) > 5 else "")
        hint = f"{len(found)} folder(s) one level below SOURCE hold {mark}: {names}"
        fix = found[0] if len(found) == 1 else None
    return SourceError(
        f"{exc.message}; {hint}",
        path=exc.path,
        location=exc.location,
        code=exc.code,
        fix=f"pass {fix} as SOURCE"
        if fix
        else "pass one of them as SOURCE, or import them all with --layout (docs/importing.md)",
        details={**exc.details, "log_directories": [str(p) for p in found]},
    )


def _in_packed(exc: AutomdError, root: Path, file: Path, member: str) -> AutomdError:
    """``exc`` with every path inside the unpacked copy ``root`` (deleted when the import ends)
    named by the packed ``file`` instead: ``path`` becomes the file, and the copy's absolute path
    in the texts becomes the member path inside it."""
    tmp = str(root)
    inside = f"{file.name}:{member}" if member else f"{file.name}:"

    def fix_text(text):
        return text.replace(tmp, inside) if isinstance(text, str) else text

    path = exc.path
    if path is not None and Path(path).is_absolute() and Path(path).is_relative_to(root):
        path = file
    details = {k: fix_text(v) if not isinstance(v, list) else [fix_text(x) for x in v]
               for k, v in exc.details.items()}  # fmt: skip
    if path is exc.path and details == exc.details and tmp not in f"{exc.message}{exc.fix}":
        return exc
    return type(exc)(fix_text(exc.message), path=path, location=exc.location,
                     fix=fix_text(exc.fix), code=exc.code, details=details)  # fmt: skip


def import_source(
    fmt: str,
    source: str | Path,
    archive: str | Path,
    opts: ImportOptions,
    *,
    replace_existing: bool = False,
    manifests: str | Path | None = None,
    data: str | Path | None = None,
) -> ImportReport:
    """Import one agent output directory (or a ``.zip``/``.tar`` of it) into an archive.

    Parameters
    ----------
    fmt : str
        One of :data:`FORMATS`.
    source : str or Path
        The directory holding the agent's own log (docs/importing.md, per format), or a
        ``.zip``/``.tar[.gz]`` file of it (unpacked safely for the import, :mod:`.packed`).
    archive : str or Path
        DEST; ``archive.yaml`` is created when missing.
    opts : ImportOptions
    replace_existing : bool
        ``--replace``.
    manifests, data : path, optional
        Task manifests (an unknown task is fatal when they are available) and the data root
        (bound files' headers are checked against the task when it is available).

    Returns
    -------
    ImportReport

    Raises
    ------
    SourceError
        Any fatal ``import.*`` code of :data:`~automd_analysis.importers.problems.FATAL`; nothing
        is written then. ``import.journal_missing`` names the directory one level above or below
        SOURCE that holds the log, when there is one.

    See Also
    --------
    automd_analysis.importers.writer.write_runs

    References
    ----------
    docs/importing.md; Auto-MD-bench App. C (selection rules).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> try:
    ...     import_source("aide", pathlib.Path(tempfile.mkdtemp()) / "nope", "arch",
    ...                   ImportOptions(agent="aide", task="t"))
    ... except SourceError as exc:
    ...     print(exc.code)
    import.source_missing
    """
    readers = _formats()
    if fmt not in readers:
        raise SourceError(
            f"unknown format {fmt!r}",
            code="import.options_invalid",
            fix=f"use one of {', '.join(FORMATS)}",
        )
    given = Path(source)
    if is_packed(given):
        with unpacked(given, opts.limits) as (root, name, member):
            src = SourceDir(root, opts.limits, name=name)
            try:
                return _import(fmt, src, given, archive, opts, replace_existing, manifests, data,
                               packed=(given.resolve(), member))  # fmt: skip
            except AutomdError as exc:
                raise _in_packed(exc, root, given.resolve(), member) from None
    return _import(fmt, SourceDir(given, opts.limits), given, archive, opts, replace_existing,
                   manifests, data)  # fmt: skip


def _tokens_in_source(src: SourceDir, opts: ImportOptions) -> ImportOptions:
    """``opts`` with the tokens of ``opts.tokens_in_source`` when SOURCE holds that file."""
    rel = opts.tokens_in_source
    if rel is None or not src.is_file(rel, what="tokens file"):
        return opts
    raw = parse_json(src.read_bytes(rel, src.limits.text_bytes, what="tokens file"), rel,
                     "tokens file", src.limits)  # fmt: skip
    return replace(opts, tokens=parse_tokens(raw, rel))


def _import(fmt, src: SourceDir, given: Path, archive, opts, replace_existing, manifests, data,
            packed: tuple[Path, str] | None = None):  # fmt: skip
    opts = _tokens_in_source(src, opts)
    if manifests is not None:
        opts = replace(opts, manifests=Path(manifests))
    try:
        runs = _formats()[fmt](src, opts)
    except SourceError as exc:
        if exc.code == "import.journal_missing":
            raise _with_hint(exc, fmt, src, packed) from None
        raise
    _check_tasks(runs, None if manifests is None else Path(manifests),
                 None if data is None else Path(data))  # fmt: skip
    written = write_runs(archive, runs, replace=replace_existing, limits=opts.limits)
    return ImportReport(fmt, given.resolve(), Path(archive), runs, written)
