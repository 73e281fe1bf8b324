"""Every table and figure of report notebooks 01-06, exported the way the notebooks export them.

The notebooks are the one path to the published tables and figures: each cell calls an analysis
function and publishes the result with :meth:`~automd_analysis.report.notebook.Report.table` or
:meth:`~automd_analysis.report.notebook.Report.figure`. The table/figure tests and
``bench/bench_analysis_report.py`` need all of them from a hand-built score store without running
papermill, so :func:`export_notebook_outputs` makes the same calls, notebook by notebook, in the
notebooks' order. ``tests/test_report_tables.py`` checks that it publishes exactly the names the
notebooks publish, so the two cannot drift apart.

Imported as ``import notebook_exports`` (pytest puts ``tests/`` on ``sys.path``; the bench adds it).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from automd_analysis.analysis import (
    annotation_provenance,
    annotator_agreement,
    calibration_practices,
    llm,
    objectives,
    primary,
    shift,
    subgroups,
    uncertainty,
)
from automd_analysis.analysis.measure_comparison import compare_calibration_measures
from automd_analysis.analysis.store import ScoreStore
from automd_analysis.report import calibration_figures, figures, uncertainty_figures
from automd_analysis.report.notebook import Report

ROOT = Path(__file__).resolve().parent.parent
#: The notebooks this module mirrors (notebook 07 has its own tests: test_nb07_*.py).
NOTEBOOKS = sorted((ROOT / "notebooks").glob("0[1-6]_*.ipynb"))


def report_on(store: ScoreStore, output_dir: str | Path, *, seed: int = 0) -> Report:
    """A :class:`Report` around an in-memory store (what ``open_report`` returns for an archive),
    without small-cell suppression."""
    out = Path(output_dir)
    return Report(
        archive=out / "archive",
        archive_name="test",
        scores_dir=out / "scores",
        output_dir=out,
        manifests_dir=None,
        data_root=None,
        seed=seed,
        store=store,
    )


def export_notebook_outputs(
    report: Report,
    *,
    main_experiment: str = "main",
    objectives_experiment: str = "objectives",
    llm_experiment: str = "llm",
    draw_figures: bool = True,
) -> list[tuple[str, str]]:
    """Run the analysis and export cells of notebooks 01-06 on ``report``.

    Parameters
    ----------
    report : Report
        See :func:`report_on`.
    main_experiment, objectives_experiment, llm_experiment : str
        The notebooks' experiment-role parameters.
    draw_figures : bool
        ``False`` publishes the tables only (the figures' Agg/SVG rendering dominates the time).

    Returns
    -------
    list of (kind, name)
        ``("table", name)`` for ``tables/<name>.{csv,tex,html}``, ``("figure", name)`` for
        ``figures/<name>.{png,svg}``, in the order the notebooks publish them.
    """
    store, main = report.store, {"experiment": main_experiment}
    published: list[tuple[str, str]] = []

    def table(frame, name):
        report.table(frame, name)
        published.append(("table", name))

    def figure(draw, name):
        if draw_figures:
            report.figure(draw(), name)
            published.append(("figure", name))

    # 01 primary scores
    report.overview()
    published.append(("table", "overview_runs"))
    table2 = primary.agent_summary(store, **main, seed=report.seed)
    pairwise = uncertainty.pairwise_comparisons(store, **main, seed=report.seed)
    table(table2, "table2_primary_scores")
    figure(lambda: uncertainty_figures.table2_forest(table2), "table2_forest")
    table(pairwise, "pairwise_comparisons")
    figure(lambda: uncertainty_figures.pairwise_matrix(pairwise, "score"), "pairwise_score")
    table(uncertainty.power_table(store, **main), "power_table")
    table(primary.scores_by_task(store, **main), "table12_task_scores")
    table(
        primary.invalid_breakdown(store, **main, units=report.task_units()), "invalid_submissions"
    )
    table(primary.coverage(store, **main), "run_coverage")
    table(primary.coverage_by_run(store, **main), "run_coverage_runs")
    # 02 calibration and practices
    table3 = calibration_practices.ece_by_task_class(store, **main, seed=report.seed)
    table(table3, "table3_ece")
    figure(lambda: uncertainty_figures.table3_forest(table3), "table3_forest")
    figure(lambda: uncertainty_figures.pairwise_matrix(pairwise, "ece"), "pairwise_ece")
    table(calibration_practices.ece_by_task(store, **main), "table13_task_ece")
    table(annotation_provenance.annotation_provenance(store, **main), "annotation_provenance")
    decomposition = calibration_practices.ece_decomposition(store, **main, seed=report.seed)
    table(decomposition, "fig2a_ece_decomposition")
    figure(lambda: figures.figure2a(decomposition), "fig2a_ece_decomposition")
    recalibration = calibration_practices.recalibration_effect(store, **main)
    table(recalibration, "fig2b_recalibration")
    summary = calibration_practices.recalibration_summary(store, **main, seed=report.seed)
    table(summary, "fig2b_recalibration_summary")
    figure(
        lambda: figures.figure2b(recalibration, summary, seed=report.seed), "fig2b_recalibration"
    )
    table20 = calibration_practices.practice_prevalence(store, **main)
    table(table20, "table20_practices")
    table(calibration_practices.practice_prevalence_wide(table20), "table20_practices_wide")
    agreement = annotator_agreement.annotator_agreement(store, **main)
    table(agreement.fields, "annotation_agreement")
    table(agreement.values, "annotation_agreement_values")
    table(agreement.confusion, "annotation_agreement_confusion")
    measures = compare_calibration_measures(store, **main)
    table(measures.by_measure, "calibration_by_measure")
    figure(
        lambda: calibration_figures.measure_rank_figure(measures.by_measure),
        "calibration_measure_ranks",
    )
    table(measures.agreement, "calibration_ranking_agreement")
    table(measures.flips, "calibration_rank_flips")
    table(measures.correlations, "calibration_measure_correlations")
    table(measures.slope_intercept, "calibration_slope_intercept")
    reliability = calibration_practices.reliability_table(store, **main)
    table(reliability, "reliability_bins")
    for fig in report.reliability_figures(reliability) if draw_figures else ():
        task = fig.figure.get_suptitle().removeprefix("Reliability: ")
        published.append(("figure", f"reliability_{task}"))
    table(measures.curves, "smoothed_calibration_curves")
    if draw_figures:
        curves = calibration_figures.smoothed_calibration_figures(measures.curves, reliability)
        for task, fig in curves.items():
            report.figure(fig, f"calibration_curve_{task}")
            published.append(("figure", f"calibration_curve_{task}"))
    table(measures.decision_curves, "decision_curves")
    figure(
        lambda: calibration_figures.decision_curve_figure(measures.decision_curves),
        "decision_curves",
    )
    # 03 evaluation objectives
    roles = {"main_experiment": main_experiment, "objectives_experiment": objectives_experiment}
    table(objectives.objective_summary(store, **roles, seed=report.seed), "table4_objectives")
    table15 = objectives.objective_summary_by_agent(store, **roles, seed=report.seed)
    table(table15, "table15_objectives_by_agent")
    table(objectives.objective_practices(store, **roles), "table16_objective_practices")
    points = objectives.objective_points(store, **roles)
    baseline = objectives.objective_baseline(store, **roles)
    table(points, "fig4_objectives")
    figure(lambda: figures.figure4(points, baseline, seed=report.seed), "fig4_objectives")
    # 04 population shift
    table5 = shift.external_ratios(store, **main, seed=report.seed)
    table(table5, "table5_external")
    figure(lambda: uncertainty_figures.table5_forest(table5), "table5_forest")
    table(shift.external_ratios_detail(store, **main), "table5_external_detail")
    figure(lambda: figures.external_ratio_figure(table5), "external_ratios")
    # 05 subgroups
    table14 = subgroups.subgroup_gaps(store, **main, seed=report.seed)
    table(table14, "table14_subgroup_gaps")
    figure(lambda: figures.subgroup_gap_figure(table14), "subgroup_gaps")
    table(subgroups.subgroup_table(store, **main), "subgroup_results")
    table(subgroups.subgroup_checks(store, **main), "subgroup_checks")
    # 06 LLM comparison
    roles = {"main_experiment": main_experiment, "llm_experiment": llm_experiment}
    table7 = llm.llm_summary(store, **roles, seed=report.seed)
    table(table7, "table7_llm")
    figure(lambda: uncertainty_figures.table7_forest(table7), "table7_forest")
    table(llm.llm_summary_detail(store, **roles), "table22_llm")
    table(llm.token_usage(store, **main), "table11_tokens")
    return published


def notebook_exports(paths=None) -> set[tuple[str, str]]:
    """What notebooks 01-06 (or the notebooks ``paths``) publish, read from their code cells
    (never run): ``report.table(..., "name")`` is ``("table", name)``, ``report.figure(...,
    "name")`` ``("figure", name)``, ``report.overview()`` ``("table", "overview_runs")`` and
    ``report.reliability_figures(...)`` ``("figure", "reliability_<task>")``."""
    found: set[tuple[str, str]] = set()
    for path in NOTEBOOKS if paths is None else paths:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            source = re.sub(r"^\s*[%!].*$", "", source, flags=re.M)  # IPython magics
            for node in ast.walk(ast.parse(source)):
                if not (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "report"
                ):
                    continue
                method = node.func.attr
                if method == "overview":
                    found.add(("table", "overview_runs"))
                elif method == "reliability_figures":
                    found.add(("figure", "reliability_<task>"))
                elif method in ("table", "figure"):
                    name = node.args[1]
                    if isinstance(name, ast.JoinedStr):  # f"calibration_curve_{task}"
                        prefix = "".join(
                            v.value for v in name.values if isinstance(v, ast.Constant)
                        )
                        found.add((method, f"{prefix}<task>"))
                        continue
                    assert isinstance(name, ast.Constant), f"{path.name}: computed export name"
                    found.add((method, name.value))
    return found
