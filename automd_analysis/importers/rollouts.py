"""Codex CLI session rollouts (``sessions/**/rollout-*.jsonl``): times, LLMs and token counts.

Each line is ``{"timestamp", "type", "payload"}`` with ``type`` one of ``session_meta``,
``turn_context`` (``payload.model`` is the LLM), ``response_item``, ``compacted`` or
``event_msg``; token usage is in ``event_msg`` payloads of type ``token_count``:
``info.total_token_usage {input_tokens, cached_input_tokens, output_tokens,
reasoning_output_tokens, total_tokens}``, cumulative per file (the last non-null one counts; files
are summed). The recorder flushes after every line, so a session killed while writing leaves at
most its last line cut short: such a line is dropped and the run recorded as incomplete; any other
line that is not a rollout record refuses the file.

Every file is measured before it is parsed (lines, values per line, nesting) and only the time
bounds, the LLM names and the last usage are kept, so memory does not grow with the session.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from automd_analysis.archive.safe import MAX_INT
from automd_analysis.importers._common import ImportOptions, llm_name, malformed, parse_timestamp
from automd_analysis.importers._source import (
    SourceDir,
    check_json_shape,
    decode_utf8,
    os_error,
    parse_json,
)
from automd_analysis.importers.model import TokenCount
from automd_analysis.importers.problems import SourceError, problem

__all__ = ["ROLLOUT_TYPES", "RolloutSummary", "parse_rollout", "read_rollouts"]

ROLLOUT_TYPES = frozenset(
    {"session_meta", "turn_context", "response_item", "compacted", "event_msg"}
)
_USAGE = ("input_tokens", "output_tokens", "total_tokens")


@dataclass
class _Span:
    """The first and last times and the LLMs in order, of one rollout or of them all."""

    first: datetime | None = None
    last: datetime | None = None
    models: list[str] = field(default_factory=list)


@dataclass
class RolloutSummary(_Span):
    """What the importers take from Codex rollouts: time bounds, LLMs, tokens."""

    tokens: TokenCount | None = None
    files: list[str] = field(default_factory=list)
    outside: dict[str, str] = field(default_factory=dict)


@dataclass
class _Parsed(_Span):
    usage: dict | None = None


def _lines(text: str):
    start = 0
    while start < len(text):
        end = text.find("\n", start)
        if end < 0:
            yield text[start:], False
            return
        yield text[start:end], True
        start = end + 1


def parse_rollout(text: str, where: str, problems: list):
    """Parse one rollout JSONL: ``(first time, last time, models, last total_token_usage)``.

    Parameters
    ----------
    text : str
        The file's text, already measured (:func:`~._source.check_json_shape`).
    where : str
        File name for messages.
    problems : list
        Receives ``import.time_zone_assumed`` and, for a last line cut short, ``run.incomplete``.

    Returns
    -------
    first, last : datetime or None
    models : list of str
        ``turn_context.model`` values in order, consecutive repeats dropped.
    usage : dict or None
        The last non-null ``token_count`` ``info.total_token_usage``.

    Raises
    ------
    SourceError
        ``import.malformed`` naming the line for a line that is not a JSON object with a string
        ``timestamp``, a known ``type`` and an object ``payload``; ``import.out_of_range`` for a
        time outside 1970-2200.

    See Also
    --------
    read_rollouts

    References
    ----------
    openai/codex ``codex-rs/protocol/src/protocol.rs`` (``RolloutLine``, ``RolloutItem``,
    ``TokenCountEvent``); ``codex-rs/core/src/rollout/recorder.rs`` (a flush after every line).

    Examples
    --------
    >>> line = ('{"timestamp":"2026-05-01T09:00:00.000Z","type":"event_msg","payload":'
    ...         '{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,'
    ...         '"output_tokens":2,"total_tokens":12}}}}')
    >>> first, last, models, usage = parse_rollout(line + "\\n", "r.jsonl", [])
    >>> usage["total_tokens"], first.isoformat()
    (12, '2026-05-01T09:00:00+00:00')
    """
    out = _Parsed()
    for lineno, (line, ended) in enumerate(_lines(text), start=1):
        if not line.strip():
            continue
        loc = f"line {lineno}"
        try:
            obj = parse_json(line, where, "rollout line", checked=True)
        except SourceError as exc:
            if not ended:  # the last line, cut short by a kill
                problems.append(
                    problem(
                        "run.incomplete",
                        f"the run is incomplete: the last line of {where} ({loc}) is cut short "
                        "(the session was killed while writing it); it is dropped",
                        path=where,
                        location=loc,
                    )
                )
                break
            exc.location = f"{loc}, {exc.location}"
            raise
        if not isinstance(obj, dict) or not isinstance(obj.get("payload"), dict):
            raise malformed("a rollout line must be an object with a 'payload' object", where, loc)
        if not isinstance(obj.get("type"), str) or obj["type"] not in ROLLOUT_TYPES:
            raise malformed(f"unknown rollout line type {obj.get('type')!r}", where, loc)
        stamp = parse_timestamp(obj.get("timestamp"), f"{where} ({loc})", problems)
        out.first = stamp if out.first is None else min(out.first, stamp)
        out.last = stamp if out.last is None else max(out.last, stamp)
        payload = obj["payload"]
        if obj["type"] == "turn_context":
            model = llm_name(payload.get("model"))
            if model and (not out.models or out.models[-1] != model):
                out.models.append(model)
        if obj["type"] == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
                out.usage = info["total_token_usage"]
    return out.first, out.last, out.models, out.usage


def _usage_counts(usage: dict, where: str) -> tuple[int, int, int] | None:
    """``(input, output, total)`` of a usage record; ``None`` when a count is out of range."""
    counts = []
    for key in _USAGE:
        v = usage.get(key, 0)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            raise malformed(f"token_count {key} must be an integer >= 0, not {v!r}", where)
        if v > MAX_INT:
            return None
        counts.append(v)
    return counts[0], counts[1], counts[2]


def _read_outside(path: Path, source: SourceDir) -> str:
    """The ``--rollout`` file: a regular file (no symlink) within the size cap, as text."""
    fix = "pass the rollout-*.jsonl file itself"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise SourceError("--rollout file not found", path=path, code="import.source_missing",
                          fix=fix) from None  # fmt: skip
    except OSError as exc:
        raise os_error(exc, path, "--rollout file") from None
    if not stat.S_ISREG(st.st_mode):
        code = "import.unsafe_path" if stat.S_ISLNK(st.st_mode) else "import.not_a_file"
        raise SourceError("--rollout is not a regular file (a symlink, FIFO or directory)",
                          path=path, code=code, fix=fix)  # fmt: skip
    cap = source.limits.log_bytes
    if st.st_size > cap:
        raise SourceError(f"--rollout file is above the cap of {cap} bytes", path=path,
                          code="import.too_large", fix="split the session")  # fmt: skip
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            data = fh.read(cap + 1)
    except OSError as exc:
        raise os_error(exc, path, "--rollout file") from None
    if len(data) > cap:
        raise SourceError(f"--rollout file is above the cap of {cap} bytes", path=path,
                          code="import.too_large", fix="split the session")  # fmt: skip
    check_json_shape(data, path.name, "rollout", source.limits, lines=True)
    return decode_utf8(data, path.name, "--rollout")


def _session_files(source: SourceDir, problems: list) -> list[str]:
    """The rollout files below ``sessions/`` (symlinks skipped and recorded; a non-regular file
    named like a rollout is ``import.not_a_file``)."""
    files, others = source.walk_files("sessions")
    for rel, kind in others:
        name = rel.rsplit("/", 1)[-1]
        if kind == "link":
            problems.append(
                problem("import.symlink_skipped", f"{rel} is a symlink; not read", path=rel)
            )
        elif name.startswith("rollout-"):
            raise SourceError(
                f"rollout {rel!r} is not a regular file (a FIFO, device or socket, or its name "
                "is not valid Unicode)",
                path=rel,
                code="import.not_a_file",
                fix="replace it by the rollout file itself",
            )
    out = []
    for rel in files:
        name = rel.rsplit("/", 1)[-1]
        if name.startswith("rollout-") and name.endswith(".jsonl"):
            out.append(rel)
    return out


def read_rollouts(source: SourceDir, opts: ImportOptions, problems: list) -> RolloutSummary:
    """Every rollout of the run (``--rollout`` or ``sessions/**/rollout-*.jsonl``), summarised.

    The files' total size is checked against ``limits.run_log_bytes`` before any is read; token
    counts above 2**53 - 1 are dropped (``import.value_dropped``).
    """
    out = RolloutSummary()
    texts: list[tuple[str, str | None]] = []
    if opts.rollout is not None:
        p = Path(opts.rollout)
        text = _read_outside(p, source)
        texts.append((p.name, text))
        out.outside[f"sessions/{p.name}"] = text
    elif source.is_dir("sessions"):
        rels = _session_files(source, problems)
        total = sum(source.file_size(r, source.limits.log_bytes, what="rollout") for r in rels)
        if total > source.limits.run_log_bytes:
            raise SourceError(
                f"the {len(rels)} rollouts hold {total} bytes, above the cap of "
                f"{source.limits.run_log_bytes} per run",
                path="sessions",
                code="import.too_large",
                fix="SOURCE must hold one run's sessions (docs/importing.md)",
            )
        texts = [(r, None) for r in rels]
        out.files = rels
    totals = [0, 0, 0]
    usable, any_usage = True, False
    for where, text in texts:
        if text is None:
            data = source.read_bytes(where, source.limits.log_bytes, what="rollout")
            check_json_shape(data, where, "rollout", source.limits, lines=True)
            text = decode_utf8(data, where, "rollout")
            del data
        first, last, models, usage = parse_rollout(text, where, problems)
        del text
        out.models += models
        if first is not None:
            out.first = first if out.first is None else min(out.first, first)
            out.last = last if out.last is None else max(out.last, last)
        if usage is not None:
            any_usage = True
            counts = _usage_counts(usage, where)
            if counts is None:
                usable = False
            else:
                totals = [a + b for a, b in zip(totals, counts, strict=True)]
    if any_usage and usable and max(totals) <= MAX_INT:
        out.tokens = TokenCount(totals[0], totals[1], totals[2], "agent_log")
    elif any_usage:
        problems.append(
            problem(
                "import.value_dropped",
                "the rollouts' token counts are above 2**53 - 1 (or sum above it); run.json "
                "has no tokens",
                path="sessions",
            )
        )
    return out
