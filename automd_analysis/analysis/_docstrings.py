"""Docstring text that several analysis functions share, filled in with
:func:`~automd_analysis.docstrings.fill_doc`."""

from __future__ import annotations

__all__ = ["RAISES_AS_AGENT_SUMMARY"]

#: The Raises section of a table computed from the runs' bootstrap replicates.
RAISES_AS_AGENT_SUMMARY = """
Raises
------
ScoreStoreError
    As :func:`~automd_analysis.analysis.primary.agent_summary`.
"""
