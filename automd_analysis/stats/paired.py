"""The paired test across tasks of the agent comparisons.

Agents are compared task by task: on task t, d_t = (agent A's mean over its runs) - (agent B's).
The test asks whether the mean of d_t over tasks differs from 0 more than sign noise would make it:
under the null hypothesis that the two agents are exchangeable on every task, each d_t is as
likely to be positive as negative, so flipping the signs of the d_t gives equally likely data sets.
The exact two-sided p-value is the share of the 2^T sign patterns whose |Σ ±d_t| is at least the
observed |Σ d_t| (Fisher's randomisation test for paired data). Why this test (and not Wilcoxon
or a t-test) is explained in ``docs/statistics.md``.

P-values of several agent pairs are adjusted with Holm's step-down method
(:func:`automd_analysis.stats.multiplicity.holm_adjust`).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["min_attainable_p", "sign_flip_test"]

#: Up to this many tasks every sign pattern is enumerated (2^20 patterns); beyond, a seeded
#: Monte Carlo sample of patterns is used.
_EXACT_MAX = 20
_MONTE_CARLO = 100_000
_CHUNK = 1 << 16


def _differences(differences) -> np.ndarray:
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1:
        raise ValueError(f"differences must be one-dimensional, got shape {d.shape}.")
    if not np.isfinite(d).all():
        i = int(np.flatnonzero(~np.isfinite(d))[0])
        raise ValueError(f"differences must be finite; differences[{i}] is {d[i]!r}.")
    return d


def sign_flip_test(differences, seed: int = 0) -> float:
    """Two-sided paired randomisation (sign-flip) test of a zero mean difference.

    With T paired differences d_t and the 2^T sign vectors s in {-1, 1}^T,

    .. math:: p = \\frac{\\#\\{s : |\\sum_t s_t d_t| \\ge |\\sum_t d_t| - \\gamma\\}}{2^T}

    where γ = 100 ε |Σ d_t| absorbs floating-point noise in sums that are equal in exact
    arithmetic (the tolerance of ``scipy.stats.permutation_test``, whose
    ``permutation_type="samples"`` test with ``n_resamples=inf`` gives the same p-value). Exact
    enumeration up to 20 differences; beyond, 100,000 random sign vectors (seeded) and
    p = (1 + #{...}) / (1 + 100,000). Zero differences are unaffected by a flip and simply add
    nothing. The smallest attainable p-value is 2 / 2^(number of non-zero d_t)
    (:func:`min_attainable_p`).

    Parameters
    ----------
    differences : array-like of float, shape (T,)
        One paired difference per task (finite).
    seed : int, default 0
        Seed of the Monte Carlo sample (unused when the test is exact).

    Returns
    -------
    float
        p in (0, 1]; ``nan`` for an empty input.

    Raises
    ------
    ValueError
        Non-finite or non-1-D differences.

    See Also
    --------
    automd_analysis.stats.multiplicity.holm_adjust : multiplicity correction over agent pairs.
    scipy.stats.permutation_test : the general permutation test.

    References
    ----------
    Fisher, R. A. (1935). The Design of Experiments, sec. 21. Oliver & Boyd.
    Good, P. (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses, 3rd ed., ch. 3.
    Springer.

    Examples
    --------
    >>> sign_flip_test([0.1, 0.2, 0.3])  # all 8 patterns: only +++ and --- reach |0.6|
    0.25
    >>> sign_flip_test([0.02, 0.01, -0.005, 0.03, 0.02, 0.01])
    0.0625
    """
    d = _differences(differences)
    if d.size == 0:
        return math.nan
    observed = abs(float(d.sum()))
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    threshold = observed - gamma
    t = d.size
    if t <= _EXACT_MAX:
        count = 0
        bits = np.arange(t, dtype=np.int64)
        for start in range(0, 1 << t, _CHUNK):
            patterns = np.arange(start, min(start + _CHUNK, 1 << t), dtype=np.int64)
            signs = 1.0 - 2.0 * ((patterns[:, None] >> bits) & 1)
            count += int(np.count_nonzero(np.abs(signs @ d) >= threshold))
        return count / float(1 << t)
    rng = np.random.default_rng(seed)
    count = 0
    for start in range(0, _MONTE_CARLO, _CHUNK):
        m = min(_CHUNK, _MONTE_CARLO - start)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(m, t))
        count += int(np.count_nonzero(np.abs(signs @ d) >= threshold))
    return (1 + count) / (1 + _MONTE_CARLO)


def min_attainable_p(differences) -> float:
    """Smallest p-value :func:`sign_flip_test` can give for these differences: 2 / 2^k.

    k = the number of non-zero differences (only the all-same and all-flipped sign patterns reach
    the observed sum when every |d_t| counts). With k <= 5 it exceeds 0.05: no pair of agents can
    be declared different across so few tasks, whatever the data.

    See Also
    --------
    sign_flip_test : the test.

    References
    ----------
    Good, P. (2005). Permutation, Parametric and Bootstrap Tests of Hypotheses, 3rd ed., ch. 3.
    Springer.

    Examples
    --------
    >>> min_attainable_p([0.1, -0.2, 0.05])
    0.25
    >>> min_attainable_p([0.1] * 6)
    0.03125
    """
    d = _differences(differences)
    k = int(np.count_nonzero(d))
    return 1.0 if k == 0 else min(1.0, 2.0 / 2.0**k)
