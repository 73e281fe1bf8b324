"""Archived code on the run pages: syntax highlighting, diffs against the parent, shared pages.

Code is agent output and is treated as text: it is highlighted with Pygments (a lexer chosen by
the file's extension from a short list; anything else, a file above
:data:`MAX_HIGHLIGHT_CHARS` or with a line above :data:`MAX_LINE_CHARS` is shown escaped without
colours) and never run. Pygments escapes every character it emits; the fallback uses
:func:`html.escape`; control characters (a NUL byte, an escape sequence) are shown as their
Unicode control pictures (``␀``...), never written raw.

A version's code is compared with its parent's file by file (files are matched by their path
inside the version's folder, ``code/<version>/``): a unified diff with three lines of context, as
rows of a table whose new-side lines carry anchors, so a codebook answer can link to the line it
cites. Only the lines a diff shows are highlighted.

Whole files (the selected version's, a first version's, an added file) get a page of their own
under ``runs/_code/``, named by the sha256 of the file's name and text: a file shared by many
versions or runs is written once, and the report's size grows with the distinct code, not with
runs times files. A diff too long to show on a run page is stored the same way.
"""

from __future__ import annotations

import difflib
import hashlib
import html
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import (
    BashLexer,
    IniLexer,
    JsonLexer,
    PythonLexer,
    SLexer,
    TOMLLexer,
    YamlLexer,
)

from automd_analysis._atomic import write_bytes_atomic
from automd_analysis.report.run_links import RUNS_DIR, RUNS_INDEX, relative_href

__all__ = [
    "CODE_DIR",
    "MAX_HIGHLIGHT_CHARS",
    "MAX_LINE_CHARS",
    "CodePages",
    "FileChange",
    "cited_paths",
    "compare_files",
    "diff_table",
    "evidence_targets",
    "highlight_css",
    "highlight_lines",
    "local_name",
    "split_lines",
    "whole_file_lines",
]

#: Folder of the shared code and diff pages, relative to the report folder.
CODE_DIR = f"{RUNS_DIR}/_code"
#: Larger files are shown without colours (lexing time grows with the text).
MAX_HIGHLIGHT_CHARS = 400_000
#: A file with a longer line is shown without colours (minified or generated text).
MAX_LINE_CHARS = 2_000
#: Files with more lines than this (old + new) are not diffed line by line.
MAX_DIFF_LINES = 20_000
#: A diff with more rows than this is stored on a page of its own and linked.
MAX_INLINE_ROWS = 300
#: Lines of context around each change.
CONTEXT_LINES = 3
#: Extension -> lexer; everything else is plain text.
_LEXERS = {
    ".py": PythonLexer,
    ".json": JsonLexer,
    ".ipynb": JsonLexer,
    ".yaml": YamlLexer,
    ".yml": YamlLexer,
    ".toml": TOMLLexer,
    ".sh": BashLexer,
    ".cfg": IniLexer,
    ".ini": IniLexer,
    ".r": SLexer,
}
_STYLE = "default"
_CSS_SCOPE = ".hl"
#: One formatter for every call (building one prepares its whole style sheet).
_FORMATTER = HtmlFormatter(nowrap=True, style=_STYLE)


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` as the annotator numbers them (``\\r\\n`` and ``\\r`` end a line; a
    final newline does not start one more).

    Examples
    --------
    >>> split_lines("a\\r\\nb\\n\\nc\\n")
    ['a', 'b', '', 'c']
    >>> split_lines("")
    []
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _lexer(name: str):
    cls = _LEXERS.get(posixpath.splitext(name)[1].lower())
    return None if cls is None else cls(stripnl=False, stripall=False, ensurenl=True, tabsize=0)


def highlight_lines(lines: list[str], name: str) -> list[str]:
    """One escaped HTML string per line, with Pygments' colour classes when the file's extension
    has a lexer and the text is small enough (:data:`MAX_HIGHLIGHT_CHARS`,
    :data:`MAX_LINE_CHARS`).

    Examples
    --------
    >>> highlight_lines(["x = '<b>'"], "a.py")[0].count("&lt;b&gt;")
    1
    >>> highlight_lines(["<script>", "a\\x00b\\x1b"], "notes.txt")
    ['&lt;script&gt;', 'a␀b␛']
    """
    return list(_highlighted(tuple(lines), name))


#: Control characters (NUL, ESC, DEL...; not the tab) shown as their Unicode control pictures
#: (U+2400...): a page never carries them raw, and the reader sees that they are there.
_CONTROL_PICTURES = {c: 0x2400 + c for c in range(0x20) if c != 0x09} | {0x7F: 0x2421}


@lru_cache(maxsize=512)
def _highlighted(lines: tuple[str, ...], name: str) -> tuple[str, ...]:
    lines = tuple(line.translate(_CONTROL_PICTURES) for line in lines)
    plain = tuple(html.escape(line, quote=False) for line in lines)
    lexer = _lexer(name)
    too_long = any(len(line) > MAX_LINE_CHARS for line in lines)
    if lexer is None or too_long or sum(map(len, lines)) > MAX_HIGHLIGHT_CHARS or not lines:
        return plain
    out = highlight("\n".join(lines) + "\n", lexer, _FORMATTER)
    out = _SPAN.sub(_without_unstyled, out).split("\n")
    if out and out[-1] == "":
        out.pop()
    return tuple(out) if len(out) == len(lines) else plain


#: A token's span (Pygments' HTML formatter never nests them).
_SPAN = re.compile(r'<span class="([^"]+)">([^<]*)</span>')
#: Classes the style gives a colour or font; spans of other classes (names, whitespace...) are
#: dropped, which halves the size of a highlighted page and changes nothing it shows.
_STYLED = frozenset(HtmlFormatter(style=_STYLE).class2style)


def _without_unstyled(match: re.Match) -> str:
    return match.group(0) if match.group(1) in _STYLED else match.group(2)


def highlight_css() -> str:
    """The colour rules of the highlighted code (Pygments' ``default`` style, scoped to
    ``.hl``)."""
    return HtmlFormatter(style=_STYLE).get_style_defs(_CSS_SCOPE)


@dataclass(frozen=True)
class FileChange:
    """One file of a version compared with its parent's.

    Attributes
    ----------
    name : str
        Path inside the version's folder (``train.py``).
    old, new : str or None
        The run-relative paths (``None``: absent on that side).
    status : str
        ``added``, ``deleted``, ``modified`` or ``unchanged``.
    added, removed : int
        Lines added and removed.
    rows : list of tuple
        ``(kind, old line, new line, text)`` per diff row (``kind``: ``" "``, ``"-"``, ``"+"``,
        ``"@"`` for a hunk header), text as plain text; empty when not diffed.
    too_large : bool
        The files were too long to diff line by line.
    """

    name: str
    old: str | None
    new: str | None
    status: str
    added: int = 0
    removed: int = 0
    rows: list[tuple] = field(default_factory=list)
    too_large: bool = False


def local_name(path: str, version: str) -> str:
    """A code file's path inside its version's folder (``code/v2/src/a.py`` -> ``src/a.py``).

    Examples
    --------
    >>> local_name("code/v0002/train.py", "v0002"), local_name("other/x.py", "v1")
    ('train.py', 'other/x.py')
    """
    prefix = f"code/{version}/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def _rows(a: list[str], b: list[str]) -> tuple[list[tuple], int, int]:
    rows, added, removed = [], 0, 0
    matcher = difflib.SequenceMatcher(None, a, b)
    for group in matcher.get_grouped_opcodes(CONTEXT_LINES):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        rows.append(("@", i1 + 1, j1 + 1, f"@@ -{i1 + 1},{i2 - i1} +{j1 + 1},{j2 - j1} @@"))
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                rows.extend((" ", a1 + k + 1, b1 + k + 1, b[b1 + k]) for k in range(a2 - a1))
                continue
            rows.extend(("-", i + 1, None, a[i]) for i in range(a1, a2))
            rows.extend(("+", None, j + 1, b[j]) for j in range(b1, b2))
            removed, added = removed + a2 - a1, added + b2 - b1
    return rows, added, removed


def compare_files(
    parent: dict[str, str] | None, files: dict[str, str], parent_version: str | None,
    version: str,
) -> list[FileChange]:  # fmt: skip
    """Each file of ``files`` (version ``version``) against the same file of ``parent``.

    Parameters
    ----------
    parent : dict or None
        Run-relative path -> text of the parent's files (``None``: no parent, every file is new).
    files : dict
        Run-relative path -> text of the version's files.
    parent_version, version : str
        Version ids (to match files by their path inside the version's folder).

    Returns
    -------
    list of FileChange
        Sorted by name.

    Examples
    --------
    >>> [(c.name, c.status, c.added, c.removed) for c in compare_files(
    ...     {"code/v1/a.py": "x = 1\\n"}, {"code/v2/a.py": "x = 2\\n", "code/v2/b.py": "y\\n"},
    ...     "v1", "v2")]
    [('a.py', 'modified', 1, 1), ('b.py', 'added', 1, 0)]
    """
    old = {local_name(p, parent_version or ""): p for p in (parent or {})}
    new = {local_name(p, version): p for p in files}
    changes = []
    for name in sorted(set(old) | set(new)):
        a_path, b_path = old.get(name), new.get(name)
        if b_path is None:
            lines = split_lines(parent[a_path])
            changes.append(FileChange(name, a_path, None, "deleted", removed=len(lines)))
            continue
        b = split_lines(files[b_path])
        if a_path is None:
            changes.append(FileChange(name, None, b_path, "added", added=len(b)))
            continue
        a = split_lines(parent[a_path])
        if a == b:
            changes.append(FileChange(name, a_path, b_path, "unchanged"))
        elif len(a) + len(b) > MAX_DIFF_LINES:
            changes.append(FileChange(name, a_path, b_path, "modified", too_large=True))
        else:
            rows, added, removed = _rows(a, b)
            changes.append(FileChange(name, a_path, b_path, "modified", added, removed, rows))
    return changes


def _colored_rows(change: FileChange) -> list[tuple]:
    """The rows of a diff, highlighted within each hunk: the new side (context and added lines)
    lexed as one block, the removed lines as another. Only the hunk's own lines count, so a page
    is the same whatever else its process highlighted before."""
    out: list[tuple] = []
    hunk: list[tuple] = []

    def flush() -> None:
        colored: dict[int, str] = {}
        for sides in ("-", " +"):
            index = [i for i, row in enumerate(hunk) if row[0] in sides]
            lines = highlight_lines([hunk[i][3] for i in index], change.name)
            colored.update(zip(index, lines, strict=True))
        out.extend((row[0], row[1], row[2], colored[i]) for i, row in enumerate(hunk))
        hunk.clear()

    for row in change.rows:
        if row[0] == "@":
            flush()
            out.append((row[0], row[1], row[2], html.escape(row[3], quote=False)))
        else:
            hunk.append(row)
    flush()
    return out


def whole_file_lines(name: str, text: str) -> list[str]:
    """The highlighted lines of a whole file (:func:`highlight_lines` of its lines)."""
    return highlight_lines(split_lines(text), posixpath.basename(name))


def diff_table(change: FileChange, anchor: str) -> str:
    """The HTML table of a file's diff (classes ``a`` added, ``d`` removed, ``h`` hunk header);
    the row of new-side line ``n`` has the id ``<anchor>-L<n>``."""
    body = []
    marks = {" ": ("", ""), "-": (' class="d"', "&minus;"), "+": (' class="a"', "+")}
    for kind, old, new, text in _colored_rows(change):
        if kind == "@":
            body.append(f'<tr class="h"><td colspan="3"></td><td>{text}</td></tr>')
            continue
        css, mark = marks[kind]
        row_id = f' id="{anchor}-L{new}"' if new is not None else ""
        left, right = ("" if old is None else old), ("" if new is None else new)
        body.append(f"<tr{css}{row_id}><td>{left}</td><td>{right}</td><td>{mark}</td>"
                    f"<td>{text}</td></tr>")  # fmt: skip
    return f'<table class="diff hl">{"".join(body)}</table>'


def _key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", errors="surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()[:40]


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<link rel="stylesheet" href="{css}"></head><body class="code-page">
<p class="nav"><a href="{index}">&larr; all runs</a></p>
<h1><code>{title}</code></h1>
<p class="muted">{note}</p>
{body}
</body></html>
"""


class CodePages:
    """Writes the shared code pages of one report folder and remembers what it wrote.

    Parameters
    ----------
    out_dir : Path
        The report folder.
    """

    def __init__(self, out_dir: Path):
        self.out_dir = Path(out_dir)

    def _write(self, rel: str, page: str) -> str:
        target = self.out_dir / rel
        if not target.is_file():  # named by content: an existing page is the same page
            write_bytes_atomic(target, page.encode("utf-8", errors="replace"))
        return rel

    def _page(self, rel: str, title: str, note: str, body: str) -> str:
        return _PAGE.format(
            title=html.escape(title),
            css=relative_href(rel, f"{RUNS_DIR}/run.css"),
            index=relative_href(rel, RUNS_INDEX),
            note=note,
            body=body,
        )

    def file_page(self, name: str, text: str) -> str:
        """The page of one whole file (lines ``L1`` ... as anchors); its report-relative path."""
        base = posixpath.basename(name) or "file"
        key = _key("file", base, text)
        rel = f"{CODE_DIR}/{key[:2]}/{key}.html"
        if (self.out_dir / rel).is_file():
            return rel
        cells = whole_file_lines(base, text)
        rows = "".join(
            f'<tr id="L{i}"><td><a href="#L{i}">{i}</a></td><td>{line}</td></tr>'
            for i, line in enumerate(cells, start=1)
        )
        note = f"{len(cells)} lines; archived code, shown as text (never run)."
        return self._write(
            rel, self._page(rel, base, note, f'<table class="code hl">{rows}</table>')
        )

    def diff_page(self, change: FileChange, old_text: str, new_text: str) -> str:
        """The page of a diff too long for a run page; its report-relative path."""
        key = _key("diff", change.name, old_text, new_text)
        rel = f"{CODE_DIR}/{key[:2]}/{key}.html"
        if (self.out_dir / rel).is_file():
            return rel
        note = f"+{change.added} &minus;{change.removed} lines against the parent version."
        page = self._page(rel, change.name, note, diff_table(change, "d"))
        return self._write(rel, page)


def evidence_targets(evidence: str | None) -> list[tuple[str, int | None]]:
    """``(path, line)`` of each ``file:line`` citation of an evidence string (``;``-joined);
    ``line`` is ``None`` when the citation has no line number.

    Examples
    --------
    >>> evidence_targets("code/v2/train.py:186;code/v2/train.py:9;notes")
    [('code/v2/train.py', 186), ('code/v2/train.py', 9), ('notes', None)]
    """
    out = []
    for part in (evidence or "").split(";"):
        part = part.strip()
        if not part:
            continue
        found = re.fullmatch(r"(.+?):([0-9]{1,9})", part)
        out.append((found.group(1), int(found.group(2))) if found else (part, None))
    return out


def cited_paths(rows: Iterable[dict]) -> set[str]:
    """Every path the ``evidence`` of ``rows`` cites."""
    return {path for row in rows for path, _ in evidence_targets(row.get("evidence"))}
