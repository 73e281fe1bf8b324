"""Real-time rule: the masking-test results of sequential runs (paper section 4.2 and App. G).

The results come from :func:`automd_analysis.masking.results.read_masking_results` (``masking.parquet``
written by ``automd masking run``, or a file produced elsewhere): one row per tested run with its
``status`` (``violation``, ``below_threshold``, ``no_change``, ``error``), ``flagged``, the two
changed-alarm fractions and whether the full re-run reproduced the archived alarms.

- :func:`masking_runs` - the per-run table the notebook shows (paper App. G lists its cases);
- :func:`masking_summary` - counts per agent and task, per agent, and over everything (the paper
  reports, e.g., three flagged runs among 13 tested).

A run is *flagged* when either fraction exceeds the threshold (0.1 %); *no change* means both
fractions are exactly zero; a run whose re-run failed (``error``) is counted but not tested.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from automd_analysis.analysis.catalog.methods_and_development import MASKING_RUNS, MASKING_SUMMARY
from automd_analysis.version_pairs import require_columns

__all__ = ["ALL", "masking_runs", "masking_summary"]

#: Label of pooled rows in :func:`masking_summary`.
ALL = "(all)"

_REQUIRED = ("run_id", "agent", "task", "status", "flagged", "fraction_all_rows",
             "fraction_last_rows")  # fmt: skip


def masking_runs(results: pd.DataFrame) -> pd.DataFrame:
    """One row per tested run, sorted by agent, task and repetition.

    Parameters
    ----------
    results : DataFrame
        Masking results (:func:`automd_analysis.masking.results.read_masking_results`).

    Returns
    -------
    DataFrame
        The columns of ``masking_runs``; optional columns absent from ``results`` are empty.
    """
    require_columns(results, _REQUIRED, "masking results")
    out = results.reindex(columns=MASKING_RUNS.named)
    order = out.assign(_rep=pd.to_numeric(out["rep"], errors="coerce"))
    order = order.sort_values(["agent", "task", "_rep", "run_id"], kind="mergesort")
    return MASKING_RUNS.frame(out.loc[order.index].reset_index(drop=True))


def _counts(group: pd.DataFrame) -> dict:
    status = group["status"].astype(str)
    tested = status != "error"
    reproduces = group.get("reproduces_original")
    not_reproduced = 0
    if reproduces is not None:
        failed = reproduces.astype("boolean").eq(False).fillna(False).astype(bool)
        not_reproduced = int((failed & tested).sum())
    fractions = {}
    for name in ("fraction_all_rows", "fraction_last_rows"):
        values = pd.to_numeric(group.loc[tested, name], errors="coerce").dropna()
        fractions[f"max_{name}"] = float(values.max()) if len(values) else np.nan
    return {
        "n_runs": len(group),
        "n_tested": int(tested.sum()),
        "n_flagged": int((status == "violation").sum()),
        "n_below_threshold": int((status == "below_threshold").sum()),
        "n_no_change": int((status == "no_change").sum()),
        "n_errors": int((status == "error").sum()),
        "n_not_reproduced": not_reproduced,
        **fractions,
    }


def masking_summary(results: pd.DataFrame) -> pd.DataFrame:
    """Masking-test counts per agent and task, per agent (task ``(all)``) and overall.

    For each group: ``n_runs`` results, ``n_tested`` (status other than ``error``), ``n_flagged``
    (``violation``), ``n_below_threshold``, ``n_no_change``, ``n_errors``, ``n_not_reproduced``
    (tested runs whose full re-run did not give the archived alarms) and the largest changed-alarm
    fractions among tested runs (NaN when none was tested).

    Returns
    -------
    DataFrame
        The columns of ``masking_summary``; per (agent, task) rows, then each agent's ``(all)`` row, then the
        ``(all)``/``(all)`` row. Empty results give only the overall row with zero counts.
    """
    require_columns(results, _REQUIRED, "masking results")
    rows = []
    frame = results.assign(agent=results["agent"].astype(str), task=results["task"].astype(str))
    for (agent, task), group in frame.groupby(["agent", "task"], sort=True):
        rows.append({"agent": agent, "task": task, **_counts(group)})
    for agent, group in frame.groupby("agent", sort=True):
        rows.append({"agent": agent, "task": ALL, **_counts(group)})
    rows.append({"agent": ALL, "task": ALL, **_counts(frame)})
    return MASKING_SUMMARY.frame(pd.DataFrame(rows, columns=MASKING_SUMMARY.named))
