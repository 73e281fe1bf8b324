"""OpenAI Codex CLI run directory → :class:`~.model.ImportedRun` (also used by autoresearch).

SOURCE is the run's working directory as the harness saved it: the final ``submission.csv``, the
scripts, and the session rollouts under ``sessions/**/rollout-*.jsonl`` (or ``--rollout FILE``),
read by :mod:`.rollouts` (times, LLM, tokens). Without a rollout, the run's times are the files'
modification times (:func:`~.workdir.times_from_files`).

The rollout holds no prediction files. Selection is :func:`~.selection.final_file`; per-step
snapshots can be bound with a ``{step}`` pattern (files are found by listing) or a map keyed by
step numbers.
"""

from __future__ import annotations

from datetime import datetime

from automd_analysis.importers._common import (
    ImportOptions,
    assemble,
    final_default,
    require_task,
    resolve_llm,
    resolve_tokens,
)
from automd_analysis.importers._source import SourceDir
from automd_analysis.importers.model import ImportedNode, ImportedRun
from automd_analysis.importers.predictions import Binding
from automd_analysis.importers.problems import SourceError
from automd_analysis.importers.rollouts import RolloutSummary, read_rollouts
from automd_analysis.importers.selection import final_file
from automd_analysis.importers.workdir import linear_steps_from_files, scripts, times_from_files

__all__ = ["assemble_rollout_run", "read_codex"]


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
                "looked for session rollouts (sessions/**/rollout-*.jsonl) and a final "
                "submission.csv in SOURCE and found neither",
                path=source.root,
                code="import.journal_missing",
                fix="SOURCE must be the Codex run directory that holds sessions/ and/or "
                "submission.csv",
            )
        start, end = times_from_files(source, problems, opts.budget_minutes)
    else:
        start, end = summary.first, summary.last
    run = assemble_rollout_run(
        "codex",
        source,
        opts,
        task,
        summary,
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
    nodes: list[ImportedNode] | None = None,
    binding: Binding | None = None,
    final_rel: str | None,
    times: tuple[datetime, datetime],
    problems: list,
    tokens_from: str,
    other_logs: dict[str, str] | None = None,
    steps_in_run_json: bool = False,
) -> ImportedRun:
    """The one linear run (selection ``final_file``) of a directory with Codex rollouts.

    Its steps are ``nodes`` with their ``binding``, by default (``None``) the linear steps of the
    files in SOURCE (:func:`~.workdir.linear_steps_from_files`, between the run's ``times``).
    The LLM and the tokens come from ``summary`` unless ``opts`` gives them (``tokens_from``
    names the logs in the messages); the final file is ``binding.final`` when the predictions
    map names one, else ``final_rel``; the run ends at ``times[1]``, which is also the final
    file's time, and the scripts in SOURCE are its code; the raw logs kept are the rollouts, then
    ``other_logs`` (archive path -> SOURCE path), plus those read from outside SOURCE
    (``--rollout``). Shared by :func:`read_codex` and the autoresearch importer.

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
    start, end = times
    if nodes is None or binding is None:
        nodes, binding = linear_steps_from_files(source, opts, start, end, problems)
    if binding.final is not None:
        final_rel = binding.final
    if summary.first is not None:
        where = summary.files[-1] if summary.files else None
        looked_in = "the turn_context records of the rollouts"
    else:
        where, looked_in = (
            None,
            "SOURCE, which holds no session rollout (sessions/**/rollout-*.jsonl)",
        )
    llm = resolve_llm(opts.llm, summary.models, problems, where, looked_in=looked_in)
    tokens = resolve_tokens(opts.tokens, summary.tokens, problems, tokens_from)
    raw_logs = {rel: rel for rel in summary.files}
    raw_logs.update(other_logs or {})
    run = assemble(
        fmt=fmt,
        source=source,
        opts=opts,
        task=task,
        llm=llm,
        search="linear",
        nodes=nodes,
        selection=final_file(),
        binding=binding,
        final_rel=final_rel,
        times=times,
        tokens=tokens,
        raw_logs=raw_logs,
        problems=problems,
        final_code=scripts(source, problems),
        final_code_note="the scripts in SOURCE when the run ended",
        steps_in_run_json=steps_in_run_json,
    )
    run.log_texts.update(summary.outside)
    return run
