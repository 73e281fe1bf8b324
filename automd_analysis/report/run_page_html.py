"""The HTML of one run's page (what :mod:`automd_analysis.report.run_pages` writes per run).

Sections: the run (identity, import, App. C selection, tokens, times, incomplete flag), the
problems recorded for it, its figure (:mod:`~automd_analysis.report.run_figures`), the version
table (held-out score and ECE with their intervals where stored, the agent's validation score,
the gap, validity with reasons, the codebook changes), each version's code against its parent
(:mod:`~automd_analysis.report.run_code`), the selected version's codebook answers linked to the
cited lines, and the masking-test result. A run that is not scorable here gets the same page
without the held-out columns.

Every string that comes from the score store (hence from an archive) is escaped with
:func:`html.escape`; links are built from checked report-relative paths only; the page has no
script and loads nothing from the network.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from dataclasses import dataclass

from automd_analysis.analysis.development import VAL_TEST_METRICS
from automd_analysis.report.provenance import SYNTHETIC_FOOTNOTE, SYNTHETIC_MARK
from automd_analysis.report.run_code import (
    MAX_INLINE_ROWS,
    CodePages,
    FileChange,
    compare_files,
    diff_table,
    evidence_targets,
)
from automd_analysis.report.run_data import RunInputs
from automd_analysis.report.run_figures import run_figure
from automd_analysis.report.run_links import RUNS_DIR, RUNS_INDEX, relative_href
from automd_analysis.report.run_versions import VersionRow, tree_nodes, version_rows
from automd_analysis.report.tables import MISSING, format_interval, format_number
from automd_analysis.schema import (
    RULE_BEST_NON_FAULTY,
    RULE_FINAL_FILE,
    RULE_FML_BEST_STEP,
    RULE_LATEST_STAGE,
)

__all__ = ["SELECTION_RULES", "RenderedRun", "render_run"]

#: What each selection rule of paper App. C (and the demo baseline's) means, for the run table.
SELECTION_RULES = {
    RULE_FINAL_FILE: "the submission file left at the end of the run",
    RULE_BEST_NON_FAULTY: "the best version by the agent's own validation score among versions "
    "not marked buggy (earliest on ties)",
    RULE_LATEST_STAGE: "the best node of the latest stage that has one, by the agent's "
    "validation score, else the final file",
    RULE_FML_BEST_STEP: "the earliest step whose validation metric equals the run's best",
    "single_fit": "the one model the simple baseline fits",
}


@dataclass(frozen=True)
class RenderedRun:
    """A run page's HTML, its figure's SVG and the shared files it links to (report-relative)."""

    html: str
    figure: bytes
    shared: list[str]


def _e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _num(value, decimals: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return MISSING
    return format_number(value, decimals)


def _with_interval(value, low, high) -> str:
    """``value [low, high]``; a missing interval is a muted dash (the store has none)."""
    if value is None:
        return MISSING
    interval = format_interval(low, high)
    if not interval:
        return f'{_num(value)} <span class="muted">[{MISSING}]</span>'
    return f"{_num(value)} {interval}".replace(" ", "\N{NO-BREAK SPACE}")


def _table(headers: Iterable[str], rows: Iterable[Iterable[str]], cls: str = "",
           caption: str = "") -> str:  # fmt: skip
    """A table of already-escaped cells."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    cap = f"<caption>{caption}</caption>" if caption else ""
    return f'<table class="{cls}">{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _facts(rows: list[tuple[str, str]]) -> str:
    body = "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="facts"><tbody>{body}</tbody></table>'


def _anchor(version: str) -> str:
    return "v-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in version)


def _code_anchor(version: str) -> str:
    return "code-" + _anchor(version)[2:]


def _time(value) -> str:
    if value is None:
        return MISSING
    if hasattr(value, "strftime"):
        return _e(value.strftime("%Y-%m-%d %H:%M:%S UTC"))
    return _e(value)


def _tokens(run: dict) -> str:
    total = run.get("tokens_total")
    if total is None:
        return "not recorded"
    parts = [f"{int(total):,} total"]
    if run.get("tokens_prompt") is not None and run.get("tokens_completion") is not None:
        parts.append(f"{int(run['tokens_prompt']):,} prompt, "
                     f"{int(run['tokens_completion']):,} completion")  # fmt: skip
    if run.get("tokens_simulated"):
        parts.append("simulated")
    if run.get("tokens_source"):
        parts.append(f"from {_e(run['tokens_source'])}")
    return "; ".join(parts)


def _import(run: dict) -> str:
    if run.get("import_format"):
        source = run.get("import_source")
        where = f" from <code>{_e(source)}</code>" if source else ""
        return f"<code>automd import {_e(run['import_format'])}</code>{where}"
    return "written to the archive as it is (not by <code>automd import</code>)"


def _status(inputs: RunInputs) -> str:
    status = inputs.run.get("status")
    if status == "not_scorable":
        return ("not scorable here: the archive holds no prediction file for this task's test set "
                "(never counted invalid)")  # fmt: skip
    if status == "invalid":
        sel = inputs.selected or {}
        code = sel.get("reason_codes") or sel.get("reason_code")
        return f'<span class="bad">invalid</span> (<code>{_e(code)}</code>)'
    return "valid"


def _run_section(inputs: RunInputs, rows: list[VersionRow], synthetic: bool) -> str:
    run, task = inputs.run, inputs.task
    rule = run.get("selection_rule")
    meaning = SELECTION_RULES.get(rule)
    chosen = run.get("selected_version")
    known = {r.version for r in rows}
    chosen_cell = (
        f'<a href="#{_anchor(chosen)}">{_e(chosen)}</a>' if chosen in known
        else _e(chosen) if chosen else "none (no version qualified, or the final file)"
    )  # fmt: skip
    task_cell = f"<code>{_e(run.get('task'))}</code>{SYNTHETIC_MARK if synthetic else ''}"
    if task.get("title"):
        task_cell += f" &mdash; {_e(task['title'])}"
    facts = [
        ("Experiment", f"<code>{_e(run.get('experiment'))}</code>"),
        ("Agent", f"<code>{_e(run.get('agent'))}</code>" + (" (simple baseline)"
                                                             if run.get("reference") else "")),
        ("LLM", _e(run.get("llm")) if run.get("llm") else MISSING),
        ("Task", task_cell),
        ("Primary metric", f"<code>{_e(run.get('metric'))}</code>"),
        ("Repetition", _e(run.get("rep"))),
        ("Search", _e(run.get("search"))),
        ("Status", _status(inputs)),
        ("Source", _import(run)),
        ("Selection rule (App. C)", f"<code>{_e(rule)}</code>"
         + (f": {_e(meaning)}" if meaning else "")),
        ("Selected version", chosen_cell),
        ("Agent's validation score of it", _num(run.get("reported_val_score"))),
        ("Tokens", _tokens(run)),
        ("Started", _time(run.get("started_at"))),
        ("Ended", _time(run.get("ended_at"))),
        ("Run time", f"{_num(run.get('run_minutes'), 1)} min of a {_num(run.get('budget_minutes'), 0)}"
         f" min budget" + (" (ended early)" if run.get("ended_before_budget") else "")),
        ("Steps", f"{_e(run.get('n_steps'))} ({_e(run.get('n_steps_ok'))} succeeded); "
         f"{_e(run.get('n_versions'))} archived versions"),
        ("Incomplete", "yes: the source lacked part of the run or it stopped inside a stage"
         if run.get("incomplete") else "no"),
        ("Codebook answers", _annotations_source(run)),
    ]  # fmt: skip
    if run.get("objective"):
        facts.insert(7, ("Objective", _e(run["objective"])))
    note = f'<p class="footnote">{_e(SYNTHETIC_FOOTNOTE)}</p>' if synthetic else ""
    return f'<h2 id="run">The run</h2>{_facts(facts)}{note}'


def _annotations_source(run: dict) -> str:
    source = run.get("annotations_source")
    if source in (None, "none") or not run.get("has_annotations"):
        return "none"
    who = f" by {_e(run['annotator'])}" if run.get("annotator") else ""
    return f"{_e(source)}{who}"


def _problems_section(inputs: RunInputs) -> str:
    if not inputs.problems:
        return '<h2 id="problems">Problems</h2><p>No problem was recorded for this run.</p>'
    with_version = any(p.get("version") for p in inputs.problems)
    headers = ["What was left out", "Code", *(["Version"] if with_version else []), "Message",
               "Fix"]  # fmt: skip
    rows = [
        [_e(p.get("effect")), f"<code>{_e(p.get('code'))}</code>",
         *([_e(p.get("version") or "")] if with_version else []), _e(p.get("message")),
         _e(p.get("fix") or "")]
        for p in inputs.problems
    ]  # fmt: skip
    return f'<h2 id="problems">Problems</h2>{_table(headers, rows, "problems")}'


def _figure_section(inputs: RunInputs, figure_href: str, has_curve: bool) -> str:
    metric = inputs.run.get("metric")
    caption = [
        "(a) Every version at its time (minutes from the run's start): "
        + ("the held-out primary metric (filled) and the agent's own validation score (open, "
           "when on the same scale)" if inputs.scored else
           "the agent's own validation score (the run is not scorable here)")
        + "; grey lines join each version to its parent, crosses on the bottom edge are "
        "invalid files or failed steps, the ring marks the selected version."
    ]  # fmt: skip
    if has_curve:
        caption.append(
            "(b) Smoothed calibration curve of the selected submission with its pointwise 95 % "
            "band, the simple baseline of the same task (solid grey) and perfect calibration "
            "(dashed grey); both axes 0-1."
        )
    alt = f"Development of run {inputs.run_id} ({metric})"
    return (
        '<h2 id="development">Development and calibration</h2>'
        f'<figure class="run-figure"><img src="{_e(figure_href)}" alt="{_e(alt)}">'
        f"<figcaption>{_e(' '.join(caption))}</figcaption></figure>"
    )


def _validity(row: VersionRow, reasons: dict[str, list[dict]]) -> str:
    if row.valid is None:
        return MISSING
    if row.valid:
        return "valid"
    codes = row.reason_codes or ""
    listed = reasons.get(row.version) or []
    detail = "; ".join(f"{r.get('code')}: {r.get('message')}" for r in listed)
    detail = detail or row.reason_message or ""
    return (f'<span class="bad">invalid</span> <code>{_e(codes)}</code>'
            + (f'<br><small>{_e(detail)}</small>' if detail else ""))  # fmt: skip


def _evidence_links(evidence: str | None, link) -> str:
    parts = []
    for path, line in evidence_targets(evidence):
        label = _e(f"{path}:{line}" if line is not None else path)
        href = link(path, line)
        parts.append(f'<a href="{_e(href)}"><code>{label}</code></a>' if href
                     else f"<code>{label}</code>")  # fmt: skip
    return ", ".join(parts)


def _changes(row: VersionRow, link) -> str:
    if not row.changes:
        return ""
    by_earlier: dict[str, list[dict]] = {}
    for pair in row.changes:
        by_earlier.setdefault(str(pair.get("earlier")), []).append(pair)
    out = []
    for earlier, pairs in by_earlier.items():
        names = ", ".join(
            _e(p.get("change")) + ("" if p.get("affects_predictions") else " (no effect)")
            for p in pairs
        )
        evidence = _evidence_links(
            pairs[0].get("evidence"), lambda path, line: link(path, line, whole=False)
        )
        out.append(f"vs {_e(earlier)}: {names}" + (f"<br><small>{evidence}</small>"
                                                  if evidence else ""))  # fmt: skip
    return "<br>".join(out)


def _version_link(version: str | None, known: set[str]) -> str:
    if not version:
        return MISSING
    return f'<a href="#{_anchor(version)}">{_e(version)}</a>' if version in known else _e(version)


def _versions_section(inputs: RunInputs, rows: list[VersionRow], link) -> str:
    known = {r.version for r in rows}
    reasons: dict[str, list[dict]] = {}
    for r in inputs.reasons:
        reasons.setdefault(str(r.get("version")), []).append(r)
    metric = _e(inputs.run.get("metric"))
    scored = inputs.scored
    headers = ["Version" if scored else "Version or node", "Step", "Parent", "Minutes"]
    if scored:
        headers += ["Held-out score [95 % CI]", f"Held-out {metric}", "ECE",
                    "ECE bias-corrected [95 % CI]"]  # fmt: skip
    headers += ["Agent's validation score"]
    if scored:
        headers += ["Gap (validation &minus; held-out)", "Validity"]
    else:
        headers += ["Step succeeded"]
    headers += ["Codebook changes", "Code"]
    body = []
    for row in rows:
        label = _e(row.version)
        if row.is_selected:
            source = f" = {_version_link(row.source_version, known)}" if row.source_version else ""
            label = f"<strong>selected</strong>{source}"
        parent = _version_link(row.parent, known) + ("*" if row.parent_inferred else "")
        code = (f'<a href="#{_code_anchor(row.version)}">diff</a>'
                if row.version in inputs.files else "")  # fmt: skip
        cells = [f'<span id="{_anchor(row.version)}">{label}</span>', _e(row.step or MISSING),
                 parent if not row.is_selected else MISSING, _num(row.minutes, 1)]  # fmt: skip
        if scored:
            cells += [
                _with_interval(row.score, row.score_ci_low, row.score_ci_high),
                _num(row.raw),
                _num(row.ece),
                _with_interval(row.ece_bc, row.ece_bc_ci_low, row.ece_bc_ci_high),
            ]
        cells.append(_num(row.reported_val))
        if scored:
            cells += [_num(row.gap), _validity(row, reasons)]
        else:
            cells.append(
                MISSING if row.ok is None else "yes" if row.ok else '<span class="bad">no</span>'
            )
        cells += [_changes(row, link), code]
        body.append(cells)
    notes = []
    if scored:
        comparable = inputs.run.get("metric") in VAL_TEST_METRICS
        notes.append(
            "Held-out: the task's hidden test set, scored by the toolkit; 95 % bootstrap "
            "intervals where the score store has them: the score's percentile interval, and the "
            "bias-corrected ECE's interval that reaches from below the corrected value up to the "
            f"plug-in ({MISSING} where the store has none; automd score --version-bootstrap R "
            "computes them for every version). The gap is the agent's validation score minus the "
            "held-out metric"
            + (
                ""
                if comparable
                else f" ({MISSING} here: the agent's validation score is not on "
                "the primary metric's scale)"
            )  # fmt: skip
            + "."
        )
    else:
        notes.append(
            "Not scorable here: one row per step (its version, else its search-tree node) with "
            "what the run itself reported."
        )
    if any(r.parent_inferred for r in rows):
        notes.append("* Parent not recorded: the version before it (a linear agent).")
    return (
        '<h2 id="versions">Versions</h2>'
        f'<div class="wide">{_table(headers, body, "versions")}</div>'
        f'<p class="footnote">{_e(" ".join(notes))}</p>'
    )


def _change_summary(changes: list[FileChange]) -> str:
    parts = []
    for c in changes:
        if c.status == "unchanged":
            continue
        if c.status == "modified" and not c.too_large:
            parts.append(f"{_e(c.name)} +{c.added} &minus;{c.removed}")
        else:
            parts.append(f"{_e(c.name)} ({c.status})")
    return ", ".join(parts) or "no change to the code"


def _version_changes(inputs: RunInputs, rows: list[VersionRow]) -> dict[str, list[FileChange]]:
    """Version -> its files compared with its parent's (every version with code)."""
    files = inputs.files
    return {
        row.version: compare_files(
            files.get(row.parent) if row.parent else None,
            files[row.version],
            row.parent,
            row.version,
        )  # fmt: skip
        for row in rows
        if not row.is_selected and row.version in files
    }


def _code_section(inputs: RunInputs, rows: list[VersionRow], changes: dict, code: CodePages,
                  page: str, shared: list[str]) -> str:  # fmt: skip
    files = inputs.files
    if not files:
        return ('<h2 id="code">Code</h2><p>The score store holds no code of this run: the '
                "scorer publishes the code of its archived versions (of its steps' search-tree "
                "nodes, under <code>code/&lt;node&gt;/</code>, when it archived no version), and "
                "none of them has a readable code file.</p>")  # fmt: skip
    chosen = next((r.source_version for r in rows if r.is_selected), None)
    chosen = chosen or inputs.run.get("selected_version")
    parts = ['<h2 id="code">Code, version by version</h2>',
             "<p>Each version against its parent (three lines of context; long diffs and whole "
             "files open on a page of their own). Archived code is shown as text, never "
             "run.</p>"]  # fmt: skip
    for row in rows:  # whole files first: the diffs against them reuse their colours
        if row.version in changes and (row.version == chosen or row.parent not in files):
            for path, text in files[row.version].items():
                code.file_page(path, text)
    for row in rows:
        if row.version not in changes:
            continue
        version, parent = row.version, files.get(row.parent) if row.parent else None
        if parent is None:
            title = (f"{_e(version)}: first version" if not row.parent else
                     f"{_e(version)} &larr; {_e(row.parent)} (its code is not archived)")  # fmt: skip
            summary = ", ".join(_e(c.name) for c in changes[version])
        else:
            title = f"{_e(version)} &larr; {_e(row.parent)}"
            summary = _change_summary(changes[version])
        whole = version == chosen or parent is None  # the others: their diffs
        body = "".join(
            _file_change(
                c,
                parent or {},
                files[version],
                code,
                page,
                shared,
                f"{_code_anchor(version)}-{i}",
                whole,
            )  # fmt: skip
            for i, c in enumerate(changes[version])
        )
        opened = " open" if version == chosen else ""
        parts.append(
            f'<details class="version-code" id="{_code_anchor(version)}"{opened}>'
            f"<summary><strong>{title}</strong>: {summary}</summary>{body}</details>"
        )
    return "".join(parts)


def _file_change(change: FileChange, parent: dict[str, str], files: dict[str, str],
                 code: CodePages, page: str, shared: list[str], anchor: str,
                 whole: bool) -> str:  # fmt: skip
    """One file of a version's code section; ``whole``: link every file's whole-file page (the
    selected version, a first version), else only an added or too long file's."""
    name = f"<code>{_e(change.name)}</code>"
    if change.status == "deleted":
        return f'<p class="file">{name}: deleted</p>'
    text = files[change.new]
    link = ""
    if whole or change.status == "added" or change.too_large:
        target = code.file_page(change.new, text)
        shared.append(target)
        link = f' (<a href="{_e(relative_href(page, target))}">whole file</a>)'
    if change.status == "unchanged":
        return f'<p class="file">{name}: unchanged{link}</p>'
    if change.status == "added":
        return f'<p class="file">{name}: new file, {change.added} lines{link}</p>'
    if change.too_large:
        return f'<p class="file">{name}: too long to compare line by line{link}</p>'
    head = f'<p class="file">{name}: +{change.added} &minus;{change.removed}{link}</p>'
    if len(change.rows) > MAX_INLINE_ROWS:
        stored = code.diff_page(change, parent.get(change.old, ""), text)
        shared.append(stored)
        href = _e(relative_href(page, stored))
        return (f'{head}<p class="muted">{len(change.rows)} diff lines: <a href="{href}">open '
                "the diff</a></p>")  # fmt: skip
    return head + diff_table(change, anchor)


def _linker(inputs: RunInputs, changes: dict, code: CodePages, page: str, shared: list[str]):
    """``link(path, line, whole=True) -> href or None`` for a cited
    ``code/<version>/<file>:<line>``: the line in the version's diff when the page shows it, else
    the line on the whole file's page (``whole``; otherwise the version's code section);
    ``None`` for a file the score store does not hold."""
    by_path = {
        path: (version, text)
        for version, files in inputs.files.items()
        for path, text in files.items()
    }
    shown: dict[tuple[str, int], str] = {}
    for version, version_changes in changes.items():
        for i, change in enumerate(version_changes):
            if change.status != "modified" or len(change.rows) > MAX_INLINE_ROWS:
                continue
            anchor = f"{_code_anchor(version)}-{i}"
            for kind, _, new, _ in change.rows:
                if kind in " +" and new is not None:
                    shown[(change.new, new)] = f"#{anchor}-L{new}"

    def link(path: str, line: int | None, whole: bool = True) -> str | None:
        if path not in by_path:
            return None
        if line is not None and (path, line) in shown:
            return shown[(path, line)]
        version, text = by_path[path]
        if not whole and version in changes:
            return f"#{_code_anchor(version)}"
        target = code.file_page(path, text)
        shared.append(target)
        return relative_href(page, target) + (f"#L{line}" if line is not None else "")

    return link


def _codebook_section(inputs: RunInputs, link) -> str:
    answers = [a for a in inputs.annotations if a.get("field")]
    if not answers:
        return ('<h2 id="codebook">Codebook answers</h2><p>This run has no codebook '
                "answers.</p>")  # fmt: skip
    grouped: dict[str, list[dict]] = {}
    for a in answers:
        grouped.setdefault(str(a["field"]), []).append(a)
    rows = []
    for fieldname, values in grouped.items():
        shown = ", ".join(_e(v.get("value")) for v in values)
        weight = next((v.get("affected_weight") for v in values
                       if v.get("affected_weight") is not None), None)  # fmt: skip
        if weight is not None:
            shown += f" (affected weight {_num(weight)})"
        cited = ";".join(dict.fromkeys(
            part for v in values for part in (v.get("evidence") or "").split(";") if part
        ))  # fmt: skip
        evidence = _evidence_links(cited, link)

        rows.append((f"<code>{_e(fieldname)}</code>", shown, evidence))
    who = _annotations_source(inputs.run)
    table = _table(("Field", "Answer", "Evidence (file:line)"), rows, "codebook")
    return (
        '<h2 id="codebook">Codebook answers of the selected version</h2>'
        f"<p>Answers: {who}. Each citation opens the cited line.</p>{table}"
    )


_MASKING_FIELDS = (
    ("status", "Result"),
    ("flagged", "Flagged"),
    ("fraction_all_rows", "Changed alarms, all retained rows"),
    ("fraction_last_rows", "Changed alarms, each patient's last row"),
    ("n_retained_rows", "Retained rows"),
    ("n_changed_rows", "Changed rows"),
    ("n_patients", "Patients"),
    ("n_changed_last", "Changed last rows"),
    ("reproduces_original", "Re-run reproduces the archived alarms"),
    ("reason", "Reason"),
    ("isolation", "Re-run isolation"),
)


def _masking_section(inputs: RunInputs) -> str:
    row = inputs.masking
    head = '<h2 id="masking">Masking test of the real-time rule</h2>'
    if row is None:
        return head + "<p>No masking-test result for this run (paper App. G; notebook 07).</p>"
    facts = []
    for key, label in _MASKING_FIELDS:
        value = row.get(key)
        if value is None:
            continue
        if isinstance(value, bool):
            shown = "yes" if value else "no"
        elif key.startswith("fraction") and isinstance(value, float):
            shown = f"{100 * value:.2f}%"
        else:
            shown = _e(value)
        facts.append((label, shown))
    return head + _facts(facts)


_CONTENTS = (
    ("run", "The run"),
    ("problems", "Problems"),
    ("development", "Development and calibration"),
    ("versions", "Versions"),
    ("code", "Code"),
    ("codebook", "Codebook answers"),
    ("masking", "Masking test"),
)


def _summary(inputs: RunInputs) -> str:
    sel = inputs.selected
    if sel is None:
        return ("<strong>Not scorable here:</strong> the archive holds no prediction file for this "
                "task's test set. The page shows what the run carries: its steps and their "
                "reported scores, its code and its codebook answers.")  # fmt: skip
    if not sel.get("valid"):
        code = sel.get("reason_codes") or sel.get("reason_code")
        return (f'<strong>Selected submission <span class="bad">invalid</span></strong> '
                f"(<code>{_e(code)}</code>): {_e(sel.get('reason_message') or '')} It counts 0 "
                "in the penalised score.")  # fmt: skip
    score = _with_interval(sel.get("score"), sel.get("score_ci_low"), sel.get("score_ci_high"))
    ece = _with_interval(sel.get("ece_bc"), sel.get("ece_bc_ci_low"), sel.get("ece_bc_ci_high"))
    return (
        f"<strong>Selected submission valid:</strong> normalised held-out score {score}, "
        f"{_e(sel.get('metric'))} {_num(sel.get('raw'))}, ECE {_num(sel.get('ece'))} "
        f"(bias-corrected {ece})."
    )


def render_run(inputs: RunInputs, code: CodePages) -> RenderedRun:
    """The page of one run and its figure.

    Parameters
    ----------
    inputs : RunInputs
        From :func:`automd_analysis.report.run_data.collect_runs`.
    code : CodePages
        Writes (once) the shared whole-file and long-diff pages the page links to.

    Returns
    -------
    RenderedRun
        The page's HTML, the SVG of its figure (to be written next to it, same stem) and the
        shared pages it links to.
    """
    page = inputs.page
    shared: list[str] = []
    rows = version_rows(inputs)
    changes = _version_changes(inputs, rows)
    synthetic = bool(inputs.task.get("synthetic"))
    link = _linker(inputs, changes, code, page, shared)
    curve = inputs.curve if inputs.scored else []
    figure = run_figure(
        tree_nodes(inputs, rows),
        agent=str(inputs.run.get("agent")),
        metric=str(inputs.run.get("metric")),
        show_val=inputs.run.get("metric") in VAL_TEST_METRICS,
        curve=curve,
        baseline=inputs.baseline[1] if inputs.baseline else None,
    )
    figure_name = page.rsplit("/", 1)[-1].removesuffix(".html") + ".svg"
    provenance = inputs.context.get("provenance") or ""
    contents = "".join(f'<li><a href="#{a}">{t}</a></li>' for a, t in _CONTENTS)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>Run {_e(inputs.run_id)}</title>",
        f'<link rel="stylesheet" href="{_e(relative_href(page, RUNS_DIR + "/run.css"))}">',
        "</head><body>",
        f'<p class="nav"><a href="{_e(relative_href(page, "index.html"))}">&larr; report index'
        f'</a> &middot; <a href="{_e(relative_href(page, RUNS_INDEX))}">all runs</a></p>',
        f"<h1>Run <code>{_e(inputs.run_id)}</code></h1>",
        f'<p class="provenance"><strong>About this archive:</strong> {_e(provenance)}</p>'
        if provenance else "",
        f'<p class="lead">{_summary(inputs)}</p>',
        f'<nav class="automd-contents"><strong>Contents</strong><ol>{contents}</ol></nav>',
        _run_section(inputs, rows, synthetic),
        _problems_section(inputs),
        _figure_section(inputs, figure_name, bool(curve)),
        _versions_section(inputs, rows, link),
        _code_section(inputs, rows, changes, code, page, shared),
        _codebook_section(inputs, link),
        _masking_section(inputs),
        "</body></html>",
    ]  # fmt: skip
    return RenderedRun("\n".join(p for p in parts if p) + "\n", figure, sorted(set(shared)))
