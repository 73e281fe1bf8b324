"""FML-bench's own tasks as process-only tasks: the metric, its direction and its range.

An FML-bench run's ``summary.json`` names its task's primary metric and direction
(``task_config{metric, metric_direction}``) and the untouched baseline's validation value
(``baseline_primary_metric``), but not the range the paper normalises improvements by. That
range is a fact of each task, stated in FML-bench's App. A (per-task cards), App. E (the
unbounded-worst convention ``p_worst = p_baseline``) and Table 5 (theoretical best values), and
used by its ``compute_agent_metrics.py``: :data:`FMLBENCH_SCALES` holds it for the 18 tasks of
the paper. A task it does not list (or whose log names another metric or direction) is declared
without a range: the process metrics that need one (AUC-over-steps, opportunity density) are NaN
for it.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from automd_analysis.importers.problems import SourceError, problem
from automd_analysis.tasks import ProcessTask

__all__ = ["FMLBENCH_SCALES", "FmlScale", "process_task"]


class FmlScale(NamedTuple):
    """One FML-bench task: its metric as the log names it and the normalisation range."""

    metric: str
    higher_is_better: bool  # as the agent optimises it (summary.json metric_direction)
    best: float  # on the transformed scale
    worst: float | Literal["baseline"]
    transform: Literal["none", "neg_log10"] = "none"


_ACC = (1.0, 0.0)  # accuracy-like: best 1, worst 0

#: The paper's 18 tasks (FML-bench App. A and E, Table 5).
FMLBENCH_SCALES: dict[str, FmlScale] = {
    "Causality_causalml": FmlScale("mae_mean", False, 0.0, "baseline"),
    "Causality_gcastle": FmlScale("shd_mean", False, 0.0, "baseline"),
    "Continual_Learning_continual_learning": FmlScale("average_acc_mean", True, *_ACC),
    "Continual_Learning_pycil": FmlScale("avg_incremental_acc_mean", True, *_ACC),
    "Data_Efficiency_easyfsl": FmlScale("accuracy_mean", True, *_ACC),
    "Data_Efficiency_usb": FmlScale("test_acc_mean", True, *_ACC),
    "Fairness_and_Bias_aif360": FmlScale("abs_aod_mean", False, 0.0, 1.0),
    "Fairness_fairlearn": FmlScale("abs_demographic_parity_diff_mean", False, 0.0, 1.0),
    "Federated_Learning_PFLlib": FmlScale("test_acc_mean", True, *_ACC),
    "Generalization_domainbed": FmlScale("in_acc_mean", True, *_ACC),
    "Generalization_domainbed_officehome": FmlScale("avg_acc_mean", True, *_ACC),
    "Privacy_opacus": FmlScale("test_acc_mean", True, *_ACC),
    "Privacy_privacymeter": FmlScale("AUC_gap_mean", False, 0.0, 0.5),
    "Representation_Learning_lightly": FmlScale("test_acc_mean", True, *_ACC),
    "Representation_Learning_solo_learn": FmlScale("linear_eval_acc_mean", True, *_ACC),
    "Robustness_and_Reliability_art": FmlScale("defense_score_mean", True, *_ACC),
    "Robustness_openood": FmlScale("auroc_mean", True, *_ACC),
    # the KS-test p-value is read as -log10(p) (lower is better), worst = the baseline
    "Unlearning_open_unlearning": FmlScale(
        "forget_quality_mean", True, 0.0, "baseline", "neg_log10"
    ),  # fmt: skip
}

_DIRECTIONS = {"higher": True, "lower": False}


def process_task(task: str, config, baseline: float | None, problems: list,
                 where: str = "summary.json") -> ProcessTask:  # fmt: skip
    """The process-only declaration of FML-bench task ``task`` from its run's ``summary.json``.

    Parameters
    ----------
    task : str
        The task id (FML-bench's benchmark name, e.g. ``Causality_causalml``).
    config : dict
        ``summary.json`` ``task_config`` (``metric``, ``metric_direction``).
    baseline : float or None
        ``baseline_primary_metric`` (checked finite by the caller).
    problems : list
        Receives ``import.scale_unknown`` when the task's range is not known.
    where : str
        The file named in errors.

    Returns
    -------
    ProcessTask
        Metric and direction from the log; the range of :data:`FMLBENCH_SCALES` when the task
        is listed with the same metric and direction.

    Raises
    ------
    SourceError
        ``import.malformed`` when ``task_config`` does not give the metric or its direction
        (``higher`` / ``lower``): a process-only task is known only by them.

    References
    ----------
    .. [1] FML-bench, App. A (task cards), App. E (normalised improvement, unbounded-worst
       convention) and Table 5.

    Examples
    --------
    >>> t = process_task("Causality_causalml", {"metric": "mae_mean",
    ...                  "metric_direction": "lower"}, 0.8, [])
    >>> t.higher_is_better, t.best, t.worst, t.span
    (False, 0.0, 'baseline', 0.8)
    """
    cfg = config if isinstance(config, dict) else {}
    metric, direction = cfg.get("metric"), str(cfg.get("metric_direction")).lower()
    if not isinstance(metric, str) or not metric or direction not in _DIRECTIONS:
        raise SourceError(
            f"task {task!r} has no manifest, so it is imported as a process-only task, which "
            "needs task_config.metric and task_config.metric_direction ('higher' or 'lower')",
            path=where,
            location="task_config",
            code="import.malformed",
            fix="import a summary.json written by FML-bench's save_results, or pass --manifests "
            "with a manifest for the task",
        )
    higher = _DIRECTIONS[direction]
    known = FMLBENCH_SCALES.get(task)
    fields = {"id": task, "title": task, "metric": metric[:200], "higher_is_better": higher,
              "baseline": baseline}  # fmt: skip
    if known is not None and known.metric == metric and known.higher_is_better == higher:
        return ProcessTask(**fields, transform=known.transform, best=known.best,
                           worst=known.worst, source="FML-bench App. A/E")  # fmt: skip
    problems.append(
        problem(
            "import.scale_unknown",
            f"FML-bench's range of {metric!r} on task {task!r} is not known here; "
            "AUC-over-steps and opportunity density will be NaN for it",
            path=where,
        )
    )
    return ProcessTask(**fields, source="FML-bench summary.json")
