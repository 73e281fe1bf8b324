"""Calibration of survival curves: Kaplan-Meier ECE at three event-time quantiles (Auto-MD-bench App. F)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from automd_analysis.metrics._validation import (
    check_survival_ece_inputs,
    warn_undefined,
)
from automd_analysis.metrics.survival import kaplan_meier_unchecked

__all__ = ["SurvivalECEResult", "survival_ece"]


@dataclass(frozen=True)
class SurvivalECEResult:
    """Survival ECE with the per-time and per-group pieces behind it (for reliability plots).

    Attributes
    ----------
    ece : float
        Mean of ``per_time["ece"]`` (``nan`` if undefined).
    per_time : dict of numpy.ndarray
        One entry per quantile: ``quantile``, ``target_time`` (t_q), ``grid_index``, ``time`` (the
        grid time used), ``n_kept`` (patients in kept groups) and ``ece``.
    groups : dict of numpy.ndarray
        One entry per (quantile, group): ``quantile``, ``time``, ``group`` (1 = lowest predicted
        survival), ``n``, ``mean_pred``, ``km``, ``abs_diff``, ``kept`` and ``weight`` (0 for skipped
        groups). ``km`` and ``abs_diff`` are ``nan`` for skipped groups.
    """

    ece: float
    per_time: dict[str, np.ndarray] = field(repr=False)
    groups: dict[str, np.ndarray] = field(repr=False)

    def __float__(self) -> float:
        return float(self.ece)


def nearest_grid_index(grid: np.ndarray, t: float) -> int:
    """Index of the grid time nearest to t; the earlier one when two are exactly equally near.

    .. math:: g(t) = \\min \\operatorname{arg\\,min}_k |g_k - t|

    Parameters
    ----------
    grid : numpy.ndarray of shape (G,)
        Sorted grid times (not validated here).
    t : float
        Target time (an event-time quantile in :func:`survival_ece`).

    Returns
    -------
    int
        Index in [0, G - 1].

    See Also
    --------
    survival_ece : evaluates calibration at the grid point this picks.
    automd_analysis.metrics.grid_index_post : the step rule (last grid time <= t) of C^td.

    References
    ----------
    .. [1] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. F (the grid point nearest each
       event-time quantile).

    Examples
    --------
    >>> import numpy as np
    >>> nearest_grid_index(np.array([0.0, 2.0, 4.0]), 3.0)  # 2 and 4 are equally near: the earlier
    1
    >>> nearest_grid_index(np.array([0.0, 2.0, 4.0]), 3.1)
    2
    """
    return int(np.argmin(np.abs(grid - t)))  # argmin returns the first (earlier) minimiser


def _tie_respecting_groups(pred: np.ndarray, n_groups: int) -> list[np.ndarray]:
    """Row indices of ``n_groups`` risk groups by predicted survival, ties never split.

    Patients are sorted by ``pred`` (stable) and cut where ``np.array_split`` would cut; a cut that
    falls inside a block of equal predictions moves forward to the end of that block, so the whole
    block joins the group it starts in (the following group gets fewer patients, possibly none).
    Group membership - and so the ECE - is then a function of the data, not of the row order.
    """
    order = np.argsort(pred, kind="stable")
    ranked = pred[order]
    n = ranked.size
    sizes = np.array([len(part) for part in np.array_split(np.arange(n), n_groups)])
    cuts = np.cumsum(sizes)[:-1]
    inside = (cuts > 0) & (cuts < n)
    cuts[inside] = np.searchsorted(ranked, ranked[cuts[inside] - 1], side="right")
    return np.split(order, cuts)


def survival_ece(
    durations,
    events,
    surv,
    time_grid,
    quantiles=(0.25, 0.5, 0.75),
    n_groups: int = 10,
    min_group: int = 5,
) -> SurvivalECEResult:
    """Expected calibration error of survival curves against Kaplan-Meier (Auto-MD-bench App. F).

    For each quantile q:

    1. t_q = ``np.quantile(event_times, q)`` (linear interpolation) over the test durations of patients
       with an event; the evaluation time is the grid point nearest t_q (the earlier one on an exact
       tie), grid index g.
    2. Patients are ordered by predicted survival S_i(grid[g]) and split into ``n_groups`` groups
       where ``np.array_split`` cuts (sizes differ by at most one; group 1 has the lowest predicted
       survival) - except that patients with *equal* predicted survival are never split: a cut
       inside a block of ties moves to the end of the block, so the block stays in the group it
       starts in. Without ties this is exactly ``np.array_split``; with ties it makes the result
       independent of the order of the rows (docs/decisions.md).
    3. Groups with fewer than ``min_group`` patients are skipped. For each kept group b,
       e_b = |mean_i S_i(grid[g]) - KM_b(grid[g])|, where KM_b is the Kaplan-Meier curve of the group's
       own (T, E) read as a right-continuous step (1 before its first time, last value carried forward).
    4. ECE_q = Σ_b w_b e_b with w_b = n_b / Σ_kept n_b.

    The result is the mean of ECE_q over the quantiles (a grid point chosen by two quantiles counts
    twice).

    Parameters
    ----------
    durations : array-like of shape (n,)
        Test follow-up times (finite, >= 0).
    events : array-like of shape (n,)
        1 = event, 0 = censored (bool allowed).
    surv : array-like of shape (n, G)
        Predicted survival curves on ``time_grid``, finite, in [0, 1].
    time_grid : array-like of shape (G,)
        Strictly increasing grid times.
    quantiles : sequence of float, default (0.25, 0.5, 0.75)
        Levels in [0, 1] of the test event-time distribution.
    n_groups : int, default 10
    min_group : int, default 5

    Returns
    -------
    SurvivalECEResult
        ``ece`` plus ``per_time`` and ``groups`` details. ``ece`` is ``nan`` with
        :class:`UndefinedMetricWarning` when the test set has no event, or when at some time every group
        is smaller than ``min_group`` (fewer than ``n_groups * min_group`` patients, roughly).

    Raises
    ------
    ValueError
        Shape mismatch; NaN/inf/negative durations; events other than 0/1; a non-increasing grid;
        survival values outside [0, 1]; quantiles outside [0, 1]; ``n_groups`` or ``min_group`` not a
        positive integer.

    See Also
    --------
    automd_analysis.metrics.survival_ece_bootstrap : bootstrap interval of this ECE.
    automd_analysis.metrics.ece : the binary-task ECE.
    automd_analysis.metrics.kaplan_meier : the observed survival of each group.
    automd_analysis.metrics.survival_calibration_at : Kaplan-Meier groups at one horizon, with
        more measures (docs/calibration.md).

    References
    ----------
    .. [1] Zhou S, Zou Q, Zhao W, Liao Z, Liu D (2026). Auto-MD-bench: evaluating autoresearch
       agents for real-world medical tasks. arXiv:2610.25069, App. F.
    .. [2] Nagpal C, Yadlowsky S, Rostamzadeh N, Heller K (2021). Deep Cox mixtures for survival
       regression. Machine Learning for Healthcare, PMLR 149:674-708 (ECE against Kaplan-Meier in
       groups of predicted risk).
    .. [3] Kaplan EL, Meier P (1958). Nonparametric estimation from incomplete observations.
       Journal of the American Statistical Association 53:457-481.

    Examples
    --------
    Six patients, one quantile (the median event time 2.5 reads grid point 2), two groups of three.
    The low group (predicted 0.2, 0.4, 0.6; mean 0.4) has Kaplan-Meier 1/3 at t = 2, the high group
    (0.7, 0.8, 0.9; mean 0.8) has 1: ECE = 1/2 |0.4 - 1/3| + 1/2 |0.8 - 1| = 2/15.

    >>> import numpy as np
    >>> s2 = np.array([0.2, 0.4, 0.6, 0.7, 0.8, 0.9])
    >>> surv = np.column_stack([np.ones(6), s2, s2 / 2])  # curves on the grid 0, 2, 4
    >>> res = survival_ece([1, 2, 3, 4, 5, 6], [1, 1, 1, 0, 1, 0], surv, [0, 2, 4],
    ...                    quantiles=(0.5,), n_groups=2, min_group=3)
    >>> round(res.ece, 6), res.per_time["time"].tolist()
    (0.133333, [2.0])
    >>> [round(float(v), 6) for v in res.groups["km"]]
    [0.333333, 1.0]
    """
    t, e, s, grid, qs = check_survival_ece_inputs(
        durations, events, surv, time_grid, quantiles, n_groups, min_group
    )
    n = len(t)

    event_times = t[e == 1]
    empty_groups = {
        k: np.array([])
        for k in ("quantile", "time", "group", "n", "mean_pred", "km", "abs_diff", "kept", "weight")
    }
    if event_times.size == 0:
        per_time = {k: np.full(qs.size, np.nan) for k in ("target_time", "time", "ece")}
        per_time |= {
            "quantile": qs,
            "grid_index": np.full(qs.size, -1),
            "n_kept": np.zeros(qs.size, int),
        }
        ece = warn_undefined("survival ECE", "the test set has no event")
        return SurvivalECEResult(ece=ece, per_time=per_time, groups=empty_groups)

    targets = np.quantile(event_times, qs)
    rows: dict[str, list] = {k: [] for k in empty_groups}
    per_time: dict[str, list] = {
        k: [] for k in ("quantile", "target_time", "grid_index", "time", "n_kept", "ece")
    }
    for q, target in zip(qs, targets, strict=True):
        g = nearest_grid_index(grid, float(target))
        time = float(grid[g])
        pred = s[:, g]
        groups = _tie_respecting_groups(pred, int(n_groups))
        sizes = np.array([len(idx) for idx in groups])
        kept = sizes >= min_group
        n_kept = int(sizes[kept].sum())
        time_ece = 0.0
        for b, idx in enumerate(groups):
            mean_pred = float(np.mean(pred[idx])) if len(idx) else np.nan
            if kept[b]:
                km = kaplan_meier_unchecked(t[idx], e[idx]).at(time)
                diff = abs(mean_pred - km)
                weight = len(idx) / n_kept
                time_ece += weight * diff
            else:
                km, diff, weight = np.nan, np.nan, 0.0
            for key, value in (
                ("quantile", q),
                ("time", time),
                ("group", b + 1),
                ("n", len(idx)),
                ("mean_pred", mean_pred),
                ("km", km),
                ("abs_diff", diff),
                ("kept", bool(kept[b])),
                ("weight", weight),
            ):
                rows[key].append(value)
        for key, value in (
            ("quantile", q),
            ("target_time", float(target)),
            ("grid_index", g),
            ("time", time),
            ("n_kept", n_kept),
            ("ece", time_ece if n_kept else np.nan),
        ):
            per_time[key].append(value)

    per_time_arr = {k: np.asarray(v) for k, v in per_time.items()}
    groups_arr = {k: np.asarray(v) for k, v in rows.items()}
    if np.any(per_time_arr["n_kept"] == 0):
        ece = warn_undefined(
            "survival ECE",
            f"at some time every group has fewer than min_group={min_group} patients (n={n})",
        )
    else:
        ece = float(np.mean(per_time_arr["ece"]))
    return SurvivalECEResult(ece=ece, per_time=per_time_arr, groups=groups_arr)
