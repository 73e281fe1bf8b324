"""Every run as a page: ``runs/`` of a report folder, built from the score store alone.

:func:`build_run_pages` is what ``automd regenerate`` calls once, after the notebooks. It writes

- one page per run of ``runs.parquet`` (scored or not scorable here), with its figure next to it
  (:mod:`~automd_analysis.report.run_page_html`, :mod:`~automd_analysis.report.run_figures`);
- the shared code and diff pages, stored once by content (``runs/_code/``,
  :mod:`~automd_analysis.report.run_code`);
- ``runs/index.html``: every run grouped by experiment, task and agent, with its status and
  held-out score; and ``runs/run.css``, the pages' one stylesheet (the report index's look plus
  the code colours).

A page is rebuilt only when its inputs changed: each run's inputs (its rows of every store table,
its code, the baseline curve it is drawn against, its masking result, the provenance line) and
the page code itself are hashed (:meth:`RunInputs.digest <automd_analysis.report.run_data.
RunInputs.digest>`), and ``runs/.automd-runs.json`` records, per run, the digest and the files
its page uses. Files under ``runs/`` that no current page uses are removed. A run whose page
cannot be built is reported (the others are written) and listed on the runs index without a link.
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import pandas as pd

from automd_analysis import __version__
from automd_analysis._atomic import write_bytes_atomic
from automd_analysis.analysis.store import ScoreStore, agent_order
from automd_analysis.report.disclosure import report_disclosure
from automd_analysis.report.provenance import provenance_line, synthetic_tasks
from automd_analysis.report.run_data import RunInputs, collect_runs
from automd_analysis.report.run_links import RUNS_DIR, RUNS_INDEX, relative_href, run_page
from automd_analysis.report.tables import MISSING, format_number

__all__ = ["MANIFEST", "RUN_CSS", "RunPagesSummary", "build_run_pages", "builder_key"]

#: Per run: the digest of its inputs and the files its page uses (report-relative).
MANIFEST = f"{RUNS_DIR}/.automd-runs.json"
#: The stylesheet of every run and code page.
RUN_CSS = f"{RUNS_DIR}/run.css"
#: The modules whose code shapes a page: a change to any of them rebuilds every page.
_PAGE_MODULES = ("run_links", "run_data", "run_versions", "run_code", "run_figures",
                 "run_page_html", "run_pages", "site")  # fmt: skip
#: Runs per worker below which the pages are built in this process (a worker takes seconds to
#: start).
_MIN_RUNS_PER_WORKER = 16


@dataclass(frozen=True)
class RunPagesSummary:
    """What :func:`build_run_pages` did.

    Attributes
    ----------
    n_runs, built, reused : int
        Runs, pages written now, pages kept (inputs unchanged).
    failed : list of (run id, message)
        Runs whose page could not be built.
    seconds : float
    notes : list of str
        E.g. masking results that could not be read.
    """

    n_runs: int
    built: int
    reused: int
    failed: list[tuple[str, str]] = field(default_factory=list)
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    def describe(self) -> str:
        """One line for the log: what was built now and what was kept."""
        failed = f", {len(self.failed)} failed" if self.failed else ""
        return (
            f"run pages: {self.built} built, {self.reused} unchanged{failed}, "
            f"in {self.seconds:.1f} s"
        )

    def index_note(self) -> str:
        """One line for the report index; the same for a rebuilt and an unchanged report."""
        text = f"run pages: {self.n_runs} (runs/index.html)"
        if self.failed:
            text += f", {len(self.failed)} failed ({', '.join(r for r, _ in self.failed[:3])})"
        return "; ".join([text, *self.notes])


def builder_key() -> str:
    """sha256 of the page code (the modules of :data:`_PAGE_MODULES`), the package version and
    the versions of Pygments and Matplotlib: part of every page's digest."""
    import matplotlib
    import pygments

    digest = hashlib.sha256(
        f"{__version__}|{pygments.__version__}|{matplotlib.__version__}".encode()
    )
    here = Path(__file__).parent
    for name in _PAGE_MODULES:
        digest.update((here / f"{name}.py").read_bytes())
    return digest.hexdigest()


def _write(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8", errors="replace"))


def _render_chunk(items: Sequence[tuple[RunInputs, str]], out_dir: str) -> list[tuple]:
    """Build the pages of ``items`` (run inputs, digest); one ``(run id, digest, files, error)``
    per run (``files`` ``None`` when it failed, ``error`` its message)."""
    from automd_analysis.report.run_code import CodePages
    from automd_analysis.report.run_page_html import render_run

    out = Path(out_dir)
    code = CodePages(out)
    results = []
    for inputs, digest in items:
        try:
            rendered = render_run(inputs, code)
            figure = inputs.page.removesuffix(".html") + ".svg"
            write_bytes_atomic(out / figure, rendered.figure)
            _write(out / inputs.page, rendered.html)
            results.append((inputs.run_id, digest, [inputs.page, figure, *rendered.shared], None))
        except Exception as exc:  # one run's page never stops the others; the error is reported
            results.append((inputs.run_id, digest, None, f"{type(exc).__name__}: {exc}"))
    return results


def _render_all(todo: list[tuple[RunInputs, str]], out_dir: Path, jobs: int) -> list[tuple]:
    workers = max(1, min(int(jobs), len(todo) // _MIN_RUNS_PER_WORKER))
    if workers == 1:
        return _render_chunk(todo, str(out_dir))
    chunks = [todo[i::workers] for i in range(workers)]
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        parts = pool.map(_render_chunk, chunks, [str(out_dir)] * workers)
        return [row for part in parts for row in part]


def _read_manifest(out_dir: Path) -> dict:
    try:
        doc = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    runs = doc.get("runs") if isinstance(doc, dict) else None
    return runs if isinstance(runs, dict) else {}


def _usable(entry, out_dir: Path, digest: str) -> bool:
    """Whether a recorded page is up to date: same digest, every file it uses present."""
    if not isinstance(entry, dict) or entry.get("digest") != digest:
        return False
    files = entry.get("files")
    return isinstance(files, list) and all(
        isinstance(f, str) and f.startswith(f"{RUNS_DIR}/") and ".." not in f.split("/")
        and (out_dir / f).is_file()
        for f in files
    )  # fmt: skip


def _sweep(out_dir: Path, keep: set[str]) -> int:
    """Remove the files under ``runs/`` that are not in ``keep`` (and empty folders); return how
    many files were removed. Links are removed, never followed."""
    root = out_dir / RUNS_DIR
    removed = 0
    for folder, dirs, files in os.walk(root, topdown=False, followlinks=False):
        base = Path(folder)
        for name in files + [d for d in dirs if (base / d).is_symlink()]:
            rel = (base / name).relative_to(out_dir).as_posix()
            if rel not in keep:
                (base / name).unlink()
                removed += 1
        if base != root and not any(base.iterdir()):
            base.rmdir()
    return removed


_CSS_EXTRA = """
body { max-width: 82rem; }
.nav { font-size: .95rem; }
.provenance, .lead { max-width: 60rem; }
.bad { color: #a00; font-weight: 600; }
table.facts th { width: 14rem; background: #f6f6f6; }
.wide { overflow-x: auto; }
table.versions td { white-space: nowrap; }
table.versions th { vertical-align: bottom; }
table.versions td:nth-last-child(2) { white-space: normal; min-width: 16rem; font-size: .9rem; }
table.versions td:nth-last-child(3) { white-space: normal; }
caption { caption-side: bottom; text-align: left; color: #555; font-size: .9rem; padding: .3rem 0; }
figure.run-figure { margin: .5rem 0 1rem; }
figure.run-figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figure.run-figure figcaption { font-size: .9rem; color: #444; max-width: 60rem; }
details.version-code { border: 1px solid #ddd; border-radius: 4px; margin: .4rem 0; padding: .3rem .6rem; }
details.version-code summary { cursor: pointer; }
p.file { margin: .6rem 0 .2rem; }
table.diff, table.code { border-collapse: collapse; width: 100%; font-size: .85rem; margin: 0; }
table.diff td, table.code td { border: 0; padding: 0 .4rem; vertical-align: top; }
table.diff td:last-child, table.code td:last-child { white-space: pre-wrap; word-break: break-all;
  font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
table.diff td:nth-child(-n+2), table.code td:first-child { color: #999; text-align: right;
  user-select: none; width: 3.5rem; }
table.code td:first-child a { color: #999; text-decoration: none; }
table.diff td:nth-child(3) { width: 1rem; color: #666; }
table.diff tr.a { background: #e6ffec; } table.diff tr.d { background: #ffebe9; }
table.diff tr.h td { background: #f0f4ff; color: #557; }
tr:target { outline: 2px solid #e69f00; }
.automd-contents ol { columns: 2; }
.groups h3 { margin-bottom: .2rem; }
.runs a { margin-right: .6rem; white-space: nowrap; }
.footnote { font-size: .9rem; color: #555; }
"""


def _stylesheet() -> str:
    from automd_analysis.report.run_code import highlight_css
    from automd_analysis.report.site import INDEX_CSS

    return INDEX_CSS + _CSS_EXTRA + highlight_css() + "\n"


def _run_label(row, score) -> str:
    status = str(row.status)
    if status == "valid":
        return f"{format_number(score) if score is not None else MISSING}"
    return {"invalid": "invalid", "not_scorable": "not scorable"}.get(status, html.escape(status))


def _index(store: ScoreStore, failed: dict[str, str], provenance: str) -> str:
    """``runs/index.html``: runs grouped by experiment, task and agent."""
    e = html.escape
    runs = store.runs.sort_values(["experiment", "task", "agent", "rep"], kind="mergesort")
    selected = store.scores.loc[store.scores["is_selected"]].set_index("run_id")
    scores = selected["score"].where(selected["valid"]).to_dict()
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8"><title>Runs</title>',
        f'<link rel="stylesheet" href="{e(relative_href(RUNS_INDEX, RUN_CSS))}"></head><body>',
        f'<p class="nav"><a href="{e(relative_href(RUNS_INDEX, "index.html"))}">&larr; report '
        "index</a></p>",
        "<h1>Runs</h1>",
        f'<p class="provenance"><strong>About this archive:</strong> {e(provenance)}</p>'
        if provenance else "",
        f"<p>{len(runs)} runs, each on a page of its own: what the run is, its development "
        "tree with each version's held-out score and calibration beside the agent's own "
        "validation score, the code of each version against its parent and the evidence of "
        "its codebook answers. A cell lists the repetitions with the normalised held-out "
        "score of the selected submission (or why there is none).</p>",
    ]  # fmt: skip
    for experiment, by_exp in runs.groupby("experiment", sort=True):
        parts.append(f'<h2 id="exp-{e(str(experiment))}">Experiment <code>{e(str(experiment))}'
                     "</code></h2>")  # fmt: skip
        parts.append('<table class="groups"><thead><tr><th>Task</th><th>Agent</th><th>LLM</th>'
                     "<th>Runs</th></tr></thead><tbody>")  # fmt: skip
        for task, by_task in by_exp.groupby("task", sort=True):
            agents = agent_order(by_task["agent"].astype(str))
            for agent in agents:
                mine = by_task.loc[by_task["agent"].astype(str) == agent]
                llms = ", ".join(sorted({str(x) for x in mine["llm"] if x is not None}))
                links = []
                for row in mine.itertuples(index=False):
                    label = f"rep{row.rep}: {_run_label(row, scores.get(row.run_id))}"
                    if row.run_id in failed:
                        links.append(f'<span class="bad" title="{e(failed[row.run_id])}">'
                                     f"{e(label)} (page failed)</span>")  # fmt: skip
                    else:
                        href = relative_href(RUNS_INDEX, run_page(row.run_id))
                        links.append(f'<a href="{e(href)}">{e(label)}</a>')
                parts.append(
                    f"<tr><td><code>{e(str(task))}</code></td><td>{e(agent)}</td>"
                    f'<td>{e(llms)}</td><td class="runs">{" ".join(links)}</td></tr>'
                )
        parts.append("</tbody></table>")
    parts.append("</body></html>")
    return "\n".join(p for p in parts if p) + "\n"


def build_run_pages(
    store: ScoreStore,
    out_dir: str | Path,
    *,
    masking: pd.DataFrame | None = None,
    description: str = "",
    min_cell: int | None = None,
    jobs: int = 1,
    log: Callable[[str], None] = print,
) -> RunPagesSummary:
    """Write (or update) the run pages of a report folder.

    Parameters
    ----------
    store : ScoreStore
        The score store the report was built from; nothing else is read.
    out_dir : path
        The report folder; pages go to ``out_dir/runs/``.
    masking : DataFrame, optional
        Masking-test results, one row per tested run (as ``masking.results.read_masking_results``
        returns them); counts are shown under the report's small-cell rule.
    description : str
        The archive's description (the provenance line of every page).
    min_cell : int, optional
        The report's small-cell threshold (``automd regenerate --min-cell``).
    jobs : int
        Processes building pages (used when there are enough pages to build).
    log : callable
        Receives one line of progress.

    Returns
    -------
    RunPagesSummary
    """
    start = time.perf_counter()
    out = Path(out_dir)
    notes: list[str] = []
    frame = masking
    if frame is not None:
        frame = report_disclosure(store, min_cell).apply(frame, "masking_runs")
    provenance = provenance_line(description, synthetic_tasks(store))
    inputs = collect_runs(store, masking=frame, context={"provenance": provenance})
    key = builder_key()
    recorded = _read_manifest(out)
    todo, kept = [], {}
    for item in inputs:
        digest = item.digest(key)
        if _usable(recorded.get(item.run_id), out, digest):
            kept[item.run_id] = recorded[item.run_id]
        else:
            todo.append((item, digest))
    log(f"run pages: building {len(todo)}, keeping {len(kept)} (inputs unchanged)")
    built, failed = {}, {}
    for run_id, digest, files, error in _render_all(todo, out, jobs):
        if files is None:
            failed[run_id] = error
            log(f"  run page {run_id}: FAILED ({error})")
        else:
            built[run_id] = {"digest": digest, "files": files}
    _write(out / RUN_CSS, _stylesheet())
    _write(out / RUNS_INDEX, _index(store, failed, provenance))
    manifest = dict(sorted((kept | built).items()))
    _write(out / MANIFEST, json.dumps({"runs": manifest}, indent=1, sort_keys=True) + "\n")
    keep = {RUN_CSS, RUNS_INDEX, MANIFEST}
    keep.update(f for entry in manifest.values() for f in entry["files"])
    _sweep(out, keep)
    return RunPagesSummary(
        n_runs=len(inputs),
        built=len(built),
        reused=len(kept),
        failed=sorted(failed.items()),
        seconds=time.perf_counter() - start,
        notes=notes,
    )
