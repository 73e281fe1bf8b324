"""Scoring an archive into its score store, as ``automd score`` asks for it (docs/score_store.md).

The engine is :mod:`automd_analysis.scoring`; this is the name the command line calls it by.
"""

from __future__ import annotations

from automd_analysis.scoring import ScoreSummary, score_archive
from automd_analysis.scoring.engine import DEFAULT_BOOTSTRAP, VERSION_BOOTSTRAP

__all__ = ["DEFAULT_BOOTSTRAP", "VERSION_BOOTSTRAP", "ScoreSummary", "score_archive"]
