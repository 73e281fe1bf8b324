"""Helpers shared by the format importers: options, names, times, LLM, tokens, final file."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from automd_analysis.archive.safe import MAX_INT, NAME_PATTERN, RESERVED_VERSION_NAMES
from automd_analysis.errors import AutomdError
from automd_analysis.importers._source import Limits, SourceDir, unsafe_path
from automd_analysis.importers.model import (
    EARLIEST,
    FINAL_VERSION,
    LATEST,
    ImportedNode,
    ImportedRun,
    TokenCount,
    utc_from_epoch,
)
from automd_analysis.importers.predictions import Binding, PredictionSpec
from automd_analysis.importers.problems import SourceError, problem
from automd_analysis.importers.safe_yaml import UnsafeYamlError, load_agent_yaml
from automd_analysis.importers.selection import Selection
from automd_analysis.importers.text import repair_text

#: The paper's wall-clock budget per run (minutes).
DEFAULT_BUDGET_MINUTES = 720.0


@dataclass(frozen=True)
class ImportOptions:
    """What the user passed to ``automd import`` (besides FORMAT, SOURCE and DEST).

    ``task`` may be ``None`` only for MLE-bench run groups (runs map to tasks by competition id).
    ``tokens`` is the parsed ``--tokens`` file; ``tokens_in_source`` names such a file inside
    SOURCE instead (a study: one per run), read when present. ``manifests`` is the manifest
    directory the import checks tasks against (``None``: the default one); a format that can
    import a task without a manifest as process-only (FML-bench) asks it.
    """

    agent: str
    task: str | None = None
    experiment: str = "main"
    rep: int = 0
    llm: str | None = None
    predictions: PredictionSpec | None = None
    tokens: TokenCount | None = None
    tokens_in_source: str | None = None
    budget_minutes: float = DEFAULT_BUDGET_MINUTES
    rollout: Path | None = None
    limits: Limits = field(default_factory=Limits)
    manifests: Path | None = None


#: Node ids that would collide with version names the archive or the importer use themselves.
RESERVED_NODE_IDS = frozenset(RESERVED_VERSION_NAMES | {FINAL_VERSION})


def check_node_id(value: Any, what: str, where: str) -> str:
    """``value`` if it is a safe archive name, else ``import.bad_node_id``."""
    if not isinstance(value, str) or not NAME_PATTERN.match(value) or len(value) > 200:
        raise SourceError(
            f"{what} {value!r} is not a safe name (it becomes a directory of the archive)",
            path=where,
            code="import.bad_node_id",
            fix=f"ids must match {NAME_PATTERN.pattern} (at most 200 characters)",
        )
    if value in RESERVED_NODE_IDS:
        raise SourceError(
            f"{what} {value!r} is reserved (the archive uses it for its own versions)",
            path=where,
            code="import.bad_node_id",
            fix=f"node ids may not be {' or '.join(sorted(RESERVED_NODE_IDS))}",
        )
    return value


def out_of_range(msg: str, where: str, location: str | None = None) -> SourceError:
    """An ``import.out_of_range`` error naming the file and the field."""
    return malformed(msg, where, location, code="import.out_of_range",
                     fix="the log is corrupt: times must lie in 1970-2200 and integers below "
                     "2**53 (docs/importing.md)")  # fmt: skip


def symlinked_dir(name: str, what: str) -> SourceError:
    """``import.unsafe_path`` for an entry of SOURCE (a folder, a log) that is a symlink."""
    return unsafe_path(
        f"{what} {name!r} is a symlink", name, "replace symlinks in SOURCE by copies"
    )


def epoch_time(value: Any, what: str, where: str, location: str | None = None) -> datetime:
    """Epoch seconds from a log as an aware UTC time in [1970, 2200) (else ``out_of_range``;
    ``import.malformed`` when it is not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise malformed(f"{what} must be a number of seconds since 1970", where, location)
    if not (math.isfinite(value) and EARLIEST.timestamp() <= value < LATEST.timestamp()):
        raise out_of_range(f"{what} {value!r} is not a time between 1970 and 2200", where,
                           location)  # fmt: skip
    return utc_from_epoch(value)


def in_time_range(dt: datetime, what: str, where: str, location: str | None = None) -> datetime:
    """``dt`` (aware) if it lies in [1970, 2200), else ``import.out_of_range``."""
    if not EARLIEST <= dt < LATEST:
        raise out_of_range(f"{what} {dt.isoformat()} is not between 1970 and 2200", where,
                           location)  # fmt: skip
    return dt


def bounded_count(value: Any, what: str, where: str, problems: list) -> int | None:
    """A count an archive can hold (integer in [0, 2**53)); anything else is dropped with
    ``import.value_dropped`` (``None``)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_INT:
        problems.append(
            problem(
                "import.value_dropped",
                f"{what} {value!r} is not an integer between 0 and 2**53 - 1; dropped",
                path=where,
            )
        )
        return None
    return value


def bounded_seconds(value: Any, what: str, where: str, problems: list) -> float | None:
    """A duration in seconds (finite, >= 0, below a century); ``None`` for null, otherwise
    dropped with ``import.value_dropped``."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not (math.isfinite(value) and 0 <= value < 100 * 365.25 * 86400)
    ):
        problems.append(
            problem(
                "import.value_dropped",
                f"{what} {value!r} is not a duration in seconds (0 to 100 years); dropped",
                path=where,
            )
        )
        return None
    return float(value)


def clean_text(text: Any, problems: list, what: str, where: str) -> str:
    """Log text as valid Unicode: lone surrogates become U+FFFD (``import.text_repaired``, once
    per ``what``); non-strings give ``""``."""
    if not isinstance(text, str):
        return ""
    repaired, n = repair_text(text)
    if n and not any(
        p.code == "import.text_repaired" and p.details.get("what") == what for p in problems
    ):
        problems.append(
            problem(
                "import.text_repaired",
                f"{what} holds text that is not valid Unicode (lone surrogates, e.g. "
                f"\\udcff); replaced by U+FFFD where written",
                path=where,
                what=what,
            )
        )
    return repaired


def malformed(msg: str, where: str, location: str | None = None, *,
              code: str = "import.malformed",
              fix: str = "the file must have the shape the agent writes (docs/importing.md)"
              ) -> SourceError:  # fmt: skip
    """An ``import.malformed`` (or ``code``) error naming the file (SOURCE-relative) and the
    field."""
    return SourceError(msg, path=where, location=location, code=code, fix=fix)


def finite_or_none(value: Any, problems: list, what: str, where: str) -> float | None:
    """A finite float, ``None`` for null; NaN/inf become ``None`` with a recorded problem."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise malformed(f"{what} must be a number or null, not {type(value).__name__}", where)
    if not math.isfinite(value):
        problems.append(
            problem(
                "import.metric_not_finite",
                f"{what} is {value!r}; treated as not reported",
                path=where,
            )
        )
        return None
    return float(value)


def iso(dt: datetime) -> str:
    """ISO 8601 UTC with microseconds and ``Z`` (stable text for byte-identical archives).

    >>> iso(datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    '2026-01-02T03:04:05.000000Z'
    """
    return dt.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_timestamp(text: Any, where: str, problems: list) -> datetime:
    """An aware datetime from ISO 8601 text; a naive one is taken as UTC (recorded once); times
    outside [1970, 2200) are ``import.out_of_range``."""
    if not isinstance(text, str):
        raise malformed(f"timestamp must be a string, not {type(text).__name__}", where)
    try:
        dt = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise malformed(f"timestamp {text!r} is not ISO 8601", where) from None
    if dt.tzinfo is not None:
        try:
            dt = dt.astimezone(UTC)
        except OverflowError:
            raise out_of_range(f"timestamp {text!r} is not between 1970 and 2200", where) from None
    if dt.tzinfo is None:
        if not any(p.code == "import.time_zone_assumed" for p in problems):
            problems.append(
                problem(
                    "import.time_zone_assumed",
                    f"timestamps such as {text!r} carry no zone; UTC assumed",
                    path=where,
                )
            )
        dt = dt.replace(tzinfo=UTC)
    return in_time_range(dt, "timestamp", where)


def mtime_utc(source: SourceDir, rel: str) -> datetime:
    """The modification time of ``rel`` (no symlink followed) as aware UTC in [1970, 2200)."""
    return epoch_time(source.mtime(rel), f"the modification time of {rel}", rel)


def read_yaml_config(source: SourceDir, rel: str, problems: list) -> dict | None:
    """An agent's YAML config as plain data, or ``None`` (absent, unsafe, invalid or nested too
    deeply: recorded)."""
    if not source.exists(rel):
        return None
    text = source.read_text(rel, source.limits.yaml_bytes, what="YAML config")
    try:
        data = load_agent_yaml(text, max_depth=source.limits.max_depth)
    except UnsafeYamlError as exc:
        problems.append(
            problem(
                "import.yaml_unsafe",
                f"{rel} was not read: {exc}",
                path=rel,
                fix="nothing to do unless you need values from it (it is still copied to logs/)",
            )
        )
        return None
    except yaml.YAMLError as exc:
        problems.append(problem("import.yaml_invalid", f"{rel} is not valid YAML: {exc}", path=rel))
        return None
    return data if isinstance(data, dict) else None


def dig(data: Any, *keys: str) -> Any:
    """``data[k1][k2]...`` or ``None``."""
    for k in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(k)
    return data


_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def llm_name(value: Any) -> str | None:
    """An LLM name from a log as one printable line (at most 200 characters), or ``None``."""
    if not isinstance(value, str):
        return None
    name = " ".join(_CONTROL.sub(" ", repair_text(value)[0]).split())
    return name[:200] or None


def resolve_llm(given: str | None, logged: list[str], problems: list, where: str | None, *,
                looked_in: str | None = None) -> str:  # fmt: skip
    """``--llm`` if given, else the last LLM the log names (a change is recorded).

    ``import.llm_unknown`` says where the LLM was looked for: ``looked_in`` (default ``where``,
    the SOURCE-relative file the error names) and, when a YAML config was not read (a recorded
    ``import.yaml_*`` problem), that config and why.
    """
    names = [n for n in (llm_name(v) for v in logged) if n]
    if given:
        return given
    if not names:
        unread = [p for p in problems if p.code in ("import.yaml_unsafe", "import.yaml_invalid")]
        why = "".join(f"; {p.path} could not be read ({p.message})" for p in unread)
        raise SourceError(
            f"the log does not name the LLM (looked in {looked_in or where}{why})",
            path=where,
            code="import.llm_unknown",
            fix="pass --llm NAME",
        )
    distinct = list(dict.fromkeys(names))
    if len(distinct) > 1:
        problems.append(
            problem(
                "import.llm_changed",
                f"the log names several LLMs ({', '.join(distinct)}); {names[-1]!r} recorded",
                path=where,
                fix="pass --llm NAME to choose",
            )
        )
    return names[-1]


def config_llm_place(source: SourceDir, configs: list[str]) -> tuple[str | None, str]:
    """``(path, description)`` of the YAML configs an LLM name was looked for in
    (``agent.code.model``): the last one that exists, and the files named, or said absent.

    >>> import tempfile, pathlib
    >>> config_llm_place(SourceDir(tempfile.mkdtemp()), ["config.yaml"])
    (None, 'agent.code.model of config.yaml, which is absent')
    """
    present = [c for c in configs if source.is_file(c, what="YAML config")]
    if not present:
        names = ", ".join(configs[:3]) + (f" and {len(configs) - 3} more" if len(configs) > 3
                                          else "")  # fmt: skip
        return (
            None,
            f"agent.code.model of {names}, which {'is' if len(configs) == 1 else 'are'} absent",
        )
    names = ", ".join(present[:3]) + (f" and {len(present) - 3} more" if len(present) > 3 else "")
    return present[-1], f"agent.code.model of {names}"


def resolve_tokens(
    user: TokenCount | None, logged: TokenCount | None, problems: list, what: str
) -> TokenCount | None:
    """``--tokens`` over the log's count (recorded); absent counts are recorded."""
    if user is not None:
        if logged is not None:
            problems.append(
                problem(
                    "import.tokens_overridden",
                    f"--tokens replaced the {what} count ({logged.total} total)",
                )
            )
        return user
    if logged is None:
        problems.append(
            problem(
                "import.tokens_absent",
                f"{what} records no token counts; run.json has no tokens",
                fix="pass --tokens FILE with the harness's counts if you have them",
            )
        )
    return logged


def copy_if_present(source: SourceDir, rels: Iterable[str], dest_prefix: str = "") -> dict:
    """``{logs/<dest_prefix><rel>: rel}`` for the regular files among ``rels`` (symlinks raise)."""
    out = {}
    for rel in rels:
        if source.exists(rel) and not source.is_dir(rel):
            out[f"{dest_prefix}{rel}"] = rel
    return out


def first_line(text: Any, limit: int = 160) -> str:
    """The first non-empty line of ``text``, shortened (for ``journal.md``)."""
    if not isinstance(text, str):
        return ""
    for line in text.splitlines():
        line = " ".join(line.split())
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def _sha(source: SourceDir, rel: str) -> str:
    return source.sha256(rel, source.limits.prediction_bytes, what="prediction file")


def final_default(source: SourceDir, binding: Binding, candidates: Iterable[str]) -> str | None:
    """The run's final submission: the map's ``"final"`` entry, else the first existing default."""
    if binding.final is not None:
        return binding.final
    for rel in candidates:
        if source.exists(rel, what="final submission") and not source.is_dir(rel):
            source.file_size(rel, source.limits.prediction_bytes, what="final submission")
            return rel
    return None


def final_file(
    source: SourceDir, binding: Binding, selection: Selection, candidates: Iterable[str]
) -> str | None:
    """The run's final file: when ``selection`` uses it, as :func:`final_default` (the map's
    ``"final"`` entry, else the first of ``candidates`` SOURCE holds); otherwise the map's entry."""
    return final_default(source, binding, candidates) if selection.use_final_file else binding.final


def assemble(
    *,
    fmt: str,
    source: SourceDir,
    opts: ImportOptions,
    task: str,
    llm: str,
    search: str,
    nodes: list[ImportedNode],
    selection: Selection,
    binding: Binding,
    final_rel: str | None,
    times: tuple[datetime, datetime],
    tokens: TokenCount | None,
    raw_logs: dict,
    problems: list[AutomdError],
    rep: int | None = None,
    final_code: tuple = (),
    final_code_note: str = "",
    steps_in_run_json: bool = True,
) -> ImportedRun:
    """Build the :class:`ImportedRun`: resolve the selected version and the final file.

    ``times`` is the run's start and end (an end before the start becomes the start); the end
    as given is also the final file's time. ``rep`` defaults to ``opts.rep``.

    When the selection uses the final file and that file's bytes equal a bound version's file,
    that version is the selection (the latest such; it gets ``final_code`` when it has no code of
    its own); otherwise the final file becomes version
    :data:`~automd_analysis.importers.model.FINAL_VERSION` with ``final_code`` (where it came
    from: ``final_code_note``). Without a final file the run has no submission
    (``import.final_file_missing``).
    """
    if len(nodes) > source.limits.max_nodes:
        raise too_many_nodes(len(nodes), source.limits.max_nodes, source.name)
    problems = list(problems) + list(binding.problems)
    started_at, ended_at = times
    final_created_at = ended_at
    if not binding.files:
        how = (
            "no --predictions was given"
            if opts.predictions is None
            else f"{opts.predictions.describe()} matched no file"
        )
        problems.append(
            problem(
                "import.predictions_not_bound",
                f"no per-node prediction file is bound ({how}); the run's final file is its "
                "only prediction file",
                fix="pass --predictions PATTERN or a JSON map (docs/importing.md)",
            )
        )
    if ended_at < started_at:
        ended_at = started_at
    if selection.incomparable:
        problems.append(
            problem(
                "import.selection_incomparable",
                f"{len(selection.incomparable)} node(s) report a metric of another type or "
                f"direction and were not compared: {', '.join(selection.incomparable)}",
            )
        )
    reasons = list(selection.reasons)
    selected: str | None = selection.node_id
    reported = None
    if selected is not None:
        reported = {n.node_id: n for n in nodes}[selected].metric.value
    elif selection.use_final_file:
        selected, reported, nodes = _final_selection(
            source, nodes, final_rel, final_code, final_code_note, reasons, problems
        )
    else:
        problems.append(
            problem("import.selection_no_candidate", "no node qualified under the selection rule")
        )
    if selected != FINAL_VERSION:
        final_rel = None
    return ImportedRun(
        format=fmt,
        source=source.root,
        source_name=source.name,
        experiment=opts.experiment,
        agent=opts.agent,
        task=task,
        rep=opts.rep if rep is None else rep,
        llm=llm,
        search=search,
        started_at=started_at,
        ended_at=ended_at,
        budget_minutes=float(opts.budget_minutes),
        nodes=nodes,
        selection=replace(selection, reasons=tuple(reasons)),
        selected_version=selected,
        reported_val_score=reported,
        tokens=tokens,
        final_file=final_rel,
        final_created_at=final_created_at,
        final_code=final_code if final_rel is not None else (),
        final_code_note=final_code_note if final_rel is not None else "",
        raw_logs=raw_logs,
        binding=binding.description,
        problems=problems,
        steps_in_run_json=steps_in_run_json,
    )


def _final_selection(source: SourceDir, nodes: list[ImportedNode], final_rel: str | None,
                     final_code: tuple, note: str, reasons: list, problems: list):  # fmt: skip
    """``(selected version, reported score, nodes)`` when the selection is the final file: the
    latest bound version whose file equals it byte for byte (given ``final_code`` if it has no
    code), else :data:`FINAL_VERSION`; ``None`` without a final file (recorded)."""
    if final_rel is None:
        reasons.append("the run left no final submission file: it has no submission")
        problems.append(
            problem(
                "import.final_file_missing",
                "the selection uses the run's final submission file, which is absent; the run "
                "has no submission (scored as invalid when other prediction files were bound, "
                "else not scorable here)",
                fix="copy the final submission.csv into SOURCE or name it in a map file under "
                "the key 'final'",
            )
        )
        return None, None, nodes
    reasons.append(f"the final submission file is {final_rel}")
    cap = source.limits.prediction_bytes
    size = source.file_size(final_rel, cap)
    same = [n for n in nodes if n.prediction is not None
            and source.file_size(n.prediction, cap) == size]  # fmt: skip
    if same:
        digest = _sha(source, final_rel)
        same = [n for n in same if _sha(source, n.prediction) == digest]
    if not same:
        has = "'s code:" if final_code else " has no code:"
        reasons.append(f"version {FINAL_VERSION}{has} {note}")
        return FINAL_VERSION, None, nodes
    hit = max(same, key=lambda n: n.ordinal)
    reasons.append(f"it equals version {hit.node_id}'s file byte for byte")
    if not hit.code and final_code:
        nodes = [replace(n, code=final_code) if n is hit else n for n in nodes]
        reasons.append(f"version {hit.node_id}'s code: {note}")
    return hit.node_id, hit.metric.value, nodes


def too_many_nodes(n: int, cap: int, where: str) -> SourceError:
    """``import.too_large`` for a run with more nodes/steps than ``Limits.max_nodes``."""
    return SourceError(
        f"the log holds {n} nodes/steps, above the limit of {cap} per run",
        path=where,
        code="import.too_large",
        fix="a run this long is not supported (run.json caps the step list at 1 MiB); split "
        "the log",
        details={"nodes": n, "limit": cap},
    )


def require_task(opts: ImportOptions) -> str:
    """``--task`` (``import.task_required`` when absent)."""
    if not opts.task:
        raise SourceError(
            "--task is required for this format",
            code="import.task_required",
            fix="pass --task TASK (a task id of the manifests)",
        )
    return opts.task
