"""Reason codes of ``automd import``: fatal source errors and recorded problems.

A *fatal* code stops the import before anything is written (the CLI exits with code 2); a
*recorded* code is kept in the import report, in ``journal.md`` and (where it concerns the run's
content) in ``run.json`` ``notes``, and the run is still written. ``import.internal_*`` codes
are our own bugs, never an answer to bad input. Messages may quote log text: it is repaired
(:func:`~automd_analysis.importers.text.repair_text`) so that it can always be printed. :data:`PROBLEM_CODES` is the
catalogue that ``docs/importing.md`` documents (a test keeps the two equal).
"""

from __future__ import annotations

from pathlib import Path

from automd_analysis.errors import AutomdError
from automd_analysis.importers.text import repair_text

__all__ = ["FATAL", "PROBLEM_CODES", "RECORDED", "SourceError", "problem"]


def _printable(value):
    return repair_text(value)[0] if isinstance(value, str) else value


class SourceError(AutomdError):
    """An agent's output directory (or an import option) cannot be imported safely."""

    def __init__(self, message: str, path: str | Path | None = None, location: str | None = None,
                 fix: str | None = None, code: str = "error", details: dict | None = None):  # fmt: skip
        super().__init__(_printable(message), _printable(path), _printable(location),
                         _printable(fix), code, details or {})  # fmt: skip


#: Fatal codes: nothing is written, exit code 2.
FATAL: dict[str, str] = {
    "import.source_missing": "SOURCE (or a file the format requires) does not exist",
    "import.journal_missing": "the agent's own log (journal, summary, rollout, results) is absent",
    "import.malformed": "a log is not valid JSON/JSONL/TSV or does not have the format's shape",
    "import.too_large": "a file the importer must read is larger than its size cap",
    "import.unsafe_path": "a path is a symlink, leaves SOURCE, or is absolute / contains '..'",
    "import.not_a_file": "a path the importer must read is not a regular file",
    "import.bad_node_id": "a node id or run id is not a safe archive name",
    "import.empty_run": "the log records no node or step and there is no final file",
    "import.llm_unknown": "the LLM is not in the log and --llm was not given",
    "import.task_required": "--task is required for this format",
    "import.task_unknown": "the task is not among the manifests",
    "import.tokens_invalid": "the --tokens file is not {prompt, completion, total} integers",
    "import.predictions_invalid": "the --predictions pattern or map file is not usable",
    "import.options_invalid": "an option does not fit this format or source",
    "import.run_exists": "the run is already in the archive and --replace was not given",
    "import.archive_invalid": "DEST holds an unreadable or invalid archive.yaml",
    "import.no_runs": "an MLE-bench run group holds no importable run",
    "import.unreadable": "a file or folder the import needs cannot be read (permissions, I/O)",
    "import.out_of_range": "a required number or time is outside what the archive can hold",
    "import.packed_unsafe": "a .zip/.tar SOURCE cannot be read safely (extract it first)",
    "import.dest_unsafe": "a folder of DEST on the way to the run is a symlink or not a folder",
    "import.dest_unwritable": "DEST cannot be written (permissions, read-only or full disk)",
    "import.internal_invalid": "the run written would not pass the archive reader (a bug)",
    "import.internal_error": "an unexpected error inside automd import (a bug)",
}

#: Recorded codes: the run is written; the problem is reported.
RECORDED: dict[str, str] = {
    "import.yaml_unsafe": "a YAML file uses a tag other than OmegaConf's PosixPath (not read)",
    "import.yaml_invalid": "a YAML file is not readable YAML (not read)",
    "import.optional_file_skipped": "an optional log is too large or unreadable (not copied)",
    "import.predictions_not_bound": "no per-node/step prediction files were bound; final file used",
    "import.prediction_unbound_key": "a prediction map names a node or step the log does not have",
    "import.prediction_missing": "a prediction map names a file that does not exist",
    "import.prediction_header": "a bound prediction file's header does not match the task",
    "import.final_file_missing": "the run's final submission file is absent (no submission)",
    "import.selection_incomparable": "nodes with another metric type/direction were not compared",
    "import.selection_no_candidate": "no node qualified under the selection rule",
    "import.best_node_missing": "AI-Scientist-v2 best_node_id.txt is absent or names no node",
    "import.best_node_buggy": "AI-Scientist-v2's saved best node is marked buggy",
    "import.best_step_missing": "no FML-bench step has the run's best_val_metric",
    "import.stage_journal_missing": "an AI-Scientist-v2 sub-stage has no journal.json (skipped)",
    "import.stage_journal_invalid": "an AI-Scientist-v2 sub-stage journal cannot be read (skipped)",
    "run.incomplete": "part of the run is missing or unreadable, or it stopped inside a stage",
    "import.parent_unknown": "a node names a parent the log does not have (parent dropped)",
    "import.metric_not_finite": "a reported metric is NaN or infinite (treated as missing)",
    "import.tokens_absent": "the log records no token counts and --tokens was not given",
    "import.tokens_overridden": "--tokens replaced the counts found in the log",
    "import.time_from_mtime": "file modification times were used (bounded by the log or budget)",
    "import.time_zone_assumed": "the log's timestamps have no zone; UTC was assumed",
    "import.llm_changed": "the log names more than one LLM; the last one is recorded",
    "import.run_failed": "the harness marked the run as failed",
    "import.symlink_skipped": "a symlink found while listing a directory was skipped",
    "import.code_file_skipped": "a code file was not archived (link, special file, odd name, size)",
    "import.text_repaired": "text that is not valid Unicode was repaired (U+FFFD)",
    "import.value_dropped": "an optional number of the log is out of range and was dropped",
    "import.scale_unknown": "a process-only task's normalisation range is unknown (AUC is NaN)",
    "import.process_task_kept": "archive.yaml declares the process-only task differently: kept",
}

PROBLEM_CODES: dict[str, str] = {**FATAL, **RECORDED}


def problem(code: str, message: str, *, path: str | Path | None = None, fix: str | None = None,
            location: str | None = None, **details) -> AutomdError:  # fmt: skip
    """A recorded (non-fatal) problem with a code from :data:`RECORDED`."""
    if code not in RECORDED:
        raise ValueError(f"unknown recorded problem code {code!r}")
    return AutomdError(_printable(message), path=_printable(path), location=_printable(location), code=code,
                       fix=_printable(fix), details=details)  # fmt: skip
