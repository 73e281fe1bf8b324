"""A report notebook's session: its parameters resolved, the score store loaded, its inputs wired.

A report notebook's first code cell holds its parameters (papermill ``parameters`` tag)::

    archive = "runs_archive/demo"   # relative paths are relative to the repository root
    scores_dir = None               # default: scores/<archive name>
    data_root = None
    manifests_dir = None
    output_dir = None               # default: build/notebooks/<notebook name>
    main_experiment = "main"
    objectives_experiment = "objectives"
    llm_experiment = "llm"
    seed = 0

and its second calls :func:`open_report` with them. Paths are resolved by the workspace rules
(:mod:`automd_analysis.archive.workspace`): relative ones against the repository root, not the
working directory, so the same defaults work in JupyterLab (working directory ``notebooks/``),
under papermill/``automd regenerate`` (absolute paths injected) and under nbval (working directory
``tests/nbval/``). A notebook run by hand (JupyterLab, papermill without ``output_dir``) writes its
tables and figures to its own folder ``build/notebooks/<notebook>``, never into the report
directory whose HTML pages only ``automd regenerate`` rebuilds, and says where
(:meth:`NotebookReport.where_written`).

The session is the application's part of a notebook: the folders (workspace), the score store,
the masking-test results and the code-embedding cache. What the notebook publishes goes through
:class:`~automd_analysis.report.notebook.Report` (tables and figures into files and displays).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from automd_analysis.analysis import process
from automd_analysis.analysis.store import code_problems, load_store
from automd_analysis.archive.workspace import Workspace, open_workspace
from automd_analysis.masking.results import MASKING_FILE, read_masking_results
from automd_analysis.report.disclosure import report_disclosure
from automd_analysis.report.notebook import MaskingResults, Report

__all__ = ["NotebookReport", "open_report"]


@dataclass(frozen=True)
class NotebookReport(Report):
    """A :class:`~automd_analysis.report.notebook.Report` opened by a notebook: it also knows its
    folders, so that later paths (parameters of :meth:`masking_results`, :meth:`process_metrics`)
    are resolved by the same rules.

    Attributes
    ----------
    hand_run : bool
        ``output_dir`` was not given: the notebook writes to its own folder
        (:meth:`automd_analysis.archive.workspace.Workspace.hand_run_dir`, :meth:`where_written`).
    workspace : Workspace or None
        Where the report's folders are; ``None``: the repository's default workspace.
    """

    hand_run: bool = False
    workspace: Workspace | None = None

    def where_written(self):
        """A note saying where this notebook wrote its tables and figures, when it chose the
        folder itself (run by hand, ``output_dir`` not given); ``None`` otherwise (``automd
        regenerate`` passes the report folder and rebuilds the HTML pages itself)."""
        if not self.hand_run:
            return None
        from IPython.display import Markdown

        where, root = self.output_dir, self._workspace().root
        if where.is_relative_to(root):
            where = where.relative_to(root)
        return Markdown(
            f"**Tables and figures of this run are written to `{where}/`** (`tables/`, "
            "`figures/`), not to the HTML report: `automd regenerate` rebuilds the report pages. "
            "Set `output_dir` in the parameters cell to write elsewhere."
        )

    def masking_results(self, path: str | Path | None = None) -> MaskingResults:
        """The masking-test results of this archive (paper App. G), if any.

        ``path`` (a parameter of notebook 07; relative to the repository root) defaults to
        ``<scores_dir>/masking.parquet``, which ``automd masking run`` (and ``automd regenerate`` for
        re-runnable archives) writes. A missing default file is not an error (the result says the
        test was not run); a missing explicitly given file, or a malformed one, raises.

        Raises
        ------
        MaskingResultsError
            The given file does not exist, or a file is malformed (names the column and rows).
        """
        given = self._workspace().resolve(path)
        target = given if given is not None else self.scores_dir / MASKING_FILE
        frame = read_masking_results(target, missing_ok=given is None)
        return MaskingResults(frame=frame, path=target)

    def process_metrics(
        self,
        *,
        experiment: str,
        backend: str = "auto",
        embedding_cache: str | Path | None = None,
    ) -> pd.DataFrame:
        """FML-bench process metrics of every non-baseline run of ``experiment``
        (:func:`automd_analysis.analysis.process.process_metrics`).

        Each version's code is read from the score store (the scorer published it, read from the
        archive with the bounded, read-only reader; never executed) and embedded with
        ``backend``; vectors are cached in ``embedding_cache`` (relative to the repository root;
        default ``<scores_dir>/embeddings``). Code files the scorer could not read (e.g. above
        the 1 MiB limit) are left out of their version and listed in
        ``result.attrs["code_problems"]`` (records ``run_id, version, file, code, message``: plain
        values, as pandas compares ``attrs`` when it combines frames).
        """
        cache = self._workspace().resolve(embedding_cache) or self.scores_dir / "embeddings"
        metrics = process.process_metrics(
            self.store, backend=backend, embedding_cache=cache, experiment=experiment
        )
        problems = code_problems(self.store, metrics["run_id"])
        metrics.attrs["code_problems"] = problems.to_dict("records")
        return metrics

    def _workspace(self) -> Workspace:
        return self.workspace or open_workspace(scores=self.scores_dir)


def open_report(
    *,
    archive: str | Path,
    scores_dir: str | Path | None = None,
    output_dir: str | Path | None = None,
    data_root: str | Path | None = None,
    manifests_dir: str | Path | None = None,
    seed: int = 0,
    min_cell: int | None = None,
    notebook: str = "notebook",
    root: str | Path | None = None,
) -> Report:
    """Resolve a notebook's parameters and load the score store.

    Parameters
    ----------
    archive : path
        The runs archive (its ``archive.yaml`` is read only for the name of the default store).
    scores_dir : path, optional
        Score store; default ``<root>/scores/<archive name>``.
    output_dir : path, optional
        Report directory; ``tables/`` and ``figures/`` are created in it. ``None`` (a notebook
        run by hand): ``<root>/build/notebooks/<notebook>``, so a hand run never changes the
        tables behind a published report.
    data_root, manifests_dir : path, optional
        As for ``automd score`` (only recorded: the report reads the score store alone).
    seed : int
    min_cell : int, optional
        Small-cell threshold (:func:`~automd_analysis.report.disclosure.disclosure_policy`):
        ``None`` suppresses counts below 11 of credentialed and DUA tasks only; an int applies to
        every task (``0`` disables).
    notebook : str
        The calling notebook's name (its folder when ``output_dir`` is ``None``); a plain name.
    root : path, optional
        The project directory relative paths are taken from (default: the repository).

    Paths are resolved by :func:`automd_analysis.archive.workspace.open_workspace`.

    Raises
    ------
    ArchiveError
        ``scores_dir`` is not given and the archive or its ``archive.yaml`` is missing or invalid.
    ScoreStoreError
        The score store is missing or malformed (the message says how to build it).
    """
    hand_run = output_dir is None
    if hand_run and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.\-]*", str(notebook)):
        raise ValueError(f"notebook name {notebook!r} must be a plain name")
    ws = open_workspace(
        archive,
        scores=scores_dir,
        data=data_root,
        manifests=manifests_dir,
        out=output_dir,
        root=root,
    )
    out = ws.hand_run_dir(notebook) if hand_run else ws.out
    for sub in ("tables", "figures"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    store = load_store(ws.scores)
    name = ws.archive_name or str(store.meta.get("archive") or ws.archive.name)
    return NotebookReport(
        archive=ws.archive,
        archive_name=name,
        scores_dir=ws.scores,
        output_dir=out,
        manifests_dir=ws.resolve(manifests_dir),
        data_root=ws.resolve(data_root),
        seed=int(seed),
        store=store,
        disclosure=report_disclosure(store, min_cell),
        hand_run=hand_run,
        workspace=ws,
    )
