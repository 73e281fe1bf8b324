"""``automd annotate``: annotations for every run of an archive, written outside the archive.

For each run, the selected version's Python files (``meta.json`` ``code_files``) are read with the
archive's safe, bounded readers and analysed statically (:mod:`.code`); the selected submission is
read for the prediction forensics (:mod:`.forensics`). The result is an ``annotations.json`` in the
archive format (``docs/archive.md``) under ``<out>/<experiment>/<agent>/<task>/rep<k>/``, with
``annotator`` = :data:`ANNOTATOR`; the archive itself is never written. Runs are processed in
parallel (``jobs`` worker processes) and code answers are cached by content (:mod:`.cache`). A run
whose files cannot be read or parsed gets a problem entry (``problems.json``), never an exception
that stops the other runs.

:func:`automd_analysis.archive.generated.load_generated_annotations` reads such a directory back
for an opened archive, validating every file against the archive run it describes, and
:func:`~automd_analysis.archive.generated.choose_annotations` picks, per run, between the archive's
own annotations and the generated ones.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import posixpath
import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

from automd_analysis._atomic import write_text_atomic
from automd_analysis._version import __version__
from automd_analysis.annotate.cache import AnnotationCache, code_key, forensics_key
from automd_analysis.annotate.code import analyse_sources, common_root
from automd_analysis.annotate.forensics import submission_forensics
from automd_analysis.annotate.pairs import (
    VersionCode,
    layout_json,
    layout_of,
    pair_changes,
    remember_layout,
)
from automd_analysis.annotate.parsing import parse_code
from automd_analysis.annotate.practices import (
    Finding,
    TaskFacts,
    apply_eligibility,
    code_findings,
    code_signature,
)
from automd_analysis.annotate.sources import (
    MAX_CODE_BYTES,
    MAX_CODE_FILES,
    bind_code,
    read_version_files,
)
from automd_analysis.archive import Archive, Run
from automd_analysis.archive.generated import ANNOTATIONS_FILE, load_generated_annotations
from automd_analysis.archive.safe import read_bounded
from automd_analysis.errors import ArchiveError, AutomdError

__all__ = [
    "ANNOTATOR",
    "MAX_CODE_BYTES",
    "MAX_CODE_FILES",
    "MAX_SUBMISSION_BYTES",
    "AnnotateSummary",
    "RunJob",
    "TaskInfo",
    "VersionJob",
    "annotate_archive",
    "archive_agreement",
    "annotate_job",
    "run_document",
    "task_info",
]

#: The ``annotator`` of every generated ``annotations.json``.
ANNOTATOR = f"automd annotate {__version__}"
#: Largest submission file read for the forensics.
MAX_SUBMISSION_BYTES = 256 << 20


@dataclass(frozen=True)
class TaskInfo:
    """What the annotator needs to know about a task (from its manifest and public files).

    Attributes
    ----------
    facts : TaskFacts
        Kind and eligibility facts.
    probability_column : str or None
        Binary kinds: the submission's probability column.
    id_columns : tuple of str
        The submission's id column(s).
    prevalence : float or None
        Event rate of the public training file (binary kinds), if the data root is available.
    """

    facts: TaskFacts
    probability_column: str | None = None
    id_columns: tuple[str, ...] = ()
    prevalence: float | None = None


@dataclass(frozen=True)
class VersionJob:
    """One archived version: its Python files, prediction file and place in the search."""

    version: str
    code_files: tuple[str, ...]
    submission: Path | None
    elapsed_min: float
    step: int
    parent: str | None
    node: str | None


@dataclass(frozen=True)
class RunJob:
    """Everything a worker needs to annotate one run (picklable; no archive object).

    ``versions`` are annotated for the version pairs (paper App. H) when ``pairs`` is true; the
    selected version (``version``) is always annotated for the run's answers.
    """

    run_id: str
    run_dir: Path
    root: Path
    version: str | None
    code_files: tuple[str, ...]
    submission: Path | None
    task: TaskInfo | None
    cache_dir: Path | None
    search: str = "none"
    versions: tuple[VersionJob, ...] = ()
    steps: tuple[tuple[str | None, str | None, str | None], ...] = ()
    pairs: bool = False
    code_missing: str | None = None


@dataclass
class RunResult:
    """A worker's answer: the document (``None`` if nothing could be annotated) and problems."""

    run_id: str
    document: dict | None
    problems: list[dict] = field(default_factory=list)
    cached: int = 0
    analysed: int = 0


@dataclass
class AnnotateSummary:
    """What :func:`annotate_archive` did."""

    archive: str
    out_dir: Path
    n_runs: int
    n_written: int
    n_cached: int
    problems: list[dict]
    seconds: float
    n_versions: int = 0


def task_info(manifest, data_root: Path | None = None) -> TaskInfo:
    """:class:`TaskInfo` of a task manifest; the prevalence needs the public training file.

    ``missingness_features`` applies when the manifest says ``paper.ehr: true``;
    ``validation_under_shift`` when the task is external with a cohort or hospital shift.

    Examples
    --------
    >>> from automd_analysis.tasks import load_manifests
    >>> small = Path(__file__).parents[2] / "tests" / "fixtures" / "small"
    >>> info = task_info(load_manifests(small / "manifests")["fx_surv"])
    >>> info.facts.kind, info.id_columns, info.prevalence
    ('survival', ('pid',), None)
    """
    kind = manifest.kind.value
    facts = TaskFacts(
        kind=kind,
        ehr=bool(manifest.paper.get("ehr", False)),
        external_shift=manifest.validation == "external"
        and manifest.shift in ("cohort", "hospital"),
    )
    prevalence = None
    label = getattr(manifest.labels, "label", None)
    if kind != "survival" and data_root is not None and label and "train" in manifest.files:
        prevalence = _training_prevalence(Path(data_root) / manifest.files["train"].path, label)
    return TaskInfo(
        facts=facts,
        probability_column=manifest.submission.probability_column,
        id_columns=tuple(manifest.submission.id_columns),
        prevalence=prevalence,
    )


def _training_prevalence(path: Path, label: str) -> float | None:
    import pandas as pd

    try:
        y = pd.read_csv(path, usecols=[label])[label]
    except (OSError, ValueError, KeyError):
        return None
    y = pd.to_numeric(y, errors="coerce").dropna()
    return float(y.mean()) if len(y) else None


# ---------------------------------------------------------------------------------- one run


def _problem(run_id: str, code: str, message: str, path: str | None = None) -> dict:
    return {"run_id": run_id, "code": code, "message": message, "path": path}


def run_job(
    run: Run, task: TaskInfo | None, cache_dir: Path | None, *, pairs: bool = False
) -> RunJob:
    """The :class:`RunJob` of ``run`` (its selected version and submission, and every version
    when ``pairs``).

    Examples
    --------
    >>> from automd_analysis.archive import open_archive
    >>> run = open_archive(Path(__file__).parents[2] / "tests/fixtures/small/archive").runs()[0]
    >>> job = run_job(run, None, None, pairs=True)
    >>> job.run_id == run.run_id, len(job.versions) == len(run.versions)
    (True, True)
    """
    version = run.selected_version
    bound = bind_code(run, version) if version else None
    versions = tuple(
        VersionJob(
            version=v.version_id,
            code_files=bind_code(run, v.version_id).files,
            submission=v.submission_path,
            elapsed_min=(v.created_at - run.started_at).total_seconds() / 60.0,
            step=v.step,
            parent=v.parent,
            node=v.node,
        )
        for v in run.versions
    )
    steps = tuple((s.version, s.node, s.parent) for s in run.steps or ())
    return RunJob(
        run_id=run.run_id,
        run_dir=run.dir,
        root=run.archive_root,
        version=version,
        code_files=bound.files if bound else (),
        submission=run.submission_path,
        task=task,
        cache_dir=cache_dir,
        search=run.search,
        versions=versions if pairs else (),
        steps=steps if pairs else (),
        pairs=pairs,
        code_missing=bound.missing if bound else None,
    )


def _line_counts(text: str) -> int:
    data = text.encode("utf-8", "surrogatepass")
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def _read_sources(
    job: RunJob, code_files: Sequence[str], problems: list[dict]
) -> list[tuple[str, str]]:
    def problem(code: str, message: str, path: str | None) -> dict:
        return _problem(job.run_id, code, message, path)

    return read_version_files(job.run_dir, job.root, code_files, problems, problem)


@dataclass
class _Analysed:
    findings: dict[str, Finding]
    signature: dict
    sources: list[tuple[str, str]]
    cached: bool


def _parse_or_none(text: str):
    return parse_code(text)[0]  # when None, the interpreter parses again and records why


def _analyse_version(
    job: RunJob, version: str, code_files: Sequence[str], problems: list[dict]
) -> _Analysed | None:
    """Findings (before eligibility, evidence as (file number, line)), signature and sources of
    one version's code; cached by content. ``None`` when no file could be read."""
    sources = _read_sources(job, code_files, problems)
    if not sources:
        if code_files:
            why = f"none of the {len(code_files)} Python file(s) of version {version!r} can be read"
        elif version == job.version and job.code_missing:
            why = f"no Python code is bound to version {version!r}: {job.code_missing}"
        else:
            why = f"version {version!r} lists no Python file"
        problems.append(
            _problem(job.run_id, "annotate.no_code", why, f"versions/{version}/meta.json")
        )
        return None
    root = common_root([p for p, _ in sources])
    rel = [(posixpath.relpath(p, root) if root else p, t) for p, t in sources]
    cache = AnnotationCache(job.cache_dir) if job.cache_dir is not None else None
    kind = job.task.facts.kind if job.task is not None else None
    key = code_key(rel, task_kind=kind)
    hit = cache.get(key) if cache is not None else None
    if hit is not None:
        findings, notes, signature = hit
        cached = True
        for (_, text), layout in zip(rel, signature.get("layout", []), strict=False):
            if layout:
                remember_layout(text, layout)
    else:
        trees = [_parse_or_none(text) for _, text in rel]
        trace = analyse_sources(rel, task_kind=kind, parsed=trees)
        findings, notes, cached = code_findings(trace), list(trace.notes), False
        signature = code_signature(trace)
        layouts = []
        for (_, text), tree in zip(rel, trees, strict=True):
            layout = layout_of(tree) if tree is not None else None
            if layout is not None:
                remember_layout(text, layout)
            layouts.append(layout_json(layout) if layout is not None else None)
        signature["layout"] = layouts
        if cache is not None:
            cache.put(key, findings, notes, signature)
    lines = [_line_counts(t) for _, t in sources]
    out = {}
    for name, f in findings.items():
        cites = tuple(e for e in f.evidence if e[0] < len(sources) and 1 <= e[1] <= lines[e[0]])
        out[name] = Finding(name, f.value, cites, f.affected_weight)
    for note in notes:
        problems.append(_problem(job.run_id, "annotate.partial", f"{version}: {note}", None))
    return _Analysed(out, signature, sources, cached)


def _answer_json(f: Finding, paths: Sequence[str]) -> dict:
    doc: dict = {
        "value": list(f.value) if isinstance(f.value, tuple) else f.value,
        "evidence": [f"{paths[i]}:{line}" for i, line in f.evidence],
    }
    if f.affected_weight is not None:
        doc["affected_weight"] = f.affected_weight
    return doc


def _read_submission(job: RunJob, data: bytes):
    """The submission's numbers: survival curves (rows x grid) or the probability column."""
    import pandas as pd

    task = job.task
    ids = {c: str for c in task.id_columns}
    if task.facts.kind == "survival":
        frame = pd.read_csv(io.BytesIO(data), dtype=ids)
        cols = [c for c in frame.columns if c not in task.id_columns]
        values = frame[cols]
        if any(values[c].dtype == object for c in cols):
            values = values.apply(pd.to_numeric, errors="coerce")
        return values.to_numpy(dtype=float)
    header = pd.read_csv(io.BytesIO(data), nrows=0).columns
    if task.probability_column not in header:
        return None
    col = pd.read_csv(io.BytesIO(data), usecols=[task.probability_column])[task.probability_column]
    return pd.to_numeric(col, errors="coerce").to_numpy(dtype=float)


def _forensics(job: RunJob, problems: list[dict]) -> dict:
    if job.submission is None or job.task is None or job.task.facts.kind is None:
        return {}
    import pandas as pd

    try:
        data = read_bounded(job.submission, MAX_SUBMISSION_BYTES, job.root)
    except ArchiveError as exc:
        problems.append(_problem(job.run_id, exc.code, exc.message, "submission.csv"))
        return {}
    cache = AnnotationCache(job.cache_dir) if job.cache_dir is not None else None
    key = forensics_key(data, job.task)
    if cache is not None:
        hit = cache.get_doc(key)
        if hit is not None:
            return hit
    try:
        values = _read_submission(job, data)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        problems.append(
            _problem(job.run_id, "annotate.submission_unreadable", str(exc)[:200], "submission.csv")
        )
        return {}
    if values is None:
        return {}
    kind = job.task.facts.kind
    if kind == "survival":
        found = submission_forensics(kind, curves=values)
    else:
        found = submission_forensics(kind, probabilities=values, prevalence=job.task.prevalence)
    out = {}
    for name, f in sorted(found.items()):
        stats = {
            k: (None if v is None or not math.isfinite(v) else v) for k, v in f.statistics.items()
        }
        out[name] = {
            "value": f.value,
            "statistics": stats,
            "threshold": f.threshold,
            "evidence": ["submission.csv"] if f.value != "na" else [],
        }
    if cache is not None:
        cache.put_doc(key, out)
    return out


def _sha256(path: Path | None, root: Path) -> str | None:
    if path is None:
        return None
    try:
        return hashlib.sha256(read_bounded(path, MAX_SUBMISSION_BYTES, root)).hexdigest()
    except ArchiveError:
        return None


def _pairs(
    job: RunJob,
    problems: list[dict],
    facts: TaskFacts,
    known: dict[str, _Analysed | None] | None = None,
) -> tuple[list[dict], int, int]:
    """Version pairs (App. H rule over versions with a prediction file) with their changes."""
    import pandas as pd

    from automd_analysis.version_pairs import form_version_pairs

    if job.search not in ("tree", "linear") or len(job.versions) < 2:
        return [], 0, 0
    frame = pd.DataFrame(
        {
            "version": [v.version for v in job.versions],
            "elapsed_min": [v.elapsed_min for v in job.versions],
            "step": [v.step for v in job.versions],
            "parent": [v.parent for v in job.versions],
            "node": [v.node for v in job.versions],
            "valid": [v.submission is not None for v in job.versions],
        }
    )
    steps = (
        pd.DataFrame(list(job.steps), columns=["version", "node", "parent"]) if job.steps else None
    )
    formed = form_version_pairs(frame, job.search, steps=steps)
    by_id = {v.version: v for v in job.versions}
    analysed: dict[str, _Analysed | None] = dict(known or {})
    n_analysed = n_cached = 0

    def code(vid: str) -> _Analysed | None:
        nonlocal n_analysed, n_cached
        if vid not in analysed:
            v = by_id[vid]
            result = _analyse_version(job, vid, v.code_files, problems) if v.code_files else None
            analysed[vid] = result
            if result is not None:
                n_analysed += 1
                n_cached += result.cached
        return analysed[vid]

    hashes: dict[str, str | None] = {}

    def digest(vid: str) -> str | None:
        if vid not in hashes:
            hashes[vid] = _sha256(by_id[vid].submission, job.root)
        return hashes[vid]

    out = []
    for earlier, later in zip(formed["earlier"], formed["later"], strict=True):
        a, b = code(earlier), code(later)
        if a is None or b is None:
            continue
        va = {k: f.value for k, f in apply_eligibility(a.findings, facts).items()}
        vb = {k: f.value for k, f in apply_eligibility(b.findings, facts).items()}
        changes, evidence = pair_changes(
            VersionCode(va, a.signature, tuple(a.sources)),
            VersionCode(vb, b.signature, tuple(b.sources)),
        )
        ha, hb = digest(earlier), digest(later)
        out.append(
            {
                "earlier": earlier,
                "later": later,
                "changes": changes,
                "affects_predictions": ha is not None and hb is not None and ha != hb,
                "evidence": evidence,
            }
        )
    return out, n_analysed, n_cached


def run_document(job: RunJob) -> RunResult:
    """The ``annotations.json`` document of one run (never raises on bad input).

    Returns
    -------
    RunResult
        ``document`` is ``None`` when the run has no selected version and no submission.

    See Also
    --------
    annotate_job : the same, with unexpected failures turned into problem entries.

    Examples
    --------
    >>> from automd_analysis.archive import open_archive
    >>> runs = open_archive(Path(__file__).parents[2] / "tests/fixtures/small/archive").runs()
    >>> result = run_document(run_job(runs[0], None, None))
    >>> result.document["annotator"] == ANNOTATOR
    True
    """
    problems: list[dict] = []
    facts = job.task.facts if job.task is not None else TaskFacts()
    findings: dict[str, Finding] = {}
    paths: list[str] = []
    analysed = cached = 0
    known: dict[str, _Analysed | None] = {}
    if job.version:
        result = _analyse_version(job, job.version, job.code_files, problems)
        known[job.version] = result
        if result is not None:
            findings = apply_eligibility(result.findings, facts)
            paths = [p for p, _ in result.sources]
            analysed, cached = 1, int(result.cached)
    pairs, n_pairs_analysed, n_pairs_cached = (
        _pairs(job, problems, facts, known) if job.pairs else ([], 0, 0)
    )
    forensics = _forensics(job, problems)
    if not findings and not forensics and not pairs:
        return RunResult(job.run_id, None, problems, cached, analysed)
    doc = {
        "schema_version": 1,
        "annotator": ANNOTATOR,
        "run": {name: _answer_json(f, paths) for name, f in sorted(findings.items())},
        "pairs": pairs,
    }
    if forensics:
        doc["forensics"] = forensics
    return RunResult(
        job.run_id, doc, problems, cached + n_pairs_cached, analysed + n_pairs_analysed
    )


def annotate_job(job: RunJob) -> RunResult:
    """:func:`run_document`, with any unexpected failure turned into a problem entry.

    Examples
    --------
    >>> job = RunJob("x/y/z/rep0", Path("/nonexistent"), Path("/nonexistent"), "v1",
    ...              ("code/v1/train.py",), None, None, None)
    >>> [p["code"] for p in annotate_job(job).problems]
    ['archive.file_missing', 'annotate.no_code']
    """
    try:
        return run_document(job)
    except AutomdError as exc:
        return RunResult(job.run_id, None, [_problem(job.run_id, exc.code, exc.message)])
    except Exception as exc:  # one run must never stop the others
        return RunResult(
            job.run_id,
            None,
            [_problem(job.run_id, "annotate.internal_error", f"{type(exc).__name__}: {exc}")],
        )


# ---------------------------------------------------------------------------------- archive


def _check_out(out: Path, root: Path) -> None:
    resolved = out.resolve()
    if resolved == root or resolved.is_relative_to(root):
        raise AutomdError(
            "the output directory is inside the archive; annotations are never written there",
            path=out,
            code="annotate.out_inside_archive",
            fix="choose --out outside the archive directory",
        )


def _dump(doc: dict) -> str:
    return json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def _run_all(jobs: list[RunJob], n_workers: int, progress: bool) -> list[RunResult]:
    from tqdm.auto import tqdm

    bar = tqdm(
        total=len(jobs), unit="run", desc="annotating", disable=not progress, file=sys.stderr
    )
    results: list[RunResult] = []
    try:
        if n_workers <= 1 or len(jobs) <= 1:
            for job in jobs:
                results.append(annotate_job(job))
                bar.update(1)
        else:
            ctx = get_context("spawn")
            with ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx) as pool:
                chunk = max(1, min(16, len(jobs) // (4 * n_workers)))
                for result in pool.map(annotate_job, jobs, chunksize=chunk):
                    results.append(result)
                    bar.update(1)
    finally:
        bar.close()
    return results


def annotate_archive(
    archive: Archive,
    out: str | Path,
    *,
    manifests: Mapping[str, object] | None = None,
    data_root: str | Path | None = None,
    jobs: int = 1,
    cache: bool = True,
    pairs: bool = True,
    progress: bool = False,
) -> AnnotateSummary:
    """Write one ``annotations.json`` per run of ``archive`` under ``out``.

    Parameters
    ----------
    archive : Archive
        An opened archive (read only).
    out : str or Path
        Output directory (created; must not lie inside the archive). Files go to
        ``<out>/<experiment>/<agent>/<task>/rep<k>/annotations.json`` (a run with nothing to
        annotate any more loses its earlier file); ``problems.json`` lists what could not be
        annotated; the cache lives in ``<out>/.cache``.
    manifests : mapping, optional
        Task id -> manifest (:func:`automd_analysis.tasks.load_manifests`); without a manifest a
        run's answers are not restricted to eligible fields and it gets no forensics.
    data_root : str or Path, optional
        Data root for the training prevalence of binary tasks (forensics).
    jobs : int
        Worker processes.
    cache : bool
        Reuse and store code answers in ``<out>/.cache``.
    pairs : bool
        Annotate every version and write the version pairs (paper App. H rule, over versions
        that saved a prediction file) with their change types (:mod:`.pairs`).
    progress : bool
        Progress bar on stderr.

    Returns
    -------
    AnnotateSummary

    Raises
    ------
    AutomdError
        ``annotate.out_inside_archive``.

    See Also
    --------
    automd_analysis.archive.generated.load_generated_annotations, archive_agreement

    References
    ----------
    ``docs/annotation.md`` (rules, forensics, agreement); ``docs/archive.md`` (format).

    Examples
    --------
    >>> import tempfile
    >>> from automd_analysis.archive import open_archive
    >>> from automd_analysis.tasks import load_manifests
    >>> small = Path(__file__).parents[2] / "tests" / "fixtures" / "small"
    >>> archive = open_archive(small / "archive")
    >>> with tempfile.TemporaryDirectory() as out:
    ...     summary = annotate_archive(archive, out, manifests=load_manifests(small / "manifests"))
    ...     generated, errors = load_generated_annotations(archive, out)
    >>> summary.n_written == len(generated) > 0, errors
    (True, [])
    """
    t0 = time.perf_counter()
    out = Path(out)
    _check_out(out, archive.root)
    manifests = manifests or {}
    infos: dict[str, TaskInfo | None] = {}
    problems: list[dict] = []
    job_list = []
    cache_dir = (out / ".cache") if cache else None
    root = Path(data_root) if data_root is not None else None
    for run in archive.runs():
        if run.task not in infos:
            m = manifests.get(run.task)
            infos[run.task] = task_info(m, root) if m is not None else None
            if m is None:
                problems.append(
                    _problem(
                        run.run_id,
                        "annotate.task_unknown",
                        f"no manifest for task {run.task!r}: answers are not restricted to the "
                        "task's eligible fields and there are no forensics",
                    )
                )
        job_list.append(run_job(run, infos[run.task], cache_dir, pairs=pairs))
    results = _run_all(job_list, jobs, progress)
    written = cached = analysed = 0
    for result in sorted(results, key=lambda r: r.run_id):
        problems.extend(result.problems)
        cached += result.cached
        analysed += result.analysed
        target = out / result.run_id / ANNOTATIONS_FILE
        if result.document is None:
            # nothing to say about this run now: drop what an earlier annotation wrote
            if target.is_file() and not target.is_symlink():
                target.unlink()
            continue
        write_text_atomic(target, _dump(result.document))
        written += 1
    problems.sort(key=lambda p: (p["run_id"] or "", p["code"], p["message"]))
    write_text_atomic(out / "problems.json", _dump({"problems": problems}))
    return AnnotateSummary(
        archive=archive.name,
        out_dir=out,
        n_runs=len(job_list),
        n_written=written,
        n_cached=cached,
        problems=problems,
        seconds=time.perf_counter() - t0,
        n_versions=analysed,
    )


def archive_agreement(archive: Archive, directory: str | Path, *, include_reference: bool = True):
    """Agreement of generated annotations with the archive's own (the reference), per field.

    Parameters
    ----------
    archive : Archive
        Its runs' ``annotations.json`` are the reference (e.g. harness ground truth).
    directory : str or Path
        Generated annotations (:func:`annotate_archive`).
    include_reference : bool
        Include the simple-baseline runs (``reference: true``).

    Returns
    -------
    (DataFrame, DataFrame, DataFrame, dict)
        :func:`~.agreement.agreement_table` (per field, per value),
        :func:`~.agreement.confusion_table`, and ``{"n_runs": ..., "annotators": [...]}``
        describing the reference.

    See Also
    --------
    automd_analysis.agreement.agreement_table

    Examples
    --------
    >>> import tempfile
    >>> from automd_analysis.archive import open_archive
    >>> archive = open_archive(Path(__file__).parents[2] / "tests/fixtures/small/archive")
    >>> with tempfile.TemporaryDirectory() as out:
    ...     _ = annotate_archive(archive, out, pairs=False)
    ...     fields, values, confusion, info = archive_agreement(archive, out)
    >>> list(fields.columns), info["n_runs"] > 0
    (['field', 'n_runs', 'exact', 'kappa', 'multi'], True)
    """
    from automd_analysis.agreement import agreement_table, confusion_table

    generated, _ = load_generated_annotations(archive, directory)
    reference = {
        r.run_id: r.annotations
        for r in archive.runs()
        if r.annotations is not None and (include_reference or not r.reference)
    }
    fields, values = agreement_table(reference, generated)
    conf = confusion_table(reference, generated)
    both = sorted(set(reference) & set(generated))
    info = {
        "n_runs": len(both),
        "annotators": sorted({reference[r].annotator for r in both}),
    }
    return fields, values, conf, info
