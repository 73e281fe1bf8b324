"""FML-bench's whole ``results/`` tree in one import: every run, agent and task from the path.

FML-bench's harness writes each run to ``<output_dir>/<agent>/<task>/<run>/`` (the agents'
``parent_workspace``), ``<run>`` being the start time ``YYYYmmdd_HHMMSS`` or, for autoresearch,
AI-Scientist-v2, OpenEvolve, The AI Scientist and AdaptiveSearch, ``YYYYmmdd_HHMMSS_<uuid8>``.
``automd import fmlbench RESULTS --archive DEST`` imports every run directory that holds a
``summary.json``: the agent and the task are the folder names, the repetition is the run's
position among its task's runs in name (= start time) order, plus ``--rep``. Folders FML-bench's
own ``compute_agent_metrics.py`` sets aside (names starting with ``_`` or ending in
``_deprecated``) and folders without ``summary.json`` (AI-Scientist-v2 writes its final test into
a sibling folder of the run) are listed as skipped, never imported. Each run is imported on its
own (:func:`~.study.import_sources`): one that fails writes nothing and does not stop the others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from automd_analysis.archive.safe import NAME_PATTERN
from automd_analysis.docstrings import docs_reference, fill_doc
from automd_analysis.importers._common import ImportOptions
from automd_analysis.importers.fmlbench import SUMMARY
from automd_analysis.importers.study import (
    ARCHIVE_DEST,
    STUDY_RUN_OPTIONS,
    StudyReport,
    StudyRun,
    StudySource,
    import_sources,
    list_entries,
)

__all__ = ["RESULTS_LAYOUT", "FmlbenchTree", "find_fmlbench_runs", "import_fmlbench_results"]

#: How the study report names the layout of a results tree.
RESULTS_LAYOUT = "{agent}/{task}/<run>"


@dataclass(frozen=True)
class FmlbenchTree:
    """The run directories of a results tree, and the entries passed over with the reason."""

    sources: list[StudySource]
    skipped: list[tuple[str, str]]


def _set_aside(name: str) -> bool:
    """Folders FML-bench's ``compute_agent_metrics.py`` does not read (``is_run_candidate``)."""
    return name.startswith("_") or name.endswith("_deprecated")


def _dirs(path: Path, rel: str, cap: int, skipped: list, *,
          names: bool = True) -> list[tuple[str, str]]:  # fmt: skip
    """``(name, rel)`` of the sub-folders of ``path``; symlinks are skipped, and (``names``)
    folders whose name an archive cannot hold (agent and task names)."""
    out = []
    for name, kind in list_entries(path, cap):
        child = f"{rel}/{name}" if rel else name
        if kind == "link":
            skipped.append((child, "a symlink"))
        elif kind == "dir" and names and not NAME_PATTERN.match(name):
            skipped.append((child, "its name is not allowed in an archive"))
        elif kind == "dir":
            out.append((name, child))
    return out


def find_fmlbench_runs(root: str | Path, max_entries: int = 200_000, *, agent: str | None = None,
                       task: str | None = None, first_rep: int = 0) -> FmlbenchTree:  # fmt: skip
    """The run directories of FML-bench's results tree ``root``.

    Parameters
    ----------
    root : str or Path
        ``<output_dir>`` of FML-bench (``results/``): ``<agent>/<task>/<run>/summary.json``.
    max_entries : int
        Cap on the entries of one folder (``import.too_large`` above it).
    agent, task : str, optional
        Keep only this agent's / task's runs.
    first_rep : int, default 0
        Repetition of each task's first run.

    Returns
    -------
    FmlbenchTree
        ``sources`` sorted by path, each with ``{"agent", "task", "rep"}``; ``skipped``: the
        ``(path, why)`` of folders that are not imported (set aside, no ``summary.json``,
        symlinks, names an archive cannot hold).

    See Also
    --------
    import_fmlbench_results

    References
    ----------
    FML-bench (qrzou/FML-bench): ``agents/*/agent.py`` (``parent_workspace``),
    ``compute_agent_metrics.py`` (``is_run_candidate``).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for run in ("20260601_101500_0a1b2c3d", "20260602_090000_1b2c3d4e", "20260603_120000"):
    ...     (root / "autoresearch" / "Causality_causalml" / run).mkdir(parents=True)
    >>> for run in ("20260601_101500_0a1b2c3d", "20260602_090000_1b2c3d4e"):
    ...     _ = (root / "autoresearch" / "Causality_causalml" / run / "summary.json").write_text("{}")
    >>> tree = find_fmlbench_runs(root)
    >>> [(s.values["task"], s.values["rep"]) for s in tree.sources]
    [('Causality_causalml', '0'), ('Causality_causalml', '1')]
    >>> tree.skipped[0][1]
    'no summary.json (e.g. the final-test folder AI-Scientist-v2 writes beside its run)'
    """
    root = Path(root)
    sources: list[StudySource] = []
    skipped: list[tuple[str, str]] = []
    for agent_name, agent_rel in _dirs(root, "", max_entries, skipped):
        if agent is not None and agent_name != agent:
            continue
        for task_name, task_rel in _dirs(root / agent_rel, agent_rel, max_entries, skipped):
            if task is not None and task_name != task:
                continue
            rep = first_rep
            for run_name, run_rel in _dirs(root / task_rel, task_rel, max_entries, skipped,
                                           names=False):  # fmt: skip
                names = {n for n, _ in list_entries(root / run_rel, max_entries)}
                if _set_aside(run_name):
                    skipped.append((run_rel, "set aside (FML-bench's own scoring skips it)"))
                elif SUMMARY not in names:
                    skipped.append((run_rel, "no summary.json (e.g. the final-test folder "
                                             "AI-Scientist-v2 writes beside its run)"))  # fmt: skip
                else:
                    values = {"agent": agent_name, "task": task_name, "rep": str(rep)}
                    sources.append(StudySource(run_rel, root / run_rel, values))
                    rep += 1
    return FmlbenchTree(sources, skipped)


def is_results_tree(root: str | Path, max_entries: int = 200_000) -> bool:
    """Whether ``root`` is a results tree: no ``summary.json`` of its own, and at least one
    ``<agent>/<task>/<run>/summary.json`` below it."""
    root = Path(root)
    if not root.is_dir() or root.is_symlink() or (root / SUMMARY).exists():
        return False
    return bool(find_fmlbench_runs(root, max_entries).sources)


@fill_doc(
    references=docs_reference("importing.md", "FML-bench's whole results tree"),
    archive_dest=ARCHIVE_DEST,
    study_run_options=STUDY_RUN_OPTIONS,
)
def import_fmlbench_results(
    root: str | Path,
    archive: str | Path,
    opts: ImportOptions,
    *,
    agent: str | None = None,
    task: str | None = None,
    first_rep: int = 0,
    replace_existing: bool = False,
    manifests: str | Path | None = None,
    data: str | Path | None = None,
    on_run: Callable[[int, int, StudyRun], None] | None = None,
) -> StudyReport:
    """Import every run of FML-bench's results tree ``root`` into ``archive``.

    A run's agent and task are its folder names, and its repetition is its position among its
    task's runs in start-time order, plus ``first_rep``. A task without a manifest is imported as a
    process-only task (docs/importing.md).

    Parameters
    ----------
    root : str or Path
        FML-bench's ``<output_dir>`` (``results/``).
    {archive_dest}
    opts : ImportOptions
        Options shared by every run (``agent``, ``task`` and ``rep`` come from the tree).
    agent, task : str, optional
        Import only this agent's / task's runs.
    first_rep : int, default 0
        Repetition of each task's first run (``--rep``).
    {study_run_options}

    Returns
    -------
    StudyReport
        One entry per run directory; ``skipped`` lists the folders passed over and why;
        ``exit_code`` 0 (all imported), 1 (some failed), 2 (none).

    See Also
    --------
    find_fmlbench_runs, automd_analysis.importers.study.import_study

    {references}

    Examples
    --------
    >>> import tempfile, pathlib
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> run = root / "aide" / "Causality_causalml" / "20260601_101500"
    >>> run.mkdir(parents=True)
    >>> _ = (run / "summary.json").write_text("[]")
    >>> study = import_fmlbench_results(root, root.parent / "archive", ImportOptions(agent=""))
    >>> study.exit_code, study.runs[0].error.code
    (2, 'import.malformed')
    """
    tree = find_fmlbench_runs(root, opts.limits.max_entries, agent=agent, task=task,
                              first_rep=first_rep)  # fmt: skip
    report = StudyReport("fmlbench", Path(root).resolve(), RESULTS_LAYOUT, Path(archive),
                         skipped=tree.skipped)  # fmt: skip
    return import_sources(report, tree.sources, opts, replace_existing=replace_existing,
                          manifests=manifests, data=data, on_run=on_run)  # fmt: skip
