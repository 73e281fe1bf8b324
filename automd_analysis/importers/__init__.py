"""Import real agent runs into the archive format (``automd import``; docs/importing.md).

One module per source format reads the agent's own output into a common intermediate
(:class:`ImportedRun` of :class:`ImportedNode`), :mod:`.selection` applies the paper's App. C rule,
and :mod:`.writer` writes the run atomically. Sources are untrusted data (:mod:`._source`,
:mod:`.safe_yaml`): nothing is executed, imported or unpickled.

=================  ======================================================  =====================
format             SOURCE                                                  selection rule
=================  ======================================================  =====================
``aide``           AIDE log directory ``logs/<n>-<name>/``                 best non-faulty node
``aiscientist-v2`` ``logs/0-run/`` with ``stage_*`` directories            latest-stage best node
``codex``          run directory + ``sessions/**/rollout-*.jsonl``         final file
``autoresearch``   work directory (``journal.md`` / ``results.tsv``)       final file
``fmlbench``       run directory with ``summary.json``, or ``results/``    earliest best-val step
``mlebench``       run-group directory (``metadata.json``)                 best non-faulty node
=================  ======================================================  =====================
"""

from automd_analysis.importers._common import DEFAULT_BUDGET_MINUTES, ImportOptions
from automd_analysis.importers._source import Limits, SourceDir
from automd_analysis.importers.api import FORMATS, ImportReport, import_source, read_tokens_file
from automd_analysis.importers.model import (
    FINAL_VERSION,
    ImportedNode,
    ImportedRun,
    Metric,
    TokenCount,
)
from automd_analysis.importers.predictions import parse_predictions
from automd_analysis.importers.problems import FATAL, PROBLEM_CODES, RECORDED, SourceError
from automd_analysis.importers.safe_yaml import UnsafeYamlError, load_agent_yaml
from automd_analysis.importers.study import StudyReport, import_study

__all__ = [
    "DEFAULT_BUDGET_MINUTES",
    "FATAL",
    "FINAL_VERSION",
    "FORMATS",
    "PROBLEM_CODES",
    "RECORDED",
    "ImportOptions",
    "ImportReport",
    "ImportedNode",
    "ImportedRun",
    "Limits",
    "Metric",
    "SourceDir",
    "SourceError",
    "StudyReport",
    "TokenCount",
    "UnsafeYamlError",
    "import_source",
    "import_study",
    "load_agent_yaml",
    "parse_predictions",
    "read_tokens_file",
]
