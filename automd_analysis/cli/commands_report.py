"""``automd regenerate``: archive -> score store -> every report notebook -> HTML report site.

The command is a thin wrapper around :func:`regenerate_report`, which chains the public pieces in
the one direction data flows: the scoring engine (incremental: an unchanged archive does no metric
work), the masking test of the real-time rule for archives whose runs the toolkit can re-run
(:func:`automd_analysis.masking_step.run_masking_step`, cached by content),
:func:`automd_analysis.report.execute.execute_notebooks` (papermill, ``--jobs`` at a time) and
:func:`automd_analysis.report.site.render_site` (HTML without code + ``index.html``).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

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
from automd_analysis.tasks import REPO_ROOT

if TYPE_CHECKING:
    from automd_analysis.report.site import StoreSummary

__all__ = [
    "DEFAULT_NOTEBOOKS",
    "EMBEDDING_BACKENDS",
    "REPORT_MARKER",
    "RegenerateResult",
    "regenerate_report",
]

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
    masking : MaskingStepSummary or None
        What the masking step did (``None`` when it did not run).
    notes : list of str
        Pipeline notes shown on the index (e.g. why the masking test did not run).
    """

    index: Path
    scores_dir: Path
    notebooks: list[NotebookResult]
    summary: StoreSummary
    scoring: object | None = None
    masking: object | None = None
    notes: tuple[str, ...] = ()


#: Embedding backends notebook 07 accepts.
EMBEDDING_BACKENDS = ("auto", "minilm", "hashing")


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
    from automd_analysis.report.site import SUBDIRS  # bleach/nbformat: slow imports

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


def _masking_step(
    meta,
    archive: Path,
    store,
    scores_dir: Path,
    *,
    enabled: bool | None,
    supplied: Path | None,
    seed: int,
    data: Path | None,
    manifests: Path | None,
    jobs: int,
    progress: bool,
) -> tuple[object | None, str]:
    """Run the masking test when the archive's runs can be re-run; return (summary, note).

    Never raises for the test itself: a failure becomes the note (and a message on stderr), so
    the rest of the report is still built.
    """
    from automd_analysis.masking_step import is_rerunnable, run_masking_step

    if supplied is not None:
        return None, f"masking test: results supplied in {supplied.name} (not re-run)"
    if enabled is False:
        return None, "masking test: not run (--no-masking)"
    if not is_rerunnable(meta.provenance):
        return None, (
            "masking test: not run - the archive was not built by `automd demo archive`, and "
            "archive code is never executed (supply results with --masking-results)"
        )
    try:
        summary = run_masking_step(
            archive,
            store,
            scores_dir,
            seed=seed,
            experiment=meta.roles["main"],
            data=data,
            manifests=manifests,
            jobs=jobs,
            progress=progress,
        )
    except AutomdError as exc:
        print(f"automd: masking test failed: {exc}", file=sys.stderr)
        return None, f"masking test: failed ({exc.message})"
    return summary, summary.describe()


def _embedding_step(
    archive: Path,
    store,
    experiment: str,
    backend: str,
    cache_dir: Path,
    progress: bool,
) -> str:
    """Embed the code of every version of the experiment's agent runs into ``cache_dir``.

    Notebook 07's exploration metrics then read the vectors from the cache, so the slow part (the
    MiniLM backend embeds a few scripts per second) runs here, with a progress bar and without a
    notebook cell timeout. Returns a note for the index; a failure becomes the note (the notebook
    will report the same problem).
    """
    from tqdm.auto import tqdm

    from automd_analysis.analysis.embeddings import embed_code
    from automd_analysis.analysis.process import read_archive_code

    runs = store.runs
    wanted = runs.loc[(runs["experiment"] == experiment) & ~runs["reference"], "run_id"]
    try:
        code = read_archive_code(archive, run_ids=sorted(wanted))
        texts = sorted({text for versions in code.values() for text in versions.values()})
        name = None
        chunks = [texts[i : i + 64] for i in range(0, len(texts), 64)]
        for chunk in tqdm(chunks, desc="code embeddings", unit="batch", disable=not progress):
            _, name = embed_code(chunk, backend=backend, cache_dir=cache_dir)
    except AutomdError as exc:
        print(f"automd: code embeddings failed: {exc}", file=sys.stderr)
        return f"code embeddings: failed ({exc.message})"
    if name is None:
        return "code embeddings: the archive holds no code of agent runs"
    return f"code embeddings: {len(texts)} distinct scripts, backend {name}"


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
    masking: bool | None = None,
    masking_results: str | Path | None = None,
    embedding_backend: str = "auto",
    embedding_cache: str | Path | None = None,
) -> RegenerateResult:
    """Regenerate every table, figure and HTML page of the report from a runs archive.

    Steps: (1) score the archive into ``scores`` (incremental; skipped with ``score=False``);
    (2) load the score store (a malformed store fails here, before any notebook runs); (3) for an
    archive built by ``automd demo archive`` (``archive.yaml`` provenance), run the masking test of
    the real-time rule into ``<scores>/masking.parquet`` (cached by content; other archives are
    skipped with a note, their code is never executed), and embed the code of the main
    experiment's agent versions into the embedding cache (notebook 07 reads it); (4) execute every
    notebook of
    ``notebooks`` with papermill, injecting the parameters below - a notebook whose declared
    experiment roles (``metadata.automd.requires``) have no runs in the store is skipped and
    listed as such; (5) render the HTML pages and ``OUT/index.html``; (6) raise if a notebook
    failed (after rendering the others).

    Parameters offered to the notebooks (each receives those its ``parameters`` cell declares):
    ``archive``, ``scores_dir``, ``data_root``, ``manifests_dir``, ``output_dir`` (absolute paths or
    ``None``), ``main_experiment``, ``objectives_experiment``, ``llm_experiment`` (the archive's
    experiment roles), ``seed``, and for notebook 07 ``embedding_backend``, ``embedding_cache`` and
    ``masking_results``.

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
    masking : bool or None
        Run the masking step: ``None`` (default) when the archive is re-runnable, ``False`` never.
    masking_results : path, optional
        A masking-results file produced elsewhere (CSV/Parquet, docs/tables.md); the step is then
        not run and notebook 07 reads this file.
    embedding_backend : {"auto", "minilm", "hashing"}
        Code-embedding backend of notebook 07's exploration metrics.
    embedding_cache : path, optional
        Embedding cache directory (default: ``<scores>/embeddings``).

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
    from automd_analysis.report.site import render_site, summarise_store

    if embedding_backend not in EMBEDDING_BACKENDS:
        raise AutomdError(
            f"unknown embedding backend {embedding_backend!r}",
            location="--embedding-backend",
            code="usage",
            fix=f"use one of {', '.join(EMBEDDING_BACKENDS)}",
        )
    meta = open_archive(archive).meta  # reads archive.yaml only; ArchiveError if missing/invalid
    supplied = Path(masking_results).resolve() if masking_results is not None else None
    if supplied is not None and not supplied.is_file():
        raise AutomdError(
            "masking results file not found",
            path=supplied,
            location="--masking-results",
            code="masking.results_missing",
            fix="pass the CSV/Parquet file written by the masking test (docs/tables.md)",
        )
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
    cache_dir = (
        Path(embedding_cache).resolve()
        if embedding_cache is not None
        else scores_dir / "embeddings"
    )
    masking_summary, masking_note = _masking_step(
        meta,
        archive,
        store,
        scores_dir,
        enabled=masking,
        supplied=supplied,
        seed=seed,
        data=data_dir,
        manifests=manifest_dir,
        jobs=jobs,
        progress=progress,
    )

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
        "embedding_backend": embedding_backend,
        "embedding_cache": str(cache_dir),
        "masking_results": None if supplied is None else str(supplied),
    }
    embedding_note = _embedding_step(
        archive, store, meta.roles["main"], embedding_backend, cache_dir, progress
    )
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
    notes = (masking_note, embedding_note)
    index = render_site(out, results, summary, notes=notes)
    raise_for_failures(results)
    return RegenerateResult(
        index=index,
        scores_dir=scores_dir,
        notebooks=results,
        summary=summary,
        scoring=scoring,
        masking=masking_summary,
        notes=notes,
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
    no_masking: bool = typer.Option(
        False,
        "--no-masking",
        help="Do not run the masking test (it runs only for archives built by `automd demo "
        "archive`).",
    ),
    masking_results: Path | None = typer.Option(
        None,
        "--masking-results",
        help="Masking-test results produced elsewhere (CSV/Parquet) for notebook 07.",
    ),
    embedding_backend: str = typer.Option(
        "auto", "--embedding-backend", help="Code embeddings of notebook 07: auto, minilm, hashing."
    ),
    embedding_cache: Path | None = typer.Option(
        None, "--embedding-cache", help="Embedding cache directory (default: SCORES/embeddings)."
    ),
) -> None:
    """Score ARCHIVE, run every report notebook and render the HTML report (OUT/index.html).

    For archives built by `automd demo archive` the masking test of the real-time rule (paper
    App. G) runs before the notebooks (results cached in SCORES/masking.parquet).
    """
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
        masking=False if no_masking else None,
        masking_results=masking_results,
        embedding_backend=embedding_backend,
        embedding_cache=embedding_cache,
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
    for note in result.notes:
        typer.echo(note[0].upper() + note[1:])
    for nb in result.notebooks:
        if nb.skipped is not None:
            typer.echo(f"Skipped {nb.source.name}: {nb.skipped}")
    typer.echo(
        f"Report for archive {s.archive!r} (scorer {s.scorer_version}; {s.n_runs} runs, "
        f"{s.n_valid} valid): {sum(nb.ok for nb in result.notebooks)} notebooks -> {result.index}"
    )
