"""Correlations over runs that respect how runs cluster: a within-cell statistic and its test.

Runs are not independent units. Runs of one task share its data, its metric and its difficulty;
runs of one agent share its search policy and its LLM, so an agent whose runs are long *and*
accurate makes "longer runs score higher" look true of runs in general, although it is a
difference between agents (with agent effects of SD 0.5 on both variables, a test that permutes
runs of one task across agents rejects a true null 13 % of the time; with SD 1.0, 41 %). The
unit of inference is therefore the run within its **cell** - an agent's runs on one task - and:

- the statistic is the **within-cell Spearman correlation**: Spearman's rho of (x, y) over the
  runs of every cell with a defined value (at least 3 runs, neither variable constant), combined as
  the run-weighted mean over those cells,

  .. math:: \\bar\\rho_w = \\frac{\\sum_c n_c \\rho_c}{\\sum_c n_c};

  any per-cell constant added to x or y, or any increasing transformation within a cell, leaves it
  unchanged (differences between tasks and between agents never enter);
- the test is the **within-cell permutation test** of "no association within any cell": y is
  permuted among the runs of each cell independently and

  .. math:: p = \\frac{\\#\\{\\pi : |\\bar\\rho_w(\\pi)| \\ge |\\bar\\rho_w|\\}}{\\#\\pi}

  over all within-cell permutations when there are at most ``n_permutations`` of them (exact),
  otherwise ``(1 + #{...}) / (1 + n_permutations)`` over seeded random permutations (never 0;
  Phipson and Smyth 2010). Comparisons use :func:`~automd_analysis.precision.comparable` values.

Under the null hypothesis the runs of a cell are exchangeable whatever the agent and task effects,
so the test keeps its level exactly (measured in docs/statistics.md). It answers "within one
agent on one task, do runs with more of x have more of y?"; whether agents with more of x score
higher is a comparison of agents (a handful of units) that this test does not make.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from automd_analysis.precision import comparable
from automd_analysis.stats.resample import rng_for

__all__ = ["StratifiedCorrelation", "TEST_NAME", "within_cell_spearman"]

#: The ``test`` column of a table whose p-values come from :func:`within_cell_spearman`.
TEST_NAME = "within agent x task permutation of Spearman rho"

_MIN_RUNS = 3


@dataclass(frozen=True)
class StratifiedCorrelation:
    """Result of :func:`within_cell_spearman`.

    Attributes
    ----------
    rho : float
        Run-weighted mean of the per-cell Spearman correlations (NaN without a usable cell).
    p_value : float
        Two-sided within-cell permutation p-value (NaN without a usable cell).
    cells : tuple of str
        The cells with a defined correlation.
    n_runs : int
        Their runs (pairs with both values finite).
    exact : bool
        Every within-cell permutation was enumerated.
    n_permutations : int
        Permutations behind ``p_value`` (all of them when ``exact``).
    """

    rho: float
    p_value: float
    cells: tuple
    n_runs: int
    exact: bool
    n_permutations: int

    @property
    def n_cells(self) -> int:
        """Cells with a defined correlation."""
        return len(self.cells)


def _centred_ranks(values: np.ndarray) -> np.ndarray:
    ranks = rankdata(comparable(values))
    return ranks - ranks.mean()


def _usable(x: np.ndarray, y: np.ndarray) -> bool:
    return x.size >= _MIN_RUNS and np.ptp(comparable(x)) > 0 and np.ptp(comparable(y)) > 0


def within_cell_spearman(
    x, y, cells, *, n_permutations: int = 9999, seed: int = 0, tag: str = ""
) -> StratifiedCorrelation:
    """Within-cell Spearman correlation of ``x`` and ``y`` and its within-cell permutation test.

    .. math:: \\bar\\rho_w = \\frac{\\sum_c n_c \\rho_c}{\\sum_c n_c}, \\qquad
              p = P_\\pi(|\\bar\\rho_w(\\pi)| \\ge |\\bar\\rho_w|)

    with :math:`\\rho_c` Spearman's rho (average ranks for ties) of the :math:`n_c` runs of cell c
    with both values finite, over the cells with at least 3 such runs and neither variable
    constant; :math:`\\pi` permutes y within every cell (module docstring).

    Parameters
    ----------
    x, y : array-like of float, shape (n,)
        One value per run; pairs with a non-finite value are left out.
    cells : array-like, shape (n,)
        The cell of every run (the strata): an agent's runs on one task, e.g. ``"aide|task1"``.
    n_permutations : int, default 9999
        Enumerate every within-cell permutation when there are at most this many, otherwise draw
        this many at random.
    seed : int, default 0
    tag : str, default ""
        Names the statistic (e.g. the metric), so that each gets its own reproducible draws.

    Returns
    -------
    StratifiedCorrelation

    Raises
    ------
    ValueError
        Inputs of different lengths, or ``n_permutations`` < 1.

    See Also
    --------
    scipy.stats.spearmanr : the per-cell statistic.
    scipy.stats.permutation_test : the same test for one cell (``permutation_type="pairings"``).

    References
    ----------
    .. [1] Good P (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses, 3rd ed.,
       sec. 3.6 (stratified permutation tests). Springer.
    .. [2] Phipson B, Smyth GK (2010). Permutation p-values should never be zero. Statistical
       Applications in Genetics and Molecular Biology 9(1):39.
    .. [3] Spearman C (1904). The proof and measurement of association between two things.
       American Journal of Psychology 15(1):72-101.

    Examples
    --------
    A per-cell offset of y, which a pooled correlation reads as association, does not enter:

    >>> x = [1, 2, 3, 1, 2, 3]
    >>> y = [0.3, 0.1, 0.2, 10.3, 10.1, 10.2]
    >>> r = within_cell_spearman(x, y, ["a|t", "a|t", "a|t", "b|t", "b|t", "b|t"])
    >>> round(r.rho, 3), r.n_cells, r.n_runs, r.exact, r.n_permutations
    (-0.5, 2, 6, True, 36)
    >>> r.p_value  # 36 pairings: |mean rho| >= 0.5 in 18 of them
    0.5
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    cells = np.asarray(cells, dtype=object)
    if not (x.shape == y.shape == cells.shape) or x.ndim != 1:
        raise ValueError(
            f"x, y and cells must be 1-D of one length, got {x.shape}, {y.shape}, {cells.shape}."
        )
    if isinstance(n_permutations, bool) or int(n_permutations) != n_permutations:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}.")
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}.")
    keep = np.isfinite(x) & np.isfinite(y)
    strata = []  # (centred x ranks, centred y ranks, weight)
    used = []
    names = cells.astype(str)
    for cell in sorted(set(names[keep])):
        rows = keep & (names == cell)
        xc, yc = x[rows], y[rows]
        if _usable(xc, yc):
            rx, ry = _centred_ranks(xc), _centred_ranks(yc)
            strata.append((rx / np.linalg.norm(rx), ry / np.linalg.norm(ry), float(xc.size)))
            used.append(cell)
    if not strata:
        return StratifiedCorrelation(math.nan, math.nan, (), 0, True, 0)
    weights = np.array([w for _, _, w in strata]) / sum(w for _, _, w in strata)
    observed = float(
        sum(w * float(rx @ ry) for w, (rx, ry, _) in zip(weights, strata, strict=True))
    )
    sizes = [rx.size for rx, _, _ in strata]
    total = math.prod(math.factorial(n) for n in sizes)
    if total <= n_permutations:
        null = np.zeros(1)
        for w, (rx, ry, _) in zip(weights, strata, strict=True):
            perms = np.array(list(itertools.permutations(range(ry.size))))
            null = (null[:, None] + w * (ry[perms] @ rx)[None, :]).ravel()
        hits = np.count_nonzero(comparable(np.abs(null)) >= comparable(abs(observed)))
        return StratifiedCorrelation(
            observed, float(hits / null.size), tuple(used), int(sum(sizes)), True, int(null.size)
        )
    rng = rng_for(seed, tag)
    null = np.zeros(int(n_permutations))
    for w, (rx, ry, _) in zip(weights, strata, strict=True):
        shuffled = rng.permuted(np.tile(ry, (int(n_permutations), 1)), axis=1)
        null += w * (shuffled @ rx)
    hits = np.count_nonzero(comparable(np.abs(null)) >= comparable(abs(observed)))
    p = float((1 + hits) / (1 + int(n_permutations)))
    return StratifiedCorrelation(
        observed, p, tuple(used), int(sum(sizes)), False, int(n_permutations)
    )
