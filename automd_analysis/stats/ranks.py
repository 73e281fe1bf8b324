"""Mean ranks of agents over tasks, in every column of a draw matrix (their intervals).

On every task the agents are ranked by their value (1 = best, ties at the displayed precision
share the average of the ranks they span); an agent's mean rank is the mean over the tasks where
it is ranked. Applied to every column of the per-cell draws, the same computation gives the
observed mean rank (column 0) and its distribution, so the interval of a mean rank comes from the
same draws as every other interval of the table.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from automd_analysis.stats.rules import displayed

__all__ = ["mean_rank_draws", "rank_columns"]


def rank_columns(values: np.ndarray, higher_is_better: bool = True) -> np.ndarray:
    """Average ranks (1 = best) of the rows in every column; NaN values are not ranked.

    .. math:: r_i = 1 + \\#\\{j : x_j \\succ x_i\\} + \\tfrac12 \\#\\{j \\ne i : x_j = x_i\\}

    over the finite values of the column, compared at the displayed precision
    (:func:`~automd_analysis.stats.rules.displayed`).

    Examples
    --------
    >>> rank_columns(np.array([[0.5, 0.2], [0.7, 0.2], [np.nan, 0.9]])).tolist()
    [[2.0, 2.5], [1.0, 2.5], [nan, 1.0]]
    """
    x = displayed(np.asarray(values, dtype=np.float64))
    if not higher_is_better:
        x = -x
    finite = np.isfinite(x)
    better = (x[None, :, :] > x[:, None, :]) & finite[None, :, :]
    equal = (x[None, :, :] == x[:, None, :]) & finite[None, :, :]
    ranks = 1.0 + better.sum(axis=1) + 0.5 * (equal.sum(axis=1) - 1)
    return np.where(finite, ranks, np.nan)


def mean_rank_draws(
    values: np.ndarray,
    tasks: Sequence,
    agents: Sequence,
    *,
    higher_is_better: bool = True,
) -> dict:
    """Each agent's mean rank over the tasks, in every column: agent -> array (1 + B,).

    .. math:: \\bar r_a = \\frac{1}{|T_a|} \\sum_{t \\in T_a} r_{a,t}

    with :math:`r_{a,t}` the agent's rank among the agents with a value on task t
    (:func:`rank_columns`) and :math:`T_a` the tasks where it has one.

    Parameters
    ----------
    values : numpy.ndarray of shape (n_cells, 1 + B)
        One row per (agent, task) cell: the cell's value in every column (NaN: not ranked).
    tasks, agents : sequence, length n_cells
        The task and agent of every row.
    higher_is_better : bool, default True

    Returns
    -------
    dict

    See Also
    --------
    automd_analysis.stats.intervals.estimate : its interval.

    References
    ----------
    .. [1] Hall P, Miller H (2009). Using the bootstrap to quantify the authority of an empirical
       ranking. Annals of Statistics 37(6B), 3929-3959.

    Examples
    --------
    >>> v = np.array([[0.5, 0.6], [0.4, 0.7], [0.9, 0.1], [0.2, 0.3]])
    >>> out = mean_rank_draws(v, ["t", "t", "u", "u"], ["a", "b", "a", "b"])
    >>> out["a"].tolist(), out["b"].tolist()
    ([1.0, 2.0], [2.0, 1.0])
    """
    values = np.asarray(values, dtype=np.float64)
    tasks = np.asarray(tasks, dtype=object)
    agents = np.asarray(agents, dtype=object)
    ranks = np.full(values.shape, np.nan)
    for task in dict.fromkeys(tasks):
        rows = np.flatnonzero(tasks == task)
        ranks[rows] = rank_columns(values[rows], higher_is_better)
    out = {}
    for agent in dict.fromkeys(agents):
        mine = ranks[agents == agent]
        finite = np.isfinite(mine)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[agent] = np.where(
                finite.any(axis=0),
                np.where(finite, mine, 0.0).sum(axis=0) / finite.sum(axis=0),
                np.nan,
            )
    return out
