"""Docstring text that several analysis functions share, filled in with
:func:`~automd_analysis.docstrings.fill_doc`."""

from __future__ import annotations

__all__ = [
    "AS_AGENT_SUMMARY",
    "EXAMPLE_STORE",
    "PARAMETERS_AS_AGENT_SUMMARY",
    "RAISES_AS_AGENT_SUMMARY",
    "bootstrap_references",
    "returns_task_agent_summary",
]

#: The Parameters section of a table computed as Table 2 is, from the runs' bootstrap replicates.
PARAMETERS_AS_AGENT_SUMMARY = """
Parameters
----------
store, experiment, alpha, seed, n_boot
    As :func:`~automd_analysis.analysis.primary.agent_summary`.
"""

#: The Raises section of a table computed from the runs' bootstrap replicates.
RAISES_AS_AGENT_SUMMARY = """
Raises
------
ScoreStoreError
    As :func:`~automd_analysis.analysis.primary.agent_summary`.
"""

#: The Examples section's set-up of a table computed from the runs' bootstrap replicates.
EXAMPLE_STORE = """
Examples
--------
>>> from automd_analysis.analysis._doc_example import example_store_with_replicates
"""

#: The fragments of a table function that takes the parameters of Table 2's
#: (``@parameters_of(agent_summary)``): ``@fill_doc(references=..., **AS_AGENT_SUMMARY)``.
AS_AGENT_SUMMARY = {
    "parameters_as_agent_summary": PARAMETERS_AS_AGENT_SUMMARY,
    "raises_as_agent_summary": RAISES_AS_AGENT_SUMMARY,
    "example_store": EXAMPLE_STORE,
}


def bootstrap_references(source: str) -> str:
    """The References section of a table with bootstrap intervals: the paper's ``source``, then
    the bootstrap's."""
    return f"""
References
----------
.. [1] Auto-MD-bench, {source}.
.. [2] Davison AC, Hinkley DV (1997). Bootstrap Methods and their Application, sec. 3.8.
"""


def returns_task_agent_summary(metric: str) -> str:
    """The Returns section of a per-task table of ``metric`` (Tables 12 and 13)."""
    return f"""
Returns
-------
DataFrame
    :func:`~automd_analysis.analysis.store.task_agent_summary` of ``"{metric}"``: ``task, agent,
    mean, sd, n_valid``, sorted by task then agent (baseline last).
"""
