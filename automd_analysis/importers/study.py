"""A study in one command: every run directory under ROOT that matches a layout, imported.

``automd import FORMAT ROOT --layout '{agent}/{task}/rep{rep}' --archive DEST`` treats every
directory below ROOT whose path matches the layout as one run's SOURCE; the layout's placeholders
give the run's agent, task and repetition (the other options apply to every run). The last
segment also matches a ``.zip``/``.tar`` file of the run (``rep0.tar.gz``). Each run is imported
on its own (:func:`~.api.import_source`): a run that fails writes nothing and does not stop the
others; the result lists every run with its problems or its error.

Directories are listed without following symlinks (a symlinked directory that would match is
reported, not entered), at most ``Limits.max_entries`` entries per listing.
"""

from __future__ import annotations

import os
import re
import stat
import string
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from automd_analysis.archive.safe import NAME_PATTERN
from automd_analysis.docstrings import docs_reference, fill_doc
from automd_analysis.errors import AutomdError
from automd_analysis.importers._common import ImportOptions
from automd_analysis.importers.api import ImportReport, import_source
from automd_analysis.importers.packed import PACKED_SUFFIXES, packed_name
from automd_analysis.importers.problems import SourceError

__all__ = ["PLACEHOLDERS", "Layout", "StudyReport", "StudyRun", "StudySource", "find_sources",
           "import_sources", "import_study", "list_entries", "parse_layout"]  # fmt: skip

#: Placeholders of a layout and what they match.
PLACEHOLDERS = {
    "agent": NAME_PATTERN.pattern[1:-1],
    "task": NAME_PATTERN.pattern[1:-1],
    "rep": r"0|[1-9][0-9]{0,5}",
}


#: The ``archive`` input of the commands that import a whole study.
ARCHIVE_DEST = """
archive : str or Path
    DEST.
"""

#: The Parameters text of the options a study import passes on to every run.
STUDY_RUN_OPTIONS = """
replace_existing, manifests, data
    As for :func:`~automd_analysis.importers.api.import_source`.
on_run : callable, optional
    ``on_run(i, n, run)`` after each run, imported or not (progress).
"""


def _invalid(msg: str) -> SourceError:
    return SourceError(
        msg,
        code="import.options_invalid",
        fix="--layout is a path below ROOT with {agent}, {task} and {rep}, e.g. "
        "'{agent}/{task}/rep{rep}' (docs/importing.md)",
    )


@dataclass(frozen=True)
class Layout:
    """A parsed ``--layout``: one regular expression per path segment."""

    text: str
    segments: tuple[re.Pattern, ...]
    fields: frozenset[str]


@fill_doc(references=docs_reference("importing.md", "A study in one command"))
def parse_layout(text: str) -> Layout:
    """Parse ``--layout``.

    Parameters
    ----------
    text : str
        A ``/``-separated path relative to ROOT; segments may hold literal text and the
        placeholders of :data:`PLACEHOLDERS` (each at most once per segment).

    Returns
    -------
    Layout

    Raises
    ------
    SourceError
        ``import.options_invalid`` for an empty, absolute or ``..`` path, another placeholder, a
        format spec or conversion, or a segment that is only ``.``.

    See Also
    --------
    find_sources

    {references}

    Examples
    --------
    >>> layout = parse_layout("{agent}/{task}/rep{rep}/logs/0-run")
    >>> sorted(layout.fields), len(layout.segments)
    (['agent', 'rep', 'task'], 5)
    >>> layout.segments[2].fullmatch("rep12").group("rep")
    '12'
    """
    if not text or text.startswith("/") or "\\" in text or "\x00" in text:
        raise _invalid(f"--layout {text!r} must be a relative path")
    segments, fields = [], set()
    for seg in text.strip("/").split("/"):
        if seg in ("", ".", ".."):
            raise _invalid(f"--layout {text!r} has an empty, '.' or '..' segment")
        regex, seen = [], set()
        try:
            parsed = list(string.Formatter().parse(seg))
        except ValueError as exc:
            raise _invalid(f"--layout {text!r} is malformed: {exc}") from None
        for literal, name, spec, conversion in parsed:
            regex.append(re.escape(literal))
            if name is None:
                continue
            if name not in PLACEHOLDERS or spec or conversion:
                raise _invalid(f"--layout {text!r} uses {{{name}}}; only {{agent}}, {{task}} "
                               "and {rep} are placeholders")  # fmt: skip
            if name in seen:
                raise _invalid(f"--layout {text!r} repeats {{{name}}} in one segment")
            seen.add(name)
            regex.append(f"(?P<{name}>{PLACEHOLDERS[name]})")
        fields |= seen
        segments.append(re.compile("".join(regex)))
    return Layout(text, tuple(segments), frozenset(fields))


@dataclass(frozen=True)
class StudySource:
    """One matched SOURCE: its path relative to ROOT and the placeholder values."""

    rel: str
    path: Path
    values: dict[str, str]


def list_entries(path: Path, cap: int) -> list[tuple[str, str]]:
    """``(name, kind)`` of ``path``'s entries, sorted, without following symlinks (kind: dir,
    file, link, other); ``import.too_large`` above ``cap`` entries."""
    out = []
    try:
        with os.scandir(path) as it:
            for n, e in enumerate(it):
                if n >= cap:
                    raise SourceError(
                        f"{path} has more than {cap} entries",
                        path=path,
                        code="import.too_large",
                        fix="point ROOT at the study's own directory",
                    )
                mode = e.stat(follow_symlinks=False).st_mode
                kind = (
                    "dir" if stat.S_ISDIR(mode)
                    else "file" if stat.S_ISREG(mode)
                    else "link" if stat.S_ISLNK(mode)
                    else "other"
                )  # fmt: skip
                out.append((e.name, kind))
    except OSError as exc:
        raise SourceError(
            f"{path} cannot be listed: {exc.strerror or exc}",
            path=path,
            code="import.unreadable",
            fix="make ROOT readable by the user running automd import",
        ) from None
    return sorted(out)


def find_sources(root: Path, layout: Layout, max_entries: int = 200_000
                 ) -> tuple[list[StudySource], list[tuple[str, str]]]:  # fmt: skip
    """The directories (and packed files, last segment) below ``root`` that match ``layout``.

    Returns
    -------
    sources : list of StudySource
        Sorted by path; a placeholder used in two segments must have one value.
    skipped : list of (str, str)
        Matching entries that are not imported: symlinks, special files.
    """
    level: list[tuple[str, dict[str, str]]] = [("", {})]
    skipped: list[tuple[str, str]] = []
    last = len(layout.segments) - 1
    for depth, regex in enumerate(layout.segments):
        nxt = []
        for rel, values in level:
            for name, kind in list_entries(root / rel if rel else root, max_entries):
                packed = depth == last and kind == "file" and name.lower().endswith(PACKED_SUFFIXES)
                m = regex.fullmatch(packed_name(Path(name)) if packed else name)
                if not m:
                    continue
                child = f"{rel}/{name}" if rel else name
                if kind in ("link", "other"):
                    skipped.append((child, "a symlink" if kind == "link" else "not a folder"))
                    continue
                if kind == "file" and not packed:
                    continue
                got = {k: v for k, v in m.groupdict().items() if v is not None}
                if any(values.get(k, v) != v for k, v in got.items()):
                    continue
                nxt.append((child, {**values, **got}))
        level = nxt
    return [StudySource(rel, root / rel, vals) for rel, vals in sorted(level)], skipped


@dataclass
class StudyRun:
    """One SOURCE of a study and what its import did (``report`` or ``error``)."""

    source: StudySource
    report: ImportReport | None = None
    error: AutomdError | None = None

    def to_dict(self) -> dict:
        """Plain data: the SOURCE, its placeholder values and the import report or error."""
        out = {"source": self.source.rel, **self.source.values, "ok": self.error is None}
        if self.error is not None:
            out["error"] = self.error.to_dict()
        else:
            out["runs"] = self.report.to_dict()["runs"]
        return out


@dataclass
class StudyReport:
    """What ``automd import ... --layout`` did."""

    format: str
    root: Path
    layout: str
    archive: Path
    runs: list[StudyRun] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    @property
    def n_failed(self) -> int:
        """Sources whose import failed (nothing was written for them)."""
        return sum(r.error is not None for r in self.runs)

    @property
    def exit_code(self) -> int:
        """0 all imported, 1 some failed, 2 none imported."""
        if not self.runs or self.n_failed == len(self.runs):
            return 2
        return 1 if self.n_failed else 0

    def to_dict(self) -> dict:
        """Plain data, for ``--json``."""
        return {
            "ok": self.exit_code == 0,
            "format": self.format,
            "root": str(self.root),
            "layout": self.layout,
            "archive": str(self.archive),
            "imported": len(self.runs) - self.n_failed,
            "failed": self.n_failed,
            "sources": [r.to_dict() for r in self.runs],
            "skipped": [{"source": s, "why": w} for s, w in self.skipped],
        }


@fill_doc(
    references=docs_reference("importing.md", "A study in one command"),
    archive_dest=ARCHIVE_DEST,
    study_run_options=STUDY_RUN_OPTIONS,
)
def import_study(
    fmt: str,
    root: str | Path,
    archive: str | Path,
    opts: ImportOptions,
    layout: str,
    *,
    agent: str | None = None,
    task: str | None = None,
    rep: int | None = None,
    replace_existing: bool = False,
    manifests: str | Path | None = None,
    data: str | Path | None = None,
    on_run: Callable[[int, int, StudyRun], None] | None = None,
) -> StudyReport:
    """Import every SOURCE under ``root`` that matches ``layout`` into ``archive``.

    Parameters
    ----------
    fmt : str
    root : str or Path
        ROOT, the study's directory.
    {archive_dest}
    opts : ImportOptions
        Options shared by every run (its ``agent``, ``task`` and ``rep`` are replaced per run).
    layout : str
        See :func:`parse_layout`.
    agent, task, rep : optional
        For placeholders the layout does not have (``--agent``...); giving one the layout has is
        ``import.options_invalid``.
    {study_run_options}

    Returns
    -------
    StudyReport
        One entry per SOURCE; ``exit_code`` 0 (all imported), 1 (some failed), 2 (none).

    Raises
    ------
    SourceError
        Only for the study as a whole: ``import.source_missing`` (ROOT), ``import.options_invalid``
        (layout, options), ``import.unreadable`` / ``import.too_large`` (listing ROOT).

    See Also
    --------
    automd_analysis.importers.api.import_source

    {references}

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> (root / "aide" / "t1" / "rep0").mkdir(parents=True)
    >>> study = import_study("aide", root, root / "archive", ImportOptions(agent=""),
    ...                      "{agent}/{task}/rep{rep}")
    >>> study.exit_code, study.runs[0].source.values, study.runs[0].error.code
    (2, {'agent': 'aide', 'task': 't1', 'rep': '0'}, 'import.journal_missing')
    """
    parsed = parse_layout(layout)
    given = {"agent": agent, "task": task, "rep": rep}
    for name, value in given.items():
        if value is not None and name in parsed.fields:
            raise _invalid(f"--{name} is given and --layout has {{{name}}}: use one of them")
    if "agent" not in parsed.fields and not agent:
        raise _invalid("--agent is required when --layout has no {agent}")
    root = Path(root)
    if not root.is_dir():
        raise SourceError("ROOT directory not found", path=root, code="import.source_missing",
                          fix="pass the study's directory as ROOT")  # fmt: skip
    sources, skipped = find_sources(root, parsed, opts.limits.max_entries)
    report = StudyReport(fmt, root.resolve(), layout, Path(archive), skipped=skipped)
    return import_sources(report, sources, opts, agent=agent, task=task, rep=rep,
                          replace_existing=replace_existing, manifests=manifests, data=data,
                          on_run=on_run)  # fmt: skip


def import_sources(report: StudyReport, sources: list[StudySource], opts: ImportOptions, *,
                   agent: str | None = None, task: str | None = None, rep: int | None = None,
                   replace_existing: bool = False, manifests=None, data=None,
                   on_run: Callable[[int, int, StudyRun], None] | None = None) -> StudyReport:  # fmt: skip
    """Import each SOURCE of a study on its own into ``report.archive`` (its placeholder values
    over ``agent``/``task``/``rep``); a run that fails is listed with its error, the others go
    on. Returns ``report`` with one :class:`StudyRun` per SOURCE."""
    archive, fmt = report.archive, report.format
    for i, src in enumerate(sources, start=1):
        run_opts = replace(
            opts,
            agent=src.values.get("agent", agent or ""),
            task=src.values.get("task", task),
            rep=int(src.values["rep"]) if "rep" in src.values else (rep or 0),
        )
        item = StudyRun(src)
        try:
            item.report = import_source(fmt, src.path, archive, run_opts,
                                        replace_existing=replace_existing, manifests=manifests,
                                        data=data)  # fmt: skip
        except AutomdError as exc:
            item.error = exc
        except Exception as exc:  # a bug of ours must not stop the other runs
            item.error = internal_error(exc)
        report.runs.append(item)
        if on_run is not None:
            on_run(i, len(sources), item)
    return report


def internal_error(exc: BaseException) -> AutomdError:
    """``import.internal_error`` for an exception that is not an :class:`AutomdError` (a bug)."""
    return SourceError(
        f"unexpected {type(exc).__name__} inside automd import: {exc}",
        code="import.internal_error",
        fix="this is a bug in automd-analysis: please report it with the command and the "
        "source's layout",
    )
