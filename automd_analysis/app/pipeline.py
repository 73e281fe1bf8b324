"""The report pipeline: archive -> score store -> (masking results) -> embeddings -> notebooks -> HTML.

One typed configuration (:class:`RegenerateConfig`) and one function per stage, chained by
:func:`regenerate` in the single direction data flows. The command line (``automd regenerate``),
the tests and a notebook user call it the same way::

    from automd_analysis.app.pipeline import RegenerateConfig, regenerate

    result = regenerate(RegenerateConfig(archive="runs_archive/demo", out="reports"))

Stages (each reports itself through ``log``, e.g. on stderr):

1. :func:`score_stage` - the scoring engine, incremental (an unchanged archive does no metric work);
2. :func:`load_stage` - load and check the score store (a malformed store fails here); when the
   main experiment has no run in it (empty archive, unusable task data, no run of the main
   role), :func:`check_reportable` stops here, before anything of the report is written;
3. :func:`masking_stage` - masking results are *data*: a file supplied with ``masking_results``,
   else ``<scores>/masking.parquet`` if an earlier ``automd masking run`` wrote one. The test is
   re-run only when the configuration asks for it *and* allows code execution
   (``masking=True, allow_code_execution=True``), in the sandbox of
   :mod:`automd_analysis.masking.sandbox`; never because of anything the archive says;
4. :func:`embedding_stage` - code embeddings for notebook 07 (cached);
5. :func:`notebook_stage` - every notebook with papermill, each receiving only the parameters its
   ``parameters`` cell declares (unknown parameter names are refused before any work);
6. :func:`render_stage` - the HTML pages and ``OUT/index.html``; a failed notebook raises after
   the others are rendered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from automd_analysis._atomic import check_writable_dir
from automd_analysis.analysis.embeddings import embed_code
from automd_analysis.analysis.store import load_store, scored_experiments, skipped_runs
from automd_analysis.app.masking import run_masking
from automd_analysis.app.run_notebooks import (
    DEFAULT_CELL_TIMEOUT,
    NotebookJob,
    NotebookResult,
    check_notebook,
    declared_parameters,
    discover_notebooks,
    execute_jobs,
    missing_requirements,
    raise_for_failures,
    without_unmet_cells,
)
from automd_analysis.app.run_notebooks import notebook_parameters as select_parameters
from automd_analysis.app.stamps import (
    OUTPUT_DIRS,
    STATE_DIR,
    Stamp,
    check_stamp,
    notebook_inputs,
    notebook_key,
    publish_outputs,
    read_stamp,
    staging_dir,
    store_fingerprint,
    sweep,
)
from automd_analysis.archive import open_archive
from automd_analysis.archive.workspace import Workspace, open_workspace, resolve_path
from automd_analysis.errors import AutomdError
from automd_analysis.masking.results import MASKING_FILE, MaskingResultsError, read_masking_results
from automd_analysis.masking.step import describe_results
from automd_analysis.report.disclosure import report_disclosure
from automd_analysis.report.site import (
    provenance_line,
    render_page,
    render_site,
    summarise_store,
    synthetic_tasks,
)
from automd_analysis.scoring import checked_settings, score_archive
from automd_analysis.scoring.extra_metrics import user_metrics
from automd_analysis.tasks import REPO_ROOT
from automd_analysis.tasks import sha256_file as file_sha256

__all__ = [
    "DEFAULT_NOTEBOOKS",
    "EMBEDDING_BACKENDS",
    "REPORT_MARKER",
    "Pipeline",
    "RegenerateConfig",
    "RegenerateResult",
    "check_reportable",
    "default_workspace",
    "embedding_stage",
    "load_stage",
    "masking_stage",
    "notebook_stage",
    "prepare_out_dir",
    "regenerate",
    "render_stage",
    "score_stage",
]

#: The report notebooks shipped with the repository.
DEFAULT_NOTEBOOKS = REPO_ROOT / "notebooks"
#: File marking a directory as written by ``automd regenerate`` (so it may be cleaned and rebuilt).
REPORT_MARKER = ".automd-report"
#: Embedding backends notebook 07 accepts.
EMBEDDING_BACKENDS = ("auto", "minilm", "hashing")
#: Parameters the pipeline itself hands to the notebooks (user parameters may not override them),
#: each with what sets it instead.
PIPELINE_PARAMETERS = {
    "archive": "the ARCHIVE argument",
    "scores_dir": "--scores",
    "data_root": "--data",
    "manifests_dir": "--manifests",
    "output_dir": "--out",
    "main_experiment": "the `roles:` of archive.yaml",
    "objectives_experiment": "the `roles:` of archive.yaml",
    "llm_experiment": "the `roles:` of archive.yaml",
    "seed": "--seed",
    "embedding_backend": "--embedding-backend",
    "embedding_cache": "--embedding-cache",
    "masking_results": "--masking-results",
    "min_cell": "--min-cell",
    "n_bins": "--ece-bins",
}


@dataclass(frozen=True)
class RegenerateConfig:
    """Everything :func:`regenerate` needs.

    Attributes
    ----------
    archive : path
        The runs archive (directory holding ``archive.yaml``). Relative paths here are taken
        from the project root (:mod:`automd_analysis.archive.workspace`; the command line passes
        absolute ones).
    out : path, optional
        Report directory (default ``<root>/reports``); created, or updated if it holds a previous
        report (:func:`prepare_out_dir`); any other non-empty directory is refused.
    scores : path, optional
        Score-store directory (default ``<root>/scores/<archive name>``, as ``automd score``).
    data, manifests : path, optional
        Data root and manifest directory (defaults: see :mod:`automd_analysis.archive.workspace`).
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
    masking : bool
        Re-run the masking test of the real-time rule (paper App. G); requires
        ``allow_code_execution``.
    allow_code_execution : bool
        Consent to run archived code (only the masking test does, in a sandbox).
    rerunner : str
        Installed re-runner of the masking test (``"demo"`` for archives of ``automd demo``).
    masking_results : path, optional
        A masking-results file produced elsewhere (CSV/Parquet, docs/tables.md).
    embedding_backend : {"auto", "minilm", "hashing"}
    embedding_cache : path, optional
        Embedding cache directory (default: ``<scores>/embeddings``).
    min_cell : int, optional
        Small-cell threshold of published counts (see docs/security.md); ``None`` applies the
        default (11) to credentialed and data-use-agreement tasks only; an explicit value applies
        to every task, ``0`` disables suppression.
    bootstrap : int
        Bootstrap replicates per selected submission when scoring (intervals; 0 disables).
    version_bootstrap : int
        Replicates of an interval for every archived version too (``automd score
        --version-bootstrap``; 0: none, else 2 to ``bootstrap``).
    annotations : path, optional
        Output directory of ``automd annotate`` (codebook answers generated from the code).
    prefer_generated : bool
        Use the generated annotations even where the archive has its own.
    metrics : tuple of str
        User metrics (``module:attribute``; ``automd score --metric``) scored with the archive.
    ece_bins : int
        Equal-width bins of the ECE of binary and hourly tasks when scoring (``--ece-bins``);
        notebooks get it as their ``n_bins`` parameter.
    parameters : mapping
        Extra notebook parameters; every name must be declared by at least one notebook.
    """

    archive: str | Path
    out: str | Path | None = None
    scores: str | Path | None = None
    data: str | Path | None = None
    manifests: str | Path | None = None
    jobs: int = 1
    notebooks: str | Path | None = None
    seed: int = 0
    timeout: float | None = DEFAULT_CELL_TIMEOUT
    score: bool = True
    progress: bool = False
    masking: bool = False
    allow_code_execution: bool = False
    rerunner: str = "demo"
    masking_results: str | Path | None = None
    embedding_backend: str = "auto"
    embedding_cache: str | Path | None = None
    min_cell: int | None = None
    bootstrap: int = 1000
    version_bootstrap: int = 0
    annotations: str | Path | None = None
    prefer_generated: bool = False
    metrics: tuple[str, ...] = ()
    ece_bins: int = 10
    parameters: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RegenerateResult:
    """What :func:`regenerate` produced.

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
    notes : tuple of str
        Pipeline notes shown on the index (e.g. where masking results came from).
    """

    index: Path
    scores_dir: Path
    notebooks: list[NotebookResult]
    summary: Any
    scoring: object | None = None
    masking: object | None = None
    notes: tuple[str, ...] = ()


def _workspace_folder(name: str) -> property:
    """A read-only property: the folder ``name`` of the pipeline's workspace."""
    return property(lambda self: getattr(self.workspace, name))


@dataclass
class Pipeline:
    """Resolved paths and state shared by the stages (built by :func:`resolve`)."""

    config: RegenerateConfig
    meta: Any
    workspace: Workspace
    notebooks: dict[Path, Any]
    masking_results: Path | None
    embedding_cache: Path
    log: Callable[[str], None] = print

    @property
    def notebook_paths(self) -> list[Path]:
        return list(self.notebooks)

    archive = _workspace_folder("archive")
    scores_dir = _workspace_folder("scores")
    out = _workspace_folder("out")
    data = _workspace_folder("data")
    manifests = _workspace_folder("manifests")


def default_workspace(archive) -> Workspace:
    """The folders ``automd regenerate ARCHIVE`` uses when no other is given
    (:func:`~automd_analysis.archive.workspace.open_workspace`)."""
    return open_workspace(archive)


def _check_config(config: RegenerateConfig) -> None:
    if config.embedding_backend not in EMBEDDING_BACKENDS:
        raise AutomdError(
            f"unknown embedding backend {config.embedding_backend!r}",
            location="--embedding-backend",
            code="usage",
            fix=f"use one of {', '.join(EMBEDDING_BACKENDS)}",
        )
    if config.masking and not config.allow_code_execution:
        raise AutomdError(
            "the masking test re-runs archived code; it needs your explicit consent",
            location="--masking",
            code="masking.code_execution_not_allowed",
            fix="add --allow-code-execution (a limited sandbox: docs/security.md), or pass "
            "results of a test run elsewhere with --masking-results",
        )
    if config.masking and config.masking_results is not None:
        raise AutomdError(
            "--masking re-runs the test while --masking-results supplies its results",
            location="--masking-results",
            code="usage",
            fix="use one of the two",
        )
    if config.min_cell is not None and config.min_cell < 0:
        raise AutomdError(
            f"--min-cell must be 0 or more, got {config.min_cell}",
            location="--min-cell",
            code="usage",
            fix="e.g. --min-cell 11 (0 disables suppression)",
        )
    if config.score:  # bad scoring settings fail now, not after other work
        checked_settings(config.bootstrap, 0, config.ece_bins, config.version_bootstrap)
        if config.metrics:
            user_metrics(config.metrics)
    elif config.version_bootstrap:
        raise AutomdError(
            "--version-bootstrap asks for scoring, but --no-score uses the store as it is",
            location="--version-bootstrap",
            code="usage",
            fix="drop --no-score to re-score with version intervals, or drop --version-bootstrap",
        )


def _check_parameters(config: RegenerateConfig, notebooks: Mapping[Path, Any]) -> None:
    """Refuse user parameters that no notebook declares or that the pipeline sets itself."""
    declared: set[str] = set()
    for nb in notebooks.values():
        declared |= set(declared_parameters(nb) or ())
    for name in sorted(config.parameters):
        if name in PIPELINE_PARAMETERS:
            via = PIPELINE_PARAMETERS[name]
            raise AutomdError(
                f"notebook parameter {name!r} is fixed by the pipeline (set by {via})",
                location="--parameter",
                code="usage.parameter",
                fix=f"use {via}" if via.startswith("--") else f"change {via}",
            )
        if name not in declared:
            raise AutomdError(
                f"no notebook declares a parameter called {name!r}",
                location="--parameter",
                code="usage.parameter",
                fix=_parameter_fix(name, declared),
            )


def _parameter_fix(name: str, declared: set[str]) -> str:
    """The closest declared parameters (with the option that sets each the pipeline fixes), then
    the ones a user may set with ``-p``."""
    import difflib

    close = difflib.get_close_matches(name, sorted(declared), n=3)
    hints = [f"{c} (set by {PIPELINE_PARAMETERS[c]})" if c in PIPELINE_PARAMETERS else c
             for c in close]  # fmt: skip
    free = sorted(declared - set(PIPELINE_PARAMETERS))
    listing = (
        f"parameters you may set with -p: {', '.join(free)}"
        if free
        else "every parameter the notebooks declare is set by an option of automd regenerate"
    )
    return (f"did you mean {' or '.join(hints)}? " if hints else "") + listing


def resolve(config: RegenerateConfig, log: Callable[[str], None] = print) -> Pipeline:
    """Check the configuration and resolve every path, before any work is done.

    Raises
    ------
    AutomdError
        Bad options, a missing or invalid archive (``archive.yaml`` is read, nothing else), a
        missing masking-results file, a bad notebook directory, unknown notebook parameters.
    """
    _check_config(config)
    meta = open_archive(resolve_path(config.archive)).meta
    ws = open_workspace(
        config.archive,
        data=config.data,
        manifests=config.manifests,
        scores=config.scores,
        annotations=config.annotations,
        out=config.out,
        archive_name=meta.name,
    )
    check_out_dir(ws.out)
    if config.score or config.masking:
        check_writable_dir(ws.scores, "--scores", code="score_store.unwritable")
    supplied = ws.resolve(config.masking_results)
    if supplied is not None and not supplied.is_file():
        raise AutomdError(
            "masking results file not found",
            path=supplied,
            location="--masking-results",
            code="masking.results_missing",
            fix="pass the CSV/Parquet file written by the masking test (docs/tables.md)",
        )
    paths = discover_notebooks(ws.resolve(config.notebooks) or DEFAULT_NOTEBOOKS)
    notebooks = {path: check_notebook(path) for path in paths}
    _check_parameters(config, notebooks)
    return Pipeline(
        config=config,
        meta=meta,
        workspace=ws,
        notebooks=notebooks,
        masking_results=supplied,
        embedding_cache=ws.resolve(config.embedding_cache) or ws.embeddings,
        log=log,
    )


def check_out_dir(out: Path) -> None:
    """Refuse, before any scoring, an ``out`` that is a file, cannot be written, or is a
    non-empty directory that is not a previous report."""
    check_writable_dir(out, "--out", code="report.bad_out")
    if out.is_dir() and any(out.iterdir()) and not (out / REPORT_MARKER).is_file():
        raise AutomdError(
            "--out is a non-empty directory that was not written by `automd regenerate`; "
            "refusing to overwrite it",
            path=out,
            code="report.bad_out",
            fix="choose an empty or new directory (or a previous report directory)",
        )


def prepare_out_dir(out: Path) -> None:
    """Create ``out`` or reuse a previous report in it; refuse to touch any other directory.

    A directory is a previous report when it holds :data:`REPORT_MARKER`. Nothing of it is removed
    here: the notebook stage keeps the outputs of notebooks whose inputs did not change and
    :func:`~automd_analysis.app.stamps.sweep` removes everything no notebook owns.
    """
    check_out_dir(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / REPORT_MARKER).write_text("written by automd regenerate\n", encoding="utf-8")
    (out / "index.html").unlink(missing_ok=True)
    for sub in OUTPUT_DIRS:
        (out / sub).mkdir(exist_ok=True)


def score_stage(p: Pipeline):
    """Score the archive incrementally into the score store (``None`` when scoring is off)."""
    if not p.config.score:
        p.log("scoring: skipped (--no-score), using the score store as it is")
        return None
    p.log(f"scoring {p.archive} -> {p.scores_dir}")
    return score_archive(
        p.archive,
        p.scores_dir,
        data=p.data,
        manifests=p.manifests,
        jobs=p.config.jobs,
        progress=p.config.progress,
        bootstrap=p.config.bootstrap,
        version_bootstrap=p.config.version_bootstrap,
        annotations=p.workspace.annotations,
        prefer_generated=p.config.prefer_generated,
        extra_metrics=p.config.metrics,
        ece_bins=p.config.ece_bins,
    )


def load_stage(p: Pipeline):
    """Load and check the score store; return ``(store, summary)``."""
    store = load_store(p.scores_dir)
    return store, summarise_store(store, description=p.meta.description)


def _listed(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def check_reportable(p: Pipeline, store, scoring=None) -> None:
    """Stop after scoring when no meaningful report can be built: the main experiment has no run
    in the store (an empty archive, runs that could not be read, tasks whose manifest or data is
    missing, or no run of the experiment ``roles: main`` names). Runs that are not scorable here
    are reported (process metrics, times, tokens, selection), so they never stop it.

    Raises
    ------
    AutomdError
        ``report.nothing_to_report`` naming the input and the fix in one short paragraph (the
        scorer's own message when a task's manifest or data could not be used); nothing of the
        report has been written yet.
    """
    main = p.meta.roles["main"]
    if (store.runs["experiment"] == main).any():
        return
    errors = dict(scoring.data_errors) if scoring is not None else {}
    skipped = skipped_runs(store, main)
    if not errors and len(skipped):  # scored earlier (--no-score): the store's own record
        first = skipped.iloc[0]
        errors = {str(first["task"]): {"code": first["code"], "message": first["message"]}}
    if errors:
        first = next(iter(errors.values()))
        raise AutomdError(
            f"nothing to report: no run of experiment {main!r} could be scored; "
            f"{len(errors)} task(s) could not be used ({_listed(sorted(errors))}): "
            f"{first['message']}",
            path=first.get("path"),
            code="report.nothing_to_report",
            fix=first.get("fix") or "check the task manifests and data (automd tasks)",
        )
    others = sorted(set(store.runs["experiment"]))
    if others:
        raise AutomdError(
            f"nothing to report: the archive has no run of experiment {main!r} (the main role "
            f"of archive.yaml); it has runs of {_listed(others)}",
            path=p.archive / "archive.yaml",
            code="report.nothing_to_report",
            fix=f"name the main experiment in archive.yaml (roles: {{main: {others[0]}}}) or "
            f"add runs of {main!r}",
        )
    unreadable = len(store.problems) if store.problems is not None else 0
    raise AutomdError(
        "nothing to report: the archive holds no readable run"
        + (f" ({unreadable} problem(s) in problems.parquet)" if unreadable else ""),
        path=p.archive,
        code="report.nothing_to_report",
        fix="add runs (`automd import`, docs/importing.md; the layout: docs/archive.md), "
        "then run automd regenerate again",
    )


def masking_stage(p: Pipeline, store) -> tuple[object | None, str]:
    """Masking results as data, or the sandboxed test when asked for; return (summary, note).

    Never raises for the test itself: a failure becomes the note (and a log line), so the rest of
    the report is still built.
    """
    if p.masking_results is not None:
        return None, _read_results_note(
            p.masking_results, f"results supplied in {p.masking_results.name} (not re-run)"
        )
    if not p.config.masking:
        if (p.scores_dir / MASKING_FILE).is_file():
            return None, _read_results_note(
                p.scores_dir / MASKING_FILE,
                f"results of an earlier automd masking run, read from {MASKING_FILE} (not re-run)",
            )
        return None, (
            "masking test: not run - archive code is never executed unless you ask for it "
            "(automd regenerate --masking --allow-code-execution, or --masking-results FILE)"
        )
    try:
        run = run_masking(
            p.workspace,
            allow_code_execution=p.config.allow_code_execution,
            store=store,
            experiment=p.meta.roles["main"],
            rerunner=p.config.rerunner,
            seed=p.config.seed,
            jobs=p.config.jobs,
            progress=p.config.progress,
            log=p.log,
        )
    except AutomdError as exc:
        p.log(f"masking test failed: {exc}")
        return None, f"masking test: failed ({exc.message})"
    return run.summary, run.summary.describe() + f"; re-run isolation: {run.isolation}"


def _read_results_note(path: Path, source: str) -> str:
    """The index note of masking results read as data: what they found (the counts a re-run
    would give, :func:`~automd_analysis.masking.step.describe_results`) and where they came from;
    only the source when the file cannot be read (notebook 07 then says why)."""
    try:
        frame = read_masking_results(path)
    except MaskingResultsError:
        return f"masking test: {source}; the file could not be read (notebook 07 says why)"
    found = describe_results(frame)
    head, sep, isolation = found.partition("; re-run isolation: ")
    return f"{head}; {source}" + (f"; re-run isolation: {isolation}" if sep else "")


def embedding_stage(p: Pipeline, store) -> str:
    """Embed the code of every version of the main experiment's agent runs into the cache.

    Notebook 07's exploration metrics then read the vectors from the cache, so the slow part runs
    here, with a progress bar and without a notebook cell timeout. Returns a note for the index;
    a failure becomes the note (the notebook will report the same problem).
    """
    from tqdm.auto import tqdm

    runs = store.runs
    experiment = p.meta.roles["main"]
    wanted = runs.loc[(runs["experiment"] == experiment) & ~runs["reference"], "run_id"]
    p.log("code embeddings for notebook 07")
    try:
        code = store.code_texts(sorted(wanted))
        texts = sorted({text for versions in code.values() for text in versions.values()})
        name = None
        chunks = [texts[i : i + 64] for i in range(0, len(texts), 64)]
        for chunk in tqdm(chunks, desc="code embeddings", unit="batch",
                          disable=not p.config.progress):  # fmt: skip
            _, name = embed_code(
                chunk, backend=p.config.embedding_backend, cache_dir=p.embedding_cache
            )
    except AutomdError as exc:
        p.log(f"code embeddings failed: {exc}")
        return f"code embeddings: failed ({exc.message})"
    if name is None:
        return "code embeddings: the archive holds no code of agent runs"
    return f"code embeddings: {len(texts)} distinct scripts, backend {name}"


def disclosure_note(p: Pipeline, store) -> str:
    """The small-cell policy the notebooks applied, for the index."""
    return report_disclosure(store, p.config.min_cell).describe()


def notebook_parameters(p: Pipeline) -> dict[str, Any]:
    """The parameters offered to every notebook (each receives those it declares)."""
    return {
        "archive": str(p.archive),
        "scores_dir": str(p.scores_dir),
        "data_root": None if p.data is None else str(p.data),
        "manifests_dir": None if p.manifests is None else str(p.manifests),
        "output_dir": str(p.out),
        "main_experiment": p.meta.roles["main"],
        "objectives_experiment": p.meta.roles["objectives"],
        "llm_experiment": p.meta.roles["llm"],
        "seed": int(p.config.seed),
        "embedding_backend": p.config.embedding_backend,
        "embedding_cache": str(p.embedding_cache),
        "masking_results": None if p.masking_results is None else str(p.masking_results),
        "min_cell": p.config.min_cell,
        "n_bins": int(p.config.ece_bins),
        **dict(p.config.parameters),
    }


@dataclass(frozen=True)
class _Planned:
    """A notebook to run or reuse: its name, parameters, inputs/key, earlier stamp, and why it
    must run (``None``: up to date)."""

    path: Path
    parameters: dict
    inputs: dict
    key: str
    stamp: Stamp | None
    why: str | None


def _masking_fingerprint(p: Pipeline) -> str:
    """What the masking-test results a notebook would read are (sha256 of the file, or absent)."""
    path = p.masking_results or p.scores_dir / MASKING_FILE
    return file_sha256(path) if path.is_file() else "absent"


def _plan(p: Pipeline, paths: list[Path], provenance: str) -> list[_Planned]:
    """Each notebook's inputs and whether its published outputs are up to date."""
    offered = notebook_parameters(p)
    store = store_fingerprint(p.scores_dir)
    planned = []
    for path in paths:
        nb = p.notebooks[path]
        staging = staging_dir(p.out, path.stem)
        params = select_parameters(nb, {**offered, "output_dir": str(staging)})
        declared = declared_parameters(nb) or frozenset(params)
        masking = _masking_fingerprint(p) if "masking_results" in declared else None
        inputs = notebook_inputs(path, params, store, masking, provenance)
        key = notebook_key(inputs)
        stamp = read_stamp(p.out, path.stem)
        planned.append(
            _Planned(path, params, inputs, key, stamp, check_stamp(p.out, stamp, key, inputs))
        )
    return planned


def _available(p: Pipeline, store) -> dict[str, bool]:
    """Experiment role -> whether the store has scored runs of its experiment (what a notebook's
    or a cell's ``requires`` asks for)."""
    scored = scored_experiments(store)
    return {role: scored.get(exp, False) for role, exp in p.meta.roles.items()}


def _unmet_reason(p: Pipeline, store, unmet: list[str]) -> str:
    """Why requirements are unmet: the roles' experiments have no runs, or only runs that are
    not scorable here."""
    present = scored_experiments(store)  # every experiment with runs (none scored if unmet)
    unscored = [r for r in unmet if p.meta.roles.get(r, r) in present]
    names = ", ".join(f"{r} ({p.meta.roles.get(r, r)!r})" for r in unmet)
    if unscored and len(unscored) == len(unmet):
        return (
            f"no run of the experiment role(s) {names} has predictions for its task's test set "
            "(not scorable here), so there are no scores to show"
        )
    return f"the score store has no runs of the experiment role(s) {names}"


def _skipped(p: Pipeline, store) -> dict[Path, str]:
    """Notebooks whose experiment roles have no scored runs in the store, with the reason."""
    available = _available(p, store)
    skipped = {}
    for path in p.notebook_paths:
        unmet = missing_requirements(p.notebooks[path], available)
        if unmet:
            skipped[path] = _unmet_reason(p, store, unmet)
    return skipped


def _source_for(p: Pipeline, store, path: Path) -> Path:
    """The notebook to execute: ``path`` itself, or a copy without the cells whose requirements
    are unmet (:func:`~automd_analysis.app.run_notebooks.without_unmet_cells`)."""
    import nbformat

    available = _available(p, store)
    needs = [r for cell in p.notebooks[path].cells for r in missing_requirements(cell, available)]
    if not needs:
        return path
    unmet = list(dict.fromkeys(needs))
    note = f"*Left out: the sections that need scores - {_unmet_reason(p, store, unmet)}.*"
    nb, _ = without_unmet_cells(p.notebooks[path], available, note)
    target = p.out / STATE_DIR / "staging" / ".sources" / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target)
    return target


def _execute(
    p: Pipeline, todo: list[_Planned], note: str, provenance: str, store=None
) -> tuple[dict, set[str]]:
    """Run the notebooks that must run (staged, rendered with the ``provenance`` line), publish
    each; return their results and the files published by the failed ones (kept although no
    stamp lists them)."""
    from functools import partial as bind

    # the longest first (last run's time, else the source size), so that no long notebook
    # starts last; results are reported in notebook order
    todo = sorted(
        todo, key=lambda n: -(n.stamp.seconds if n.stamp else n.path.stat().st_size / 1e3)
    )
    jobs = []
    for n in todo:
        staging = staging_dir(p.out, n.path.stem)
        source = n.path if store is None else _source_for(p, store, n.path)
        jobs.append(NotebookJob(source, staging / n.path.name, n.parameters,
                                staging / f"{n.path.stem}.html"))  # fmt: skip
    executed = execute_jobs(
        jobs, workers=p.config.jobs, timeout=p.config.timeout,
        render=bind(render_page, provenance=provenance,
                    run_ids=frozenset() if store is None else frozenset(store.runs["run_id"])),
        progress=p.config.progress, log=p.log,
    )  # fmt: skip
    results, partial = {}, set()
    for n, result in zip(todo, executed, strict=True):
        notes = {"embeddings": note} if "embedding_backend" in n.parameters else {}
        published = publish_outputs(
            p.out, n.path.stem, stamp=n.stamp, key=n.key if result.ok else None,
            inputs=n.inputs, title=result.title or "", notes=notes, seconds=result.seconds,
        )  # fmt: skip
        if not result.ok:
            partial.update(published)
        results[n.path] = replace(result, source=n.path, output=p.out / "notebooks" / n.path.name)
    return results, partial


def notebook_stage(p: Pipeline, store) -> tuple[list[NotebookResult], str]:
    """Execute every notebook whose inputs changed, keep the others; return the results (skipped
    and reused ones included, in report order) and the code-embeddings note for the index.

    Notebooks whose experiment roles have no runs are skipped. The others are reused when their
    stamp says their inputs did not change (:mod:`automd_analysis.app.stamps`), else executed
    into a staging folder, rendered, and published with a new stamp; the log says which and why.
    Afterwards every file of the report that no notebook owns is removed (:func:`sweep`).
    """
    provenance = provenance_line(p.meta.description or "", synthetic_tasks(store))
    skipped = _skipped(p, store)
    planned = _plan(p, [path for path in p.notebook_paths if path not in skipped], provenance)
    todo = [n for n in planned if n.why is not None]
    for n in planned:
        state = f"runs ({n.why})" if n.why else "reused (inputs unchanged)"
        p.log(f"  notebook {n.path.stem}: {state}")
    p.log(f"notebooks: running {len(todo)}, reusing {len(planned) - len(todo)}, "
          f"skipping {len(skipped)}")  # fmt: skip
    note = _embedding_note(p, store, todo, planned)
    results, partial = _execute(p, todo, note, provenance, store)
    for n in planned:
        if n.why is None:
            copy = p.out / "notebooks" / n.path.name
            results[n.path] = NotebookResult(n.path, copy, None, 0.0, title=n.stamp.title,
                                             reused=True)  # fmt: skip
    sweep(p.out, [n.path.stem for n in planned if results[n.path].ok], also_keep=partial)
    return [
        results.get(path)
        or NotebookResult(path, p.out / "notebooks" / path.name, None, 0.0, skipped=skipped[path])
        for path in p.notebook_paths
    ], note


def _embedding_note(p: Pipeline, store, todo: list[_Planned], planned: list[_Planned]) -> str:
    """Embed the code when a notebook that uses the embeddings is about to run; otherwise the note
    its earlier run recorded."""
    if any("embedding_backend" in n.parameters for n in todo):
        return embedding_stage(p, store)
    for n in planned:
        if n.stamp is not None and "embeddings" in n.stamp.notes:
            return n.stamp.notes["embeddings"]
    return "code embeddings: not needed (no notebook uses them)"


def run_pages_stage(p: Pipeline, store) -> str:
    """Write (or update) the run pages under ``OUT/runs/``; return their note for the index."""
    from automd_analysis.report.run_pages import build_run_pages  # Matplotlib: only when used

    notes = []
    try:
        masking = read_masking_results(
            p.masking_results or p.scores_dir / MASKING_FILE, missing_ok=True
        )
    except MaskingResultsError as exc:
        masking = None
        notes.append(f"masking results not shown on the run pages ({exc.message})")
    pages = build_run_pages(
        store, p.out, masking=masking, description=p.meta.description or "",
        min_cell=p.config.min_cell, jobs=p.config.jobs, log=p.log,
    )  # fmt: skip
    p.log(pages.describe())
    return "; ".join([pages.index_note(), *notes])


def render_stage(p: Pipeline, results, summary, notes) -> Path:
    """Write ``OUT/index.html`` (the notebook pages were rendered with their runs)."""
    p.log(f"rendering the HTML report -> {p.out / 'index.html'}")
    return render_site(p.out, results, summary, notes=notes)


def regenerate(config: RegenerateConfig, log: Callable[[str], None] = print) -> RegenerateResult:
    """Regenerate every table, figure and HTML page of the report from a runs archive.

    Parameters
    ----------
    config : RegenerateConfig
    log : callable
        Receives one line per stage (the CLI prints them on stderr).

    Returns
    -------
    RegenerateResult

    Raises
    ------
    AutomdError
        Bad configuration, missing archive, unusable ``out``, scoring or store errors, nothing
        to report (:func:`check_reportable`, before the report is touched), and
        :class:`~automd_analysis.app.run_notebooks.NotebookExecutionError` naming the failing
        notebook(s), cell(s) and error(s) - after the other pages were rendered.
    """
    p = resolve(config, log)
    scoring = score_stage(p)
    store, summary = load_stage(p)
    check_reportable(p, store, scoring)
    masking_summary, masking_note = masking_stage(p, store)
    prepare_out_dir(p.out)
    results, embedding_note = notebook_stage(p, store)
    run_pages = run_pages_stage(p, store)
    notes = (masking_note, embedding_note, disclosure_note(p, store), run_pages)
    index = render_stage(p, results, summary, notes)
    raise_for_failures(results)
    return RegenerateResult(
        index=index,
        scores_dir=p.scores_dir,
        notebooks=results,
        summary=summary,
        scoring=scoring,
        masking=masking_summary,
        notes=notes,
    )
