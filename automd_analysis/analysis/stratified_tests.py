"""Correlations over runs that respect their tasks: a within-task statistic and its permutation test.

Runs of one task share its data, its metric and its difficulty; runs of different tasks do not. A
rank correlation pooled over all runs mixes two things - whether, *within* a task, runs with a
higher value of a metric score higher, and whether tasks with higher values of the metric are
easier - and its p-value treats the runs as independent, which the runs of one task are not (on the
demo archive the pooled Spearman p-value of 108 runs of 9 tasks is 1.4e-43). Here:

- the statistic is the **within-task Spearman correlation**: Spearman's rho of (x, y) on the runs of
  every task t with a defined value (at least 3 runs, neither variable constant), combined as the
  run-weighted mean over those tasks,

  .. math:: \\bar\\rho_w = \\frac{\\sum_t n_t \\rho_t}{\\sum_t n_t};

  adding any per-task constant to x or y, or any increasing transformation within a task, leaves
  it unchanged (between-task differences never enter);
- the test is the **within-task permutation test** of "no association within any task": y is
  permuted among the runs of each task independently (the tasks stay as they are) and

  .. math:: p = \\frac{\\#\\{\\pi : |\\bar\\rho_w(\\pi)| \\ge |\\bar\\rho_w|\\}}{\\#\\pi}

  over all within-task permutations when there are at most ``n_permutations`` of them (exact),
  otherwise ``(1 + #{...}) / (1 + n_permutations)`` over seeded random permutations (valid at any
  number of draws; Phipson and Smyth 2010). Comparisons use
  :func:`~automd_analysis.precision.comparable` values.

The unit of inference is the run within its task: the test asks whether, on these tasks, runs that
differ in the metric differ in the outcome in the same direction. It does not resample tasks, so
it says nothing about other tasks.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import rankdata

from automd_analysis.precision import comparable

__all__ = ["StratifiedCorrelation", "TEST_NAME", "within_task_spearman"]

#: The ``test`` column of a table whose p-values come from :func:`within_task_spearman`.
TEST_NAME = "within-task permutation of Spearman rho"

_MIN_RUNS = 3


@dataclass(frozen=True)
class StratifiedCorrelation:
    """Result of :func:`within_task_spearman`.

    Attributes
    ----------
    rho : float
        Run-weighted mean of the per-task Spearman correlations (NaN without a usable task).
    p_value : float
        Two-sided within-task permutation p-value (NaN without a usable task).
    n_tasks, n_runs : int
        Tasks with a defined correlation and their runs (pairs with both values finite).
    exact : bool
        Every within-task permutation was enumerated.
    n_permutations : int
        Permutations behind ``p_value`` (all of them when ``exact``).
    """

    rho: float
    p_value: float
    n_tasks: int
    n_runs: int
    exact: bool
    n_permutations: int


def _centred_ranks(values: np.ndarray) -> np.ndarray:
    ranks = rankdata(comparable(values))
    return ranks - ranks.mean()


def _usable(x: np.ndarray, y: np.ndarray) -> bool:
    return x.size >= _MIN_RUNS and np.ptp(comparable(x)) > 0 and np.ptp(comparable(y)) > 0


def _rng(seed: int, tag: str) -> np.random.Generator:
    words = np.frombuffer(hashlib.sha256(tag.encode("utf-8")).digest()[:8], dtype="<u4")
    return np.random.default_rng(np.random.SeedSequence([int(seed), *map(int, words)]))


def within_task_spearman(
    x, y, tasks, *, n_permutations: int = 9999, seed: int = 0, tag: str = ""
) -> StratifiedCorrelation:
    """Within-task Spearman correlation of ``x`` and ``y`` and its within-task permutation test.

    .. math:: \\bar\\rho_w = \\frac{\\sum_t n_t \\rho_t}{\\sum_t n_t}, \\qquad
              p = P_\\pi(|\\bar\\rho_w(\\pi)| \\ge |\\bar\\rho_w|)

    with :math:`\\rho_t` Spearman's rho (average ranks for ties) of the :math:`n_t` runs of task t
    with both values finite, over the tasks with at least 3 such runs and neither variable constant;
    :math:`\\pi` permutes y within every task (module docstring).

    Parameters
    ----------
    x, y : array-like of float, shape (n,)
        One value per run; pairs with a non-finite value are left out.
    tasks : array-like, shape (n,)
        The task of every run (the strata).
    n_permutations : int, default 9999
        Enumerate every within-task permutation when there are at most this many, otherwise draw
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
    scipy.stats.spearmanr : the per-task statistic.
    scipy.stats.permutation_test : the same test for one task (``permutation_type="pairings"``).

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
    A per-task offset of y, which a pooled correlation reads as association, does not enter:

    >>> x = [1, 2, 3, 1, 2, 3]
    >>> y = [0.3, 0.1, 0.2, 10.3, 10.1, 10.2]
    >>> r = within_task_spearman(x, y, ["a", "a", "a", "b", "b", "b"])
    >>> round(r.rho, 3), r.n_tasks, r.n_runs, r.exact, r.n_permutations
    (-0.5, 2, 6, True, 36)
    >>> r.p_value  # 36 pairings: |mean rho| >= 0.5 in 18 of them
    0.5
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    tasks = np.asarray(tasks, dtype=object)
    if not (x.shape == y.shape == tasks.shape) or x.ndim != 1:
        raise ValueError(
            f"x, y and tasks must be 1-D of one length, got {x.shape}, {y.shape}, {tasks.shape}."
        )
    if isinstance(n_permutations, bool) or int(n_permutations) != n_permutations:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}.")
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer, got {n_permutations!r}.")
    keep = np.isfinite(x) & np.isfinite(y)
    strata = []  # (centred x ranks, centred y ranks, weight)
    for task in sorted(set(tasks[keep].astype(str))):
        rows = keep & (tasks.astype(str) == task)
        xt, yt = x[rows], y[rows]
        if _usable(xt, yt):
            rx, ry = _centred_ranks(xt), _centred_ranks(yt)
            strata.append((rx / np.linalg.norm(rx), ry / np.linalg.norm(ry), float(xt.size)))
    if not strata:
        return StratifiedCorrelation(math.nan, math.nan, 0, 0, True, 0)
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
            observed, float(hits / null.size), len(strata), int(sum(sizes)), True, int(null.size)
        )
    rng = _rng(seed, tag)
    null = np.zeros(int(n_permutations))
    for w, (rx, ry, _) in zip(weights, strata, strict=True):
        shuffled = rng.permuted(np.tile(ry, (int(n_permutations), 1)), axis=1)
        null += w * (shuffled @ rx)
    hits = np.count_nonzero(comparable(np.abs(null)) >= comparable(abs(observed)))
    p = float((1 + hits) / (1 + int(n_permutations)))
    return StratifiedCorrelation(
        observed, p, len(strata), int(sum(sizes)), False, int(n_permutations)
    )
