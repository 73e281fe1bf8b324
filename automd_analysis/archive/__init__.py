"""Read a runs archive (``docs/archive.md``): runs, versions, metadata, annotations.

The archive is **untrusted input** written by agents; this package only ever *reads* it:

- nothing is executed, imported or unpickled; ``archive.yaml`` is ``yaml.safe_load``-ed and every
  JSON file is parsed as plain data and validated against a strict schema (:mod:`._schema`);
- every read is bounded (1 MiB for metadata, ``max_bytes`` for :meth:`Run.read_text`) and must be
  of a regular file;
- no path - directory entries, ``code_files``, annotation ``evidence`` - may resolve outside the
  archive root once symlinks are resolved; archive-supplied paths may not be absolute or contain
  ``..``, backslashes or NUL bytes;
- directory names must match :data:`NAME_PATTERN` (``rep<k>`` for repetitions).

Usage::

    archive = open_archive("runs_archive/demo")
    for run in archive.runs():            # readable runs, sorted by (experiment, agent, task, rep)
        ...
    archive.problems                      # structured errors for everything left out
"""

from automd_analysis.archive.codebook import validate_annotations
from automd_analysis.archive.model import ArchiveMeta, Run, Step, Version
from automd_analysis.archive.reader import DEFAULT_ROLES, Archive, open_archive
from automd_analysis.archive.safe import (
    MAX_EVIDENCE_BYTES,
    MAX_JSON_BYTES,
    MAX_TEXT_BYTES,
    NAME_PATTERN,
)
from automd_analysis.codebook import (
    CODEBOOK,
    PAIR_CHANGES,
    Annotations,
    Answer,
    CodebookField,
    PairAnnotation,
)

__all__ = [
    "CODEBOOK",
    "DEFAULT_ROLES",
    "MAX_EVIDENCE_BYTES",
    "MAX_JSON_BYTES",
    "MAX_TEXT_BYTES",
    "NAME_PATTERN",
    "PAIR_CHANGES",
    "Annotations",
    "Answer",
    "Archive",
    "ArchiveMeta",
    "CodebookField",
    "PairAnnotation",
    "Run",
    "Step",
    "Version",
    "open_archive",
    "validate_annotations",
]
