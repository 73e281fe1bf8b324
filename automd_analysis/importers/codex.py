"""OpenAI Codex CLI run directory → :class:`~.model.ImportedRun` (also used by autoresearch).

SOURCE is the run's working directory as the harness saved it: the final ``submission.csv``, the
scripts, and the session rollouts under ``sessions/**/rollout-*.jsonl`` (or ``--rollout FILE``).
Each rollout line is ``{"timestamp", "type", "payload"}`` with ``type`` one of ``session_meta``,
``turn_context`` (``payload.model`` is the LLM), ``response_item``, ``compacted`` or ``event_msg``;
token usage is in ``event_msg`` payloads of type ``token_count``: ``info.total_token_usage
{input_tokens, cached_input_tokens, output_tokens, reasoning_output_tokens, total_tokens}``,
cumulative per file (the last non-null one counts; files are summed).

The rollout holds no prediction files. Selection is :func:`~.selection.final_file`; per-step
snapshots can be bound with a ``{step}`` pattern (files are found by listing) or a map keyed by
step numbers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from automd_analysis.importers._common import (
    ImportOptions,
    assemble,
    final_default,
    malformed,
    mtime_utc,
    parse_timestamp,
    require_task,
    resolve_llm,
    resolve_tokens,
)
from automd_analysis.importers._source import SourceDir, parse_json
from automd_analysis.importers.model import ImportedNode, ImportedRun, TokenCount
from automd_analysis.importers.predictions import Binding, bind_nodes, scan_steps
from automd_analysis.importers.problems import SourceError, problem
from automd_analysis.importers.selection import final_file

__all__ = ["RolloutSummary", "parse_rollout", "read_codex"]

ROLLOUT_TYPES = {"session_meta", "turn_context", "response_item", "compacted", "event_msg"}


@dataclass
class RolloutSummary:
    """What the importers take from Codex rollouts: time bounds, LLMs, tokens."""

    first: datetime | None = None
    last: datetime | None = None
    models: list[str] = field(default_factory=list)
    tokens: TokenCount | None = None
    files: list[str] = field(default_factory=list)
    outside: dict[str, str] = field(default_factory=dict)


def parse_rollout(text: str, where: str, problems: list) -> tuple[list, list, dict | None]:
    """Parse one rollout JSONL: ``(timestamps, models, last total_token_usage or None)``.

    Parameters
    ----------
    text : str
    where : str
        File name for messages.
    problems : list
        Receives ``import.time_zone_assumed``.

    Returns
    -------
    timestamps : list of datetime
    models : list of str
        ``turn_context.model`` values in order.
    usage : dict or None
        The last non-null ``token_count`` ``info.total_token_usage``.

    Raises
    ------
    SourceError
        ``import.malformed`` naming the line for a line that is not a JSON object with a string
        ``timestamp``, a known ``type`` and an object ``payload``.

    See Also
    --------
    read_codex

    References
    ----------
    openai/codex ``codex-rs/protocol/src/protocol.rs`` (``RolloutLine``, ``RolloutItem``,
    ``TokenCountEvent``).

    Examples
    --------
    >>> line = ('{"timestamp":"2026-05-01T09:00:00.000Z","type":"event_msg","payload":'
    ...         '{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,'
    ...         '"output_tokens":2,"total_tokens":12}}}}')
    >>> ts, models, usage = parse_rollout(line + "\\n", "r.jsonl", [])
    >>> usage["total_tokens"], ts[0].isoformat()
    (12, '2026-05-01T09:00:00+00:00')
    """
    stamps, models, usage = [], [], None
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        loc = f"line {lineno}"
        try:
            obj = parse_json(line, where, "rollout line")
        except SourceError as exc:
            exc.location = f"{loc}, {exc.location}"
            raise
        if not isinstance(obj, dict) or not isinstance(obj.get("payload"), dict):
            raise malformed("a rollout line must be an object with a 'payload' object", where, loc)
        if obj.get("type") not in ROLLOUT_TYPES:
            raise malformed(f"unknown rollout line type {obj.get('type')!r}", where, loc)
        stamps.append(parse_timestamp(obj.get("timestamp"), f"{where} ({loc})", problems))
        payload = obj["payload"]
        if obj["type"] == "turn_context" and isinstance(payload.get("model"), str):
            models.append(payload["model"])
        if obj["type"] == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
                usage = info["total_token_usage"]
    return stamps, models, usage


def _count(usage: dict, key: str, where: str) -> int:
    v = usage.get(key, 0)
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise malformed(f"token_count {key} must be an integer >= 0", where)
    return v


def read_rollouts(source: SourceDir, opts: ImportOptions, problems: list) -> RolloutSummary:
    """Every rollout of the run (``--rollout`` or ``sessions/**/rollout-*.jsonl``), summarised.

    Symlinks met while listing ``sessions/`` are skipped (``import.symlink_skipped``).
    """
    out = RolloutSummary()
    texts: list[tuple[str, str]] = []
    if opts.rollout is not None:
        p = Path(opts.rollout)
        if not p.is_file() or p.is_symlink():
            raise SourceError(
                "--rollout file not found (or a symlink)",
                path=p,
                code="import.source_missing",
                fix="pass the rollout-*.jsonl file itself",
            )
        if p.stat().st_size > source.limits.log_bytes:
            raise SourceError(
                f"--rollout file is above the cap of {source.limits.log_bytes} bytes",
                path=p,
                code="import.too_large",
                fix="split the session",
            )
        try:
            texts.append((p.name, p.read_bytes().decode("utf-8")))
            out.outside[f"sessions/{p.name}"] = texts[-1][1]
        except UnicodeDecodeError as exc:
            raise malformed(f"--rollout is not UTF-8: {exc}", p.name) from None
    elif source.is_dir("sessions"):
        files, links = source.walk_files("sessions")
        for link in links:
            problems.append(
                problem("import.symlink_skipped", f"{link} is a symlink; not read", path=link)
            )
        for rel in files:
            name = rel.rsplit("/", 1)[-1]
            if name.startswith("rollout-") and name.endswith(".jsonl"):
                texts.append((rel, source.read_text(rel, source.limits.log_bytes, what="rollout")))
                out.files.append(rel)
    totals = [0, 0, 0]
    any_usage = False
    for where, text in texts:
        stamps, models, usage = parse_rollout(text, where, problems)
        out.models += models
        if stamps:
            out.first = min([*stamps, *([out.first] if out.first else [])])
            out.last = max([*stamps, *([out.last] if out.last else [])])
        if usage is not None:
            any_usage = True
            totals[0] += _count(usage, "input_tokens", where)
            totals[1] += _count(usage, "output_tokens", where)
            totals[2] += _count(usage, "total_tokens", where)
    if any_usage:
        out.tokens = TokenCount(totals[0], totals[1], totals[2], "agent_log")
    return out


def times_from_mtime(source: SourceDir, rels: list[str], problems: list):
    stamps = [mtime_utc(source, r) for r in rels]
    problems.append(
        problem(
            "import.time_from_mtime",
            "no timestamped log; the run's start and end are the modification times of "
            + ", ".join(rels),
            fix="include the session rollouts (sessions/**/rollout-*.jsonl) in SOURCE",
        )
    )
    return min(stamps), max(stamps)


def linear_steps_from_files(
    source: SourceDir, opts: ImportOptions, start, end, problems: list
) -> tuple[list[ImportedNode], Binding]:
    """Versions of a run whose log has no step list: ``{step}`` files found by listing, or a map
    keyed by step numbers. Each file's time is its modification time (clipped to the run)."""
    spec = opts.predictions
    binding = Binding(description="none" if spec is None else spec.describe())
    if spec is None:
        return [], binding
    if spec.kind == "pattern":
        found = scan_steps(source, spec)
    else:
        keys = sorted(int(k) for k in spec.mapping if k.lstrip("-").isdigit())
        sub = bind_nodes(source, spec, [(f"#{k}", k) for k in keys])
        binding.final, binding.problems = sub.final, sub.problems
        found = sorted((int(k[1:]), rel) for k, rel in sub.files.items())
    nodes = []
    for ordinal, (step, rel) in enumerate(found, start=1):
        created = mtime_utc(source, rel)
        created = min(max(created, start), end)
        vid = f"step-{ordinal:04d}"
        nodes.append(
            ImportedNode(
                vid,
                ordinal,
                log_step=step,
                created_at=created,
                prediction=rel,
                description=f"prediction file {rel}",
            )  # fmt: skip
        )
        binding.files[vid] = rel
    return nodes, binding


def top_level_code(source: SourceDir) -> tuple[tuple[str, str], ...]:
    """The ``*.py`` scripts at the top of SOURCE (the code beside the final submission)."""
    out = []
    for name, kind in source.listdir(""):
        if kind == "file" and name.endswith(".py") and not name.startswith("."):
            size = os.lstat(source.path(name)).st_size
            if size <= source.limits.code_bytes:
                out.append((name, source.read_bytes(name, source.limits.code_bytes).decode(
                    "utf-8", errors="replace")))  # fmt: skip
    return tuple(out)


def read_codex(source: SourceDir, opts: ImportOptions) -> list[ImportedRun]:
    """Import a Codex CLI run directory (one linear run, selection ``final_file``).

    Parameters
    ----------
    source : SourceDir
        The run directory: final ``submission.csv``, scripts, ``sessions/**/rollout-*.jsonl``.
    opts : ImportOptions
        ``--rollout`` replaces the ``sessions/`` search.

    Returns
    -------
    list of ImportedRun
        Times from the rollouts' first and last timestamps; LLM from the last
        ``turn_context.model``; tokens from the last ``token_count`` per rollout, summed
        (``prompt = input_tokens``, ``completion = output_tokens``).

    Raises
    ------
    SourceError
        ``import.malformed`` (a rollout line), ``import.empty_run`` (no rollout and no final
        file), ``import.llm_unknown``, ``import.unsafe_path``...

    See Also
    --------
    automd_analysis.importers.selection.final_file

    References
    ----------
    openai/codex (Apache-2.0), ``codex-rs/protocol/src/protocol.rs``; Auto-MD-bench App. C.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "submission.csv").write_text("id,p\\n1,0.5\\n")
    >>> (run,) = read_codex(SourceDir(d), ImportOptions(agent="codex", task="t", llm="gpt-5"))
    >>> run.selection.rule, run.selected_version
    ('final_file', 'final')
    """
    task = require_task(opts)
    problems: list = []
    summary = read_rollouts(source, opts, problems)
    final_rel = final_default(source, Binding(), ("submission.csv",))
    if summary.first is None:
        if final_rel is None:
            raise SourceError(
                "no session rollout and no final submission.csv",
                path=".",
                code="import.empty_run",
                fix="SOURCE must hold sessions/**/rollout-*.jsonl and/or submission.csv",
            )
        start, end = times_from_mtime(source, [final_rel], problems)
    else:
        start, end = summary.first, summary.last
    nodes, binding = linear_steps_from_files(source, opts, start, end, problems)
    run = assemble_rollout_run(
        "codex",
        source,
        opts,
        task,
        summary,
        nodes=nodes,
        binding=binding,
        final_rel=final_rel,
        times=(start, end),
        problems=problems,
        tokens_from="the Codex rollouts",
    )
    return [run]


def assemble_rollout_run(
    fmt: str,
    source: SourceDir,
    opts: ImportOptions,
    task: str,
    summary: RolloutSummary,
    *,
    nodes: list[ImportedNode],
    binding: Binding,
    final_rel: str | None,
    times: tuple[datetime, datetime],
    problems: list,
    tokens_from: str,
    other_logs: tuple[str, ...] = (),
    steps_in_run_json: bool = False,
) -> ImportedRun:
    """The one linear run (selection ``final_file``) of a directory with Codex rollouts.

    The LLM and the tokens come from ``summary`` unless ``opts`` gives them (``tokens_from``
    names the logs in the messages); the final file is ``binding.final`` when the predictions
    map names one, else ``final_rel``; the run ends at ``times[1]``, which is also the final
    file's time; the raw logs kept are the rollouts, then ``other_logs``, plus those read from
    outside SOURCE (``--rollout``). Shared by :func:`read_codex` and the autoresearch importer.

    See Also
    --------
    read_codex, automd_analysis.importers.autoresearch.read_autoresearch

    References
    ----------
    Auto-MD-bench App. C (the ``final_file`` rule of the linear agents).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from datetime import UTC
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "submission.csv").write_text("id,p\\n1,0.5\\n")
    >>> opts = ImportOptions(agent="codex", task="t", llm="gpt-5")
    >>> when = (datetime(2025, 1, 1, tzinfo=UTC), datetime(2025, 1, 2, tzinfo=UTC))
    >>> run = assemble_rollout_run("codex", SourceDir(d), opts, "t", RolloutSummary(), nodes=[],
    ...     binding=Binding(), final_rel="submission.csv", times=when, problems=[],
    ...     tokens_from="the Codex rollouts")
    >>> run.search, run.selection.rule, run.ended_at == when[1]
    ('linear', 'final_file', True)
    """
    if binding.final is not None:
        final_rel = binding.final
    llm = resolve_llm(opts.llm, summary.models, problems, "sessions")
    tokens = resolve_tokens(opts.tokens, summary.tokens, problems, tokens_from)
    raw_logs = {rel: rel for rel in summary.files}
    raw_logs.update({rel: rel for rel in other_logs})
    start, end = times
    run = assemble(
        fmt=fmt,
        source=source,
        opts=opts,
        task=task,
        rep=opts.rep,
        llm=llm,
        search="linear",
        nodes=nodes,
        selection=final_file(),
        binding=binding,
        final_rel=final_rel,
        started_at=start,
        ended_at=end,
        tokens=tokens,
        raw_logs=raw_logs,
        problems=problems,
        final_code=top_level_code(source),
        final_created_at=end,
        steps_in_run_json=steps_in_run_json,
    )
    run.log_texts.update(summary.outside)
    return run
