"""How a statistical result is said: the one place for the report's verdict wording.

Every sentence that states a comparison, an interval or a p-value is built here, so a rule of
wording is written once: a difference is claimed only when the Holm-adjusted p-value of its test
is below α (the test named in the sentence: the paired bootstrap test "on these tasks", the
sign-flip test "across tasks"), an interval is "95% CI low to high", a p-value is shown with
three decimals and never as 0 ("< 0.001"), and a test over too few tasks to reach p < α says so.
Archive strings are escaped for Markdown and HTML.
"""

from __future__ import annotations

import html
import math
import re

import pandas as pd

__all__ = [
    "MEASURE_WORDS",
    "TESTS",
    "across_tasks_clause",
    "ci",
    "comparison_sentence",
    "comparison_sentences",
    "name",
    "number",
    "p_value",
    "tasks_needed",
    "too_few_tasks",
]

#: What each test of the report is called in captions and sentences.
TESTS = {
    "paired": "paired bootstrap test on these tasks (the interval of the difference inverted)",
    "sign_flip": "sign-flip test across tasks (tasks as the sample)",
    "within_cell": "within agent x task permutation test of Spearman rho",
}


_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
#: The measures of the pairwise comparisons in words.
MEASURE_WORDS = {"score": "the primary score", "ece": "calibration (ECE)"}


def name(value: object) -> str:
    """An archive string, safe inside Markdown (and the HTML it becomes)."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(str(value), quote=True))


def number(value: float, signed: bool = False) -> str:
    """Three decimals (``+`` when ``signed``), ``n/a`` when missing; never ``-0.000``."""
    if value is None or not math.isfinite(value):
        return "n/a"
    text = f"{value:+.3f}" if signed else f"{value:.3f}"
    return text.replace("-0.000", "0.000").replace("+0.000", "0.000")


def p_value(p: float) -> str:
    """A p-value as every table and sentence shows it: three decimals, ``< 0.001`` below 0.001
    (a p-value is never 0: the smallest is 1 / (B + 1), docs/statistics.md), ``n/a`` when
    missing."""
    if p is None or not math.isfinite(p):
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _p_text(p: float) -> str:
    """``= 0.012``, ``< 0.001`` or ``= n/a``."""
    text = p_value(p)
    return text if text.startswith("<") else f"= {text}"


def ci(low: float, high: float, level: float = 0.95) -> str:
    """``"95% CI 0.278 to 0.424"``; empty when the interval is missing."""
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        return ""
    return f"{round(100 * level)}% CI {number(low)} to {number(high)}"


def too_few_tasks(n_tasks: int, alpha: float = 0.05) -> bool:
    """Whether the sign-flip test over ``n_tasks`` differences cannot reach p < ``alpha``: its
    smallest p-value is 2 / 2^n (:func:`automd_analysis.stats.paired.min_attainable_p`)."""
    return n_tasks == 0 or 2.0 / 2.0**n_tasks >= alpha


def tasks_needed(alpha: float = 0.05) -> int:
    """The fewest tasks with which the sign-flip test can reach p < ``alpha``."""
    return int(math.floor(math.log2(2.0 / alpha))) + 1


def _significant(p: float | None, alpha: float) -> bool:
    return p is not None and math.isfinite(p) and p < alpha


def across_tasks_clause(row, alpha: float = 0.05) -> str:
    """The across-tasks half of a comparison sentence (tasks as the units): how many tasks favour
    the agent the mean difference favours, the sign-flip test's Holm-adjusted p-value and, when ``n_tasks`` makes p < ``alpha``
    unattainable for it (smallest p = 2 / 2^T), that it cannot.

    Examples
    --------
    >>> across_tasks_clause({"n_tasks": 3, "tasks_a_better": 3, "tasks_p_holm": 0.25,
    ...                      "agent_a": "a", "agent_b": "b", "measure": "score", "diff_mean": 0.1})
    'across tasks (tasks as the sample): a better on 3 of 3 tasks, sign-flip Holm-adjusted p = 0.250; with 3 tasks no paired test across tasks can reach p < 0.05'
    """
    n_tasks = int(row["n_tasks"])
    diff, higher_better = row["diff_mean"], row["measure"] != "ece"
    a_ahead = not (diff < 0 if higher_better else diff > 0)  # 0 or NaN: name A
    who = name(row["agent_a"] if a_ahead else row["agent_b"])
    count = int(row["tasks_a_better"]) if a_ahead else n_tasks - int(row["tasks_a_better"])
    text = f"across tasks (tasks as the sample): {who} better on {count} of {n_tasks} tasks"
    p = row.get("tasks_p_holm")
    if p is not None:
        text += f", sign-flip Holm-adjusted p {_p_text(p)}"
    if too_few_tasks(n_tasks, alpha):
        text += f"; with {n_tasks} tasks no paired test across tasks can reach p < {alpha:g}"
    return text


def comparison_sentence(row, alpha: float = 0.05, level: float = 0.95) -> str:
    """One "At a glance" sentence for a row of :func:`pairwise_comparisons`.

    Its first half is the primary comparison *on these T tasks* (tasks fixed): a difference is
    stated only when the Holm-adjusted p-value ``p_holm`` is below ``alpha``; otherwise the
    sentence says that the data cannot separate the agents on these tasks (and, when the interval
    alone excludes 0, that only Holm's adjustment over the pairs removes it). Its second half is
    the *across tasks* question (:func:`across_tasks_clause`).

    See Also
    --------
    automd_analysis.analysis.uncertainty.pairwise_comparisons : the rows.
    automd_analysis.stats.paired.min_attainable_p : why few tasks cannot reach p < alpha.

    Examples
    --------
    >>> row = {"agent_a": "codex", "agent_b": "aide", "measure": "score", "diff_mean": 0.043,
    ...        "ci_low": 0.012, "ci_high": 0.071, "p_value": 0.004, "p_holm": 0.012,
    ...        "n_tasks": 15, "tasks_a_better": 12, "tasks_p_holm": 0.03}
    >>> comparison_sentence(row)
    'codex scores higher than aide on the primary score on these 15 tasks: mean difference +0.043 (95% CI 0.012 to 0.071), Holm-adjusted p = 0.012; across tasks (tasks as the sample): codex better on 12 of 15 tasks, sign-flip Holm-adjusted p = 0.030.'
    >>> comparison_sentence({**row, "p_value": 0.4, "p_holm": 0.4, "ci_low": -0.01, "n_tasks": 3,
    ...                      "tasks_a_better": 2, "tasks_p_holm": 1.0})
    'The data cannot separate codex and aide on the primary score on these 3 tasks: mean difference +0.043 (95% CI -0.010 to 0.071), Holm-adjusted p = 0.400; across tasks (tasks as the sample): codex better on 2 of 3 tasks, sign-flip Holm-adjusted p = 1.000; with 3 tasks no paired test across tasks can reach p < 0.05.'
    """
    a, b = name(row["agent_a"]), name(row["agent_b"])
    measure = row["measure"]
    words = MEASURE_WORDS.get(measure, name(measure))
    n_tasks = int(row["n_tasks"])
    if n_tasks == 0:
        return f"The data cannot separate {a} and {b} on {words}: they share no task."
    target = f"on these {n_tasks} tasks"
    interval = ci(row["ci_low"], row["ci_high"], level)
    diff = f"mean difference {number(row['diff_mean'], signed=True)} ({interval})"
    p_holm = row["p_holm"]
    across = across_tasks_clause(row, alpha)
    if _significant(p_holm, alpha):
        a_better = (row["diff_mean"] > 0) == (measure != "ece")
        better, worse = (a, b) if a_better else (b, a)
        verb = "scores higher than" if measure != "ece" else "is better calibrated than"
        return (
            f"{better} {verb} {worse} on {words} {target}: {diff}, Holm-adjusted p "
            f"{_p_text(p_holm)}; {across}."
        )
    text = f"The data cannot separate {a} and {b} on {words} {target}: {diff}, Holm-adjusted p "
    text += _p_text(p_holm)
    if _significant(row.get("p_value"), alpha):
        text += f" (unadjusted p {_p_text(row['p_value'])}: the interval alone excludes 0)"
    return f"{text}; {across}."


def comparison_sentences(
    pairwise: pd.DataFrame, measure: str = "score", alpha: float = 0.05, level: float = 0.95
) -> list[str]:
    """:func:`comparison_sentence` for every pair of one measure, significant pairs first.

    See Also
    --------
    comparison_sentence : one row.

    Examples
    --------
    >>> import pandas as pd
    >>> rows = pd.DataFrame([{"agent_a": "a", "agent_b": "b", "measure": "ece", "diff_mean": -0.02,
    ...     "ci_low": -0.03, "ci_high": -0.01, "p_value": 0.001, "p_holm": 0.002, "n_tasks": 15,
    ...     "tasks_a_better": 13, "tasks_p_holm": 0.01}])
    >>> comparison_sentences(rows, "ece")[0].startswith("a is better calibrated than b")
    True
    """
    mine = pairwise.loc[pairwise["measure"] == measure]
    significant = mine["p_holm"].fillna(1.0) < alpha  # on these tasks
    ordered = pd.concat([mine.loc[significant], mine.loc[~significant]])
    return [comparison_sentence(r, alpha, level) for r in ordered.to_dict("records")]
