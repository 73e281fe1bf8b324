"""What every published table and figure shows, which analysis publishes it and its paper number.

The report index (:func:`automd_analysis.report.site.build_index`) groups the exported files by
analysis (one report notebook each) and gives every table one line saying what it shows, with its
number in the source paper (Auto-MD-bench, or FML-bench for the process metrics). A file the
catalog does not know (a table of a notebook added later) is listed under "Other" by its name.
``docs/tables.md`` has the columns and the exact definitions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ANALYSES", "FIGURES", "TABLES", "Entry", "lookup"]

#: Report notebooks in report order: stem -> short title.
ANALYSES: dict[str, str] = {
    "01_primary_scores": "Primary scores",
    "02_calibration_and_practices": "Calibration and modelling practices",
    "03_evaluation_objectives": "Evaluation objectives",
    "04_population_shift": "Population shift",
    "05_subgroups": "Subgroups",
    "06_llm_comparison": "Same agent, different LLMs",
    "07_methods_and_development": "Methods and development",
}


@dataclass(frozen=True)
class Entry:
    """One published table or figure.

    Attributes
    ----------
    notebook : str
        Stem of the report notebook that publishes it (a key of :data:`ANALYSES`).
    paper : str
        Its number in the source paper (``"Table 2"``, ``"FML-bench Table 4"``), or ``""``.
    summary : str
        One line: what it shows.
    """

    notebook: str
    paper: str
    summary: str


_01, _02, _03, _04 = (
    "01_primary_scores",
    "02_calibration_and_practices",
    "03_evaluation_objectives",
    "04_population_shift",
)
_05, _06, _07 = "05_subgroups", "06_llm_comparison", "07_methods_and_development"

#: Tables by export name.
TABLES: dict[str, Entry] = {
    "overview_runs": Entry(_01, "", "Runs and valid runs per experiment and agent."),
    "table2_primary_scores": Entry(
        _01, "Table 2", "Penalised and non-penalised score, valid runs and ranks per agent."
    ),
    "pairwise_comparisons": Entry(
        _01, "", "Every pair of agents compared on score and ECE: difference, interval, p-value."
    ),
    "power_table": Entry(
        _01, "", "Repetitions per task that would make each difference between agents significant."
    ),
    "table12_task_scores": Entry(_01, "Table 12", "Normalised primary score per task and agent."),
    "invalid_submissions": Entry(_01, "App. E", "Why runs were invalid, by agent and first check."),
    "run_coverage": Entry(_01, "", "Runs scored, valid and skipped per task and agent."),
    "extra_metrics_by_agent": Entry(
        _01, "", "Metrics of your own (automd score --metric) per agent and task class."
    ),
    "table3_ece": Entry(_02, "Table 3", "ECE per agent and task class."),
    "table13_task_ece": Entry(_02, "Table 13", "ECE per task and agent."),
    "annotation_provenance": Entry(_02, "", "Who produced the codebook answers behind Fig. 2a."),
    "fig2a_ece_decomposition": Entry(
        _02, "Fig. 2a", "Practice groups' share of runs and of the ECE gap to the baselines."
    ),
    "fig2b_recalibration": Entry(
        _02, "Fig. 2b", "ECE of runs handling class imbalance, with or without recalibration."
    ),
    "fig2b_recalibration_summary": Entry(
        _02, "Fig. 2b", "Mean ECE with and without recalibration after imbalance handling."
    ),
    "table20_practices": Entry(
        _02, "Table 20", "Modelling practices as % of eligible valid runs (long form, counts)."
    ),
    "table20_practices_wide": Entry(
        _02, "Table 20", "Modelling practices as % of eligible valid runs, one column per agent."
    ),
    "annotation_agreement": Entry(
        _02, "", "Agreement of automd annotate with the archive's own answers, per field."
    ),
    "annotation_agreement_values": Entry(
        _02, "", "Precision and recall of every generated codebook value."
    ),
    "annotation_agreement_confusion": Entry(
        _02, "", "The archive's answers against the generated ones (counts)."
    ),
    "calibration_by_measure": Entry(_02, "", "The agents' calibration under seven measures."),
    "calibration_ranking_agreement": Entry(
        _02, "", "Each measure's ranking of the agents against the 10-bin ECE's."
    ),
    "calibration_rank_flips": Entry(
        _02, "", "Agent pairs whose order reverses under another calibration measure."
    ),
    "calibration_measure_correlations": Entry(
        _02, "", "Rank correlations between calibration measures."
    ),
    "calibration_slope_intercept": Entry(
        _02, "", "Calibration slope and intercept per agent and task class."
    ),
    "reliability_bins": Entry(_02, "", "The pooled bins behind the reliability diagrams."),
    "smoothed_calibration_curves": Entry(
        _02, "", "The smoothed calibration curves behind the curve figures."
    ),
    "decision_curves": Entry(_02, "", "Net benefit by risk threshold per task and agent."),
    "table4_objectives": Entry(
        _03, "Table 4", "AUROC, Brier and ECE under each stated objective (all agents)."
    ),
    "table15_objectives_by_agent": Entry(
        _03, "Table 15", "AUROC, Brier and ECE under each stated objective, by agent."
    ),
    "table16_objective_practices": Entry(
        _03, "Table 16", "Calibration-relevant practices under each stated objective."
    ),
    "fig4_objectives": Entry(_03, "Fig. 4", "The runs behind Figure 4 and their practice group."),
    "table5_external": Entry(
        _04, "Table 5", "Score on external tasks and its ratio to the score without the shift."
    ),
    "table5_external_detail": Entry(
        _04, "Table 5", "Table 5 with the SDs and counts behind each cell."
    ),
    "table14_subgroup_gaps": Entry(
        _05, "Table 14", "Gap between the best and worst subgroup per task, attribute and agent."
    ),
    "subgroup_results": Entry(_05, "", "Every subgroup's score per task and agent."),
    "subgroup_checks": Entry(_05, "", "Valid runs whose code checked performance by subgroup."),
    "table7_llm": Entry(
        _06, "Table 7", "One agent with several LLMs: score, ECE, validity, tokens."
    ),
    "table22_llm": Entry(_06, "Table 22", "Table 7 with SDs and run counts."),
    "table11_tokens": Entry(_06, "Table 11", "Tokens per run by agent."),
    "table6_methods": Entry(_07, "Table 6", "Modelling methods of valid runs (long form, counts)."),
    "table6_methods_wide": Entry(
        _07, "Table 6", "Modelling methods of valid runs, one column per agent."
    ),
    "table17_censoring_summary": Entry(
        _07, "Table 17", "Valid survival runs that mishandle censoring, by agent."
    ),
    "table17_censoring": Entry(_07, "Table 17", "Each survival run with a censoring error."),
    "table18_development": Entry(
        _07, "Table 18", "Development pace and submission selection per agent."
    ),
    "fig5_development_curves": Entry(_07, "Fig. 5", "Mean test score over development time."),
    "version_pairs_sampled": Entry(_07, "App. H", "The version pairs drawn for annotation."),
    "version_pairs_coverage": Entry(
        _07, "App. H", "Drawn version pairs with and without an annotation."
    ),
    "fig3_pair_changes": Entry(
        _07, "Fig. 3", "Share of version pairs with each change type, by agent and stage."
    ),
    "table19_pair_changes": Entry(_07, "Table 19", "Score change of version pairs by change type."),
    "masking_summary": Entry(_07, "App. G", "Masking test of the real-time rule per agent, task."),
    "masking_runs": Entry(_07, "App. G", "Masking test result of every tested run."),
    "process_metrics_table4": Entry(
        _07, "FML-bench Table 4", "Process metrics per agent and their correlation with the score."
    ),
    "process_spearman": Entry(
        _07, "FML-bench", "Spearman correlation of each process metric with the final score."
    ),
    "process_metrics_runs": Entry(_07, "FML-bench", "Process metrics of every run."),
    "process_win_rate": Entry(_07, "FML-bench", "Head-to-head win-rate per agent."),
    "process_opportunity_density": Entry(_07, "FML-bench", "Opportunity density per task."),
}

#: Figures by export name; ``<task>`` stands for any task id.
FIGURES: dict[str, Entry] = {
    "table2_forest": Entry(_01, "Table 2", "Each agent's mean score with its 95% interval."),
    "pairwise_score": Entry(_01, "", "Score difference of every pair of agents."),
    "table3_forest": Entry(_02, "Table 3", "ECE per agent and task class with 95% intervals."),
    "pairwise_ece": Entry(_02, "", "ECE difference of every pair of agents."),
    "fig2a_ece_decomposition": Entry(_02, "Fig. 2a", "Where the ECE gap to the baselines sits."),
    "fig2b_recalibration": Entry(_02, "Fig. 2b", "Recalibration after imbalance handling."),
    "calibration_measure_ranks": Entry(_02, "", "Each agent's rank under each measure."),
    "reliability_<task>": Entry(_02, "", "Reliability diagrams of one task."),
    "calibration_curve_<task>": Entry(_02, "", "Smoothed calibration curves of one task."),
    "decision_curves": Entry(_02, "", "Decision curves of the classification tasks."),
    "fig4_objectives": Entry(_03, "Fig. 4", "AUROC and ECE under each stated objective."),
    "table5_forest": Entry(_04, "Table 5", "External / internal ratio with 95% intervals."),
    "external_ratios": Entry(_04, "Table 5", "External / internal score ratio per agent."),
    "subgroup_gaps": Entry(_05, "Table 14", "Mean gap between subgroups per agent."),
    "table7_forest": Entry(_06, "Table 7", "Score and ECE per LLM with 95% intervals."),
    "fig5_development": Entry(_07, "Fig. 5", "Mean test score over development time."),
    "fig3_pair_changes": Entry(_07, "Fig. 3", "Change types of version pairs by stage."),
    "process_spearman": Entry(_07, "FML-bench", "Process metrics against the final score."),
}


def lookup(name: str, kind: str = "table") -> Entry | None:
    """The catalog entry of a published table (``kind="table"``) or figure (``"figure"``).

    Figure names ending in a task id match their ``<task>`` pattern
    (``reliability_demo_sepsis`` -> ``reliability_<task>``).

    Parameters
    ----------
    name : str
        Export name (file stem).
    kind : {"table", "figure"}

    Returns
    -------
    Entry or None
        ``None`` for a name the catalog does not know.

    See Also
    --------
    automd_analysis.report.site.build_index : groups the index by these entries.

    References
    ----------
    .. [1] Auto-MD-bench paper, Tables 2-22 and Figures 2-5; FML-bench, Table 4.

    Examples
    --------
    >>> lookup("table2_primary_scores").paper
    'Table 2'
    >>> lookup("reliability_demo_sepsis", "figure").notebook
    '02_calibration_and_practices'
    >>> lookup("my_table") is None
    True
    """
    if kind not in ("table", "figure"):
        raise ValueError(f"kind must be 'table' or 'figure', got {kind!r}")
    entries = TABLES if kind == "table" else FIGURES
    if name in entries:
        return entries[name]
    for pattern, entry in entries.items():
        if pattern.endswith("<task>"):
            prefix = pattern[: -len("<task>")]
            if name.startswith(prefix) and re.fullmatch(r"[A-Za-z0-9_.\-]+", name[len(prefix) :]):
                return entry
    return None
