"""The HTML report site: executed notebooks rendered without code, and an index page.

Layout of a report directory ``OUT`` (what ``automd regenerate`` writes)::

    OUT/index.html          archive name, scorer version, run counts, links to everything below
    OUT/notebooks/*.ipynb   executed notebooks (papermill output, with outputs and tracebacks)
    OUT/html/*.html         one page per notebook, code hidden
    OUT/tables/*            tables exported by the notebooks (CSV + LaTeX + HTML)
    OUT/figures/*           figures saved by the notebooks (PNG + SVG)

Archives are written by agents, so every string that can come from one is treated as hostile:
the index escapes everything it prints (:func:`html.escape`), and notebook outputs are sanitised
before rendering (:func:`sanitize_outputs`): HTML outputs are cleaned with bleach against a
table-and-text allowlist (anything else is escaped, so a ``<script>`` in a table cell shows as
text), Markdown outputs have their raw HTML escaped, and active content (JavaScript, SVG outputs,
widgets) is dropped from the page.
"""

from __future__ import annotations

import copy
import html
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol
from urllib.parse import quote

import bleach
import nbformat
from bleach.css_sanitizer import CSSSanitizer

from automd_analysis.analysis.catalog import ANALYSES, FIGURES, TABLES, lookup
from automd_analysis.analysis.catalog.declaration import Figure, Table
from automd_analysis.analysis.store import NOT_SCORABLE, ScoreStore
from automd_analysis.report.provenance import (
    SYNTHETIC_FOOTNOTE,
    SYNTHETIC_MARK,
    mark_synthetic_text,
    provenance_line,
    synthetic_tasks,
)
from automd_analysis.report.run_links import RUNS_INDEX, link_run_ids

__all__ = [
    "INDEX_CSS",
    "SUBDIRS",
    "StoreSummary",
    "SYNTHETIC_FOOTNOTE",
    "SYNTHETIC_MARK",
    "build_index",
    "provenance_line",
    "render_notebook",
    "render_page",
    "render_site",
    "sanitize_outputs",
    "summarise_store",
    "synthetic_tasks",
]


class NotebookResult(Protocol):
    """What the index needs to know of one notebook's run (the application's
    :class:`automd_analysis.app.run_notebooks.NotebookResult` has it)."""

    name: str
    output: Path
    ok: bool
    skipped: str | None
    failure: object | None
    title: str | None


#: Sub-directories of a report directory.
SUBDIRS = ("tables", "figures", "notebooks", "html")

_ALLOWED_TAGS = frozenset(
    {
        *bleach.ALLOWED_TAGS,
        *("div", "span", "p", "br", "wbr", "hr", "pre", "code", "sup", "sub", "small", "caption"),
        *("h1", "h2", "h3", "h4", "h5", "h6", "img", "style", "details", "summary"),
        *("table", "thead", "tbody", "tfoot", "tr", "th", "td", "colgroup", "col"),
    }
)
_EMBEDDED_IMAGE = re.compile(r"^data:image/(?:png|jpeg|gif);base64,[A-Za-z0-9+/=\s]*$")


def _img_attribute(tag: str, name: str, value: str) -> bool:
    """Images may only be embedded rasters (no remote fetches, no SVG, no scripts)."""
    if name == "src":
        return bool(_EMBEDDED_IMAGE.match(value))
    return name in {"alt", "width", "height", "class"}


def _link_attribute(tag: str, name: str, value: str) -> bool:
    """Links may not use ``data:`` URLs (bleach separately rejects ``javascript:``)."""
    if name == "href":
        return not value.strip().lower().startswith("data:")
    return name in {"title", "class", "id"}


_ALLOWED_ATTRIBUTES = {
    "*": ["class", "id", "style", "title"],
    "a": _link_attribute,
    "img": _img_attribute,
    "table": ["border", "class", "id"],
    "details": ["class", "id"],
    "th": ["colspan", "rowspan", "class", "id", "style"],
    "td": ["colspan", "rowspan", "class", "id", "style"],
}
_ALLOWED_PROTOCOLS = frozenset({"http", "https", "mailto", "data"})  # data: only passes for <img>
#: Output MIME types that can run code in the browser; never rendered.
_ACTIVE_MIME_TYPES = (
    "application/javascript",
    "text/javascript",
    "image/svg+xml",
    "application/vnd.jupyter.widget-view+json",
    "application/vnd.jupyter.widget-state+json",
)


def _clean_html(text: str) -> str:
    return bleach.clean(
        text,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        protocols=_ALLOWED_PROTOCOLS,
        css_sanitizer=CSSSanitizer(),
        strip=False,
    )


def sanitize_outputs(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Copy of an executed notebook whose outputs are safe to embed in an HTML page.

    - ``text/html`` outputs are cleaned with bleach: tables, text markup, inline CSS (itself
      sanitised) and ``data:image/png|jpeg|gif`` images are kept; any other tag is escaped (shown
      as text), event-handler attributes and ``javascript:`` URLs are removed.
    - ``text/markdown`` outputs have raw HTML escaped.
    - JavaScript, SVG and widget outputs are dropped (SVG can carry scripts; figures are shown as
      PNG and the SVG files are linked from the index).
    Markdown *cells* are authored in the repository, not by agents, and are left untouched.

    Parameters
    ----------
    nb : NotebookNode
        An executed notebook; it is not modified.

    Returns
    -------
    NotebookNode
    """
    nb = copy.deepcopy(nb)
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        for output in cell.get("outputs", []):
            data = output.get("data")
            if not data:
                continue
            for mime in _ACTIVE_MIME_TYPES:
                data.pop(mime, None)
            if "text/html" in data:
                data["text/html"] = _clean_html(_joined(data["text/html"]))
            if "text/markdown" in data:
                data["text/markdown"] = html.escape(_joined(data["text/markdown"]), quote=False)
    return nb


def _joined(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


def _provenance_cell(text: str) -> nbformat.NotebookNode:
    """A code cell whose only output is the escaped provenance line (input hidden on pages)."""
    cell = nbformat.v4.new_code_cell("")
    cell["id"] = "automd-provenance"  # a fixed id: the same notebook gives the same page
    cell.outputs = [
        nbformat.v4.new_output(
            "display_data",
            data={
                "text/html": f'<p class="automd-provenance"><strong>About this archive:</strong> '
                f"{html.escape(text)}</p>"
            },  # fmt: skip
        )
    ]
    return cell


def _title_cell_index(nb: nbformat.NotebookNode) -> int | None:
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and re.search(r"^\s*#{1,6}\s+\S", cell.source, re.M):
            return i
    return None


def notebook_title(nb: nbformat.NotebookNode, fallback: str) -> str:
    """The first Markdown heading of a notebook (without ``#``), else ``fallback``."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            match = re.match(r"^\s*#{1,6}\s+(.*\S)\s*$", line)
            if match:
                return match.group(1)
    return fallback


def render_notebook(
    executed: str | Path,
    dest: str | Path,
    *,
    index_href: str | None = None,
    provenance: str | None = None,
    run_ids: Collection[str] = (),
    page: str | None = None,
) -> str:
    """Render an executed notebook to a standalone HTML page with code hidden.

    Uses nbconvert's ``HTMLExporter`` (lab template without the require.js/MathJax/Mermaid scripts
    it would load from public CDNs: the page needs no network) with ``exclude_input`` and hidden
    prompts, on
    the sanitised outputs (:func:`sanitize_outputs`); PNG figures are embedded as data URIs.

    Parameters
    ----------
    executed : path
        An executed notebook (``OUT/notebooks/<name>.ipynb``).
    dest : path
        The HTML file to write.
    index_href : str, optional
        If given, a "back to the report index" link to this URL is put at the top of the page.
    provenance : str, optional
        If given, this line (:func:`provenance_line`, shown escaped) follows the page title,
        above the first table or figure.
    run_ids : collection of str
        Runs that have a page (``runs/``, :mod:`automd_analysis.report.run_pages`): each of them
        shown as text on the page (a table cell, a caption) links to it
        (:func:`~automd_analysis.report.run_links.link_run_ids`).
    page : str, optional
        The page's path relative to the report folder (for those links; default
        ``html/<dest name>``).

    Returns
    -------
    str
        The notebook's title (first Markdown heading, else its file stem).

    Cells get ids by position (papermill gives its injected cell a random one), so two runs of a
    notebook that show the same give byte-identical pages.
    """
    from nbconvert import HTMLExporter

    executed, dest = Path(executed), Path(dest)
    nb = sanitize_outputs(nbformat.read(executed, as_version=4))
    for i, cell in enumerate(nb.cells):  # papermill gives its injected cell a random id
        cell["id"] = f"cell-{i}"
    title = notebook_title(nb, executed.stem)
    if provenance is not None:
        at = _title_cell_index(nb)
        nb.cells.insert(0 if at is None else at + 1, _provenance_cell(provenance))
    if index_href is not None:
        back = nbformat.v4.new_markdown_cell(f"[&larr; report index]({index_href})")
        back["id"] = "automd-report-index"  # a fixed id: the same notebook gives the same page
        nb.cells.insert(0, back)
    exporter = HTMLExporter(
        template_name="offline_lab",  # lab without CDN scripts (templates/offline_lab)
        extra_template_basedirs=[str(Path(__file__).parent / "templates")],
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": title}})
    body = with_contents(body)
    if run_ids:
        body = link_run_ids(body, run_ids, page or f"html/{dest.name}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(body, encoding="utf-8")
    return title


#: A section heading of a rendered page: nbconvert gives each its id and an anchor link.
_SECTION = re.compile(r'<h2 id="([^"]+)">(.*?)<a class="anchor-link"', re.S)
#: Pages with at least this many sections get a table of contents (every page of the demo report
#: has 3 to 13).
CONTENTS_MIN_SECTIONS = 3


def with_contents(body: str) -> str:
    """``body`` with a table of contents of its ``<h2>`` sections (links to their anchors) before
    the first of them, when it has at least :data:`CONTENTS_MIN_SECTIONS`."""
    sections = _SECTION.findall(body)
    if len(sections) < CONTENTS_MIN_SECTIONS:
        return body
    items = "".join(
        f'<li><a href="#{anchor}">{re.sub(r"<[^>]+>", "", text).strip()}</a></li>'
        for anchor, text in sections
    )  # the anchor and the text are already escaped in the page
    nav = f'<nav class="automd-contents"><strong>Contents</strong><ol>{items}</ol></nav>\n'
    at = body.index(f'<h2 id="{sections[0][0]}">')
    return body[:at] + nav + body[at:]


def render_page(
    executed: str | Path,
    dest: str | Path,
    provenance: str | None = None,
    run_ids: Collection[str] = (),
) -> str:
    """:func:`render_notebook` for a page in ``OUT/html`` (linking back to ``../index.html``, and
    from each run id in ``run_ids`` to the run's page)."""
    return render_notebook(
        executed,
        dest,
        index_href="../index.html",
        provenance=provenance,
        run_ids=run_ids,
        page=f"html/{Path(dest).name}",
    )


@dataclass(frozen=True)
class StoreSummary:
    """What the index page says about the scored archive.

    Attributes
    ----------
    archive : str
        Archive name (``store.json`` ``archive``).
    scorer_version : str
        Version of the scorer that wrote the store.
    n_runs, n_valid : int
        Runs (``runs.parquet``: scored or not scorable) and how many of them are valid, over all
        experiments.
    by_experiment : list of (experiment, runs, valid runs)
    description : str
        Free-text archive description, if known (``archive.yaml`` ``description``).
    synthetic : tuple of str
        The synthetic tasks (``store.tasks.synthetic``).
    not_scorable : dict
        Experiment -> runs not scorable here (``runs.status``), for experiments that have any.
    """

    archive: str
    scorer_version: str
    n_runs: int
    n_valid: int
    by_experiment: list[tuple[str, int, int]] = field(default_factory=list)
    description: str = ""
    synthetic: tuple[str, ...] = ()
    not_scorable: dict[str, int] = field(default_factory=dict)

    @property
    def n_not_scorable(self) -> int:
        """Runs not scorable here, over all experiments."""
        return sum(self.not_scorable.values())

    @property
    def provenance(self) -> str:
        """The line under every page title (:func:`provenance_line`)."""
        return provenance_line(self.description, self.synthetic)


def summarise_store(store: ScoreStore, description: str = "") -> StoreSummary:
    """Summarise a loaded score store for the index page.

    A *run* is a row of ``runs.parquet``; it is valid when its ``status`` is ``valid`` (its
    selected submission passed the checks), and *not scorable here* when the archive holds no
    prediction file for its task's test set (docs/score_store.md). The archive name and scorer
    version come from ``store.json`` (``"unknown"`` when absent).

    Parameters
    ----------
    store : ScoreStore
        From :func:`automd_analysis.analysis.store.load_store`.
    description : str
        The archive's free-text description (shown escaped).
    """
    runs = store.runs
    grouped = (runs["status"] == "valid").groupby(runs["experiment"], sort=True)
    by_experiment = [
        (str(exp), int(n), int(v))
        for (exp, n), v in zip(grouped.size().items(), grouped.sum(), strict=True)
    ]
    unscorable = runs.loc[runs["status"] == NOT_SCORABLE, "experiment"].value_counts()
    fallback = store.path.name if store.path is not None else "unknown"
    return StoreSummary(
        archive=str(store.meta.get("archive", fallback)),
        scorer_version=str(store.meta.get("scorer_version", "unknown")),
        n_runs=len(runs),
        n_valid=int((runs["status"] == "valid").sum()),
        by_experiment=by_experiment,
        description=description,
        synthetic=tuple(synthetic_tasks(store)),
        not_scorable={str(e): int(n) for e, n in sorted(unscorable.items())},
    )


INDEX_CSS = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       color: #222; line-height: 1.45; }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
th, td { border: 1px solid #ccc; padding: .25rem .6rem; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.catalog { width: 100%; }
table.catalog td.name, table.catalog td.files, table.catalog td.paper { white-space: nowrap; }
.failed { color: #a00; }
.muted { color: #666; }
.gallery { display: flex; flex-wrap: wrap; gap: .75rem; margin: .5rem 0 1.25rem; }
.gallery figure { margin: 0; width: 13.5rem; border: 1px solid #ddd; border-radius: 4px;
                  padding: .4rem; box-sizing: border-box; }
.gallery img { display: block; width: 100%; height: 9rem; object-fit: contain; }
.gallery figcaption { font-size: .85rem; line-height: 1.3; margin-top: .3rem; }
.gallery figcaption code { word-break: break-all; }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _href(*parts: str) -> str:
    return _e("/".join(quote(p) for p in parts))


def _paper_order(stem: str) -> tuple:
    """Sort key of an artifact stem: paper tables (``table2`` before ``table12``), then paper
    figures, then everything else; numbers inside names compare as numbers."""
    rank = 0 if stem.startswith("table") else 1 if stem.startswith("fig") else 2
    parts = tuple((0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", stem))
    return rank, parts


def _artifacts(directory: Path) -> dict[str, list[Path]]:
    """Files of ``directory`` grouped by stem (``table2_primary`` -> [csv, html, tex]), stems in
    paper order (:func:`_paper_order`)."""
    groups: dict[str, list[Path]] = {}
    if directory.is_dir():
        for path in sorted(p for p in directory.iterdir() if p.is_file()):
            groups.setdefault(path.stem, []).append(path)
    return {stem: groups[stem] for stem in sorted(groups, key=_paper_order)}


def _by_analysis(
    artifacts: dict[str, list[Path]], kind: str
) -> list[tuple[str, list[tuple[str, list[Path], Table | Figure | None]]]]:
    """Artifacts grouped by the analysis that publishes them (their declarations in
    :mod:`automd_analysis.analysis.catalog`), in report order; within an analysis in catalog order,
    then by name; unknown names last under ``"other"``."""
    known = list(TABLES if kind == "table" else FIGURES)
    groups: dict[str, list[tuple[str, list[Path], Table | Figure | None]]] = {}
    for stem, files in artifacts.items():
        entry = lookup(stem, kind)
        groups.setdefault(entry.notebook if entry else "other", []).append((stem, files, entry))

    def position(item) -> tuple:
        stem, _, entry = item
        if entry is None:
            return (len(known), _paper_order(stem))
        return (known.index(entry.name), _paper_order(stem))  # a per-task figure: its pattern

    order = [*ANALYSES, "other"]
    return [
        (notebook, sorted(groups[notebook], key=position))
        for notebook in order
        if notebook in groups
    ]


def _analysis_heading(notebook: str, pages: dict[str, bool]) -> str:
    if notebook == "other":
        return "<h3>Other</h3>"
    title = f"{notebook[:2]} &middot; {_e(ANALYSES[notebook])}"
    if pages.get(notebook):
        return f'<h3><a href="{_href("html", notebook + ".html")}">{title}</a></h3>'
    return f"<h3>{title}</h3>"


def _file_links(directory: str, files: list[Path]) -> str:
    return " | ".join(
        f'<a href="{_href(directory, f.name)}">{_e(f.suffix.lstrip(".").upper())}</a>'
        for f in files
    )


def _tables_section(tables: dict[str, list[Path]], pages: dict[str, bool]) -> list[str]:
    parts = ["<h2>Tables</h2>"]
    if not tables:
        return [*parts, '<p class="muted">No tables were exported.</p>']
    parts.append(
        "<p>Grouped by analysis. CSV: the exact numbers; HTML and TEX: the table as printed "
        "(docs/tables.md has every column).</p>"
    )
    for notebook, items in _by_analysis(tables, "table"):
        parts.append(_analysis_heading(notebook, pages))
        parts.append(
            '<table class="catalog"><thead><tr><th>Table</th><th>Paper</th>'
            "<th>What it shows</th><th>Files</th></tr></thead><tbody>"
        )
        for stem, files, entry in items:
            paper = _e(entry.paper) if entry and entry.paper else "&ndash;"
            summary = _e(entry.summary) if entry else ""
            parts.append(
                f'<tr><td class="name"><code>{_e(stem)}</code></td><td class="paper">{paper}</td>'
                f'<td>{summary}</td><td class="files">{_file_links("tables", files)}</td></tr>'
            )
        parts.append("</tbody></table>")
    return parts


def _figures_section(figures: dict[str, list[Path]], pages: dict[str, bool]) -> list[str]:
    parts = ["<h2>Figures</h2>"]
    if not figures:
        return [*parts, '<p class="muted">No figures were saved.</p>']
    for notebook, items in _by_analysis(figures, "figure"):
        parts.append(_analysis_heading(notebook, pages))
        parts.append('<div class="gallery">')
        for stem, files, entry in items:
            png = next((f for f in files if f.suffix.lower() == ".png"), None)
            image = (
                f'<a href="{_href("figures", png.name)}"><img src="{_href("figures", png.name)}" '
                f'alt="{_e(stem)}" loading="lazy"></a>'
                if png
                else ""
            )
            links = _file_links("figures", files)
            if notebook != "other" and pages.get(notebook):
                page = _href("html", notebook + ".html") + "#figure-" + _e(quote(stem))
                links = f'<a href="{page}">page</a> | {links}'
            paper = f"{_e(entry.paper)}: " if entry and entry.paper else ""
            summary = f"<br>{paper}{_e(entry.summary)}" if entry else ""
            parts.append(
                f"<figure>{image}<figcaption><code>{_e(stem)}</code>{summary}<br>{links}"
                "</figcaption></figure>"
            )
        parts.append("</div>")
    return parts


def _findings_section(
    out_dir: Path,
    pages: Sequence[tuple[NotebookResult, str | None]],
    synthetic: Sequence[str] = (),
) -> list[str]:
    """The index's "Findings": the headline sentences, each linking to its table on its page,
    synthetic tasks marked as on the pages (footnote under the list)."""
    from dataclasses import replace

    from automd_analysis.report.index_headlines import index_headlines

    rendered = {result.name for result, title in pages if result.ok and title is not None}
    items, any_marked = [], False
    for headline in index_headlines(out_dir):
        notebook = TABLES[headline.table].notebook
        if notebook in rendered:
            text, marked = mark_synthetic_text(headline.text, synthetic)
            any_marked = any_marked or marked
            line = replace(headline, text=text).html(_href("html", notebook + ".html"))
            items.append(f"<li>{line}</li>")
    if not items:
        return []
    footnote = [f'<p class="footnote">{_e(SYNTHETIC_FOOTNOTE)}</p>'] if any_marked else []
    return ["<h2>Findings</h2>", '<ul class="findings">', *items, "</ul>", *footnote]


def _not_scorable_section(summary: StoreSummary) -> list[str]:
    """What the index says first when runs carry no predictions for their task's test set."""
    n = summary.n_not_scorable
    if not n:
        return []
    every = n == summary.n_runs
    lead = f"All {n} runs are" if every else f"{n} of the {summary.n_runs} runs are"
    then = (
        "Without scores, the pages that need them are left out; page 01 lists the runs with the "
        "problems their import recorded, and page 07 reports their steps, process metrics, "
        "times, tokens and submission selection."
        if every
        else "The score tables rest on the other runs; page 01's run coverage lists these runs "
        "with the problems their import recorded."
    )
    return [
        f'<p class="not-scorable"><strong>{lead} not scorable here:</strong> the archive holds '
        "no prediction file for their task's test set (runs imported from an agent's own log "
        f"that kept none). They are never counted invalid or scored as 0. {then}</p>"
    ]


def build_index(
    out_dir: str | Path,
    summary: StoreSummary,
    pages: Sequence[tuple[NotebookResult, str | None]],
    notes: Sequence[str] = (),
) -> Path:
    """Write ``OUT/index.html``: the archive summary and links to pages, tables and figures.

    Parameters
    ----------
    out_dir : path
        The report directory (layout in the module docstring).
    summary : StoreSummary
        Archive name, scorer version and run counts.
    pages : sequence of (NotebookResult, title or None)
        Every executed notebook in report order with the title of its HTML page; a failed notebook
        has no page and is listed with its failure.
    notes : sequence of str
        Pipeline notes (e.g. what the masking step did), listed under "Pipeline" (escaped).

    Returns
    -------
    Path
        The index file. Its content depends only on its inputs and the files present (no
        timestamps), so the same archive gives the same index.
    """
    out_dir = Path(out_dir)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Auto-MD-bench report: {_e(summary.archive)}</title>",
        f"<style>{INDEX_CSS}</style></head><body>",
        f"<h1>Auto-MD-bench report: {_e(summary.archive)}</h1>",
    ]
    parts.append(
        f'<p class="provenance"><strong>About this archive:</strong> {_e(summary.provenance)}</p>'
    )
    parts.extend(_not_scorable_section(summary))
    parts.extend(_findings_section(out_dir, pages, summary.synthetic))
    unscorable = summary.n_not_scorable
    parts.append(
        "<table><tbody>"
        f"<tr><th>archive</th><td>{_e(summary.archive)}</td></tr>"
        f"<tr><th>scorer version</th><td>{_e(summary.scorer_version)}</td></tr>"
        f'<tr><th>runs</th><td class="num">{summary.n_runs}</td></tr>'
        f'<tr><th>valid runs</th><td class="num">{summary.n_valid}</td></tr>'
        + (f'<tr><th>not scorable here</th><td class="num">{unscorable}</td></tr>' if unscorable
           else "")
        + "</tbody></table>"
    )  # fmt: skip
    if summary.by_experiment:
        extra = "<th>not scorable here</th>" if unscorable else ""
        parts.append(
            f"<table><thead><tr><th>experiment</th><th>runs</th><th>valid</th>{extra}</tr></thead>"
        )
        parts.append("<tbody>")
        for exp, n, v in summary.by_experiment:
            cell = f'<td class="num">{summary.not_scorable.get(exp, 0)}</td>' if unscorable else ""
            parts.append(
                f'<tr><td>{_e(exp)}</td><td class="num">{n}</td><td class="num">{v}</td>{cell}</tr>'
            )
        parts.append("</tbody></table>")

    if notes:
        parts.append("<h2>Pipeline</h2><ul>")
        parts.extend(f"<li>{_e(note)}</li>" for note in notes)
        parts.append("</ul>")

    parts.append("<h2>Analyses</h2><ol>")
    for result, title in pages:
        notebook_link = f'<a href="{_href("notebooks", result.output.name)}">notebook</a>'
        if result.ok and title is not None:
            parts.append(
                f'<li><a href="{_href("html", result.name + ".html")}">{_e(title)}</a> '
                f'<span class="muted">({_e(result.name)}; {notebook_link})</span></li>'
            )
        elif result.skipped is not None:
            parts.append(
                f'<li class="muted">{_e(result.name)}: skipped &mdash; {_e(result.skipped)}</li>'
            )
        else:
            reason = result.failure.describe() if result.failure else "not rendered"
            parts.append(
                f'<li class="failed">{_e(result.name)}: FAILED &mdash; {_e(reason)} '
                f'<span class="muted">({notebook_link})</span></li>'
            )
    parts.append("</ol>")
    if (out_dir / RUNS_INDEX).is_file():
        parts.append(
            f'<h2>Runs</h2><p><a href="{_href(*RUNS_INDEX.split("/"))}">Every run on a page of its '
            "own</a>: its development tree with each version's held-out score and calibration "
            "beside the agent's own validation score, code diffs and codebook evidence (grouped "
            "by experiment, task and agent).</p>"
        )

    pages_by_name = {result.name: result.ok and title is not None for result, title in pages}
    parts.extend(_tables_section(_artifacts(out_dir / "tables"), pages_by_name))
    parts.extend(_figures_section(_artifacts(out_dir / "figures"), pages_by_name))
    parts.append("</body></html>")

    index = out_dir / "index.html"
    index.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return index


def render_site(
    out_dir: str | Path,
    results: Sequence[NotebookResult],
    summary: StoreSummary,
    notes: Sequence[str] = (),
) -> Path:
    """Render every successfully executed notebook to ``OUT/html`` and write ``OUT/index.html``.

    Parameters
    ----------
    out_dir : path
        The report directory.
    results : sequence of NotebookResult
        From :func:`automd_analysis.app.run_notebooks.execute_notebooks`, in report order. A
        result with a ``title`` already has its page (rendered with its run, or kept from an
        earlier one); the other successful ones are rendered here. Failed notebooks get no page
        (their executed copies stay in ``OUT/notebooks``) and are listed as failed on the index.
    summary : StoreSummary
    notes : sequence of str
        Pipeline notes for the index (see :func:`build_index`).

    Returns
    -------
    Path
        ``OUT/index.html``.
    """
    out_dir = Path(out_dir)
    for sub in SUBDIRS:
        (out_dir / sub).mkdir(parents=True, exist_ok=True)
    pages: list[tuple[NotebookResult, str | None]] = []
    for result in results:
        page = out_dir / "html" / f"{result.name}.html"
        if result.ok and result.title is not None:  # rendered with its run, or kept from one
            pages.append((result, result.title))
        elif result.ok:
            pages.append((result, render_page(result.output, page, summary.provenance)))
        else:
            page.unlink(missing_ok=True)  # never leave a previous run's page for a failed notebook
            pages.append((result, None))
    return build_index(out_dir, summary, pages, notes)
