"""Generated annotations beside an archive: read them back, validate them, choose per run.

``automd annotate`` writes one ``<out>/<run id>/annotations.json`` per run, outside the archive
(:mod:`automd_analysis.annotate.runs`). Reading such a directory is reading archive data - the
files are untrusted, bounded and validated against the runs they describe - so it lives here, in
the archive layer, where the scorer (``automd score --annotations``) and the annotator's own
agreement check both find it:

- :func:`load_generated_annotations` - every run's generated file, validated, or a structured error;
- :func:`choose_annotations` / :func:`apply_annotations` - the archive's own answers win unless
  ``prefer_generated``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from automd_analysis.archive.codebook import validate_annotations
from automd_analysis.archive.model import Run
from automd_analysis.archive.reader import Archive
from automd_analysis.archive.safe import MAX_JSON_BYTES, json_loads_strict, read_bounded
from automd_analysis.codebook import Annotations
from automd_analysis.errors import ArchiveError, AutomdError

__all__ = [
    "ANNOTATIONS_FILE",
    "apply_annotations",
    "choose_annotations",
    "load_generated_annotations",
]

#: File name of a run's generated annotations under the ``automd annotate`` output directory.
ANNOTATIONS_FILE = "annotations.json"


def load_generated_annotations(
    archive: Archive, directory: str | Path
) -> tuple[dict[str, Annotations], list[ArchiveError]]:
    """Generated annotations of every run of ``archive`` found under ``directory``.

    Each ``<directory>/<run id>/annotations.json`` is read (bounded, strict JSON) and validated
    against the archive run it names (codebook values, versions, and evidence that must cite
    existing lines of the run's files); a file that fails is left out with a structured error.

    Parameters
    ----------
    archive : Archive
    directory : str or Path
        Output directory of :func:`automd_analysis.annotate.runs.annotate_archive`
        (``automd annotate --out``).

    Returns
    -------
    (dict, list)
        Run id -> :class:`~automd_analysis.codebook.Annotations`, and the errors (each
        with ``details["run_id"]`` and ``details["effect"] == "annotations skipped"``).

    Raises
    ------
    AutomdError
        ``annotate.missing`` if ``directory`` does not exist.

    See Also
    --------
    choose_annotations, automd_analysis.annotate.runs.annotate_archive

    Examples
    --------
    >>> from automd_analysis.archive import open_archive
    >>> small = Path(__file__).parents[2] / "tests" / "fixtures" / "small"
    >>> load_generated_annotations(open_archive(small / "archive"), small / "nowhere")
    Traceback (most recent call last):
    ...
    automd_analysis.errors.AutomdError: annotations directory not found in ...
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise AutomdError(
            "annotations directory not found",
            path=directory,
            code="annotate.missing",
            fix="run `automd annotate ARCHIVE --out DIR` first",
        )
    found: dict[str, Annotations] = {}
    problems: list[ArchiveError] = []
    base = directory.resolve()
    for run in archive.runs():
        path = directory / run.run_id / ANNOTATIONS_FILE
        if not (path.exists() or path.is_symlink()):
            continue
        try:
            data = read_bounded(path, MAX_JSON_BYTES, base)
            raw = json_loads_strict(data, path, "archive.annotation_invalid")
            ids = [v.version_id for v in run.versions]
            found[run.run_id] = validate_annotations(
                raw, run.dir.resolve(), archive.root, ids, path
            )
        except ArchiveError as exc:
            exc.details = {**exc.details, "run_id": run.run_id, "effect": "annotations skipped"}
            problems.append(exc)
    return found, problems


def choose_annotations(
    archived: Annotations | None,
    generated: Annotations | None,
    *,
    prefer_generated: bool = False,
) -> tuple[Annotations | None, str]:
    """Pick a run's annotations: the archive's own win unless ``prefer_generated``.

    Returns
    -------
    (Annotations or None, str)
        The chosen annotations and their source: ``"archive"``, ``"generated"`` or ``"none"``.

    Examples
    --------
    >>> from automd_analysis.codebook import Annotations
    >>> mine = Annotations("automd annotate 0.1.0", {}, ())
    >>> theirs = Annotations("human", {}, ())
    >>> choose_annotations(theirs, mine)[1], choose_annotations(theirs, mine, prefer_generated=True)[1]
    ('archive', 'generated')
    >>> choose_annotations(None, mine)[1], choose_annotations(None, None)[1]
    ('generated', 'none')
    """
    first, second = (generated, archived) if prefer_generated else (archived, generated)
    if first is not None:
        return first, "generated" if first is generated else "archive"
    if second is not None:
        return second, "generated" if second is generated else "archive"
    return None, "none"


def apply_annotations(
    runs: Sequence[Run], generated: Mapping[str, Annotations], *, prefer_generated: bool = False
) -> tuple[list[Run], dict[str, str]]:
    """Runs with their chosen annotations (:func:`choose_annotations`) and each run's source.

    Examples
    --------
    >>> apply_annotations([], {})
    ([], {})
    """
    out, sources = [], {}
    for run in runs:
        chosen, source = choose_annotations(
            run.annotations, generated.get(run.run_id), prefer_generated=prefer_generated
        )
        out.append(run if chosen is run.annotations else replace(run, annotations=chosen))
        sources[run.run_id] = source
    return out, sources
