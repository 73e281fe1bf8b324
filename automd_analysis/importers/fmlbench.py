"""FML-bench run directory (``summary.json``) → :class:`~.model.ImportedRun`.

SOURCE is ``<output_dir>/<agent>/<task>/<YYYYmmdd_HHMMSS>/`` with ``summary.json`` (written by
``run_agent_benchmark.py::save_results``): ``benchmark, agent, model, provider, task_config{metric,
metric_direction, ...}, total_duration_seconds, best_val_metric, val_steps[StepResult],
token_usage{prompt_tokens, completion_tokens, total_tokens}, parent_workspace, ...``; every
``StepResult`` has ``step_id`` (1-based), ``action``, ``edit_success``, ``val_result{success, ...}``
or null, ``primary_metric``, ``token_usage``, ``step_duration_seconds`` and ``metadata`` (AIDE-style
agents: ``node_id``, ``parent_id``). Code snapshots are ``step_snapshots/step_NNNN_code.json``
(``{file path: content}``).

FML-bench timestamps carry no zone: the start is the run directory's ``YYYYmmdd_HHMMSS`` name
(with or without the ``_<uuid8>`` suffix some agents add), taken as UTC (recorded), the end is the
start plus ``total_duration_seconds``, and each step ends at the start plus the cumulative
``step_duration_seconds``. Selection: :func:`~.selection.earliest_best_val_metric_step`.

A task without a manifest, imported without ``--predictions``, is a *process-only* task
(FML-bench's own tasks): its declaration (metric, direction, baseline, FML-bench's range;
:mod:`.fmlbench_tasks`) goes into ``archive.yaml``, every step becomes a version holding its code
and no prediction file, and nothing is scored. :mod:`.fmlbench_tree` imports a whole results tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from automd_analysis.archive.safe import MAX_INT
from automd_analysis.importers._common import (
    ImportOptions,
    assemble,
    bounded_count,
    bounded_seconds,
    clean_text,
    final_default,
    finite_or_none,
    first_line,
    in_time_range,
    malformed,
    mtime_utc,
    out_of_range,
    require_task,
    resolve_llm,
    resolve_tokens,
    too_many_nodes,
)
from automd_analysis.importers._source import SourceDir
from automd_analysis.importers.code_files import safe_code_files
from automd_analysis.importers.fmlbench_tasks import process_task
from automd_analysis.importers.model import LATEST, ImportedNode, ImportedRun, Metric, TokenCount
from automd_analysis.importers.predictions import bind_nodes
from automd_analysis.importers.problems import SourceError, problem
from automd_analysis.importers.selection import Candidate, earliest_best_val_metric_step
from automd_analysis.precision import comparable_scalar
from automd_analysis.tasks import has_manifest

__all__ = ["read_fmlbench"]

#: A run directory: ``YYYYmmdd_HHMMSS`` (AIDE, AIRA), ``YYYYmmdd_HHMMSS_<uuid8>`` (autoresearch,
#: AI-Scientist-v2, OpenEvolve, The AI Scientist, AdaptiveSearch).
_RUN_DIR = re.compile(r"^(\d{8}_\d{6})(?:_[0-9a-f]{8})?$")
_ACTION = re.compile(r"^[A-Za-z0-9_.\-]{1,64}$")
SUMMARY = "summary.json"


def _int(v, where: str, loc: str, *, minimum: int = 0) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise malformed(f"must be an integer >= {minimum}", where, loc)
    if v > MAX_INT:
        raise out_of_range(f"{v} is above 2**53 - 1", where, loc)
    return v


def _tokens(usage, where: str, loc: str, problems: list) -> TokenCount | None:
    """A ``token_usage`` object (counts above 2**53 - 1 drop it, recorded); ``None`` when it
    records no total (``{}``: the agent's token log was empty; FML-bench's own metrics read
    it as not reported, not as 0)."""
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise malformed("token_usage must be an object", where, loc)
    if "total_tokens" not in usage:
        return None
    vals = []
    for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
        v = usage.get(k, 0)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise malformed("must be an integer >= 0", where, f"{loc}.{k}")
        vals.append(bounded_count(v, f"{loc}.{k}", where, problems))
    if None in vals:
        return None
    return TokenCount(*vals, source="agent_log")


def _run_dir_time(name: str) -> datetime | None:
    m = _RUN_DIR.match(name)
    if not m:
        return None
    try:
        dt = datetime.strptime(m.group(1), "%Y%m%d_%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None
    return dt if datetime(1970, 1, 1, tzinfo=UTC) <= dt < LATEST else None


def _start(source: SourceDir, summary: dict, problems: list) -> datetime:
    candidates = []
    pw = summary.get("parent_workspace")
    if isinstance(pw, str) and pw:
        candidates.append(pw.rstrip("/").rsplit("/", 1)[-1])
    candidates.append(source.name)
    for name in candidates:
        when = _run_dir_time(name)
        if when is not None:
            problems.append(
                problem(
                    "import.time_zone_assumed",
                    f"FML-bench writes local times without a zone; the run start {name} is taken "
                    "as UTC",
                )
            )
            return when
    problems.append(
        problem(
            "import.time_from_mtime",
            "no YYYYmmdd_HHMMSS run directory name (1970-2200); the run start is "
            "summary.json's modification time minus total_duration_seconds",
        )
    )
    dur = bounded_seconds(summary.get("total_duration_seconds"), "total_duration_seconds",
                          SUMMARY, []) or 0.0  # fmt: skip
    return in_time_range(mtime_utc(source, SUMMARY) - timedelta(seconds=dur), "the run start",
                         SUMMARY)  # fmt: skip


def _code(source: SourceDir, step_id: int, problems: list) -> tuple[tuple[str, str], ...]:
    rel = f"step_snapshots/step_{step_id:04d}_code.json"
    if not source.exists(rel):
        return ()
    data = source.read_json(rel, source.limits.code_bytes * 4, what="code snapshot")
    if not isinstance(data, dict):
        raise malformed("a code snapshot must map file paths to contents", rel)
    items = []
    for path, content in data.items():
        if not isinstance(content, str):
            raise malformed(f"content of {path!r} must be a string", rel)
        items.append((path, clean_text(content, problems, "code snapshot", rel)))
    return safe_code_files(items, problems, rel)


def read_fmlbench(source: SourceDir, opts: ImportOptions) -> list[ImportedRun]:
    """Import an FML-bench run directory (one run).

    Parameters
    ----------
    source : SourceDir
        The directory holding ``summary.json``.
    opts : ImportOptions
        ``{step}`` in ``--predictions`` is ``step_id`` (1-based); ``{node_id}`` is ``step-NNNN``.

    Returns
    -------
    list of ImportedRun
        Steps ``step-NNNN`` (``NNNN = step_id``); ``ok`` = ``val_result.success``; tree when the
        steps' metadata name parents (AIDE-style agents), else linear; tokens from
        ``token_usage`` (source ``agent_log``; absent without ``total_tokens``), per step in
        ``meta.json``; ``process_task`` set when the task has no manifest (see the module).

    Raises
    ------
    SourceError
        ``import.journal_missing`` (no ``summary.json``), ``import.malformed``,
        ``import.llm_unknown``...

    See Also
    --------
    automd_analysis.importers.selection.earliest_best_val_metric_step

    References
    ----------
    FML-bench (qrzou/FML-bench, Apache-2.0): ``agents/base.py`` (``StepResult``),
    ``run_agent_benchmark.py`` (``save_results``).

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "20260601_101500"
    >>> d.mkdir()
    >>> step = {"step_id": 1, "action": "draft", "edit_success": True,
    ...         "val_result": {"success": True}, "primary_metric": 0.2,
    ...         "token_usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    ...         "step_duration_seconds": 60.0, "metadata": {}}
    >>> _ = (d / "summary.json").write_text(json.dumps({"model": "m", "best_val_metric": 0.2,
    ...     "task_config": {"metric": "loss", "metric_direction": "lower"},
    ...     "total_duration_seconds": 60.0, "val_steps": [step],
    ...     "token_usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}))
    >>> (run,) = read_fmlbench(SourceDir(d), ImportOptions(agent="aide", task="t"))
    >>> run.selection.rule, run.tokens.total, run.started_at.isoformat()
    ('earliest_best_val_metric_step', 6, '2026-06-01T10:15:00+00:00')
    """
    task = require_task(opts)
    problems: list = []
    where = SUMMARY
    summary = _read_summary(source)
    process = _process_task(task, summary, opts, problems)
    start = _start(source, summary, problems)
    total = bounded_seconds(summary.get("total_duration_seconds"), "total_duration_seconds",
                            SUMMARY, problems)  # fmt: skip
    steps = _read_steps(source, summary, start, problems)
    nodes = sorted(steps.nodes, key=lambda n: n.ordinal)
    tree = bool(steps.parents)
    if tree:
        nodes = _link_parents(nodes, steps, problems)
    binding = bind_nodes(source, opts.predictions, [(n.node_id, n.log_step) for n in nodes])
    nodes = binding.attach(nodes)
    selection = _select(nodes, summary, problems, process_only=process is not None)
    final_rel = None if process else final_default(source, binding, ("submission.csv",))
    if not selection.use_final_file:
        final_rel = binding.final
    end = max(_after(start, total or 0.0, problems), _after(start, steps.elapsed, problems))
    llm = resolve_llm(opts.llm, [summary.get("model")], problems, where)
    tokens = resolve_tokens(
        opts.tokens, _tokens(summary.get("token_usage"), where, "token_usage", problems),
        problems, "summary.json",
    )  # fmt: skip
    run = assemble(
        fmt="fmlbench",
        source=source,
        opts=opts,
        task=task,
        llm=llm,
        search="tree" if tree else "linear",
        nodes=nodes,
        selection=selection,
        binding=binding,
        final_rel=final_rel,
        times=(start, end),
        tokens=tokens,
        raw_logs=_raw_logs(source),
        problems=problems,
    )
    if process is not None:  # every step is a version; no file was expected
        run.process_task = process
        run.problems = [p for p in run.problems if p.code != "import.predictions_not_bound"]
    return [run]


def _process_task(task: str, summary: dict, opts: ImportOptions, problems: list):
    """The run's task as a process-only task when it has no manifest and no prediction files
    are bound (FML-bench's own tasks), else ``None``."""
    if opts.predictions is not None or has_manifest(task, opts.manifests):
        return None
    baseline = finite_or_none(summary.get("baseline_primary_metric"), problems,
                              "baseline_primary_metric", SUMMARY)  # fmt: skip
    return process_task(task, summary.get("task_config"), baseline, problems)


def _after(start: datetime, seconds: float, problems: list) -> datetime:
    """``start`` plus ``seconds``, clipped (and recorded) so that the time stays before 2200."""
    room = (LATEST - start).total_seconds() - 1.0
    if seconds > room:
        problems.append(
            problem(
                "import.value_dropped",
                f"durations adding up to {seconds:.6g} s end after 2200; clipped",
                path=SUMMARY,
            )
        )
        seconds = room
    return start + timedelta(seconds=seconds)


def _read_summary(source: SourceDir) -> dict:
    """``summary.json``, checked to be an object with a ``val_steps`` list."""
    if not source.exists(SUMMARY):
        raise SourceError(
            "looked for FML-bench's summary.json in SOURCE and found none",
            path=source.root,
            code="import.journal_missing",
            fix="SOURCE must be the FML-bench run directory that holds summary.json, or "
            "FML-bench's whole results/ folder (<agent>/<task>/<run>/; --agent keeps one agent)",
        )
    summary = source.read_json(SUMMARY, what="FML-bench summary")
    if not isinstance(summary, dict) or not isinstance(summary.get("val_steps"), list):
        raise malformed("summary.json must be an object with a 'val_steps' list", SUMMARY)
    if len(summary["val_steps"]) > source.limits.max_nodes:
        raise too_many_nodes(len(summary["val_steps"]), source.limits.max_nodes, SUMMARY)
    return summary


@dataclass
class _Steps:
    """The ``val_steps`` as nodes, with the AIDE-style tree links their metadata names."""

    nodes: list[ImportedNode] = field(default_factory=list)
    node_step: dict[str, str] = field(default_factory=dict)  # agent node id -> step-NNNN
    parents: dict[str, str] = field(default_factory=dict)  # step-NNNN -> agent parent node id
    elapsed: float = 0.0  # cumulative step_duration_seconds


def _read_steps(source: SourceDir, summary: dict, start: datetime, problems: list) -> _Steps:
    """Every ``val_steps`` entry as a node ``step-NNNN`` ending at the cumulative duration."""
    cfg = summary.get("task_config") if isinstance(summary.get("task_config"), dict) else {}
    direction = {"higher": True, "lower": False}.get(str(cfg.get("metric_direction")).lower())
    kind = str(cfg.get("metric") or "primary_metric")
    out = _Steps()
    seen: set[int] = set()
    for i, s in enumerate(summary["val_steps"]):
        loc = f"val_steps[{i}]"
        if not isinstance(s, dict):
            raise malformed("a step must be an object", SUMMARY, loc)
        sid = _int(s.get("step_id"), SUMMARY, f"{loc}.step_id", minimum=1)
        if sid in seen:
            raise malformed(f"step_id {sid} appears twice", SUMMARY, loc)
        seen.add(sid)
        vr = s.get("val_result")
        if vr is not None and not isinstance(vr, dict):
            raise malformed("val_result must be an object or null", SUMMARY, f"{loc}.val_result")
        ok = isinstance(vr, dict) and vr.get("success") is True
        dur = bounded_seconds(s.get("step_duration_seconds"), f"{loc}.step_duration_seconds",
                              SUMMARY, problems)  # fmt: skip
        out.elapsed += dur or 0.0
        step_tokens = _tokens(s.get("token_usage"), SUMMARY, f"{loc}.token_usage", problems)
        vid = f"step-{sid:04d}"
        meta = s.get("metadata") if isinstance(s.get("metadata"), dict) else {}
        if isinstance(meta.get("node_id"), str) and meta["node_id"]:
            out.node_step[meta["node_id"]] = vid
            if isinstance(meta.get("parent_id"), str) and meta["parent_id"]:
                out.parents[vid] = meta["parent_id"]
        value = (
            finite_or_none(s.get("primary_metric"), problems, f"{loc}.primary_metric", SUMMARY)
            if ok
            else None
        )
        out.nodes.append(
            ImportedNode(
                vid,
                sid,
                log_step=sid,
                stage=_stage(s.get("action")),
                buggy=not ok,
                metric=Metric(value, direction, kind),
                created_at=_after(start, out.elapsed, problems),
                code=_code(source, sid, problems),
                tokens=None if step_tokens is None else step_tokens.total,
                description=first_line(
                    clean_text(
                        s.get("idea_description") or s.get("action"),
                        problems,
                        "step description",
                        SUMMARY,
                    )
                ),  # fmt: skip
            )
        )
    return out


def _stage(action) -> str | None:
    """The step's ``action`` as a stage name (only a plain word is kept)."""
    return action if isinstance(action, str) and _ACTION.match(action) else None


def _link_parents(nodes: list[ImportedNode], steps: _Steps, problems: list) -> list[ImportedNode]:
    """Each node's parent step from the agent's node ids (an unknown parent is recorded)."""
    fixed = []
    for n in nodes:
        pid = steps.parents.get(n.node_id)
        parent = steps.node_step.get(pid) if pid else None
        if pid and parent is None:
            problems.append(
                problem(
                    "import.parent_unknown",
                    f"{n.node_id} names parent node {pid}, which no step has",
                    path=SUMMARY,
                )
            )
        fixed.append(replace(n, parent=parent))
    return fixed


def _select(nodes: list[ImportedNode], summary: dict, problems: list, *, process_only: bool):
    """The earliest step reaching ``best_val_metric`` (a best value no step reports is
    recorded). In a process-only run every step is a version and there is no final file."""
    best = summary.get("best_val_metric")
    best = finite_or_none(best, problems, "best_val_metric", SUMMARY)
    selection = earliest_best_val_metric_step(
        (Candidate(n.node_id, n.ordinal, n.metric.value,
                   has_file=process_only or n.prediction is not None) for n in nodes),
        best,
    )  # fmt: skip
    if process_only and selection.use_final_file:  # no final file to fall back on
        reasons = [r.replace("; the final file is used", "") for r in selection.reasons]
        reasons.append("a process-only run has no final file: nothing is selected")
        selection = replace(selection, use_final_file=False, reasons=tuple(reasons))
    if not selection.use_final_file or best is None:
        pass
    elif not any(
        n.metric.value is not None and comparable_scalar(n.metric.value) == comparable_scalar(best)
        for n in nodes
    ):
        problems.append(
            problem("import.best_step_missing", f"no step reports best_val_metric {best!r}")
        )
    return selection


def _raw_logs(source: SourceDir) -> dict[str, str]:
    """The log files copied into the archive: the summary, the config, the code snapshots."""
    raw_logs = {SUMMARY: SUMMARY}
    if source.exists("config_used.yaml"):
        raw_logs["config_used.yaml"] = "config_used.yaml"
    if source.is_dir("step_snapshots"):
        for name, kind_ in source.listdir("step_snapshots"):
            if kind_ == "file" and name.endswith(".json"):
                raw_logs[f"step_snapshots/{name}"] = f"step_snapshots/{name}"
    return raw_logs
