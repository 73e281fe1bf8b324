"""Risk calibration and modelling practices: paper Table 3, Table 13, Figure 2a/2b, Table 20 and
reliability diagrams (paper section 4.3, App. F and App. I).

ECE values come from the score store (``scores.parquet`` ``ece``: 10 equal-width bins for binary and
sequential tasks, the Kaplan-Meier ECE of App. F for survival tasks); practices come from the code
annotations (``annotations.parquet``, codebook in ``docs/archive.md``).

Rules implemented here:

- **Table 3 / 13**: valid runs are averaged within each task first; tasks are then weighted equally
  within each task class and across all tasks. The simple baseline's per-task value is the mean over
  its (five) repetitions.
- **Figure 2a** (App. I): for a valid run r on task t(r), ``d_r = ECE_r - ECE_ref(t(r))`` where
  ``ECE_ref`` is the mean baseline ECE of the task. V holds all valid agent runs, G one practice group;
  the group's share of runs is ``|G| / |V|`` and its share of the total ECE difference is
  ``sum_{r in G} d_r / sum_{r in V} d_r`` (negative differences are kept). Groups: runs that submit
  averaged ranks as probabilities; runs that handle class imbalance without recalibration and do
  not submit averaged ranks; all other runs.
- **Figure 2b**: classification and sequential valid runs that handle class imbalance and do not
  submit averaged ranks, with vs without recalibration.
- **Table 20**: each practice as a percentage of the eligible valid runs (eligibility per
  ``docs/archive.md``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from automd_analysis.analysis._docstrings import (
    AS_AGENT_SUMMARY,
    bootstrap_references,
    returns_task_agent_summary,
)
from automd_analysis.analysis.catalog.calibration_and_practices import (
    FIG2A,
    FIG2B,
    FIG2B_SUMMARY,
    RELIABILITY,
    TABLE3,
    TABLE13,
    TABLE20,
    TABLE20_WIDE,
)
from automd_analysis.analysis.primary import agent_summary
from automd_analysis.analysis.store import (
    DEFAULT_EXPERIMENTS,
    TASK_CLASSES,
    ScoreStore,
    agent_order,
    agent_positions,
    run_answers,
    selected_runs,
    task_agent_summary,
)
from automd_analysis.docstrings import fill_doc
from automd_analysis.errors import ScoreStoreError
from automd_analysis.signatures import parameters_of
from automd_analysis.stats.intervals import check_alpha, estimate, summarise
from automd_analysis.stats.resample import RunDraws, resample, run_draws
from automd_analysis.stats.rules import (
    mean_over,
    mean_sd,
    per_cell,
    row_groups,
    valid_only,
)

__all__ = [
    "GROUP_AVERAGED_RANKS",
    "GROUP_IMBALANCE_NO_RECAL",
    "GROUP_OTHER",
    "GROUP_UNANNOTATED",
    "PRACTICES",
    "Practice",
    "baseline_ece",
    "ece_by_task",
    "ece_by_task_class",
    "ece_decomposition",
    "practice_groups",
    "practice_prevalence",
    "practice_prevalence_wide",
    "recalibration_effect",
    "recalibration_summary",
    "reliability_bins",
    "reliability_table",
    "table13",
    "table20",
    "table20_wide",
    "table3",
]

GROUP_AVERAGED_RANKS = "averaged_ranks"
GROUP_IMBALANCE_NO_RECAL = "imbalance_without_recalibration"
GROUP_OTHER = "other"
GROUP_UNANNOTATED = "unannotated"
_GROUP_ORDER = (GROUP_AVERAGED_RANKS, GROUP_IMBALANCE_NO_RECAL, GROUP_OTHER, GROUP_UNANNOTATED)

#: ``class_imbalance_handling`` values that mean "no imbalance handling".
_NO_IMBALANCE = frozenset({"none", "na"})
_BINARY_KINDS = frozenset({"classification", "sequential"})


# --------------------------------------------------------------------------------------------------
# Table 3 and Table 13


@fill_doc(returns=returns_task_agent_summary("ece"))
def ece_by_task(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.DataFrame:
    """Paper Table 13: ECE per task and agent over valid runs.

    ``mean`` / ``sd`` (``ddof=1``) / ``n_valid`` of ECE over the valid runs with a finite ECE of every
    (task, agent); the baseline's row averages its (five) repetitions.

    {returns}
    """
    return TABLE13.frame(task_agent_summary(store, experiment, "ece"))


@fill_doc(references=bootstrap_references("Table 3 and App. F"), **AS_AGENT_SUMMARY)
@parameters_of(agent_summary)
def ece_by_task_class(store, experiment, *, alpha, seed, n_boot) -> pd.DataFrame:
    """Paper Table 3: ECE by agent and task class (the paper's plug-in value), and its
    bias-corrected value with a two-stage bootstrap interval.

    ``ECE(a, class) = mean over tasks t of the class of ( mean ECE of a's valid runs on t )``; ``all``
    weights every task equally. Tasks where the agent has no valid run with a finite ECE are left
    out of the average; a class with no such task is NaN. These plug-in columns (``survival``,
    ``classification``, ``sequential``, ``all``) are what App. F and Table 3 report; they carry no
    interval, because the binned ECE is biased upwards and its percentile interval can lie above
    it. ``<class>_bc`` is the bootstrap bias-corrected value 2 ECE - mean(ECE*) over the B columns
    of the two-stage bootstrap (:func:`~automd_analysis.stats.resample.run_draws`: the runs
    of every (agent, task) redrawn, each drawn run's ECE on test resample b) and
    ``<class>_bc_ci_low/high`` its bootstrap interval
    (:func:`~automd_analysis.stats.intervals.bias_corrected`); empty without replicates.

    {parameters_as_agent_summary}

    Returns
    -------
    DataFrame
        ``agent``, ``survival``, ``classification``, ``sequential``, ``all``, their ``<class>_bc``,
        then ``<class>_bc_ci_low``, ``<class>_bc_ci_high``; one row per agent, the baseline last.

    {raises_as_agent_summary}

    See Also
    --------
    ece_by_task : the per-task values (Table 13).
    automd_analysis.stats.rules : the aggregation rules.

    {references}

    {example_store}
    >>> table = ece_by_task_class(example_store_with_replicates())
    >>> table.columns.tolist()[:6]
    ['agent', 'survival', 'classification', 'sequential', 'all', 'survival_bc']
    >>> bool(((table["all_bc_ci_low"] <= table["all_bc"]) & (table["all_bc"] <= table["all_bc_ci_high"])).all())
    True
    """
    alpha = check_alpha(alpha)
    runs = selected_runs(store, experiment)
    matrix = run_draws(
        runs, store.replicates, ("agent", "task"), n_boot=n_boot, seed=seed, tag="table3"
    )
    rows = _table3_rows(matrix)
    return TABLE3.frame(summarise(rows, TABLE3.intervals, alpha, **TABLE3.best_marks(rows)))


def _table3_rows(matrix: RunDraws) -> list[dict]:
    """Table 3's rows, every value in every matrix column."""
    cells = row_groups(matrix.units, ["agent", "task"])
    per_task = per_cell(valid_only(matrix.ece, matrix.valid), list(cells.values()))
    kinds = matrix.units.drop_duplicates("task").set_index("task")["task_kind"]
    cell_agent = np.array([k[0] for k in cells])
    cell_kind = np.array([kinds[k[1]] for k in cells])
    rows = []
    for agent in agent_order(matrix.units["agent"]):
        row: dict = {"agent": agent}
        for kind in (*TASK_CLASSES, "all"):
            mask = cell_agent == agent
            if kind != "all":
                mask &= cell_kind == kind
            dist = mean_over(per_task, mask)
            row[kind], row[f"{kind}_bc"] = float(dist[0]), dist
        rows.append(row)
    return rows


def baseline_ece(store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]) -> pd.Series:
    """Reference ECE of each task: mean ECE over the simple baseline's valid runs (``reference``).

    Returns a Series indexed by task (only tasks with at least one finite baseline ECE).
    """
    runs = selected_runs(store, experiment)
    ref = runs.loc[runs["reference"] & runs["valid"] & runs["ece"].notna()]
    return ref.groupby("task", sort=True)["ece"].mean().rename("baseline_ece")


# --------------------------------------------------------------------------------------------------
# Practice groups (Figure 2)


def _imbalance_handled(value) -> bool:
    return value is not None and value not in _NO_IMBALANCE


def _group_of(answers: pd.Series) -> str:
    if all(v is None for v in answers.to_numpy()):
        return GROUP_UNANNOTATED
    if answers.get("averaged_ranks_as_probabilities") == "yes":
        return GROUP_AVERAGED_RANKS
    if (
        _imbalance_handled(answers.get("class_imbalance_handling"))
        and answers.get("recalibration_after_imbalance") == "no"
    ):
        return GROUP_IMBALANCE_NO_RECAL
    return GROUP_OTHER


def practice_groups(
    store: ScoreStore, experiment: str | Sequence[str] = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """Valid agent runs with their ECE and calibration-practice group (paper App. I, Figure 2).

    Group of a run, from its annotations:

    1. ``averaged_ranks`` - ``averaged_ranks_as_probabilities == "yes"``;
    2. ``imbalance_without_recalibration`` - not 1, ``class_imbalance_handling`` is a handling
       method (not ``none``/``na``) and ``recalibration_after_imbalance == "no"``;
    3. ``other`` - every other annotated run (``uncertain`` answers count as "not yes");
    4. ``unannotated`` - runs without any annotation (kept apart rather than silently counted as
       ``other``).

    Returns
    -------
    DataFrame
        One row per valid non-reference run with a finite ECE: ``run_id``, ``agent``, ``task``,
        ``task_kind``, ``rep``, ``objective``, ``auroc``, ``ece``, ``averaged_ranks``,
        ``imbalance_handling``, ``recalibration``, ``probability_calibration``, ``group``.
    """
    runs = selected_runs(store, experiment, include_reference=False)
    runs = runs.loc[runs["valid"] & runs["ece"].notna()].reset_index(drop=True)
    fields = {
        "averaged_ranks": "averaged_ranks_as_probabilities",
        "imbalance_handling": "class_imbalance_handling",
        "recalibration": "recalibration_after_imbalance",
        "probability_calibration": "probability_calibration",
    }
    answers = run_answers(store, runs["run_id"], fields.values())
    out = runs[["run_id", "agent", "task", "task_kind", "rep", "objective", "auroc", "ece"]].copy()
    for column, field_name in fields.items():
        out[column] = answers[field_name]
    out["group"] = [_group_of(row) for _, row in answers.iterrows()]
    return out


def _missing_baseline(tasks: Iterable[str]) -> ScoreStoreError:
    tasks = sorted(tasks)
    return ScoreStoreError(
        "the ECE decomposition needs the simple baseline's ECE on every task, but there is no "
        f"valid baseline run (reference) for task(s) {', '.join(tasks)}",
        location="runs with reference == True",
        fix="add baseline runs (`automd baselines TASK_ID --seeds 0-4`) and re-run `automd score`, "
        "or restrict the analysis with tasks=[...]",
        code="store.no_baseline",
        details={"tasks": tasks},
    )


def _slot_runs(store: ScoreStore, experiment: str) -> pd.DataFrame:
    """Every run of the experiment (baseline and invalid runs included: they fill the slots of
    stage 1), with the practice columns of :func:`practice_groups` for the runs in V (else NaN)."""
    runs = selected_runs(store, experiment).reset_index(drop=True)
    groups = practice_groups(store, experiment).set_index("run_id")
    for column in ("group", "imbalance_handling", "recalibration", "averaged_ranks", "task_kind"):
        runs[f"v_{column}"] = runs["run_id"].map(groups[column])
    return runs


def _run_draws(runs: pd.DataFrame, n_boot: int, seed: int, tag: str):
    """The runs redrawn within every (agent, task) (``source``: each drawn run brings its own ECE
    and practice group, so no residual is widened), validity held fixed, the test sets held fixed
    (the stored ECE replicates are biased upwards on small test sets, which would move a ratio of
    sums of differences in ways that are not sampling variation)."""
    units = runs.assign(valid=runs["valid"].to_numpy(bool) & runs["ece"].notna().to_numpy())
    return resample(
        units, ("agent", "task"), n_boot=n_boot, seed=seed, tag=tag, model_validity=False
    )


def _share(part: np.ndarray, whole: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(whole != 0, part / np.where(whole != 0, whole, 1.0), np.nan)


@fill_doc(references=bootstrap_references("App. I and Figure 2a"))
def ece_decomposition(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    tasks: Iterable[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Figure 2a: contributions of practice groups to the ECE gap from the simple baselines.

    With ``d_r = ECE_r - ECE_ref(t(r))`` (``ECE_ref`` = mean ECE of the baseline's valid
    repetitions on the task, :func:`baseline_ece`) and V = all valid agent runs
    (:func:`practice_groups`):

    - ``n_runs`` = |G|, ``share_of_runs`` = |G| / |V|
    - ``share_of_difference`` = sum_{r in G} d_r / sum_{r in V} d_r (NaN when the denominator is 0;
      negative d_r are kept, so a share can be negative or exceed 1)
    - ``mean_ece`` = mean ECE_r over G.

    .. math:: \\text{share}_G = \\frac{\\sum_{r \\in G} d_r}{\\sum_{r \\in V} d_r}, \\qquad
              d_r = \\mathrm{ECE}_r - \\mathrm{ECE}_{ref}(t(r))

    The three shares and means get 95 % percentile intervals from ``n_boot`` draws of the runs
    (:func:`~automd_analysis.stats.resample.resample`, validity and test sets held fixed):
    every (agent, task)'s runs - the baseline's included, so ``ECE_ref`` is redrawn too - are
    redrawn with replacement, each drawn run brings its validity, ECE and practice group, and the
    decomposition is recomputed. The test sets are held fixed.

    Parameters
    ----------
    store : ScoreStore
    experiment : str
        The main experiment.
    tasks : iterable of str, optional
        Restrict V to these tasks.
    n_boot : int, default 1000
    seed : int, default 0
    alpha : float, default 0.05

    Returns
    -------
    DataFrame ``group, n_runs, share_of_runs, share_of_difference, mean_ece`` and the intervals
    ``share_of_runs_ci_low/high``, ``share_of_difference_ci_low/high``, ``mean_ece_ci_low/high``:
    one row per group in the order averaged ranks, imbalance without recalibration, other (always
    present, possibly with 0 runs), then ``unannotated`` only when such runs exist.

    Raises
    ------
    ScoreStoreError
        A task in V has no valid baseline run (``store.no_baseline``): the reference is undefined.
        The error lists the tasks; restrict ``tasks`` or add baseline runs.

    {references}
    """
    alpha = check_alpha(alpha)
    runs = _slot_runs(store, experiment)
    if tasks is not None:
        runs = runs.loc[runs["task"].isin(set(tasks))].reset_index(drop=True)
    in_v = runs["v_group"].notna().to_numpy()
    reference = (runs["reference"] & runs["valid"] & runs["ece"].notna()).to_numpy()
    missing = set(runs.loc[in_v, "task"]) - set(runs.loc[reference, "task"])
    if missing:
        raise _missing_baseline(missing)
    draws = _run_draws(runs, n_boot, seed, "fig2a_ece_decomposition")
    ece = np.where(draws.valid, runs["ece"].to_numpy(float)[draws.source], np.nan)
    ref = np.full(ece.shape, np.nan)
    baseline = runs["reference"].to_numpy(bool)
    for rows in row_groups(runs, ["task"]).values():
        ref[rows] = mean_over(ece, rows[baseline[rows]])
    member = in_v[draws.source] & draws.valid
    group = draws.take("v_group")
    d = np.where(member, ece - ref, 0.0)
    undefined = (member & ~np.isfinite(d)).any(
        axis=0
    )  # a task whose drawn baseline runs all failed
    total_runs = member.sum(axis=0).astype(float)
    total_d = np.where(undefined, np.nan, d.sum(axis=0))
    rows_out = []
    for name in _GROUP_ORDER:
        mine = member & (group == name)
        n = int(mine[:, 0].sum())
        if name == GROUP_UNANNOTATED and not n:
            continue
        count = mine.sum(axis=0).astype(float)
        rows_out.append(
            {
                "group": name,
                "n_runs": n,
                "share_of_runs": _share(count, total_runs),
                "share_of_difference": _share(np.where(mine, d, 0.0).sum(axis=0), total_d),
                "mean_ece": _share(np.where(mine, ece, 0.0).sum(axis=0), count),
            }
        )
    return FIG2A.frame(summarise(rows_out, FIG2A.intervals, alpha))


def recalibration_effect(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """Figure 2b data: ECE with vs without recalibration after class-imbalance handling.

    Runs: valid classification and sequential agent runs whose ``class_imbalance_handling`` is a
    handling method, that do not submit averaged ranks, and whose ``recalibration_after_imbalance``
    is ``yes`` or ``no``.

    Returns
    -------
    DataFrame
        ``run_id``, ``agent``, ``task``, ``imbalance_handling``, ``recalibrated`` (bool), ``ece``,
        sorted by run_id.
    """
    runs = practice_groups(store, experiment)
    keep = _recalibration_eligible(runs)
    out = runs.loc[keep, ["run_id", "agent", "task", "imbalance_handling", "recalibration", "ece"]]
    out = out.assign(recalibrated=out["recalibration"] == "yes").drop(columns="recalibration")
    out = out[["run_id", "agent", "task", "imbalance_handling", "recalibrated", "ece"]]
    return FIG2B.frame(out.sort_values("run_id", kind="mergesort").reset_index(drop=True))


def _recalibration_eligible(runs: pd.DataFrame, prefix: str = "") -> pd.Series:
    """Figure 2b's runs among ``runs`` (practice columns named ``prefix + column``)."""
    return (
        runs[f"{prefix}task_kind"].isin(_BINARY_KINDS)
        & runs[f"{prefix}imbalance_handling"].map(_imbalance_handled)
        & (runs[f"{prefix}averaged_ranks"] != "yes")
        & runs[f"{prefix}recalibration"].isin(["yes", "no"])
    )


@fill_doc(references=bootstrap_references("Figure 2b"))
def recalibration_summary(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Mean +- SD ECE of the two Figure 2b groups, with a 95 % interval of each mean.

    Columns ``recalibrated``, ``n_runs``, ``mean``, ``sd``, ``mean_ci_low``, ``mean_ci_high``. Both
    groups (``False`` first) are always present; an empty group has NaN statistics. The interval
    redraws the runs of every (agent, task) with replacement, as :func:`ece_decomposition` does: a
    drawn run counts in a group when it is one of :func:`recalibration_effect`'s runs with that
    recalibration answer. The test sets are held fixed.

    .. math:: \\bar e_g = \\frac{1}{|R_g|} \\sum_{r \\in R_g} \\mathrm{ECE}_r

    {references}
    """
    alpha = check_alpha(alpha)
    runs = _slot_runs(store, experiment)
    eligible = (runs["v_group"].notna() & _recalibration_eligible(runs, "v_")).to_numpy()
    recalibrated = (runs["v_recalibration"] == "yes").to_numpy()
    draws = _run_draws(runs, n_boot, seed, "fig2b_recalibration_summary")
    ece = runs["ece"].to_numpy(float)
    drawn = np.where(draws.valid, ece[draws.source], np.nan)
    rows = []
    for flag in (False, True):
        mine = eligible & (recalibrated == flag)
        mean, sd = mean_sd(ece[mine])
        values = np.where(mine[draws.source], drawn, np.nan)
        low, high = estimate(mean_over(values, np.arange(len(runs))), alpha)[1:]
        rows.append(
            {
                "recalibrated": flag,
                "n_runs": int(mine.sum()),
                "mean": mean,
                "sd": sd,
                "mean_ci_low": low,
                "mean_ci_high": high,
            }
        )
    return FIG2B_SUMMARY.frame(rows)


# --------------------------------------------------------------------------------------------------
# Table 20


@dataclass(frozen=True)
class Practice:
    """One row of Table 20.

    Attributes
    ----------
    name : str
        Row label.
    field : str
        Annotation field (``docs/archive.md`` codebook).
    positive : frozenset of str or None
        Values counted as "practice used"; ``None`` means any value not in ``negative``.
    negative : frozenset of str
        Values counted as "not used" when ``positive`` is None.
    eligible : str
        ``all``, ``binary`` (classification + sequential), ``imbalance`` (binary runs that handle
        class imbalance), ``survival``, ``ehr`` (``ehr_tasks`` or, without them, runs answered
        yes/no) or ``shift`` (external tasks with a cohort/hospital shift).
    """

    name: str
    field: str
    positive: frozenset | None
    eligible: str
    negative: frozenset = frozenset()


#: Table 20 rows, in display order.
PRACTICES: tuple[Practice, ...] = (
    Practice("averaged_ranks_as_probabilities", "averaged_ranks_as_probabilities", {"yes"}, "all"),
    Practice("probability_calibration", "probability_calibration", {"yes"}, "all"),
    Practice("class_imbalance_handling", "class_imbalance_handling", None, "binary", _NO_IMBALANCE),
    Practice(
        "recalibration_after_imbalance", "recalibration_after_imbalance", {"yes"}, "imbalance"
    ),
    Practice(
        "censoring_error",
        "censoring_handling",
        {"censored_as_death", "censored_as_survivor", "wrong_ipcw"},
        "survival",
    ),
    Practice("missingness_features", "missingness_features", {"yes"}, "ehr"),
    Practice("subgroup_checks", "subgroup_checks", {"yes"}, "all"),
    Practice("validation_under_shift", "validation_under_shift", {"yes"}, "shift"),
)


def practice_prevalence(
    store: ScoreStore,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    ehr_tasks: Iterable[str] | None = None,
    practices: Sequence[Practice] = PRACTICES,
) -> pd.DataFrame:
    """Paper Table 20: modelling practices by agent, as % of eligible valid runs.

    ``percent = 100 * n_positive / n_eligible`` where the eligible runs are the agent's valid runs
    of the practice's scope (:class:`Practice`) that have an answer for the field; ``n_missing``
    counts in-scope runs without an answer, or answered ``na`` (excluded from the denominator). Eligibility of
    ``missingness_features`` (EHR tasks and NHANES in the paper): ``ehr_tasks`` when given, else the
    runs whose answer is ``yes``/``no`` (``na`` marks the other tasks).

    Returns
    -------
    DataFrame
        ``practice``, ``agent``, ``n_eligible``, ``n_positive``, ``n_missing``, ``percent`` (NaN when
        nothing is eligible); practices in :data:`PRACTICES` order, agents in display order.
    """
    runs = selected_runs(store, experiment, include_reference=False)
    runs = runs.loc[runs["valid"]].reset_index(drop=True)
    fields = [practice.field for practice in practices]
    answers = run_answers(store, runs["run_id"], [*fields, "class_imbalance_handling"])
    ehr = set(ehr_tasks) if ehr_tasks is not None else None
    rows = []
    for practice in practices:
        values = answers[practice.field]
        # "na" on an eligible run contradicts the eligibility rule: count it as not answered
        values = values.where(values.notna() & (values != "na"), None)
        in_scope = _scope(practice.eligible, runs, answers, values, ehr)
        if practice.positive is None:
            negative = practice.negative
            positive = values.map(lambda v, neg=negative: v is not None and v not in neg)
        else:
            positive = values.isin(list(practice.positive))
        for agent in agent_order(runs["agent"]):
            mine = in_scope & (runs["agent"] == agent)
            answered = mine & values.notna()
            n_eligible = int(answered.sum())
            n_positive = int((answered & positive).sum())
            percent = 100.0 * n_positive / n_eligible if n_eligible else math.nan
            rows.append(
                {
                    "practice": practice.name,
                    "agent": agent,
                    "n_eligible": n_eligible,
                    "n_positive": n_positive,
                    "n_missing": int((mine & ~answered).sum()),
                    "percent": percent,
                }
            )
    return TABLE20.frame(rows)


def _scope(
    eligible: str,
    runs: pd.DataFrame,
    answers: pd.DataFrame,
    values: pd.Series,
    ehr: set | None,
) -> pd.Series:
    binary = runs["task_kind"].isin(_BINARY_KINDS)
    if eligible == "all":
        return pd.Series(True, index=runs.index)
    if eligible == "binary":
        return binary
    if eligible == "imbalance":
        handling = answers["class_imbalance_handling"]
        return binary & handling.map(_imbalance_handled).astype(bool)
    if eligible == "survival":
        return runs["task_kind"] == "survival"
    if eligible == "ehr":
        if ehr is not None:
            return runs["task"].isin(ehr)
        return values.isin(["yes", "no"])
    if eligible == "shift":
        return (runs["validation"] == "external") & runs["shift"].isin(["cohort", "hospital"])
    raise ValueError(f"unknown eligibility {eligible!r}")


def practice_prevalence_wide(table: pd.DataFrame) -> pd.DataFrame:
    """Pivot :func:`practice_prevalence` to one row per practice and one percentage column per agent."""
    wide = table.pivot(index="practice", columns="agent", values="percent")
    order = list(dict.fromkeys(table["practice"]))
    wide = wide.reindex(index=order, columns=agent_order(table["agent"]))
    wide.columns.name = None
    return TABLE20_WIDE.frame(wide.reset_index())


# --------------------------------------------------------------------------------------------------
# Reliability diagrams


def reliability_bins(
    store: ScoreStore,
    task: str,
    experiment: str = DEFAULT_EXPERIMENTS["main"],
    *,
    agents: Iterable[str] | None = None,
) -> pd.DataFrame:
    """Reliability-diagram data of one task: each agent's per-run bins, averaged over its runs.

    From ``calibration_bins.parquet`` (selected valid submissions; survival groups with fewer than
    five patients, ``kept == False``, are dropped). For every agent and bin (``kind``, ``quantile``,
    ``bin``), over the agent's runs whose bin is not empty:

    .. math:: \\bar p_b = \\frac{1}{R_b} \\sum_r \\bar p_{r,b}, \\qquad
              \\bar o_b = \\frac{1}{R_b} \\sum_r o_{r,b}

    ``mean_pred`` and ``observed`` are the plain means of the runs' bin means (NaN for a bin empty
    in every run), ``n_runs`` = R_b, ``n`` = the observations in the bin summed over the runs, and
    ``lo``/``hi`` (binary) or ``time`` (survival). Averaging per run, not pooling the runs'
    predictions, is what the smoothed calibration curves do
    (:func:`~automd_analysis.analysis.calibration_measures.smoothed_curves`: each run's curve,
    averaged over the runs), so the bins drawn on a curve describe the same average run; it is
    also how the tables average ECE (per run, then over runs).

    Parameters
    ----------
    store : ScoreStore
    task : str
    experiment : str
    agents : iterable of str, optional
        Only these agents.

    Returns
    -------
    DataFrame
        ``agent``, ``kind``, ``quantile``, ``time``, ``bin``, ``lo``, ``hi``, ``n``, ``n_runs``,
        ``mean_pred``, ``observed``; sorted by agent (display order), quantile, bin.

    See Also
    --------
    reliability_table : every task.

    References
    ----------
    .. [1] Niculescu-Mizil A, Caruana R (2005). Predicting good probabilities with supervised
       learning. ICML, 625-632 (reliability diagrams).

    Examples
    --------
    Agent ``a``'s first bin on ``clf`` holds 10 predictions in one run, 30 in another, none in the
    third: the bin is the mean of the two runs' bins (pooling would give 0.08 and 0.15).

    >>> from automd_analysis.analysis._doc_example import example_store
    >>> from automd_analysis.schema import RUN_KEY
    >>> store, _ = example_store()
    >>> mine = store.runs.query("experiment == 'main' and agent == 'a' and task == 'clf'")
    >>> bins = mine[list(RUN_KEY)].assign(kind="binary", quantile=np.nan, time=np.nan, bin=0,
    ...     lo=0.0, hi=0.1, n=[10, 30, 0], mean_pred=[0.05, 0.09, np.nan],
    ...     observed=[0.0, 0.2, np.nan], kept=True, weight=np.nan)
    >>> store = ScoreStore.from_frames(scores=store.scores, runs=store.runs, calibration_bins=bins)
    >>> reliability_bins(store, "clf")[["n", "n_runs", "mean_pred", "observed"]].round(3)
        n  n_runs  mean_pred  observed
    0  40       2       0.07       0.1
    """
    runs = selected_runs(store, experiment)
    valid = runs.loc[runs["valid"] & (runs["task"] == task), "run_id"]
    bins = store.calibration_bins
    bins = bins.loc[bins["run_id"].isin(set(valid)) & bins["kept"]].copy()
    if agents is not None:
        bins = bins.loc[bins["agent"].isin(set(agents))]
    columns = RELIABILITY.named[1:]  # the published table has a leading task column
    if bins.empty:
        return RELIABILITY.frame()[columns]
    n = bins["n"].to_numpy(float)
    bins["_n"] = n
    bins["_nonempty"] = n > 0
    bins["_pred"] = bins["mean_pred"].where(bins["_nonempty"])
    bins["_obs"] = bins["observed"].where(bins["_nonempty"])
    bins["_q"] = bins["quantile"].fillna(-1.0)
    grouped = bins.groupby(["agent", "kind", "_q", "bin"], sort=True)
    out = grouped.agg(
        quantile=("quantile", "first"),
        time=("time", "first"),
        lo=("lo", "first"),
        hi=("hi", "first"),
        n=("_n", "sum"),
        n_runs=("_nonempty", "sum"),
        mean_pred=("_pred", "mean"),
        observed=("_obs", "mean"),
    ).reset_index()
    out["n"] = out["n"].astype("int64")
    out["n_runs"] = out["n_runs"].astype("int64")
    order = agent_positions(out["agent"])
    out["_order"] = out["agent"].map(order)
    out = out.sort_values(["_order", "kind", "_q", "bin"], kind="mergesort")
    return out[columns].reset_index(drop=True)


def reliability_table(
    store: ScoreStore, experiment: str = DEFAULT_EXPERIMENTS["main"]
) -> pd.DataFrame:
    """:func:`reliability_bins` of every task with calibration bins, with a leading ``task`` column.

    Sorted by task, then as :func:`reliability_bins`.
    """
    frames = []
    for task in sorted(set(store.calibration_bins["task"])):
        bins = reliability_bins(store, task, experiment)
        if len(bins):
            frames.append(bins.assign(task=task))
    if not frames:
        return RELIABILITY.frame()
    return RELIABILITY.frame(pd.concat(frames, ignore_index=True)[RELIABILITY.named])


# Paper names (the notebooks use the descriptive names above).
table3 = ece_by_task_class
table13 = ece_by_task
table20 = practice_prevalence
table20_wide = practice_prevalence_wide
