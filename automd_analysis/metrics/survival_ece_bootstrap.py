"""Bootstrap replicates of the survival ECE (Kaplan-Meier ECE at three event-time quantiles).

Unlike the other metrics, the survival ECE depends on the order of its rows: patients are split
into risk groups by a *stable* sort of their predicted survival, so among tied predictions the row
order decides which group a patient joins (and with it the group's Kaplan-Meier curve). A replicate
is therefore recomputed from the resampled rows in their index order, with the arithmetic of
:func:`~automd_analysis.metrics.survival_ece` step for step (same quantiles, same stable sort, same
``np.array_split``, same Kaplan-Meier routine), so it equals ``survival_ece`` on the rows
``indices[b]`` exactly. The saving over calling ``survival_ece(t[rows], e[rows], surv[rows], grid)``
is that only the (at most three) survival columns a replicate reads are gathered, never the whole
n x G matrix, and inputs are validated once. Cost per replicate: O(n log n).
"""

from __future__ import annotations

import warnings

import numpy as np

from automd_analysis.metrics._resample import (
    as_indices,
    check_n_boot,
    explicit_blocks,
    index_blocks,
)
from automd_analysis.metrics._validation import (
    UndefinedMetricWarning,
    as_binary,
    as_durations,
    as_surv_matrix,
    as_time_grid,
    check_same_length,
)
from automd_analysis.metrics.survival import _kaplan_meier_unchecked
from automd_analysis.metrics.survival_calibration import _nearest_grid_index

__all__ = ["survival_ece_bootstrap"]


def _survival_ece_rows(t, e, s, grid, rows, qs, n_groups: int, min_group: int) -> float:
    """``survival_ece(t[rows], e[rows], s[rows], grid, qs, n_groups, min_group).ece`` (no warning)."""
    t_r = t[rows]
    e_r = e[rows]
    event_times = t_r[e_r == 1]
    if event_times.size == 0:
        return float("nan")
    targets = np.quantile(event_times, qs)
    per_time = []
    for target in targets:
        g = _nearest_grid_index(grid, float(target))
        time = float(grid[g])
        pred = s[rows, g]
        order = np.argsort(pred, kind="stable")
        groups = np.array_split(order, n_groups)
        sizes = np.array([len(idx) for idx in groups])
        kept = sizes >= min_group
        n_kept = int(sizes[kept].sum())
        if n_kept == 0:
            return float("nan")
        time_ece = 0.0
        for b, idx in enumerate(groups):
            if kept[b]:
                mean_pred = float(np.mean(pred[idx]))
                km = _kaplan_meier_unchecked(t_r[idx], e_r[idx]).at(time)
                time_ece += (len(idx) / n_kept) * abs(mean_pred - km)
        per_time.append(time_ece)
    return float(np.mean(np.asarray(per_time)))


def survival_ece_bootstrap(
    durations,
    events,
    surv,
    time_grid,
    quantiles=(0.25, 0.5, 0.75),
    n_groups: int = 10,
    min_group: int = 5,
    n_boot: int = 1000,
    seed=0,
    indices=None,
) -> np.ndarray:
    """Bootstrap replicates of the Kaplan-Meier survival ECE, each equal to ``survival_ece`` on its rows.

    For replicate b with rows r = ``indices[b]`` (in that order):

    .. math:: \\mathrm{ECE}_b = \\frac{1}{|Q|} \\sum_{q \\in Q} \\sum_{g\\ \\mathrm{kept}}
              \\frac{n_g}{\\sum_{\\mathrm{kept}} n} \\bigl|\\bar S_g(t_q) - \\mathrm{KM}_g(t_q)\\bigr|

    computed on the resampled rows exactly as :func:`~automd_analysis.metrics.survival_ece` does
    (module docstring: the row order matters for tied predictions, so the replicate is recomputed,
    reading only the needed columns).

    Parameters
    ----------
    durations, events, surv, time_grid, quantiles, n_groups, min_group
        As :func:`~automd_analysis.metrics.survival_ece`.
    n_boot : int, default 1000
        Number of replicates (ignored when ``indices`` is given).
    seed : int or sequence of int, default 0
        Seed of :func:`~automd_analysis.metrics.bootstrap_indices`.
    indices : array-like of int, shape (n_boot, m), optional
        Explicit row positions in [0, n).

    Returns
    -------
    numpy.ndarray of float64, shape (n_boot,)
        ``nan`` where the replicate's ECE is undefined (no event, or every group of some time below
        ``min_group``); one :class:`UndefinedMetricWarning` reports how many.

    Raises
    ------
    ValueError
        As :func:`survival_ece`; bad ``n_boot`` or ``indices``.

    See Also
    --------
    survival_ece : the metric on one sample.
    bootstrap_ci : interval from replicates.

    References
    ----------
    Kaplan, E. L., Meier, P. (1958). Nonparametric estimation from incomplete observations. Journal
    of the American Statistical Association 53(282), 457-481.

    Examples
    --------
    >>> import numpy as np
    >>> from automd_analysis.metrics import survival_ece
    >>> rng = np.random.default_rng(0)
    >>> t = rng.exponential(10.0, 60)
    >>> e = (rng.random(60) < 0.7).astype(int)
    >>> grid = np.linspace(0.0, 30.0, 16)
    >>> surv = np.exp(-np.outer(rng.uniform(0.05, 0.15, 60), grid))
    >>> idx = rng.integers(0, 60, (2, 60))
    >>> reps = survival_ece_bootstrap(t, e, surv, grid, indices=idx)
    >>> bool(reps[1] == survival_ece(t[idx[1]], e[idx[1]], surv[idx[1]], grid).ece)
    True
    """
    t = as_durations("durations", durations)
    ev = as_binary("events", events)
    n = check_same_length(durations=t, events=ev)
    grid = as_time_grid("time_grid", time_grid)
    s = as_surv_matrix("surv", surv, n, len(grid))
    qs = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
    if qs.ndim != 1 or qs.size == 0 or not np.all((qs >= 0.0) & (qs <= 1.0)):
        raise ValueError(
            f"quantiles must be a non-empty sequence of levels in [0, 1], got {quantiles!r}."
        )
    for name, value in (("n_groups", n_groups), ("min_group", min_group)):
        if isinstance(value, bool) or int(value) != value or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}.")
    if indices is None:
        n_boot = check_n_boot(n_boot)
        blocks = index_blocks(n, n_boot, seed)
    else:
        idx = as_indices(indices, n)
        n_boot = idx.shape[0]
        blocks = explicit_blocks(idx)
    out = np.empty(n_boot, dtype=np.float64)
    for b0, block in blocks:
        for k, rows in enumerate(block):
            out[b0 + k] = _survival_ece_rows(
                t, ev, s, grid, rows.astype(np.int64), qs, int(n_groups), int(min_group)
            )
    n_nan = int(np.isnan(out).sum())
    if n_nan:
        warnings.warn(
            f"survival ECE is undefined in {n_nan} of {n_boot} bootstrap replicates; they are nan.",
            UndefinedMetricWarning,
            stacklevel=2,
        )
    return out
