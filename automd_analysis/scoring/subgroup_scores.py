"""Subgroup assignment and subgroup scores of a selected, valid submission (paper App. F).

Groups are defined on the **test set** (the hidden labels), one attribute at a time, from the
task manifest's ``subgroups`` (rule per attribute):

- ``tertiles`` (age): cut points q1, q2 = ``np.quantile(values, [1/3, 2/3])`` (numpy's default
  linear method) over the units with a recorded value; T1 = [min, q1), T2 = [q1, q2),
  T3 = [q2, max]. Cutting on values (not ranks) keeps equal ages in one group; with heavy ties a
  tertile can be small or empty (it is then reported, not eligible).
- ``categorical`` (sex): one group per recorded value.
- ``top4_other`` (race/ethnicity): the four most frequent recorded values (ties broken by name)
  keep their own group; every other recorded value is grouped as ``Other``.

Units with no recorded value (blank or NaN) belong to no group of that attribute.

Scores: AUROC of ``PredictedProbability`` for classification (including min(Se, PPV) tasks);
plain Antolini C^td (``method='antolini'``, not the adjusted primary score) for survival.
Eligibility: at least 50 units and both classes for AUROC, at least 80 units for C^td, and a
defined score (a comparable pair). Ineligible groups are reported with ``score_raw = NaN`` and a
``reason``. Sequential tasks have no subgroup scores.

Bootstrap replicates (:func:`subgroup_scores`): the score of every eligible group on each of the
run's test resamples (:func:`~automd_analysis.scoring.replicates.task_resample_weights`),
restricted to the group's units: ``metric(x[group], weights=W[:, group])``, in the same kernel call
as the group's observed score. Replicate b of every group and of the run's own score therefore
describe the same resampled patients; groups and their eligibility are those of the observed test
set.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from automd_analysis import metrics
from automd_analysis.metrics import Replicated

__all__ = ["MIN_AUROC", "MIN_CTD", "assign_groups", "subgroup_rows", "subgroup_scores"]

#: Minimum observations for a subgroup AUROC (paper App. F).
MIN_AUROC = 50
#: Minimum observations for a subgroup C^td (paper App. F).
MIN_CTD = 80
_RULES = ("tertiles", "categorical", "top4_other")


def _fmt(x: float) -> str:
    return f"{x:g}"


def _missing(values: pd.Series) -> np.ndarray:
    s = values.astype(object)
    return s.isna().to_numpy() | (s.astype(str).str.strip() == "").to_numpy()


def assign_groups(values, rule: str, attribute: str) -> tuple[np.ndarray, list[str]]:
    """Assign each unit to a group of one attribute.

    Parameters
    ----------
    values : array-like of shape (n,)
        The attribute of each test unit (numbers for ``tertiles``, text otherwise).
    rule : {"tertiles", "categorical", "top4_other"}
    attribute : str
        Attribute name, used in tertile labels (``"age T1 [20, 45)"``).

    Returns
    -------
    groups : ndarray of object, shape (n,)
        The group label of each unit, ``None`` for units without a recorded value.
    order : list of str
        Group labels in display order (T1, T2, T3; categories by decreasing size then name, with
        ``Other`` last).

    Raises
    ------
    ValueError
        Unknown rule, or non-numeric values for ``tertiles``.
    """
    if rule not in _RULES:
        raise ValueError(f"unknown subgroup rule {rule!r}; expected one of {_RULES}")
    series = pd.Series(values).reset_index(drop=True)
    n = len(series)
    groups = np.full(n, None, dtype=object)
    if rule == "tertiles":
        x = pd.to_numeric(series, errors="raise").to_numpy(dtype=np.float64)
        ok = np.isfinite(x)
        if not ok.any():
            return groups, []
        lo, hi = float(np.min(x[ok])), float(np.max(x[ok]))
        q1, q2 = (float(q) for q in np.quantile(x[ok], [1 / 3, 2 / 3]))
        labels = [
            f"{attribute} T1 [{_fmt(lo)}, {_fmt(q1)})",
            f"{attribute} T2 [{_fmt(q1)}, {_fmt(q2)})",
            f"{attribute} T3 [{_fmt(q2)}, {_fmt(hi)}]",
        ]
        idx = np.where(x < q1, 0, np.where(x < q2, 1, 2))
        groups[ok] = np.asarray(labels, dtype=object)[idx[ok]]
        return groups, labels
    text = series.astype(object).where(~pd.Series(_missing(series)), None)
    recorded = text.dropna().astype(str).str.strip()
    counts = recorded.value_counts()
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if rule == "categorical":
        order = [k for k, _ in ranked]
        mapping = {k: k for k in order}
    else:
        top = [k for k, _ in ranked[:4]]
        rest = [k for k, _ in ranked[4:]]
        pooled = _pooled_name(top)
        mapping = {k: k for k in top} | {k: pooled for k in rest}
        order = list(dict.fromkeys([*top, *([pooled] if rest else [])]))
    for i, v in recorded.items():
        groups[i] = mapping[v]
    return groups, order


def _pooled_name(kept: list[str]) -> str:
    """Label of the pooled remaining categories: ``Other``, or ``Other (remaining)`` when a kept
    category already reads "other" (any case), so the two groups never share a name."""
    if any(k.strip().casefold() == "other" for k in kept):
        return "Other (remaining)"
    return "Other"


def _score(kind: str, idx: np.ndarray, labels, predictions, weights=None) -> Replicated:
    """The group's score on the observed units and, with ``weights`` (the run's resamples), on
    each resample, in one kernel call (:func:`~automd_analysis.metrics.with_replicates`)."""
    group_weights = None if weights is None else weights[:, idx]
    if kind == "survival":
        grid = predictions.time_grid if predictions.time_grid is not None else labels.time_grid
        durations, events, surv = labels.duration[idx], labels.event[idx], predictions.surv[idx]
        return metrics.with_replicates(
            lambda w: metrics.concordance_td(
                durations, events, surv, grid, method="antolini", weights=w
            ),
            group_weights,
        )
    y, p = labels.label[idx], predictions.probability[idx]
    return metrics.with_replicates(lambda w: metrics.auroc(y, p, weights=w), group_weights)


def _group_units(subgroup_rules: dict[str, str], labels):
    """``(attribute, position, group, unit positions)`` of every group, in display order."""
    for attribute in sorted(subgroup_rules):
        if attribute not in labels.subgroups.columns:
            continue
        groups, order = assign_groups(
            labels.subgroups[attribute].to_numpy(), subgroup_rules[attribute], attribute
        )
        for position, group in enumerate(order):
            yield attribute, position, group, np.flatnonzero(groups == group)


def subgroup_scores(
    kind: str, subgroup_rules: dict[str, str], labels, predictions, weights=None
) -> tuple[list[dict], list[dict]]:
    """Subgroup scores of one selected, valid submission (paper App. F) and their bootstrap
    replicates, each group's kernel called once.

    For an eligible group G and resample b (row b of ``weights``, the run's test resamples), the
    replicate is the group's score on the resampled units of G:

    .. math:: s^{(b)}_G = \\mathrm{metric}\\bigl(x_G;\\ w^{(b)}_G\\bigr)

    (AUROC or plain Antolini C^td, as the observed score), computed with the observed score in one
    call (:func:`~automd_analysis.metrics.with_replicates`). A resample that leaves the group
    without a defined score (one class, no comparable pair) gives NaN. Replicate b of every group
    and of the run's own score therefore describe the same resampled patients; groups and their
    eligibility are those of the observed test set.

    Parameters
    ----------
    kind : {"survival", "classification", "sequential"}
    subgroup_rules : dict
        Attribute name -> rule (the manifest's ``subgroups``).
    labels : TaskLabels
        Hidden labels; ``labels.subgroups`` has one column per attribute.
    predictions : AlignedPredictions
    weights : numpy.ndarray of shape (n_boot, n_units), optional
        The run's resample weights
        (:func:`~automd_analysis.scoring.replicates.task_resample_weights`); ``None``: no
        replicates.

    Returns
    -------
    rows : list of dict
        One row per (attribute, group) in display order, with ``attribute``, ``group``,
        ``group_order``, ``metric`` (``auroc`` / ``ctd_antolini``), ``n``, ``n_events``,
        ``score_raw``, ``eligible`` and ``reason`` (None when eligible). Empty for sequential
        tasks.
    replicates : list of dict
        ``attribute``, ``group``, ``replicates`` (``n_boot`` floats) per eligible group, in the
        order of ``rows``; empty for sequential tasks and without ``weights``.

    References
    ----------
    .. [1] Efron B, Tibshirani R (1993). An Introduction to the Bootstrap, ch. 6.

    Examples
    --------
    >>> import pandas as pd
    >>> from automd_analysis.submissions import AlignedPredictions
    >>> from automd_analysis.tasks import TaskLabels
    >>> rng = np.random.default_rng(0)
    >>> y = rng.integers(0, 2, 120).astype(np.int8)
    >>> labels = TaskLabels(ids=pd.DataFrame({"id": [str(i) for i in range(120)]}), label=y,
    ...     subgroups=pd.DataFrame({"sex": ["F", "M"] * 60}))
    >>> preds = AlignedPredictions(probability=np.clip(0.3 * y + rng.random(120) * 0.7, 0, 1))
    >>> w = np.ones((2, 120), dtype=np.int64)
    >>> rows, reps = subgroup_scores("classification", {"sex": "categorical"}, labels, preds, w)
    >>> [r["group"] for r in reps], reps[0]["replicates"][0] == rows[0]["score_raw"]
    (['F', 'M'], True)
    """
    if kind == "sequential" or labels.subgroups is None:
        return [], []
    survival = kind == "survival"
    outcome = labels.event if survival else labels.label
    minimum = MIN_CTD if survival else MIN_AUROC
    rows, replicates = [], []
    for attribute, position, group, idx in _group_units(subgroup_rules, labels):
        n = len(idx)
        n_events = int(np.sum(outcome[idx])) if n else 0
        score, reason = math.nan, None
        if n < minimum:
            reason = f"fewer than {minimum} observations"
        elif not survival and n_events in (0, n):
            reason = "only one outcome class"
        else:
            result = _score(kind, idx, labels, predictions, weights)
            score = float(result.observed)
            if math.isnan(score):
                undefined = next(iter(result.observed_warnings), None)
                reason = f"undefined: {undefined or 'no comparable pair'}"
            elif result.replicates is not None:
                values = [float(v) for v in np.asarray(result.replicates, dtype=np.float64)]
                replicates.append({"attribute": attribute, "group": group, "replicates": values})
        rows.append(
            {
                "attribute": attribute,
                "group": group,
                "group_order": position,
                "metric": "ctd_antolini" if survival else "auroc",
                "n": n,
                "n_events": n_events,
                "score_raw": score,
                "eligible": reason is None,
                "reason": reason,
            }
        )
    return rows, replicates


def subgroup_rows(kind: str, subgroup_rules: dict[str, str], labels, predictions) -> list[dict]:
    """The rows of :func:`subgroup_scores` without replicates."""
    return subgroup_scores(kind, subgroup_rules, labels, predictions)[0]
