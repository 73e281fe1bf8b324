"""``automd regenerate``: archive -> score store -> every report notebook -> HTML report site.

The command is a thin wrapper around :func:`regenerate_report`, which chains the public pieces in
the one direction data flows: the scoring engine (incremental: an unchanged archive does no metric
work), :func:`automd_analysis.report.execute.execute_notebooks` (papermill, ``--jobs`` at a time)
and :func:`automd_analysis.report.site.render_site` (HTML without code + ``index.html``).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import typer

from automd_analysis.cli._apps import DataOpt, ManifestsOpt, app
from automd_analysis.errors import AutomdError
from automd_analysis.report.execute import (
    DEFAULT_CELL_TIMEOUT,
    NotebookResult,
    check_notebook,
    discover_notebooks,
    execute_notebooks,
    missing_requirements,
    raise_for_failures,
)
from automd_analysis.report.site import SUBDIRS, StoreSummary, render_site, summarise_store
from automd_analysis.tasks import REPO_ROOT

__all__ = ["DEFAULT_NOTEBOOKS", "REPORT_MARKER", "RegenerateResult", "regenerate_report"]

#: The report notebooks shipped with the repository.
DEFAULT_NOTEBOOKS = REPO_ROOT / "notebooks"
#: File marking a directory as written by ``automd regenerate`` (so it may be cleaned and rebuilt).
REPORT_MARKER = ".automd-report"


@dataclass(frozen=True)
class RegenerateResult:
    """What :func:`regenerate_report` produced.

    Attributes
    ----------
    index : Path
        ``OUT/index.html``.
    scores_dir : Path
        The score store the notebooks read.
    notebooks : list of NotebookResult
        One per notebook, in report order (skipped ones included).
    summary : StoreSummary
    scoring : ScoreSummary or None
        What scoring did (``None`` with ``score=False``).
    """

    index: Path
    scores_dir: Path
    notebooks: list[NotebookResult]
    summary: StoreSummary
    scoring: object | None = None


def _prepare_out_dir(out: Path) -> None:
    """Create ``out`` or clear a previous report in it; refuse to touch any other directory.

    A directory is a previous report when it holds :data:`REPORT_MARKER`. Only the report's own
    parts (``index.html`` and the :data:`~automd_analysis.report.site.SUBDIRS`) are removed.
    """
    if out.exists() and not out.is_dir():
        raise AutomdError(
            "--out exists and is not a directory",
            path=out,
            code="report.bad_out",
            fix="choose a new directory for the report",
        )
    if out.is_dir() and any(out.iterdir()) and not (out / REPORT_MARKER).is_file():
        raise AutomdError(
            "--out is a non-empty directory that was not written by `automd regenerate`; "
            "refusing to overwrite it",
            path=out,
            code="report.bad_out",
            fix="choose an empty or new directory (or a previous report directory)",
        )
    out.mkdir(parents=True, exist_ok=True)
    (out / REPORT_MARKER).write_text("written by automd regenerate\n", encoding="utf-8")
    (out / "index.html").unlink(missing_ok=True)
    for sub in SUBDIRS:
        shutil.rmtree(out / sub, ignore_errors=True)
        (out / sub).mkdir()


def _score(
    archive: Path,
    scores_dir: Path,
    data: Path | None,
    manifests: Path | None,
    jobs: int,
    progress: bool,
):
    """Score the archive incrementally into ``scores_dir`` with the scoring engine."""
    from automd_analysis.scoring import score_archive

    return score_archive(
        archive, scores_dir, data=data, manifests=manifests, jobs=jobs, progress=progress
    )


def regenerate_report(
    archive: str | Path,
    *,
    out: str | Path = "reports",
    scores: str | Path | None = None,
    data: str | Path | None = None,
    manifests: str | Path | None = None,
    jobs: int = 1,
    notebooks: str | Path | None = None,
    seed: int = 0,
    timeout: float | None = DEFAULT_CELL_TIMEOUT,
    score: bool = True,
    progress: bool = False,
) -> RegenerateResult:
    """Regenerate every table, figure and HTML page of the report from a runs archive.

    Steps: (1) score the archive into ``scores`` (incremental; skipped with ``score=False``);
    (2) load the score store (a malformed store fails here, before any notebook runs); (3) execute
    every notebook of ``notebooks`` with papermill, injecting the parameters below - a notebook
    whose declared experiment roles (``metadata.automd.requires``) have no runs in the store is
    skipped and listed as such; (4) render the HTML pages and ``OUT/index.html``; (5) raise if a
    notebook failed (after rendering the others).

    Injected notebook parameters (every report notebook declares them in its ``parameters`` cell):
    ``archive``, ``scores_dir``, ``data_root``, ``manifests_dir``, ``output_dir`` (absolute paths or
    ``None``), ``main_experiment``, ``objectives_experiment``, ``llm_experiment`` (the archive's
    experiment roles) and ``seed``.

    Parameters
    ----------
    archive : path
        The runs archive (directory holding ``archive.yaml``).
    out : path
        Report directory; created, or cleared if it holds a previous report (see
        :func:`_prepare_out_dir`); any other non-empty directory is refused.
    scores : path, optional
        Score-store directory (default ``scores/<archive name>``, as ``automd score``).
    data, manifests : path, optional
        Data root and manifest directory for scoring (defaults: see :mod:`automd_analysis.tasks`).
    jobs : int
        Scoring processes and notebooks executed concurrently.
    notebooks : path, optional
        Notebook directory (default: the repository's ``notebooks/``).
    seed : int
        Seed handed to every notebook (each random step derives its generator from it).
    timeout : float or None
        Per-cell timeout in seconds.
    score : bool
        ``False`` uses the score store as it is (it must exist).
    progress : bool
        Show progress bars.

    Returns
    -------
    RegenerateResult

    Raises
    ------
    AutomdError
        Missing archive, unusable ``out``, scoring or store errors, and
        :class:`~automd_analysis.report.execute.NotebookExecutionError` naming the failing
        notebook(s), cell(s) and error(s).
    """
    from automd_analysis.analysis.store import load_store
    from automd_analysis.archive import open_archive

    meta = open_archive(archive).meta  # reads archive.yaml only; ArchiveError if missing/invalid
    archive = Path(archive).resolve()
    scores_dir = Path(scores if scores is not None else Path("scores") / meta.name).resolve()
    out = Path(out).resolve()
    notebook_dir = Path(notebooks if notebooks is not None else DEFAULT_NOTEBOOKS).resolve()
    data_dir = Path(data).resolve() if data is not None else None
    manifest_dir = Path(manifests).resolve() if manifests is not None else None
    paths = discover_notebooks(notebook_dir)  # fail early, before any work, on a bad directory

    scoring = _score(archive, scores_dir, data_dir, manifest_dir, jobs, progress) if score else None
    store = load_store(scores_dir)
    summary = summarise_store(store, description=meta.description)

    _prepare_out_dir(out)
    parameters = {
        "archive": str(archive),
        "scores_dir": str(scores_dir),
        "data_root": None if data_dir is None else str(data_dir),
        "manifests_dir": None if manifest_dir is None else str(manifest_dir),
        "output_dir": str(out),
        "main_experiment": meta.roles["main"],
        "objectives_experiment": meta.roles["objectives"],
        "llm_experiment": meta.roles["llm"],
        "seed": int(seed),
    }
    present = set(store.experiments)
    available = {role: exp in present for role, exp in meta.roles.items()}
    to_run, skipped = [], {}
    for path in paths:
        unmet = missing_requirements(check_notebook(path), available)
        if unmet:
            names = ", ".join(f"{r} ({meta.roles.get(r, r)!r})" for r in unmet)
            skipped[path] = f"the score store has no runs of the experiment role(s) {names}"
        else:
            to_run.append(path)
    executed = iter(
        execute_notebooks(
            to_run, out / "notebooks", parameters, jobs=jobs, timeout=timeout, progress=progress
        )
    )
    results = [
        NotebookResult(p, out / "notebooks" / p.name, None, 0.0, skipped=skipped[p])
        if p in skipped
        else next(executed)
        for p in paths
    ]
    index = render_site(out, results, summary)
    raise_for_failures(results)
    return RegenerateResult(
        index=index, scores_dir=scores_dir, notebooks=results, summary=summary, scoring=scoring
    )


@app.command("regenerate")
def regenerate_command(
    archive: Path = typer.Argument(..., help="Runs archive directory (holds archive.yaml)."),
    data: Path | None = DataOpt,
    manifests: Path | None = ManifestsOpt,
    out: Path = typer.Option(Path("reports"), "--out", help="Report directory."),
    jobs: int = typer.Option(
        2, "--jobs", "-j", min=1, help="Parallel scoring processes/notebooks."
    ),
    scores: Path | None = typer.Option(
        None, "--scores", help="Score-store directory (default: scores/<archive name>)."
    ),
    notebooks: Path | None = typer.Option(
        None, "--notebooks", help="Notebook directory (default: the repository's notebooks/)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed passed to every notebook."),
    timeout: float = typer.Option(
        DEFAULT_CELL_TIMEOUT, "--timeout", help="Per-cell timeout in seconds."
    ),
    no_score: bool = typer.Option(
        False, "--no-score", help="Use the score store as it is (do not re-score the archive)."
    ),
) -> None:
    """Score ARCHIVE, run every report notebook and render the HTML report (OUT/index.html)."""
    result = regenerate_report(
        archive,
        out=out,
        scores=scores,
        data=data,
        manifests=manifests,
        jobs=jobs,
        notebooks=notebooks,
        seed=seed,
        timeout=timeout,
        score=not no_score,
        progress=sys.stderr.isatty(),
    )
    s = result.summary
    if result.scoring is not None:
        sc = result.scoring
        typer.echo(
            f"Scored {sc.n_runs} runs ({sc.n_files} files; {sc.n_scored} scored, {sc.n_cached} "
            f"from cache) into {result.scores_dir}"
            + (
                f"; {sc.n_skipped_runs} runs skipped (see problems.parquet)"
                if sc.n_skipped_runs
                else ""
            )
        )
    for nb in result.notebooks:
        if nb.skipped is not None:
            typer.echo(f"Skipped {nb.source.name}: {nb.skipped}")
    typer.echo(
        f"Report for archive {s.archive!r} (scorer {s.scorer_version}; {s.n_runs} runs, "
        f"{s.n_valid} valid): {sum(nb.ok for nb in result.notebooks)} notebooks -> {result.index}"
    )
