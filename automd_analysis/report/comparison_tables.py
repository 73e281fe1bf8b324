"""Display specifications of the comparison and calibration-measure tables (notebooks 01 and 02).

The analyses (:mod:`automd_analysis.analysis.uncertainty` through
:mod:`automd_analysis.analysis.intervals`, :mod:`automd_analysis.analysis.calibration_measures`,
:mod:`automd_analysis.analysis.annotation_provenance`) return tidy numeric tables; this module says
how their LaTeX/HTML renderings look (:data:`TABLE_SPECS`, used by
:meth:`automd_analysis.report.notebook.Report.table` for these names) and builds the captions that
name the annotator of the practice tables (:func:`annotator_caption`). Nothing here computes a new
number.
"""

from __future__ import annotations

import pandas as pd

from automd_analysis.report.tables import TABLE_SPECS as PAPER_SPECS
from automd_analysis.report.tables import Stat, TableSpec

__all__ = ["TABLE_SPECS", "annotator_caption"]

_PAIR = {"agent_a": "Agent A", "agent_b": "Agent B", "measure": "Measure"}

#: Display specifications (keyed by CSV file stem).
TABLE_SPECS: dict[str, TableSpec] = {
    "pairwise_comparisons": TableSpec(
        caption="Paired comparison of every pair of agents on the primary score and on ECE. Mean "
        "difference: mean over the common tasks of A's per-task mean minus B's (score: invalid "
        "runs count 0; ECE: valid runs). p: two-sided sign-flip test across tasks; Holm p: "
        "adjusted over the pairs of each measure. Tasks A better: higher score, lower ECE.",
        labels=("agent_a", "agent_b", "measure"),
        stats=(
            Stat("Mean difference (A - B)", "diff_mean"),
            Stat("p", "p_value"),
            Stat("Holm p", "p_holm"),
            Stat("Tasks", "n_tasks", integer=True),
            Stat("Tasks A better", "tasks_a_better", integer=True),
        ),
        exclude_from_best=(),
        titles=_PAIR,
    ),
    "power_table": TableSpec(
        caption="Repetitions per agent and task at which each observed mean difference would be "
        "significant on these tasks (two-sided, normal approximation, observed run-to-run and "
        "test-set variances). – : unreachable, the difference is within the test-set noise. "
        "SE: standard error of the mean difference at the observed runs; test-set SE: its part "
        "that more repetitions cannot remove.",
        labels=("agent_a", "agent_b", "measure"),
        stats=(
            Stat("Mean difference (A - B)", "diff_mean"),
            Stat("Tasks", "n_tasks", integer=True),
            Stat("Runs observed", "reps_observed", integer=True),
            Stat("SE", "se_observed"),
            Stat("Test-set SE", "se_test_set"),
            Stat("Repetitions needed", "reps_needed", integer=True),
        ),
        exclude_from_best=(),
        titles=_PAIR,
    ),
    "calibration_slope_intercept": TableSpec(
        caption="Calibration slope and intercept by agent and task class (mean ± SD over the "
        "class's tasks of the per-task mean over valid runs). Calibrated: slope 1, intercept 0. "
        "Binary tasks: logistic recalibration slope and calibration-in-the-large; survival: "
        "Cox calibration slope at the median event time (no intercept).",
        labels=("agent", "task_class"),
        stats=(
            Stat("Slope", "slope_mean", "slope_sd"),
            Stat("Intercept", "intercept_mean", "intercept_sd"),
            Stat("Tasks", "n_tasks", integer=True),
            Stat("Runs", "n_runs", integer=True),
        ),
        titles={"task_class": "task class"},
    ),
    "calibration_by_measure": TableSpec(
        caption="Calibration of each agent under each measure (valid runs averaged within task, "
        "tasks weighted equally; lower is better: ECE, ICI, |slope - 1|, |intercept|, "
        "D-calibration X²/n). Bold: best agent under the measure.",
        pivot=("measure", "agent"),
        cell=Stat("value", "value"),
        direction="min",
    ),
    "calibration_measure_correlations": TableSpec(
        caption="Rank correlation between calibration measures: over the agents' values (agent) "
        "or over the (task, agent) cells (task).",
        labels=("level", "measure_a", "measure_b"),
        stats=(
            Stat("Pairs", "n", integer=True),
            Stat("Spearman", "spearman"),
            Stat("Kendall", "kendall"),
        ),
        exclude_from_best=(),
    ),
    "calibration_ranking_agreement": TableSpec(
        caption="Each measure's ranking of the agents against the paper's 10-bin ECE: rank "
        "correlation, agent pairs in reversed order, and the best-calibrated agent.",
        labels=("measure", "best_agent"),
        stats=(
            Stat("Agents", "n_agents", integer=True),
            Stat("Spearman", "spearman"),
            Stat("Kendall", "kendall"),
            Stat("Agent pairs", "n_pairs", integer=True),
            Stat("Reversed", "n_flipped", integer=True),
        ),
        exclude_from_best=(),
        titles={"best_agent": "best agent"},
    ),
    "annotation_provenance": TableSpec(
        caption="Who produced the codebook answers of the valid agent runs behind Figure 2a and "
        "Table 20 (archive: the run's own annotations.json; generated: automd annotate output "
        "passed with --annotations; none: no answers).",
        labels=("annotator", "annotations_source"),
        stats=(Stat("Runs", "n_runs", integer=True),),
        exclude_from_best=(),
        titles={"annotations_source": "source"},
    ),
}


def annotator_caption(name: str, provenance: pd.DataFrame) -> str:
    """The registered caption of table ``name`` followed by who produced its codebook answers.

    ``<caption> <provenance sentence>`` with the sentence of
    :func:`~automd_analysis.analysis.annotation_provenance.provenance_text`; tables without a
    registered caption get the sentence alone.

    Parameters
    ----------
    name : str
        Table name (e.g. ``fig2a_ece_decomposition``, ``table20_practices``).
    provenance : DataFrame
        :func:`~automd_analysis.analysis.annotation_provenance.annotation_provenance`.

    Returns
    -------
    str

    See Also
    --------
    automd_analysis.analysis.annotation_provenance.provenance_text

    References
    ----------
    .. [1] Auto-MD-bench, App. I.

    Examples
    --------
    >>> prov = pd.DataFrame({"annotator": ["automd annotate 0.1.0"],
    ...     "annotations_source": ["generated"], "n_runs": [12]})
    >>> annotator_caption("table20_practices", prov)
    'Codebook answers by automd annotate 0.1.0 (12 runs, generated outside the archive).'
    """
    from automd_analysis.analysis.annotation_provenance import provenance_text

    spec = PAPER_SPECS.get(name) or TABLE_SPECS.get(name)
    base = spec.caption if spec is not None else ""
    return f"{base} {provenance_text(provenance)}".strip()
