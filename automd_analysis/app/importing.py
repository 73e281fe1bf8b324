"""Importing agent logs into an archive, as ``automd import`` asks for it (docs/importing.md).

One call, :func:`import_runs`, chooses the importer for what the user pointed at - one run's
log, a study (``--layout``) or FML-bench's whole results tree - and returns the report as a
plain dict; the command line only prints it. The importers themselves are
:mod:`automd_analysis.importers`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from automd_analysis.errors import AutomdError
from automd_analysis.importers import (
    ImportOptions,
    import_source,
    import_study,
    parse_predictions,
    read_tokens_file,
)
from automd_analysis.importers.fmlbench_tree import import_fmlbench_results, is_results_tree
from automd_analysis.importers.study import internal_error

__all__ = ["import_runs", "internal_error", "is_study"]


def is_study(fmt: str, source: str, layout: str | None) -> bool:
    """Whether :func:`import_runs` imports several runs: a ``layout`` was given, or ``source`` is
    FML-bench's whole results tree."""
    return layout is not None or (fmt == "fmlbench" and is_results_tree(source))


def import_runs(
    fmt: str,
    source: str,
    archive: str,
    *,
    agent: str | None = None,
    task: str | None = None,
    experiment: str = "main",
    rep: int | None = None,
    llm: str | None = None,
    predictions: str | None = None,
    tokens: str | None = None,
    budget_minutes: float = 720.0,
    rollout: str | None = None,
    layout: str | None = None,
    replace: bool = False,
    manifests: Path | None = None,
    data: Path | None = None,
    on_run: Callable | None = None,
) -> dict:
    """Import one run, a study or an FML-bench results tree into ``archive``.

    Parameters
    ----------
    fmt : str
        The log format (:data:`automd_analysis.importers.FORMATS`).
    source : str
        One run's log; with ``layout`` the study's root; for ``fmlbench`` also a results tree.
    archive : str
        The archive directory (``archive.yaml`` is created when missing).
    agent, task, experiment, rep, llm, predictions, tokens, budget_minutes, rollout
        As ``automd import`` (``tokens`` names a file inside each run's source for a study).
    layout : str, optional
        A study: every directory below ``source`` matching this pattern is one run.
    replace : bool
        Replace runs that already exist.
    manifests, data : path, optional
    on_run : callable, optional
        ``on_run(i, n, item)`` after each run of a study (progress).

    Returns
    -------
    dict
        ``ImportReport.to_dict()`` of one run, or ``StudyReport.to_dict()`` of a study (it has
        the key ``"layout"``).

    Raises
    ------
    AutomdError
        A malformed or unsafe source, an unknown task, an existing run without ``replace``, a
        missing ``agent`` for one run (``import.options_invalid``).
    """
    many = is_study(fmt, source, layout)  # --tokens names a file inside each run
    opts = ImportOptions(
        agent=agent or "",
        task=task,
        experiment=experiment,
        rep=rep or 0,
        llm=llm,
        predictions=parse_predictions(predictions),
        tokens=None if tokens is None or many else read_tokens_file(Path(tokens)),
        tokens_in_source=tokens if tokens is not None and many else None,
        budget_minutes=budget_minutes,
        rollout=None if rollout is None else Path(rollout),
    )
    if layout is not None:
        return import_study(fmt, source, archive, opts, layout, agent=agent, task=task, rep=rep,
                            replace_existing=replace, manifests=manifests, data=data,
                            on_run=on_run).to_dict()  # fmt: skip
    if many:
        return import_fmlbench_results(source, archive, opts, agent=agent, task=task,
                                       first_rep=rep or 0, replace_existing=replace,
                                       manifests=manifests, data=data,
                                       on_run=on_run).to_dict()  # fmt: skip
    if not agent:
        raise AutomdError("--agent is required", code="import.options_invalid",
                          fix="pass --agent NAME")  # fmt: skip
    return import_source(
        fmt, source, archive, opts, replace_existing=replace, manifests=manifests, data=data
    ).to_dict()
