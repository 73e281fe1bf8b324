"""``journal.md`` of an imported run: the selection and its reasoning, one line per step."""

from __future__ import annotations

from automd_analysis.importers.labels import display_label
from automd_analysis.importers.model import FINAL_VERSION, ImportedNode, ImportedRun

__all__ = ["render_journal"]


def _score(node: ImportedNode) -> str:
    m = node.metric
    if m.value is None:
        return "no validation score"
    way = {True: "max", False: "min", None: "direction unknown"}[m.maximize]
    kind = "" if m.kind == "scalar" else f"{m.kind}, "
    return f"val {m.value:.6g} ({kind}{way})"


def _line(run: ImportedRun, node: ImportedNode, code_dir: str) -> str:
    where = f"code/{code_dir}/{node.code[0][0]}" if node.code else "no code"
    tree = ""
    if run.search == "tree":
        tree = f" node {node.node_id} (parent {node.parent or '-'}"
        tree += f", stage {node.stage})" if node.stage else ")"
    status = "buggy" if node.buggy else "ok"
    file = f"file versions/{node.node_id}/submission.csv" if node.prediction else "no file"
    if node.node_id == run.selected_version:
        file += " (selected)"
    step = "" if node.is_step else " [not a development step]"
    what = f": {node.description}" if node.description else ""
    return f"- step {node.ordinal} [{where}]{tree}{step}{what} | {_score(node)} | {status} | {file}"


def render_journal(run: ImportedRun) -> str:
    """The generated ``journal.md`` (deterministic text, ``\\n`` line endings).

    Parameters
    ----------
    run : ImportedRun

    Returns
    -------
    str
        A header naming the source format, the selection rule, the selected version and the
        rule's reasoning, how prediction files were bound, one line per node (code, parent,
        stage, reported metric, buggy flag, bound file), and the recorded problems.

    See Also
    --------
    automd_analysis.importers.writer.write_runs

    References
    ----------
    Auto-MD-bench, App. C (selection rules) and App. H (development versions).

    Examples
    --------
    >>> from datetime import UTC, datetime
    >>> from pathlib import Path
    >>> from automd_analysis.importers.selection import final_file
    >>> t = datetime(2026, 1, 1, tzinfo=UTC)
    >>> run = ImportedRun("codex", Path("."), "run1", "main", "codex", "task", 0, "gpt-5",
    ...                   "linear", t, t, 720.0, [], final_file(), "final", None)
    >>> print(render_journal(run).splitlines()[0])
    # Journal - codex on task, repetition 0 (imported from the codex format; LLM gpt-5)
    """
    lines = [
        f"# Journal - {run.agent} on {run.task}, repetition {run.rep} "
        f"(imported from the {run.format} format; LLM {run.llm})",
        "",
        f"Imported by `automd import {run.format}` from `{run.source_name}`. Raw logs are under "
        "`logs/`, unparsed.",
        "",
    ]
    if run.log_folders:
        lines += [
            f"- the logs of `{display_label(src)}` are under `logs/{folder}/` (its name is not a "
            "safe archive folder name)"
            for src, folder in sorted(run.log_folders.items())
        ] + [""]
    lines += [
        "## Selection",
        "",
        f"Rule `{run.selection.rule}` selected "
        + (f"`{run.selected_version}`." if run.selected_version else "nothing (no submission)."),
        "",
    ]
    lines += [f"- {r}" for r in run.selection.reasons]
    if run.selected_version == FINAL_VERSION:
        lines.append(
            f"- the final file `{run.final_file}` matches no bound per-node/step file; it is "
            f"version `{FINAL_VERSION}`"
        )
    if run.process_task is not None:
        files = (f"None: task `{run.task}` is process-only (it has no manifest: nothing to "
                 "score); every step is a version holding its code.")  # fmt: skip
    else:
        files = (f"Bound by {run.binding}: {len(run.versions)} of {len(run.nodes)} node(s)/step(s) "
                 "have their own file.")  # fmt: skip
    lines += ["", "## Prediction files", "", files, "", "## Steps", ""]
    if run.nodes:
        lines += [_line(run, n, n.node_id) for n in run.nodes]
    else:
        lines.append("The log records no development steps.")
    lines += ["", "## Problems", ""]
    if run.problems:
        lines += [f"- `{p.code}`: {p.message}" for p in run.problems]
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"
