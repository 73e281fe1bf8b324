"""Headline findings: the few numbers a reader should take away from each report notebook.

Each function reads the tables the analyses return (:mod:`automd_analysis.analysis`) and states
one comparison per :class:`Finding`, as a Markdown sentence plus the numbers in it, so that a
notebook shows its result at a glance and nbval (which compares the sentences) fails when one of
them changes. Nothing is computed here that the analyses do not already report: these functions
only select, compare and phrase (spread = highest - lowest value; ratio = value / baseline value).

Archive-provided names (agents, LLMs, tasks, groups) are escaped for Markdown and HTML.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from automd_analysis.analysis.store import BASELINE_AGENT
from automd_analysis.docstrings import (
    COHEN_1960,
    HOLM_1979,
    PAIRWISE_INPUTS,
    VAN_CALSTER_2019,
    fill_doc,
)
from automd_analysis.precision import comparable
from automd_analysis.report.presentation import format_p_value
from automd_analysis.stats import wording

__all__ = [
    "Finding",
    "Findings",
    "calibration_findings",
    "development_findings",
    "llm_findings",
    "objective_findings",
    "primary_findings",
    "shift_findings",
    "subgroup_findings",
]

_name = wording.name


def _f(value: float, decimals: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    text = f"{value:.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def _count(n: int, noun: str) -> str:
    """``"1 pair"`` / ``"3 pairs"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _p(value: float) -> str:
    """A p-value as the tables print it (three decimals, scientific below 0.001)."""
    return format_p_value(value)


def _pct(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{100 * value:.0f}%"


@dataclass(frozen=True)
class Finding:
    """One headline: a Markdown sentence and the numbers it states.

    Attributes
    ----------
    key : str
        Stable identifier (``"ece_spread"``).
    text : str
        The sentence (Markdown; archive strings escaped).
    values : dict
        The numbers in the sentence, unrounded.
    """

    key: str
    text: str
    values: Mapping[str, float] = field(default_factory=dict)


class Findings(list):
    """A list of :class:`Finding` that Jupyter shows as a bullet list."""

    def _repr_markdown_(self) -> str:
        if not self:
            return "_No headline findings: the tables above are empty for this archive._"
        return "\n".join(f"- {f.text}" for f in self)

    def __repr__(self) -> str:
        return self._repr_markdown_()

    def by_key(self) -> dict[str, Finding]:
        return {f.key: f for f in self}


def _agents_only(frame: pd.DataFrame, column: str = "agent") -> pd.DataFrame:
    return frame[frame[column] != BASELINE_AGENT]


def _baseline_value(frame: pd.DataFrame, column: str, key: str = "agent") -> float:
    rows = frame.loc[frame[key] == BASELINE_AGENT, column]
    return float(rows.iloc[0]) if len(rows) else math.nan


def _extremes(frame: pd.DataFrame, value: str, label: str) -> tuple[str, float, str, float] | None:
    """(label of the lowest, lowest, label of the highest, highest) over finite values; ties:
    first in row order."""
    finite = frame[pd.to_numeric(frame[value], errors="coerce").notna()]
    if finite.empty:
        return None
    values = comparable(finite[value].astype(float))
    lo, hi = values.idxmin(), values.idxmax()
    return (
        str(finite.at[lo, label]),
        float(values[lo]),
        str(finite.at[hi, label]),
        float(values[hi]),
    )


# --------------------------------------------------------------------------------------------------
# 01 primary scores


def primary_findings(
    table2: pd.DataFrame,
    table12: pd.DataFrame,
    pairwise: pd.DataFrame | None = None,
    *,
    alpha: float = 0.05,
    has_replicates: bool = True,
) -> Findings:
    """Headlines of notebook 01 (paper Table 2, Table 12), each number with its interval.

    - ``score_spread``: lowest and highest agent penalised mean score (the score itself with one
      agent) and the baseline's, each with its 95 % interval (Table 2 ``penalized_mean_ci_low/high``; left out when the store had no
      replicates);
    - with ``pairwise``, :func:`comparison_findings` of the primary score: no difference between
      agents is stated unless it is significant;
    - ``tasks_above_baseline``: per agent, the tasks where its mean valid-run score (Table 12)
      exceeds the baseline's, out of the tasks where both have a mean;
    - ``invalid_<agent>``: for each agent with invalid runs, its valid-run rate and its
      non-penalised vs penalised score.

    Parameters
    ----------
    table2 : DataFrame
        :func:`~automd_analysis.analysis.primary.agent_summary`.
    table12 : DataFrame
        :func:`~automd_analysis.analysis.primary.scores_by_task`.
    pairwise : DataFrame, optional
        :func:`~automd_analysis.analysis.uncertainty.pairwise_comparisons`.
    alpha : float, default 0.05
    has_replicates : bool, default True
        Whether the store had replicates (only changes the wording of an empty ``pairwise``).

    See Also
    --------
    comparison_findings

    References
    ----------
    .. [1] Auto-MD-bench, Table 2.

    Examples
    --------
    >>> t2 = pd.DataFrame({"agent": ["a", "b"], "penalized_mean": [0.5, 0.4],
    ...     "nonpenalized_mean": [0.5, 0.4], "valid_rate_mean": [1.0, 1.0],
    ...     "penalized_mean_ci_low": [0.45, 0.3], "penalized_mean_ci_high": [0.55, 0.5]})
    >>> t12 = pd.DataFrame(columns=["task", "agent", "mean"])
    >>> pw = pd.DataFrame([{"agent_a": "a", "agent_b": "b", "measure": "score",
    ...     "diff_mean": 0.1, "ci_low": 0.05, "ci_high": 0.15, "p_value": 0.001, "p_holm": 0.001,
    ...     "n_tasks": 15, "tasks_a_better": 14, "tasks_p_value": 0.002, "tasks_p_holm": 0.002}])
    >>> for f in primary_findings(t2, t12, pw):
    ...     print(f.text)
    Penalised primary scores of the 2 agents range from 0.400 (b; 95% CI 0.300 to 0.500) to 0.500 (a; 95% CI 0.450 to 0.550).
    a scores higher than b on the primary score on these 15 tasks: mean difference +0.100 (95% CI 0.050 to 0.150), Holm-adjusted p = 0.001; across tasks (tasks as the sample): a better on 14 of 15 tasks, sign-flip Holm-adjusted p = 0.002.

    With one agent there is no range:

    >>> print(primary_findings(t2.iloc[:1], t12)[0].text)
    The one agent's penalised primary score is 0.500 (a; 95% CI 0.450 to 0.550).
    """
    out = Findings()
    comparisons = (
        comparison_findings(pairwise, "score", alpha=alpha, has_replicates=has_replicates)
        if pairwise is not None
        else Findings()
    )
    agents = _agents_only(table2).reset_index(drop=True)
    ext = _extremes(agents, "penalized_mean", "agent")
    if ext is not None:
        lo_name, lo, hi_name, hi = ext
        base = _baseline_value(table2, "penalized_mean")
        cols = ("penalized_mean_ci_low", "penalized_mean_ci_high")
        text = (
            f"Penalised primary scores of the {len(agents)} agents range from "
            f"{_end(table2, lo_name, lo, *cols)} to {_end(table2, hi_name, hi, *cols)}"
            if len(agents) > 1
            else f"The one agent's penalised primary score is {_end(table2, hi_name, hi, *cols)}"
        )
        if math.isnan(base):
            text += "."
        else:
            ci = _row_ci(table2, BASELINE_AGENT, "agent", *cols)
            text += f"; the simple baseline scores {_f(base)}" + (f" ({ci})." if ci else ".")
        values = {"low": lo, "high": hi, "spread": hi - lo, "baseline": base}
        out.append(Finding("score_spread", text, values))
    out.extend(comparisons)
    if BASELINE_AGENT in set(table12["agent"]):
        wide = table12.pivot(index="task", columns="agent", values="mean")
        base = wide[BASELINE_AGENT]
        parts, values = [], {}
        for agent in [a for a in wide.columns if a != BASELINE_AGENT]:
            both = wide[agent].notna() & base.notna()
            above = int((wide.loc[both, agent] > base[both]).sum())
            parts.append(f"{_name(agent)} on {above} of {int(both.sum())}")
            values[agent] = above
        if parts:
            out.append(
                Finding(
                    "tasks_above_baseline",
                    "Tasks where the agent's mean valid-run score exceeds the simple baseline's: "
                    + "; ".join(parts)
                    + ".",
                    values,
                )
            )
    for _, row in agents.iterrows():
        rate = float(row["valid_rate_mean"])
        if not math.isnan(rate) and rate < 1:
            out.append(
                Finding(
                    f"invalid_{row['agent']}",
                    f"{_name(row['agent'])} submitted a valid file in {_pct(rate)} of its runs; "
                    f"counting invalid runs as 0 gives {_f(row['penalized_mean'])}, averaging its "
                    f"valid runs only gives {_f(row['nonpenalized_mean'])}.",
                    {
                        "valid_rate": rate,
                        "penalized": float(row["penalized_mean"]),
                        "nonpenalized": float(row["nonpenalized_mean"]),
                    },
                )
            )
    return out


# --------------------------------------------------------------------------------------------------
# 02 calibration


def _pair_row(pairwise: pd.DataFrame | None, measure: str, x: str, y: str) -> Mapping | None:
    """The pairwise row of agents x and y (either order) for ``measure``, oriented x - y."""
    if pairwise is None or pairwise.empty:
        return None
    mine = pairwise.loc[pairwise["measure"] == measure]
    for a, b, sign in ((x, y, 1.0), (y, x, -1.0)):
        hit = mine.loc[(mine["agent_a"] == a) & (mine["agent_b"] == b)]
        if len(hit):
            row = hit.iloc[0].to_dict()
            if sign < 0:
                row["diff_mean"], row["ci_low"], row["ci_high"] = (
                    -row["diff_mean"], -row["ci_high"], -row["ci_low"],
                )  # fmt: skip
            return row
    return None


def _baseline_separation(pairwise: pd.DataFrame | None, base: float, alpha: float) -> str:
    """``"; the ECE of 2 of 4 agents differs from the simple baseline's 0.045 (paired test, ...)"``
    (``none of the 4 agents' ECEs``, ``all 4 agents' ECEs``; ``neither``/``both`` of two): how many
    agents' ECE the paired test separates from the baseline's, never a range of ratios that the
    intervals do not support."""
    if pairwise is None or pairwise.empty or math.isnan(base):
        return ""
    mine = pairwise.loc[pairwise["measure"] == "ece"]
    with_base = mine.loc[(mine["agent_a"] == BASELINE_AGENT) | (mine["agent_b"] == BASELINE_AGENT)]
    if with_base.empty:
        return ""
    separated, n = int((with_base["p_holm"].fillna(1.0) < alpha).sum()), len(with_base)
    if separated == 0:
        who = "neither agent's ECE differs" if n == 2 else f"none of the {n} agents' ECEs differs"
    elif separated == n:
        who = "both agents' ECEs differ" if n == 2 else f"all {n} agents' ECEs differ"
    else:
        who = f"the ECE of {separated} of {n} agents differs"
    return (
        f"; {who} from the simple baseline's {_f(base)} on these tasks "
        f"(paired bootstrap test, Holm-adjusted p < {alpha:g})"
    )


def _score_gap(pairwise: pd.DataFrame | None, scores) -> str:
    """The penalised-score gap between the lowest and highest agent, with the paired interval of
    that difference (without it, nothing is said about the gap)."""
    row = _pair_row(pairwise, "score", scores[2], scores[0])
    if row is None:
        return ""
    interval = _ci(float(row["ci_low"]), float(row["ci_high"]))
    return (
        f"; their penalised scores differ by {_f(float(row['diff_mean']))} between "
        f"{_name(scores[2])} and {_name(scores[0])}" + (f" ({interval})" if interval else "")
    )


def calibration_findings(
    table2: pd.DataFrame,
    table3: pd.DataFrame,
    pairwise: pd.DataFrame | None = None,
    decomposition: pd.DataFrame | None = None,
    recalibration: pd.DataFrame | None = None,
    *,
    alpha: float = 0.05,
    has_replicates: bool = True,
) -> Findings:
    """Headlines of notebook 02 (paper Table 3, Figure 2a/2b), each ECE with its interval.

    - ``ece_spread``: the agents' lowest and highest bias-corrected mean ECE over all tasks
      (Table 3 ``all_bc`` with its 95 % interval ``all_bc_ci_low/high``; the plug-in ``all``,
      named so and without an interval, when the store had no replicates), with ``pairwise``
      how many agents the paired test separates from the simple baseline's ECE, and the
      penalised-score gap between the lowest and highest agent with its paired interval;
    - with ``pairwise``, :func:`comparison_findings` of ECE;
    - ``group_<name>``: for the averaged-ranks and imbalance-without-recalibration groups of the
      ECE decomposition (Figure 2a), their share of valid runs and of the total ECE difference;
    - ``recalibration``: mean ECE of imbalance-handling runs with vs without recalibration
      (Figure 2b summary: columns ``recalibrated``, ``n_runs``, ``mean``).

    Parameters
    ----------
    table2, table3 : DataFrame
        :func:`~automd_analysis.analysis.primary.agent_summary` and
        :func:`~automd_analysis.analysis.calibration_practices.ece_by_task_class`.
    pairwise : DataFrame, optional
        :func:`~automd_analysis.analysis.uncertainty.pairwise_comparisons`.
    decomposition, recalibration : DataFrame, optional
        Figure 2a and the Figure 2b summary.
    alpha : float, default 0.05
    has_replicates : bool, default True

    See Also
    --------
    comparison_findings, measure_robustness_findings

    References
    ----------
    .. [1] Auto-MD-bench, Table 3 and Figure 2.

    Examples
    --------
    >>> t2 = pd.DataFrame({"agent": ["a", "b"], "penalized_mean": [0.5, 0.49]})
    >>> t3 = pd.DataFrame({"agent": ["a", "b"], "all": [0.06, 0.13], "all_bc": [0.05, 0.12],
    ...     "all_bc_ci_low": [0.04, 0.10], "all_bc_ci_high": [0.06, 0.15]})
    >>> pw = pd.DataFrame(columns=["agent_a", "agent_b", "measure", "p_holm"])
    >>> for f in calibration_findings(t2, t3, pw, has_replicates=False):
    ...     print(f.text)
    Over all tasks, the agents' bias-corrected mean ECE ranges from 0.050 (a; 95% CI 0.040 to 0.060) to 0.120 (b; 95% CI 0.100 to 0.150).
    The score store has no bootstrap replicates, so the report cannot say whether any two agents differ on calibration (ECE); re-score the archive with `automd score ARCHIVE --bootstrap 1000`.
    """
    out = Findings()
    scores = _extremes(_agents_only(table2).reset_index(drop=True), "penalized_mean", "agent")
    column = "all_bc" if "all_bc" in table3 and table3["all_bc"].notna().any() else "all"
    ece = _extremes(_agents_only(table3).reset_index(drop=True), column, "agent")
    if scores is not None and ece is not None:
        spread = scores[3] - scores[1]
        lo_name, lo, hi_name, hi = ece
        base = _baseline_value(table3, column)
        cols = (f"{column}_ci_low", f"{column}_ci_high")
        kind = "bias-corrected mean ECE" if column == "all_bc" else "mean ECE (plug-in)"
        text = (
            f"Over all tasks, the agents' {kind} ranges from {_end(table3, lo_name, lo, *cols)} "
            f"to {_end(table3, hi_name, hi, *cols)}"
        )
        values = {"score_spread": spread, "ece_low": lo, "ece_high": hi, "baseline_ece": base}
        text += _baseline_separation(pairwise, base, alpha)
        text += _score_gap(pairwise, scores) + "."
        out.append(Finding("ece_spread", text, values))
    if pairwise is not None:
        out.extend(comparison_findings(pairwise, "ece", alpha=alpha, has_replicates=has_replicates))
    labels = {
        "averaged_ranks": "submit averaged ranks as probabilities",
        "imbalance_without_recalibration": "handle class imbalance without recalibrating",
    }
    if decomposition is not None:
        for _, row in decomposition.iterrows():
            if row["group"] not in labels:
                continue
            out.append(
                Finding(
                    f"group_{row['group']}",
                    f"Runs that {labels[row['group']]} are {_pct_ci(row, 'share_of_runs')} of the "
                    f"valid runs ({int(row['n_runs'])}) and account for "
                    f"{_pct_ci(row, 'share_of_difference')} of the total ECE difference from the "
                    "simple baselines.",
                    {
                        "share_of_runs": float(row["share_of_runs"]),
                        "share_of_difference": float(row["share_of_difference"]),
                    },
                )
            )
    if recalibration is not None and len(recalibration):
        by = recalibration.set_index("recalibrated")
        if True in by.index and False in by.index:
            with_, without = float(by.at[True, "mean"]), float(by.at[False, "mean"])
            out.append(
                Finding(
                    "recalibration",
                    "Among runs that handle class imbalance (and do not submit averaged ranks), "
                    f"mean ECE is {_f(with_)} with recalibration "
                    f"({_runs(int(by.at[True, 'n_runs']))}{_ci_after(by.loc[True], 'mean')}) and "
                    f"{_f(without)} without ({_runs(int(by.at[False, 'n_runs']))}"
                    f"{_ci_after(by.loc[False], 'mean')}).",
                    {"with": with_, "without": without},
                )
            )
    return out


# --------------------------------------------------------------------------------------------------
# 03 objectives

_OBJECTIVE_NAMES = {"A": "the primary metric", "B": "the Brier score", "C": "AUROC plus ECE"}


def _with_ci(row: Mapping, metric: str) -> str:
    """``"0.192 (95% CI 0.140 to 0.243)"`` from ``<metric>_mean`` and its interval columns."""
    return f"{_f(row[f'{metric}_mean'])}" + _ci_in_parentheses(row, f"{metric}_mean")


def objective_findings(table4: pd.DataFrame) -> Findings:
    """Headlines of notebook 03 (paper Table 4), each naming the task of the experiment.

    - ``objective_<label>``: mean AUROC and ECE over valid runs for each stated objective, with
      their 95 % intervals (``auroc_mean_ci_low/high``, ``ece_mean_ci_low/high``: runs redrawn, the task's
      test set fixed);
    - ``ece_change``: going from objective A (primary metric) to C (AUROC + ECE), mean ECE and
      mean AUROC under each, with their intervals (only when both objectives have valid runs).

    Examples
    --------
    >>> table4 = pd.DataFrame({"task": "t1", "objective": ["A", "C"], "n_valid": [3, 3],
    ...     "auroc_mean": [0.66, 0.65], "ece_mean": [0.19, 0.04],
    ...     "auroc_mean_ci_low": [0.65, 0.64], "auroc_mean_ci_high": [0.67, 0.66],
    ...     "ece_mean_ci_low": [0.14, 0.01], "ece_mean_ci_high": [0.24, 0.08]})
    >>> print(objective_findings(table4).by_key()["ece_change"].text)  # doctest: +NORMALIZE_WHITESPACE
    On task t1, adding ECE to the stated objective moves mean ECE from 0.190 (95% CI 0.140 to
    0.240) to 0.040 (95% CI 0.010 to 0.080), while mean AUROC moves from 0.660 (95% CI 0.650 to
    0.670) to 0.650 (95% CI 0.640 to 0.660).
    """
    out = Findings()
    rows = {str(r["objective"]): r for _, r in table4.iterrows()}
    tasks = sorted({str(t) for t in table4["task"]}) if "task" in table4.columns else []
    where = f"on task {', '.join(_name(t) for t in tasks)}" if tasks else ""
    for label, row in rows.items():
        out.append(
            Finding(
                f"objective_{label}",
                f"Objective {_name(label)} ({_OBJECTIVE_NAMES.get(label, _name(label))})"
                f"{' ' + where if where else ''}: mean AUROC {_with_ci(row, 'auroc')}, mean ECE "
                f"{_with_ci(row, 'ece')} over {int(row['n_valid'])} valid runs.",
                {"auroc": float(row["auroc_mean"]), "ece": float(row["ece_mean"])},
            )
        )
    if "A" in rows and "C" in rows:
        a, c = rows["A"], rows["C"]
        if not (math.isnan(float(a["ece_mean"])) or math.isnan(float(c["ece_mean"]))):
            out.append(
                Finding(
                    "ece_change",
                    f"{where[0].upper() + where[1:] + ', a' if where else 'A'}dding ECE to the "
                    f"stated objective moves mean ECE from {_with_ci(a, 'ece')} to "
                    f"{_with_ci(c, 'ece')}, while mean AUROC moves from {_with_ci(a, 'auroc')} "
                    f"to {_with_ci(c, 'auroc')}.",
                    {
                        "ece_a": float(a["ece_mean"]),
                        "ece_c": float(c["ece_mean"]),
                        "auroc_a": float(a["auroc_mean"]),
                        "auroc_c": float(c["auroc_mean"]),
                    },
                )
            )
    return out


# --------------------------------------------------------------------------------------------------
# 04 population shift


def _pct_interval(rows: pd.DataFrame, agent: str, column: str) -> str:
    """``"95% CI 77% to 111%"``: the interval of an agent's ``column``; empty without one."""
    low, high = f"{column}_ci_low", f"{column}_ci_high"
    mine = rows.loc[rows["agent"] == agent]
    if mine.empty or low not in rows.columns or high not in rows.columns:
        return ""
    lo, hi = float(mine[low].iloc[0]), float(mine[high].iloc[0])
    return f"95% CI {_pct(lo)} to {_pct(hi)}" if math.isfinite(lo) and math.isfinite(hi) else ""


def _pct_of(rows: pd.DataFrame, agent: str, value: float, column: str) -> str:
    """``"95% (aide; 95% CI 77% to 111%)"``."""
    ci = _pct_interval(rows, agent, column)
    return f"{_pct(value)} ({_name(agent)}{'; ' + ci if ci else ''})"


def shift_findings(table5: pd.DataFrame) -> Findings:
    """Headlines of notebook 04 (paper Table 5): per external task, the lowest and highest agent
    ratio of external to internal score, and the baseline's ratio (``ratio_<task>``), each with
    its 95 % interval (``ratio_ci_low/high``) when the table has one.

    Examples
    --------
    >>> t5 = pd.DataFrame({"agent": ["a", "b"], "task": "x_ext", "internal_task": "x",
    ...     "ratio": [0.9, 0.99], "ratio_ci_low": [0.8, 0.95], "ratio_ci_high": [1.0, 1.03]})
    >>> print(shift_findings(t5)[0].text)
    x\\_ext (shifted from x): agents keep 90% (a; 95% CI 80% to 100%) to 99% (b; 95% CI 95% to 103%) of their score without the shift.
    """
    out = Findings()
    for task, rows in table5.groupby("task", sort=True):
        agents = _agents_only(rows).reset_index(drop=True)
        ext = _extremes(agents, "ratio", "agent")
        if ext is None:
            continue
        lo_name, lo, hi_name, hi = ext
        base = _baseline_value(rows, "ratio")
        internal = str(rows["internal_task"].iloc[0])
        text = (
            f"{_name(task)} (shifted from {_name(internal)}): agents keep "
            f"{_pct_of(rows, lo_name, lo, 'ratio')} to {_pct_of(rows, hi_name, hi, 'ratio')} of "
            "their score without the shift"
        )
        if not math.isnan(base):
            ci = _pct_interval(rows, BASELINE_AGENT, "ratio")
            text += f"; the simple baseline keeps {_pct(base)}" + (f" ({ci})" if ci else "")
        text += "."
        out.append(Finding(f"ratio_{task}", text, {"low": lo, "high": hi, "baseline": base}))
    return out


# --------------------------------------------------------------------------------------------------
# 05 subgroups


def _weighted(values: pd.Series, weights: pd.Series) -> float:
    mask = values.notna() & weights.notna() & (weights > 0)
    total = float(weights[mask].sum())
    return float((values[mask] * weights[mask]).sum() / total) if total > 0 else math.nan


def subgroup_findings(table14: pd.DataFrame, checks: pd.DataFrame | None = None) -> Findings:
    """Headlines of notebook 05 (paper Table 14).

    - ``gap_<attribute>``: over task groups and agents, the range of the agents' mean gaps
      (highest - lowest subgroup score; each end with its 95 % interval ``gap_mean_ci_low/high`` when
      the table has one) and of the baseline's;
    - ``same_lowest_<attribute>``: share of agent runs whose lowest subgroup is the baseline's
      lowest subgroup (``same_lowest_share`` weighted by ``n_compared``);
    - ``checks``: valid runs in which an agent checked performance by subgroup (pooled row of
      :func:`automd_analysis.analysis.subgroups.subgroup_checks`).
    """
    out = Findings()
    for attribute, rows in table14.groupby("attribute", sort=True):
        agents = _agents_only(rows)
        base = rows[rows["agent"] == BASELINE_AGENT]
        gaps = agents["gap_mean"].dropna()
        if gaps.empty:
            continue
        ends = [agents.loc[comparable(gaps).idxmin()], agents.loc[comparable(gaps).idxmax()]]
        low, high = (f"{_f(e['gap_mean'])}" + _ci_in_parentheses(e, "gap_mean") for e in ends)
        text = f"By {_name(attribute)}: agents' mean subgroup gaps range from {low} to {high}"
        values = {"agent_low": float(gaps.min()), "agent_high": float(gaps.max())}
        base_gaps = base["gap_mean"].dropna()
        if len(base_gaps):
            lo_b, hi_b = _f(base_gaps.min()), _f(base_gaps.max())
            one = _ci_after(base.iloc[0], "gap_mean") if len(base) == 1 else ""
            text += (
                f" (simple baseline: {lo_b}{one})"
                if lo_b == hi_b
                else (f" (simple baseline: {lo_b} to {hi_b})")
            )
            values.update(baseline_low=float(base_gaps.min()), baseline_high=float(base_gaps.max()))
        out.append(Finding(f"gap_{attribute}", text + ".", values))
        same = _weighted(agents["same_lowest_share"], agents["n_compared"])
        if not math.isnan(same):
            n = int(agents["n_compared"].fillna(0).sum())
            out.append(
                Finding(
                    f"same_lowest_{attribute}",
                    f"By {_name(attribute)}: in {_pct(same)} of {_runs(n)} by agents the lowest-scoring "
                    "group is the same as the simple baseline's.",
                    {"share": same, "n": n},
                )
            )
    if checks is not None and len(checks):
        pooled = checks[checks["agent"] == "(all agents)"]
        row = pooled.iloc[0] if len(pooled) else None
        if row is not None:
            out.append(
                Finding(
                    "checks",
                    f"Agents checked performance by subgroup in {int(row['n_checked'])} of "
                    f"{int(row['n_answered'])} annotated valid runs.",
                    {"n_checked": int(row["n_checked"]), "n_answered": int(row["n_answered"])},
                )
            )
    return out


# --------------------------------------------------------------------------------------------------
# 06 LLMs


def llm_findings(table7: pd.DataFrame) -> Findings:
    """Headlines of notebook 06 (paper Table 7).

    - ``llm_spread``: with one agent and several LLMs, the lowest and highest penalised mean score
      and bias-corrected mean ECE, each with its interval (``ece_mean_bc``; the plug-in
      ``ece_mean``, named so, without replicates); no gap or ratio is claimed, since Table 7 has
      no paired comparison of LLMs.
    """
    out = Findings()
    table = table7.reset_index(drop=True)
    bc = "ece_mean_bc" in table and table["ece_mean_bc"].notna().any()
    column = "ece_mean_bc" if bc else "ece_mean"
    scores = _extremes(table, "penalized_mean", "llm")
    ece = _extremes(table, column, "llm")
    if scores is None or ece is None or len(table) < 2:
        return out
    spread = scores[3] - scores[1]
    lo_name, lo, hi_name, hi = ece

    def end(name: str, value: float, col: str) -> str:
        ci = _row_ci(table, name, "llm", f"{col}_ci_low", f"{col}_ci_high")
        return f"{_f(value)} ({_name(name)}{'; ' + ci if ci else ''})"

    kind = "bias-corrected mean ECE" if bc else "mean ECE (plug-in)"
    text = (
        f"Across {len(table)} LLMs the penalised scores range from "
        f"{end(scores[0], scores[1], 'penalized_mean')} to "
        f"{end(scores[2], scores[3], 'penalized_mean')}, and the {kind} from "
        f"{end(lo_name, lo, column)} to {end(hi_name, hi, column)} (no paired test between "
        "LLMs: the intervals are each LLM's own)."
    )
    values = {"score_spread": spread, "ece_low": lo, "ece_high": hi}
    out.append(Finding("llm_spread", text, values))
    return out


# --------------------------------------------------------------------------------------------------
# 07 methods and development


def _signed(value: float, decimals: int = 3) -> str:
    text = _f(value, decimals)
    return text if text == "n/a" or text.startswith("-") or float(text) == 0 else f"+{text}"


def development_findings(
    table6: pd.DataFrame,
    table17_summary: pd.DataFrame,
    table18: pd.DataFrame,
    table19: pd.DataFrame | None = None,
    masking_summary: pd.DataFrame | None = None,
    process_table: pd.DataFrame | None = None,
    win_rate: pd.DataFrame | None = None,
) -> Findings:
    """Headlines of notebook 07 (paper Tables 6, 17, 18, 19, App. G; FML-bench Table 4).

    - ``model_family``: per agent, the model family in the largest share of its valid annotated
      runs (Table 6 ``pct_pooled``; ties: first in the table's category order);
    - ``censoring``: valid survival runs with a censoring error out of all valid survival runs,
      and how many still beat the simple baseline (Table 17, pooled row);
    - ``selection``: range over agents of the share of runs whose selected submission is the best
      version on the test set, and of reported validation minus test score (Table 18);
    - ``pair_change``: the change type in the most annotated sampled pairs, its mean score change
      and share of improvements (Table 19; ties: first in display order);
    - ``masking``: flagged runs among the tested ones and the agents they belong to, failed
      re-runs and non-reproduced runs (masking summary); ``masking_absent`` without results;
    - ``process_correlation``: the process metric with the largest absolute within-task Spearman
      rho against the final score (FML-bench Table 4 layout), its within-task permutation p-value,
      the tasks and runs behind it and the embedding backend;
    - ``win_rate``: lowest and highest pairwise win-rate.
    """
    out = Findings()
    _practice_findings(out, table6, table17_summary, table18, table19)
    _process_findings(out, masking_summary, process_table, win_rate)
    return out


def _practice_findings(out, table6, table17_summary, table18, table19) -> None:
    """Model family, censoring, selection and version-pair headlines of notebook 07."""
    families = table6[(table6["field"] == "model_families") & (table6["n_valid_runs"] > 0)]
    parts, values = [], {}
    for agent, group in families.groupby("agent", sort=True):
        pooled = comparable(group["pct_pooled"].astype(float))
        if pooled.notna().any() and pooled.max() > 0:
            best = group.loc[pooled.idxmax()]
            parts.append(f"{_name(agent)} {_name(best['category'])} ({best['pct_pooled']:.0f}%)")
            values[str(agent)] = float(best["pct_pooled"])
    if parts:
        out.append(
            Finding(
                "model_family",
                "Most used model family (share of valid annotated runs): " + "; ".join(parts) + ".",
                values,
            )
        )
    pooled = table17_summary[table17_summary["agent"] == "all"]
    if len(pooled) and int(pooled["n_valid_survival"].iloc[0]) > 0:
        row = pooled.iloc[0]
        n_err, n_surv = int(row["n_with_error"]), int(row["n_valid_survival"])
        text = f"{n_err} of {_count(n_surv, 'valid survival run')} mishandle censoring"
        if n_err:
            text += (
                f"; {int(row['n_exceeding_baseline'])} of them still score above the simple "
                "baseline."
            )
        else:
            text += "."
        out.append(
            Finding(
                "censoring",
                text,
                {
                    "n_with_error": n_err,
                    "n_valid_survival": n_surv,
                    "n_exceeding_baseline": int(row["n_exceeding_baseline"]),
                },
            )  # fmt: skip
        )
    agents = _agents_only(table18).reset_index(drop=True)
    best = _extremes(agents, "selected_is_best_pct", "agent")
    if best is not None:
        lo_name, lo, hi_name, hi = best
        text = (
            f"The selected submission is the run's best version on the test set in {lo:.0f}% "
            f"({_name(lo_name)}) to {hi:.0f}% ({_name(hi_name)}) of runs"
        )
        values = {"selected_best_low": lo, "selected_best_high": hi}
        gap = _extremes(agents, "val_minus_test", "agent")
        if gap is not None:
            text += (
                f"; reported validation minus test score ranges from {_signed(gap[1])} "
                f"({_name(gap[0])}) to {_signed(gap[3])} ({_name(gap[2])}) on AUROC and C^td tasks"
            )
            values.update(val_minus_test_low=gap[1], val_minus_test_high=gap[3])
        out.append(Finding("selection", text + ".", values))
    if table19 is not None and len(table19) and (table19["n"] > 0).any():
        row = table19.loc[table19["n"].astype(int).idxmax()]
        out.append(
            Finding(
                "pair_change",
                f"The most frequent change in annotated sampled version pairs is "
                f"{_name(row['change'])} ({_count(int(row['n']), 'pair')}; mean "
                f"score change {_signed(float(row['mean']))}, {_pct(float(row['share_positive']))}"
                " of them improve the score).",
                {
                    "n": int(row["n"]),
                    "mean": float(row["mean"]),
                    "share_positive": float(row["share_positive"]),
                },
            )  # fmt: skip
        )


def _process_findings(out, masking_summary, process_table, win_rate) -> None:
    """Masking-test, process-correlation and win-rate headlines of notebook 07."""
    if masking_summary is None:
        out.append(
            Finding(
                "masking_absent",
                "No masking-test results for this archive: the real-time rule was not checked "
                "(see the masking section).",
            )
        )
    else:
        total = masking_summary[(masking_summary["agent"] == "(all)")]
        if len(total):
            row = total.iloc[0]
            per_agent = masking_summary[
                (masking_summary["task"] == "(all)") & (masking_summary["agent"] != "(all)")
            ]
            flagged = [
                f"{_name(r['agent'])} {int(r['n_flagged'])}"
                for _, r in per_agent.iterrows()
                if int(r["n_flagged"])
            ]
            text = (
                f"The masking test flagged {int(row['n_flagged'])} of "
                f"{_runs(int(row['n_tested']))} tested for using later hours"
            )
            text += f" ({', '.join(flagged)})" if flagged else ""
            extras = []
            if int(row["n_errors"]):
                extras.append(f"{_runs(int(row['n_errors']))} could not be re-run")
            if int(row["n_not_reproduced"]):
                extras.append(
                    f"{_runs(int(row['n_not_reproduced']))} did not reproduce the archived alarms"
                )
            text += ("; " + "; ".join(extras)) if extras else ""
            out.append(
                Finding(
                    "masking",
                    text + ".",
                    {
                        k: int(row[k])
                        for k in ("n_tested", "n_flagged", "n_errors", "n_not_reproduced")
                    },
                )  # fmt: skip
            )
    if process_table is not None and len(process_table):
        rho = comparable(process_table["rho"].astype(float))
        if rho.notna().any():
            row = process_table.loc[rho.abs().idxmax()]
            out.append(
                Finding(
                    "process_correlation",
                    f"Among the FML-bench process metrics, {_name(row['metric'])} "
                    f"({_name(row['dimension'])}) is most strongly correlated with the final "
                    f"score within tasks: Spearman rho {_f(float(row['rho']))} (runs compared "
                    f"within each of {_count(int(row['n_tasks']), 'task')}, "
                    f"{_runs(int(row['n_runs']))}), within-task permutation p = "
                    f"{_p(float(row['p']))} (code embeddings: {_name(row['embedding_backend'])}).",
                    {
                        "rho": float(row["rho"]),
                        "p": float(row["p"]),
                        "n_tasks": int(row["n_tasks"]),
                        "n_runs": int(row["n_runs"]),
                    },
                )
            )
    if win_rate is not None:
        ext = _extremes(win_rate.reset_index(drop=True), "win_rate", "agent")
        if ext is not None and len(win_rate) > 1:
            lo_name, lo, hi_name, hi = ext
            out.append(
                Finding(
                    "win_rate",
                    f"Head-to-head win-rates range from {_f(lo)} ({_name(lo_name)}) to {_f(hi)} "
                    f"({_name(hi_name)}).",
                    {"low": lo, "high": hi},
                )
            )


def combine(*groups: Iterable[Finding]) -> Findings:
    """Concatenate several :class:`Findings` into one list (keeps order)."""
    out = Findings()
    for group in groups:
        out.extend(group)
    return out


# --------------------------------------------------------------------------------------------------
# Uncertainty: which differences are significant (notebooks 01 and 02)

_NO_REPLICATES = (
    "The score store has no bootstrap replicates, so the report cannot say whether any two agents "
    "differ on {words}; re-score the archive with `automd score ARCHIVE --bootstrap 1000`."
)


_ci = wording.ci


def _row_ci(frame: pd.DataFrame, label: str, key: str, low: str, high: str) -> str:
    if low not in frame.columns or high not in frame.columns:
        return ""
    rows = frame.loc[frame[key] == label]
    if rows.empty:
        return ""
    return _ci(float(rows[low].iloc[0]), float(rows[high].iloc[0]))


def _ci_in_parentheses(row: Mapping, column: str) -> str:
    """``" (95% CI 0.010 to 0.050)"`` from ``column``'s interval columns; empty without them."""
    ci = _ci_after(row, column).removeprefix("; ")
    return f" ({ci})" if ci else ""


def _pct_ci(row: Mapping, column: str) -> str:
    """``"8% (95% CI 5% to 12%)"`` from ``column`` and its ``_ci_low/_ci_high`` (if present)."""
    low, high = row.get(f"{column}_ci_low"), row.get(f"{column}_ci_high")
    text = _pct(row[column])
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return text
    return f"{text} (95% CI {_pct(low)} to {_pct(high)})"


def _ci_after(row: Mapping, column: str) -> str:
    """``"; 95% CI 0.002 to 0.018"`` from ``column``'s interval columns; empty without them."""
    low, high = row.get(f"{column}_ci_low"), row.get(f"{column}_ci_high")
    ci = _ci(float(low), float(high)) if low is not None and high is not None else ""
    return f"; {ci}" if ci else ""


def _end(frame: pd.DataFrame, agent: str, value: float, low: str, high: str) -> str:
    """``"0.350 (alpha; 95% CI 0.278 to 0.424)"`` (without the interval when it is missing)."""
    ci = _row_ci(frame, agent, "agent", low, high)
    return f"{_f(value)} ({_name(agent)}{'; ' + ci if ci else ''})"


def _pair_words(row: Mapping) -> str:
    return f"{_name(row['agent_a'])} and {_name(row['agent_b'])}"


@fill_doc(pairwise_inputs=PAIRWISE_INPUTS, holm_1979=HOLM_1979)
def comparison_findings(
    pairwise: pd.DataFrame,
    measure: str = "score",
    *,
    alpha: float = 0.05,
    has_replicates: bool = True,
) -> Findings:
    """The agent comparisons of one measure, stating a difference only when it is significant.

    A difference is significant *on these tasks* when its Holm-adjusted p-value (``p_holm`` of
    :func:`~automd_analysis.analysis.uncertainty.pairwise_comparisons`, the paired bootstrap test
    that agrees with the interval) is below ``alpha``; every sentence names that target ("on
    these T tasks") and adds the across-tasks question (the sign-flip test, ``tasks_p_holm``).

    - ``diff_<measure>_<a>_<b>``: one finding per significant pair
      (:func:`~automd_analysis.stats.wording.comparison_sentence`: who is better, the mean
      difference with its 95 % interval, on how many tasks, the adjusted p-value);
    - ``no_separation_<measure>``: one finding for all other pairs, saying that the data cannot
      separate them on these tasks (no adjusted p-value below ``alpha``), the across-tasks
      p-values and, with T tasks, that the paired sign-flip test cannot reach p < ``alpha`` at all (its smallest
      p-value is 2 / 2^T, so T <= 5 never can at 0.05). Up to three pairs are listed with their
      mean difference and interval; more are only named.
    - ``no_comparisons_<measure>``: no rows - the store has no replicates (``has_replicates``
      false: re-score with ``--bootstrap``) or there are fewer than two agents.

    Parameters
    ----------
    {pairwise_inputs}
    has_replicates : bool, default True
        Whether the store had replicates (only changes the wording of an empty table).

    See Also
    --------
    automd_analysis.stats.wording.comparison_sentences : one sentence per pair.
    primary_findings, calibration_findings : notebooks 01/02.

    References
    ----------
    {holm_1979}

    Examples
    --------
    >>> rows = pd.DataFrame([{"agent_a": "a", "agent_b": "b", "measure": "score",
    ...     "diff_mean": 0.02, "ci_low": -0.01, "ci_high": 0.05, "p_value": 0.25, "p_holm": 0.25,
    ...     "n_tasks": 3, "tasks_a_better": 3, "tasks_p_value": 0.25, "tasks_p_holm": 0.25}])
    >>> print(comparison_findings(rows)[0].text)
    The data cannot separate a and b on the primary score on these 3 tasks: mean difference +0.020 (95% CI -0.010 to 0.050), Holm-adjusted p = 0.250; across tasks (tasks as the sample): a better on 3 of 3 tasks, sign-flip Holm-adjusted p = 0.250; with 3 tasks no paired test across tasks can reach p < 0.05.
    """
    words = wording.MEASURE_WORDS.get(measure, _name(measure))
    out = Findings()
    mine = pairwise.loc[pairwise["measure"] == measure] if len(pairwise) else pairwise
    if mine.empty:
        text = (
            _NO_REPLICATES.format(words=words)
            if not has_replicates
            else f"There is no pair of agents to compare on {words}."
        )
        out.append(Finding(f"no_comparisons_{measure}", text))
        return out
    records = mine.to_dict("records")
    significant = [
        r
        for r in records
        if r["p_holm"] is not None and math.isfinite(r["p_holm"]) and r["p_holm"] < alpha
    ]
    rest = [r for r in records if r not in significant]
    for row in significant:
        out.append(
            Finding(
                f"diff_{measure}_{row['agent_a']}_{row['agent_b']}",
                wording.comparison_sentence(row, alpha),
                {
                    "diff_mean": float(row["diff_mean"]),
                    "ci_low": float(row["ci_low"]),
                    "ci_high": float(row["ci_high"]),
                    "p_holm": float(row["p_holm"]),
                },
            )
        )
    if not rest:
        return out
    if len(rest) == 1:
        text = wording.comparison_sentence(rest[0], alpha)
    else:
        names = [_pair_words(r) for r in rest]
        tasks = sorted({int(r["n_tasks"]) for r in rest})
        shown = " or ".join(str(t) for t in tasks)
        text = (
            f"The data cannot separate {', '.join(names[:-1])} or {names[-1]} on {words} on "
            f"these {shown} tasks"
        )
        if len(rest) <= 3:
            diffs = [
                f"{_name(r['agent_a'])} \N{MINUS SIGN} {_name(r['agent_b'])} "
                f"{_signed(float(r['diff_mean']))}"
                + (f", {ci}" if (ci := _ci(float(r["ci_low"]), float(r["ci_high"]))) else "")
                for r in rest
            ]
            text += f": mean differences {'; '.join(diffs)}"
        p_values = [float(r["p_holm"]) for r in rest if math.isfinite(float(r["p_holm"]))]
        if p_values:
            text += (
                f"{';' if len(rest) <= 3 else ':'} every Holm-adjusted p-value is at least "
                f"{alpha:g} ({_f(min(p_values))} to {_f(max(p_values))})"
            )
        across = [float(r.get("tasks_p_holm", math.nan)) for r in rest]
        across = [p for p in across if math.isfinite(p)]
        if across:
            text += (
                f"; across tasks (tasks as the sample) the sign-flip Holm-adjusted p-values are "
                f"{_f(min(across))} to {_f(max(across))}"
            )
        if all(wording.too_few_tasks(t, alpha) for t in tasks):
            needed = wording.tasks_needed(alpha)
            text += (
                f"; with {shown} tasks no paired test across tasks can reach p < {alpha:g} "
                f"(at least {needed} tasks are needed)"
            )
        text += "."
    out.append(
        Finding(
            f"no_separation_{measure}",
            text,
            {"n_pairs": len(rest), "p_holm_min": min(float(r["p_holm"]) for r in rest)},
        )
    )
    return out


#: Short names of the calibration measures of
#: :data:`automd_analysis.analysis.calibration_measures.RANKING_MEASURES`, for sentences.
MEASURE_NAMES: Mapping[str, str] = {
    "ece_10": "10-bin ECE",
    "ece_15": "15-bin ECE",
    "ece_equal_mass": "equal-mass ECE",
    "ici": "ICI",
    "slope": "calibration slope",
    "intercept": "calibration intercept",
    "d_calibration": "D-calibration",
}


def _measure_name(measure: str) -> str:
    return MEASURE_NAMES.get(measure, _name(measure))


def _and(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


@fill_doc(van_calster_2019=VAN_CALSTER_2019)
def measure_robustness_findings(
    agreement: pd.DataFrame,
    pairwise: pd.DataFrame | None = None,
    *,
    reference: str = "ece_10",
    alpha: float = 0.05,
) -> Findings:
    """Whether the agents' calibration ranking holds across measures, in one plain sentence.

    From :func:`~automd_analysis.analysis.calibration_measures.ranking_agreement` (every measure
    against ``reference``, the paper's 10-bin ECE): the conclusion *holds* when no measure flips the
    order of any pair of agents (``n_flipped == 0`` everywhere; a flip needs intervals that
    separate the pair, :func:`~automd_analysis.analysis.calibration_measures.rank_flips`), and the
    sentence adds the best agent under each measure when the point values disagree; otherwise it
    names the measures that flip pairs (how many of how many) and the best agent under each. When
    ``pairwise`` is given and no ECE difference between agents is significant
    (:func:`comparison_findings`), it adds that the reference ranking itself does not separate the
    agents, so a flip may be noise.

    - ``measure_robustness``: the sentence; ``values``: ``n_measures``, ``n_changing``.

    Parameters
    ----------
    agreement : DataFrame
        :func:`~automd_analysis.analysis.calibration_measures.ranking_agreement`.
    pairwise : DataFrame, optional
        :func:`~automd_analysis.analysis.uncertainty.pairwise_comparisons`.
    reference : str, default "ece_10"
    alpha : float, default 0.05

    See Also
    --------
    automd_analysis.analysis.calibration_measures.rank_flips : the flipped pairs.

    References
    ----------
    {van_calster_2019}

    Examples
    --------
    >>> agreement = pd.DataFrame({"measure": ["ece_10", "ici"], "n_agents": 2, "n_pairs": 1,
    ...     "n_flipped": [0, 1], "best_agent": ["a", "b"], "same_best": [True, False]})
    >>> print(measure_robustness_findings(agreement)[0].text)
    The calibration ranking depends on the measure: against the 10-bin ECE, ICI reverses 1 of 1 agent pair; the best-calibrated agent is a under 10-bin ECE and b under ICI.
    """
    out = Findings()
    ranked = agreement.loc[agreement["n_agents"] >= 2]
    if ranked.empty or reference not in set(ranked["measure"]):
        out.append(
            Finding(
                "measure_robustness",
                "Fewer than two agents have calibration measures, so there is no ranking to "
                "compare across measures.",
                {"n_measures": 0, "n_changing": 0},
            )
        )
        return out
    others = [_measure_name(m) for m in ranked["measure"] if m != reference]
    changing = ranked.loc[ranked["n_flipped"] > 0]
    values = {"n_measures": len(ranked), "n_changing": len(changing)}
    best: dict[str, list[str]] = {}
    for r in ranked.to_dict("records"):
        label = _name(r["best_agent"]) if isinstance(r["best_agent"], str) else "a tie"
        best.setdefault(label, []).append(_measure_name(r["measure"]))
    best_text = _and([f"{agent} under {_and(ms)}" for agent, ms in best.items()])
    if changing.empty:
        text = (
            f"Against the {_measure_name(reference)}, none of the other {len(others)} measures "
            f"({_and(others)}) reverses the order of two agents that their runs separate (a "
            "reversal counts when the 95% interval of the difference excludes 0 under both "
            "measures): the calibration conclusions do not depend on the measure."
        )
        if len(best) > 1:
            text += f" By the point values alone, the best-calibrated agent is {best_text}."
    else:
        parts = [
            f"{_measure_name(r['measure'])} reverses {int(r['n_flipped'])} of "
            f"{_count(int(r['n_pairs']), 'agent pair')}"
            for r in changing.to_dict("records")
        ]
        text = (
            f"The calibration ranking depends on the measure: against the "
            f"{_measure_name(reference)}, {'; '.join(parts)}; the best-calibrated agent is "
            f"{best_text}."
        )
    if pairwise is not None and len(pairwise):
        ece = pairwise.loc[
            (pairwise["measure"] == "ece")
            & (pairwise["agent_a"] != BASELINE_AGENT)
            & (pairwise["agent_b"] != BASELINE_AGENT)
        ]
        p = pd.to_numeric(ece["p_holm"], errors="coerce")
        if len(ece) and not (p < alpha).any():
            text += (
                f" None of the agents' ECE differences is significant (Holm-adjusted p >= "
                f"{alpha:g}), so their order under any single measure is not established either."
            )
    out.append(Finding("measure_robustness", text, values))
    return out


def annotation_findings(provenance: pd.DataFrame) -> Findings:
    """Who produced the codebook answers behind Figure 2a and Table 20, as one finding.

    - ``annotator``: :func:`~automd_analysis.analysis.annotation_provenance.provenance_text` of
      the counts (archive strings escaped).

    Parameters
    ----------
    provenance : DataFrame
        :func:`~automd_analysis.analysis.annotation_provenance.annotation_provenance`.

    See Also
    --------
    automd_analysis.analysis.annotation_provenance.annotation_provenance

    References
    ----------
    .. [1] Auto-MD-bench, App. I.

    Examples
    --------
    >>> rows = pd.DataFrame({"annotator": ["automd annotate 0.1.0"],
    ...     "annotations_source": ["generated"], "n_runs": [12]})
    >>> annotation_findings(rows)[0].text
    'Codebook answers by automd annotate 0.1.0 (12 runs, generated outside the archive).'
    """
    from automd_analysis.analysis.annotation_provenance import provenance_text

    counts = {
        str(r["annotator"]) if r["annotations_source"] != "none" else "(none)": int(r["n_runs"])
        for r in provenance.to_dict("records")
    }
    return Findings([Finding("annotator", _name(provenance_text(provenance)), counts)])


@fill_doc(cohen_1960=COHEN_1960)
def annotator_agreement_findings(agreement) -> Findings:
    """How well ``automd annotate`` agrees with the archive's own codebook answers, as one finding.

    - ``annotator_agreement``: :func:`~automd_analysis.analysis.annotator_agreement.agreement_text`
      (archive strings escaped); values ``n_runs`` and ``min_kappa``.

    Parameters
    ----------
    agreement : AnnotatorAgreement
        :func:`~automd_analysis.analysis.annotator_agreement.annotator_agreement`.

    See Also
    --------
    automd_analysis.analysis.annotator_agreement.annotator_agreement

    References
    ----------
    {cohen_1960}

    Examples
    --------
    >>> from automd_analysis.analysis.annotator_agreement import AnnotatorAgreement
    >>> fields = pd.DataFrame({"field": ["a"], "n_runs": [3], "exact": [1.0], "kappa": [1.0],
    ...     "multi": [False]})
    >>> agreement = AnnotatorAgreement(fields, fields[:0], fields[:0], ("<b>truth</b>",), ("g",), 3)
    >>> annotator_agreement_findings(agreement)[0].text
    'g agrees with &lt;b&gt;truth&lt;/b&gt; on 3 runs: identical answers on 100.0% of runs in every field, kappa from 1.00 to 1.00.'
    """
    from automd_analysis.analysis.annotator_agreement import agreement_text

    kappa = agreement.fields["kappa"].dropna() if not agreement.empty else pd.Series(dtype=float)
    values = {
        "n_runs": float(agreement.n_runs),
        "min_kappa": float(kappa.min()) if len(kappa) else math.nan,
    }
    return Findings([Finding("annotator_agreement", _name(agreement_text(agreement)), values)])
