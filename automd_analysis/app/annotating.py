"""Codebook answers from archived code, as ``automd annotate`` asks for them (docs/annotation.md).

:func:`annotate` annotates every run of an archive into a folder of ``annotations.json``;
:func:`annotate_files` answers the codebook for loose scripts; :func:`annotation_agreement`
compares generated answers with an archive's own. Code is read statically, never executed
(:mod:`automd_analysis.annotate`); the command line only prints.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from automd_analysis._atomic import check_writable_dir
from automd_analysis.annotate.code import findings_by_file
from automd_analysis.annotate.runs import (
    AnnotateSummary,
    annotate_archive,
    archive_agreement,
    task_info,
)
from automd_analysis.annotate.sources import read_loose_file
from automd_analysis.archive import open_archive
from automd_analysis.tasks import data_root, load_manifest, load_manifests, manifest_path

__all__ = ["AnnotateSummary", "annotate", "annotate_files", "annotation_agreement"]


def annotate(
    archive: Path,
    out: Path,
    *,
    data=None,
    manifests=None,
    jobs: int = 1,
    cache: bool = True,
    pairs: bool = True,
    progress: bool = False,
) -> AnnotateSummary:
    """Annotate every run of ``archive`` into ``out`` (one ``annotations.json`` per run).

    Raises
    ------
    AutomdError
        The archive is missing or invalid, ``out`` cannot be written
        (``annotate.out_unwritable``), the manifests cannot be read.
    """
    opened = open_archive(archive)
    check_writable_dir(out, "--out", code="annotate.out_unwritable")
    return annotate_archive(
        opened,
        out,
        manifests=load_manifests(manifests),
        data_root=data_root(data),
        jobs=jobs,
        cache=cache,
        pairs=pairs,
        progress=progress,
    )


def annotate_files(
    files: list[Path], task: str | None = None, manifests=None
) -> tuple[dict, list[str]]:
    """The codebook answers of loose scripts (analysed together, each run as the script).

    Returns
    -------
    report : dict
        ``{file: [{field, value, line, evidence}]}``; with ``task``, fields that do not apply to
        it are ``na``.
    problems : list of str
        What could not be read or analysed (``[annotate.encoding]``, ``[annotate.partial]``).
    """
    sources, problems = [], []
    for f in files:
        text, why = read_loose_file(f)
        sources.append((f.as_posix(), text))
        if why is not None:
            problems.append(f"[annotate.encoding] {f.as_posix()}: {why}")
    facts = None if task is None else task_info(load_manifest(manifest_path(task, manifests))).facts
    notes: list[str] = []
    report = findings_by_file(sources, facts, notes)
    problems += [f"[annotate.partial] {n}" for n in notes]
    return report, problems


def annotation_agreement(
    archive: Path, generated: Path, *, out: Path | None = None, include_reference: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """Agreement of ``generated`` annotations with ``archive``'s own: per field, per value, the
    confusion rows and ``{annotators, n_runs}``; written as ``agreement_*.csv`` into ``out``
    when given (checked writable before any work).
    """
    if out is not None:
        check_writable_dir(out, "--out", code="annotate.out_unwritable")
    fields, values, conf, info = archive_agreement(
        open_archive(archive), generated, include_reference=include_reference
    )
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        fields.to_csv(out / "agreement_fields.csv", index=False)
        values.to_csv(out / "agreement_values.csv", index=False)
        conf.to_csv(out / "agreement_confusion.csv", index=False)
    return fields, values, conf, info
